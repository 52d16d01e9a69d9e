"""Issue 12, decoding: can any signal we have pick the right answer out of rerank-coverage's pool? (scratch)

rerank-coverage keeps the greedy answer when it fills every question slot and scores at least τ1 (the gate);
otherwise it pools that answer with six samples and takes the one with the fewest open slots, then the best mean
sentence score. On its ``--traces`` runs a right answer is often in the pool but not chosen, and the gate often
keeps a wrong greedy answer. This re-chooses every stored pool offline with other tie-breakers among the answers
with the fewest open slots, and asks whether the same signals tell the gate's wrong answers from its right ones:

* ``support``: how many other pooled answers share a slot filler (``rerank_support.fillers``);
* ``vote``: the mean count, over the pool's most complete answers, of the answer's filler stems;
* ``lexical``: the share of the answer's content stems and numbers found in the context or the question;
* ``pci``: the signed context influence log p(y|x,c) − log p(y|x) (``signals.influence``), token-weighted
  ``mean_pci`` and ``min_pci``, by teacher forcing (``faithwatch score``; no model runs in this script);
* ``nli``: ``nli-minilm``'s 3-way probabilities of each sentence's best context chunk, mean entailment and max
  contradiction (computed here; the whole script takes 2 min on 2 cores);
* ``tagger``: the LSS tagger's support probability of the answer's filler words (those whose stem or number is a
  filler), their lowest and their mean (computed here, 12 s).

Every figure is in-sample: these runs were read before (fresh25–28 shaped the gate; fresh33–36 were read after
their runs). No model is trained and nothing here is built.

    python training/experiments/rerank_choosers.py --write /tmp/pool.jsonl DATA REPORT [DATA REPORT ...]
    faithwatch score --input /tmp/pool.jsonl --output /tmp/pool-features.jsonl --signals influence,likelihood \\
        --alignment none --no-vectors --detector heuristic                                   # 5 min on 2 cores
    python training/experiments/rerank_choosers.py --features /tmp/pool-features.jsonl DATA REPORT [...]

Measured (2026-11-29, thirty-sixth session) on fresh25–28 and fresh33–36 (192 counterfactual / 128 agreeing items;
922 distinct answers): rerank-coverage as run 139 / 93; with any right pooled answer chosen (the oracle, the gate
as it is) 154 / 100. Every chooser lands within 5 items of the shipped one (134–142 / 90–95), and no signal tells
the gate's wrong greedy answers from its right ones (AUROC 0.43–0.65; table in docs/decoding_eval.md). Not kept.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from rerank_support import fillers
from sklearn.metrics import roc_auc_score

from faithwatch.alignment import get_scorer
from faithwatch.alignment.lexical import content_stems, number_values
from faithwatch.claims.lss import split_words
from faithwatch.decoding.counterfactual import QAItem, load_items, success
from faithwatch.decoding.coverage import open_slots
from faithwatch.eval.decoding import read_answers
from faithwatch.nli.tagger import load_tagger
from faithwatch.text import split_sentences, stem


def pools(pairs: list[tuple[str, str]]):
    """(item, rerank-coverage record, pooled texts with their mean scores) of every traced item."""
    for data, report in pairs:
        items = {i.id: i for i in load_items(data)}
        for r in read_answers(report):
            if r["strategy"] == "rerank-coverage":
                yield items[r["id"]], r, [(e["text"], e["score"]) for e in r["trace"] if e["kind"] == "candidate"]


def key(item: QAItem, text: str) -> str:
    return json.dumps([item.id, text])


def lexical_share(item: QAItem, text: str) -> float:
    """Share of ``text``'s content stems and numbers found in the context or the question."""
    have = content_stems(item.context) | content_stems(item.question)
    have |= {f"#{n}" for n in number_values(f"{item.context} {item.question}")}
    mine = content_stems(text) | {f"#{n}" for n in number_values(text)}
    return len(mine & have) / max(1, len(mine))


def influence(path: str) -> dict[str, dict[str, float]]:
    """Token-weighted mean_pci and min_pci of each scored answer (keyed by the id this script wrote)."""
    out = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        sents = r["sentences"]
        tokens = [s["token_end"] - s["token_start"] for s in sents]
        out[r["id"]] = {"mean_pci": sum(s["features"]["mean_pci"] * n for s, n in zip(sents, tokens, strict=True))
                        / max(1, sum(tokens)), "min_pci": min(s["features"]["min_pci"] for s in sents)}
    return out


def nli(rows: list[tuple[QAItem, str]]) -> dict[str, dict[str, float]]:
    """Mean entailment and max contradiction of each answer's sentences (their best chunks)."""
    scorer = get_scorer("nli-minilm")
    out = {}
    for item, text in rows:
        sentences = [s for s in split_sentences(text) or [text] if s.strip()]
        ps = scorer.probabilities_many(sentences, item.context) if sentences else []
        ps = ps or [{"entailment": 0.0, "contradiction": 1.0}]
        out[key(item, text)] = {"ent": sum(p["entailment"] for p in ps) / len(ps),
                                "con": max(p["contradiction"] for p in ps)}
    return out


def tagger(rows: list[tuple[QAItem, str]], fills: dict[str, frozenset[str]]) -> dict[str, dict[str, float]]:
    """The LSS tagger's lowest and mean support of each answer's filler words (``fills``; -1 without any)."""
    tg = load_tagger()
    words = [split_words(text) for _, text in rows]
    probs = []
    for k in range(0, len(rows), 32):
        probs += list(tg.word_probabilities(words[k:k + 32], [item.context for item, _ in rows[k:k + 32]]))
    out = {}
    for (item, text), ws, ps in zip(rows, words, probs, strict=True):
        fill = fills[key(item, text)]
        hit = [float(p) for w, p in zip(ws, ps, strict=True)
               if stem(w.strip(".,;:!?\"'()")) in fill or any(f"#{n}" in fill for n in number_values(w))]
        out[key(item, text)] = {"tag_min": min(hit) if hit else -1.0,
                                "tag_mean": sum(hit) / len(hit) if hit else -1.0}
    return out


CHOOSERS = {  # tie-breakers among the answers with the fewest open slots (higher is chosen)
    "shipped: mean score": lambda a: a["score"],
    "support, then score": lambda a: (a["support"], a["score"]),
    "score + 0.05 support": lambda a: a["score"] + 0.05 * a["support"],
    "vote": lambda a: (a["vote"], a["score"]),
    "lexical share, then score": lambda a: (a["lexical"], a["score"]),
    "mean_pci": lambda a: a["mean_pci"],
    "min_pci": lambda a: a["min_pci"],
    "score + 0.1 mean_pci": lambda a: a["score"] + 0.1 * a["mean_pci"],
    "nli entailment": lambda a: a["ent"],
    "nli entailment - contradiction": lambda a: a["ent"] - a["con"],
    "score - contradiction": lambda a: a["score"] - a["con"],
    "tagger, lowest filler word": lambda a: a["tag_min"],
    "tagger, mean filler word": lambda a: a["tag_mean"],
    "score + tagger lowest": lambda a: a["score"] + a["tag_min"],
}
SIGNALS = ("score", "lexical", "mean_pci", "min_pci", "ent", "con", "tag_min", "tag_mean")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pairs", nargs="+", help="DATA REPORT pairs (rerank-coverage runs with --traces)")
    ap.add_argument("--write", help="write every pooled answer as `faithwatch score` input, then stop")
    ap.add_argument("--features", help="`faithwatch score --signals influence,likelihood` output of --write's file")
    args = ap.parse_args()
    pairs = list(zip(args.pairs[::2], args.pairs[1::2], strict=True))
    runs = list(pools(pairs))
    distinct = {key(i, t): (i, t) for i, _, pool in runs for t, _ in pool}
    if args.write:
        with open(args.write, "w", encoding="utf-8") as out:
            for k, (i, t) in distinct.items():
                out.write(json.dumps({"id": k, "question": i.question, "context": i.context, "response": t}) + "\n")
        print(f"{len(distinct)} answers -> {args.write}")
        return
    if not args.features:
        ap.error("give --features (or --write first)")
    signals = influence(args.features)
    probs = nli(list(distinct.values()))
    fills = {k: fillers(i.question, i.context, t) for k, (i, t) in distinct.items()}
    tags = tagger(list(distinct.values()), fills)
    tally: dict[str, Counter] = {name: Counter() for name in [*CHOOSERS, "oracle"]}
    gate: list[tuple[str, bool, dict]] = []
    for item, rec, pool in runs:
        kind = "agree" if rec["agrees"] else "cf"
        answers = []
        for text, score in pool:
            a = {"text": text, "score": score, "open": open_slots(item.question, text, item.context),
                 "fill": fills[key(item, text)], "lexical": lexical_share(item, text),
                 **signals[key(item, text)], **probs[key(item, text)], **tags[key(item, text)]}
            answers.append(a)
        if len(answers) == 1:  # the gate kept greedy: every chooser keeps it too
            gate.append((kind, rec["success"], answers[0]))
            for name in tally:
                tally[name][kind] += rec["success"]
            continue
        least = min(a["open"] for a in answers)
        complete = [a for a in answers if a["open"] == least]
        votes = Counter(s for a in complete for s in a["fill"])
        for a in answers:
            a["support"] = sum(1 for b in answers if b is not a and b["fill"] & a["fill"])
            a["vote"] = sum(votes[s] for s in a["fill"]) / max(1, len(a["fill"]))
        for name, rank in CHOOSERS.items():
            best = max(enumerate(complete), key=lambda ia, rank=rank: (rank(ia[1]), -ia[0]))[1]
            tally[name][kind] += success(best["text"], item)
        tally["oracle"][kind] += any(success(a["text"], item) for a in answers)
    print("| chooser | counterfactual | agreeing |\n| --- | --- | --- |")
    for name, count in tally.items():
        print(f"| {name} | {count['cf']} | {count['agree']} |")
    print("\ngate-kept greedy answers, AUROC for right (contradiction: lower is right)")
    for kind in ("cf", "agree"):
        rows = [(ok, a) for k, ok, a in gate if k == kind]
        ys = [ok for ok, _ in rows]
        aurocs = {s: roc_auc_score(ys, [(-a[s] if s == "con" else a[s]) for _, a in rows]) for s in SIGNALS}
        shown = ", ".join(f"{s} {v:.3f}" for s, v in aurocs.items())
        print(kind, f"{len(rows)} kept, {len(ys) - sum(ys)} wrong:", shown)


if __name__ == "__main__":
    main()
