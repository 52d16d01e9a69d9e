"""Issue 12, decoding: does a bias towards the context's own tokens move greedy's answers to the context? (screen)

A counterfactual item's wrong answer is the model's remembered one ("Paris" where the context moved the capital to
"Lyon"). CAD and AdaCAD push the next token by how much the context raises it; the prompt screen asked in words.
Neither constrains what the answer is *made of*. A copy bias does: every token of the context, the question, and
the model's special tokens (so that it may end) gets ``+beta`` on its log-probability before greedy picks, so a
remembered name the context never writes loses ``beta`` nats against any word the context holds. Nothing like it
was tried here (docs/decoding_eval.md).

Tokens: the ids of the context and the question as the model tokenises them, plus each of their words tokenised
alone with and without a leading space (a word that starts a sentence in the answer is another token), plus every
special token. Greedy decoding, ``max_new_tokens`` 64, every other parameter the default: the same path as
``faithwatch eval-decoding --strategies greedy`` (its one-beam chooser is replaced by the biased one).

**The rule, written before any run** (this commit):

* Step 1 (screen, in-sample: these items were read before). On fresh25–28 and fresh33–36 (192 counterfactual /
  128 agreeing items), beta in {1, 2, 4}. The baseline is the shipped greedy answers stored by the prompt screen
  (``docs/results/decoding-prompt-framing``, prompt ``shipped``: 121 / 82); the script first re-runs greedy without
  the bias on the first 16 items and stops unless every answer equals the stored one. A beta passes if it wins at
  least 10 more counterfactual items than that baseline and loses at most 2 agreeing items. Of the passing ones,
  the one with the most counterfactual successes is chosen (a tie: the smaller beta). None passes: nothing is
  built and fresh37–40 stay unread.
* Step 2 (out of sample, run once, only if a beta passes). On the reserved fresh37–40 (96 counterfactual / 64
  agreeing, read by no model), greedy and greedy with the chosen beta, in one run of this script (``--reserve``).
  The figure is the biased greedy's counterfactual success minus greedy's, on the same items, and its agreeing
  loss. The decoding target is met out of sample only if it is at least +15 points with at most 2 points lost on
  the agreeing items. Whatever the figure, a strategy is built only if step 2 shows a gain of at least +5 points
  with at most 2 points lost (then as a ``copy_bias`` parameter of the one-beam strategies, its own rule for a
  default).

    PYTHONPATH=src python training/experiments/copy_bias.py              # step 1: 3 x 320 items, ~40 min
    PYTHONPATH=src python training/experiments/copy_bias.py --reserve 2  # step 2 with the chosen beta (here 2)
"""

from __future__ import annotations

import gzip
import json
import sys
import time
from pathlib import Path

import torch

from faithwatch.decoding import strategies
from faithwatch.decoding.counterfactual import judge, load_items
from faithwatch.eval.decoding import DEFAULT_PARAMS, generate
from faithwatch.monitor import Monitor

SETS = (25, 26, 27, 28, 33, 34, 35, 36)
RESERVE = (37, 38, 39, 40)
BETAS = (1.0, 2.0, 4.0)
STORED = Path("docs/results/decoding-prompt-framing/answers.jsonl.gz")
CHECKED = 16  # items re-run without the bias, to match the stored answers first


def allowed_ids(tokenizer, *texts: str) -> list[int]:
    """The ids a biased answer is nudged towards: the texts' tokens, each word's tokens alone (with and without a
    leading space) and every special token."""
    ids: set[int] = set(tokenizer.all_special_ids)
    for text in texts:
        ids.update(tokenizer(text, add_special_tokens=False)["input_ids"])
        for word in set(text.split()):
            for form in (word, " " + word):
                ids.update(tokenizer(form, add_special_tokens=False)["input_ids"])
    return sorted(ids)


def biased_greedy(bias: torch.Tensor):
    """A one-beam chooser: greedy over ``logp + bias``."""
    return lambda logp, _twin: (logp + bias.to(logp.device, logp.dtype)).argmax(-1).tolist()


def answer(monitor: Monitor, item, beta: float) -> str | None:
    """Greedy's answer with a copy bias of ``beta`` (0: plain greedy); refused answers are None."""
    params = {**DEFAULT_PARAMS, "max_new_tokens": 64}
    if beta == 0:
        res = generate(monitor, item.question, item.context, strategy="greedy", **params)
        return res.answer
    vocab = monitor.lm.model.get_output_embeddings().weight.shape[0]
    bias = torch.zeros(vocab)
    bias[allowed_ids(monitor.lm.tokenizer, item.context, item.question)] = beta
    saved = strategies._ONE_BEAM["greedy"]
    strategies._ONE_BEAM["greedy"] = lambda p: biased_greedy(bias)
    try:
        res = generate(monitor, item.question, item.context, strategy="greedy", **params)
    finally:
        strategies._ONE_BEAM["greedy"] = saved
    return res.answer


def run(out: Path, sets: tuple[int, ...], betas: tuple[float, ...], monitor: Monitor | None = None) -> None:
    done = set()
    if out.exists():
        done = {(r["beta"], r["id"]) for r in map(json.loads, out.read_text().splitlines())}
    items = [(n, item) for n in sets for item in load_items(f"training/data/counterfactual-qa-fresh{n}.jsonl")]
    with out.open("a") as sink:
        for beta in betas:
            start = time.perf_counter()
            for n, item in items:
                if (beta, item.id) in done:
                    continue
                monitor = monitor or Monitor()
                text = answer(monitor, item, beta)
                outcome = judge(text, item, refused=False)
                sink.write(json.dumps({"beta": beta, "set": n, "id": item.id, "agrees": item.agrees,
                                       "success": outcome.success, "common": outcome.common_hit,
                                       "answer": text}) + "\n")
                sink.flush()
            print(f"beta {beta}: {time.perf_counter() - start:.0f} s", file=sys.stderr)


def stored_answers() -> list[dict]:
    """The prompt screen's shipped-prompt greedy rows."""
    with gzip.open(STORED, "rt") as f:
        return [r for r in map(json.loads, f) if r["prompt"] == "shipped"]


def check_baseline(monitor: Monitor) -> None:
    """Plain greedy through this script's path equals the stored shipped answers on the first items."""
    stored = {r["id"]: r["answer"] for r in stored_answers()}
    items = [item for n in SETS for item in load_items(f"training/data/counterfactual-qa-fresh{n}.jsonl")]
    for item in items[:CHECKED]:
        got = answer(monitor, item, 0.0)
        if got != stored[item.id]:
            sys.exit(f"{item.id}: greedy now answers {got!r}, stored {stored[item.id]!r}; the baseline is stale")
    print(f"baseline: the first {CHECKED} greedy answers equal the stored ones", file=sys.stderr)


def tally(rows: list[dict], baseline: dict[bool, int], label: str) -> dict[float, tuple[int, int]]:
    """Counterfactual and agreeing successes per beta, against ``baseline`` ({agrees: successes})."""
    out = {}
    for beta in sorted({r["beta"] for r in rows}):
        mine = [r for r in rows if r["beta"] == beta]
        wins = {a: sum(r["success"] for r in mine if r["agrees"] == a) for a in (False, True)}
        n = {a: sum(1 for r in mine if r["agrees"] == a) for a in (False, True)}
        gain, loss = wins[False] - baseline[False], baseline[True] - wins[True]
        print(f"{label} beta {beta:g}: counterfactual {wins[False]}/{n[False]} (gain {gain:+d}), agreeing "
              f"{wins[True]}/{n[True]} (loss {loss:+d}); common answer {sum(r['common'] for r in mine)}")
        out[beta] = (gain, loss)
    return out


def main(argv: list[str]) -> None:
    if argv[:1] == ["--reserve"]:
        beta = float(argv[1])
        out = Path("/tmp/copy_bias_reserve.jsonl")
        run(out, RESERVE, (0.0, beta))
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        base = {a: sum(r["success"] for r in rows if r["beta"] == 0.0 and r["agrees"] == a) for a in (False, True)}
        tally(rows, base, "fresh37-40")
        return
    out = Path("/tmp/copy_bias.jsonl")
    monitor = Monitor()
    check_baseline(monitor)
    run(out, SETS, BETAS, monitor)
    stored = stored_answers()
    base = {a: sum(r["success"] for r in stored if r["agrees"] == a) for a in (False, True)}
    print(f"stored greedy: counterfactual {base[False]}, agreeing {base[True]}")
    results = tally([json.loads(line) for line in out.read_text().splitlines()], base, "fresh25-28,33-36")
    passing = [b for b, (gain, loss) in results.items() if gain >= 10 and loss <= 2]
    print(f"passing: {passing or 'none'}; chosen: "
          f"{max(passing, key=lambda b: (results[b][0], -b)) if passing else 'none (fresh37-40 stay unread)'}")


if __name__ == "__main__":
    main(sys.argv[1:])
