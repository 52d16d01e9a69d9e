"""Carry the text-only feature caches over a lexical scorer version change without re-running the NLI model.

``align_score`` of the default scorer is an equal-weight mean of NLI, lexical and embedding scores. When only the
lexical scorer changes (version 5 -> 6: the words of what the question asks count as support; 6 -> 8: a short
year range holds its end year in full), the new cache is the old one with the lexical third recomputed: ``new = old
+ w_lexical * (lexical_new - lexical_old)``, where ``lexical_old`` is the old version's score (5: read without the
question; 6: without year ranges; 8: without months abbreviated; 9: any form of a number found). A full recompute
takes about an hour of NLI on 2 CPU cores; this takes seconds. Existing new-version folders are left alone.

    python training/experiments/carry_lexical_cache.py [--check N] [--also DATA ...]

--also adds data sets beyond the detector's (e.g. training/data/ragtruth-data2txt.jsonl). --check N recomputes N
examples per data set (ones whose lexical score moved) in full and prints the largest difference from the carried
value.
"""

from __future__ import annotations

import shutil
import sys
from unittest import mock

import numpy as np
from aggregator_variants import AUGMENT, SETS  # sibling scripts, on sys.path when this one runs
from carry_spelled_cache import also_sets, pending, text_caches

from faithwatch.alignment import get_scorer
from faithwatch.alignment.base import score_pairs_asked
from faithwatch.alignment.lexical import LexicalScorer
from faithwatch.data.loaders import load_dataset
from faithwatch.eval.features import read_shards, write_shard
from faithwatch.models.folders import cache_dir
from faithwatch.text import quantities, strip_markup

#: 5 -> 6: the question's words; 6 -> 8: year ranges ("2007-08" holds 2008); 8 -> 9: months abbreviated ("Feb. 14");
#: 9 -> 11: a number with a magnitude found by its value ("£3bn" is not "£3m");
#: 14 -> 16: a context's "31. 8" holds 31.8; 16 -> 17: a correct unit conversion in parentheses is not read;
#: 17 -> 18 (not kept), 19: a number after a bound word is found by an exact one that satisfies it ("more than
#: 300" by "340", not by "about 340"); 20: "no more than", "upwards of" and the like too (carried from 17)
OLD, NEW = "17", "20"
#: what the new version adds, switched off to read the old version's scores (5 -> 6: the question is not passed)
WITHOUT = {"6": ("faithwatch.text.numbers.year_range_ends", lambda text: {}),
           "8": ("faithwatch.alignment.lexical.month_name", lambda text, start, end: None),
           "9": ("faithwatch.alignment.lexical._supported", lambda number, ctx: not number[0].isdisjoint(ctx.numbers)),
           "14": ("faithwatch.alignment.lexical.join_decimals", lambda text: text),
           "16": ("faithwatch.alignment.lexical.drop_conversions", lambda text: text),
           "17": ("faithwatch.alignment.lexical.bounded_quantities",
                  lambda text: [(forms, value, None) for forms, value in quantities(text)])}


def lexical_before(texts: list[str], context: str, question: str) -> np.ndarray:
    """The lexical scores of version ``OLD`` (a fresh scorer: its context index is built under the old rule)."""
    if OLD == "5":
        return np.asarray(LexicalScorer().score_many(texts, context))
    with mock.patch(*WITHOUT[OLD]):
        return np.asarray(LexicalScorer().score_many(texts, context, question))


def main(check: int, also: list[str]) -> None:
    scorer = get_scorer("nli-minilm+lexical+embedding")
    (w_lex,) = [w for s, w in zip(scorer.scorers, scorer.weights, strict=True) if s.name == "lexical"]
    new_version = scorer.version
    assert f"+{NEW}+" in new_version, new_version
    root = cache_dir() / "features"
    for name in (*SETS, *AUGMENT, *also):
        old, new = text_caches(scorer, name, new_version.replace(f"+{NEW}+", f"+{OLD}+"), root)
        if not pending(name, old, new):
            continue
        by_id = {e.id: e for e in load_dataset(name)}
        sentences = read_shards(old, "sentences", ["example_id", "sentence_index"])
        changed, moved = 0, []
        for ex_id, idx in sentences.groupby("example_id").indices.items():
            ex = by_id[ex_id]
            texts = [strip_markup(t) for t in sentences["text"].iloc[idx]]  # as align_score reads them
            before = lexical_before(texts, ex.context, ex.question or "")
            after = np.asarray(LexicalScorer().score_many(texts, ex.context, ex.question or ""))
            col = sentences.columns.get_loc("align_score")
            sentences.iloc[idx, col] = np.clip(sentences["align_score"].iloc[idx].to_numpy() + w_lex * (after - before),
                                               0.0, 1.0)
            changed += int((after != before).sum())
            if (after != before).any():
                moved.append(ex_id)
        tmp = new.with_name(new.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        for f in old.glob("*.parquet"):
            if not f.name.startswith("sentences-"):
                shutil.copy2(f, tmp / f.name)
        write_shard(tmp, "sentences", sentences.to_dict("records"), 0)
        tmp.rename(new)
        print(f"{name}: {len(sentences)} sentences, lexical score changed on {changed} -> {new.name}")
        if check:
            ids = moved[:check]  # examples whose lexical score moved: the carried values that could be wrong
            worst = 0.0
            for ex_id in ids:
                rows = sentences[sentences.example_id == ex_id]
                ex = by_id[ex_id]
                full = score_pairs_asked(scorer, [(strip_markup(t), ex.context) for t in rows.text],
                                         [ex.question or ""] * len(rows))
                worst = max(worst, float(np.max(np.abs(np.asarray(full) - rows.align_score.to_numpy()))))
            print(f"  full recompute of {len(ids)} examples: largest difference {worst:.2e}")


if __name__ == "__main__":
    args = sys.argv[1:]
    main(int(args[args.index("--check") + 1]) if "--check" in args else 0, also_sets())
