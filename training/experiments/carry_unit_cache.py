"""Carry ``align_score``'s text-only caches over unit rule 1 without re-running the NLI model on every example.

Unit rule 1 (lexical scorer 22 -> 23; docs/transfer.md, "Unit rule 1") changes a lexical score only where a
sentence holds a quantity that the context (with what the question asks) holds in another unit of its kind, where a
sentence's unit conversion in parentheses is in units of time (``text.drop_conversions`` reads them now), or where
a text holds "half of" run into a word ("half off", no share now). So the new cache is the old one without those
examples; the next ``faithwatch eval`` or ``train`` computes them again, as for any example missing from a cache.
The tagger's caches carry whole (``text.SPELLED_RULE`` is unchanged). An existing new folder is left alone.

    python training/experiments/carry_unit_cache.py [--also DATA ...]

--also adds data sets beyond the detector's (e.g. training/data/ragtruth-data2txt.jsonl).
"""

from __future__ import annotations

import re

from aggregator_variants import AUGMENT, SETS  # sibling scripts, on sys.path when this one runs
from carry_spelled_cache import _copy_without, also_sets, pending, text_caches

from faithwatch.alignment import get_scorer
from faithwatch.alignment.lexical import LexicalScorer, _claim_features, _converted
from faithwatch.data.loaders import load_dataset
from faithwatch.eval.features import _drop_examples
from faithwatch.models.loading import cache_dir
from faithwatch.sentences import SentenceTracker
from faithwatch.text import measures, strip_markup

#: the lexical scorer's version before the rule, and with it
OLD_LEXICAL, NEW_LEXICAL = "22", "23"
_HALF_RUN_ON = re.compile(r"\bhalf\s+of\w", re.IGNORECASE)


def changed_examples(name: str) -> set[str]:
    """The ids of ``name``'s examples that the rule may score differently."""
    lexical, out = LexicalScorer(), set()
    for ex in load_dataset(name):
        ctx = lexical._index(ex.context, ex.question or "")
        sentences = [strip_markup(s.text) for s in SentenceTracker.split_text(ex.response)]
        for text in sentences:
            converted, units = _converted(_claim_features(text), ctx)
            timed = "(" in text and any(q.kind == "time" for q in measures(text))
            if converted or units or timed:
                out.add(ex.id)
        if any(_HALF_RUN_ON.search(t) for t in (ex.context, ex.question or "", *sentences)):
            out.add(ex.id)
    return out


def main(also: list[str]) -> None:
    scorer = get_scorer("nli-minilm+lexical+embedding")
    new_version = scorer.version
    assert f"+{NEW_LEXICAL}+" in new_version, new_version
    old_version = new_version.replace(f"+{NEW_LEXICAL}+", f"+{OLD_LEXICAL}+")
    root = cache_dir() / "features"
    for name in (*SETS, *AUGMENT, *also):
        old, new = text_caches(scorer, name, old_version, root)
        if not pending(name, old, new):
            continue
        ids = changed_examples(name)  # only for a cache still to carry: it reads the whole data set
        _copy_without(old, new, ids, _drop_examples)
        print(f"{name}: {len(ids)} examples left to recompute -> {new.name}")


if __name__ == "__main__":
    main(also_sets())
