"""Carry ``align_score``'s text-only caches over a unit rule without re-running the NLI model on every example.

Unit rule 1 (lexical scorer 22 -> 23; docs/transfer.md, "Unit rule 1") read a number quantity in another unit of
its kind; unit rule 2 D (23 -> 24) read "a week" and amounts written as a share or compound of a unit ("an hour and
20 minutes"); unit rule 2 E (24 -> 25) an amount followed by "of" ("a litre and a half of milk"). Version 26 reads
"half an hour-long" as half an hour (version 25 read it as an hour). An example changes only where a sentence's
lexical score differs between the two readings, so this script scores every sentence both ways, the old way with
version 25's patterns. The new cache is the old one without the changed examples; the next ``faithwatch eval`` or
``train`` computes them again, as for any example missing from a cache. The tagger's caches carry whole
(``text.SPELLED_RULE`` is unchanged). An existing new folder is left alone.

    python training/experiments/carry_unit_cache.py [--also DATA ...]

--also adds data sets beyond the detector's (e.g. training/data/ragtruth-data2txt.jsonl).
"""

from __future__ import annotations

import re
from unittest import mock

from aggregator_variants import AUGMENT, SETS  # sibling scripts, on sys.path when this one runs
from carry_spelled_cache import _copy_without, also_sets, pending, text_caches

from faithwatch.alignment import get_scorer
from faithwatch.alignment.lexical import LexicalScorer
from faithwatch.data.loaders import load_dataset
from faithwatch.eval.features import _drop_examples
from faithwatch.models.folders import cache_dir
from faithwatch.sentences import SentenceTracker
from faithwatch.text import strip_markup
from faithwatch.text.units import _AMOUNT_RE, _MEASURE_RE

#: the lexical scorer's version before the change, and with it (unit rule 1: "22", "23"; 2 D: "23", "24"; 2 E: "24",
#: "25")
OLD_LEXICAL, NEW_LEXICAL = "25", "26"
#: version 25's patterns: no amount before a hyphen; "half a" / "half an" an article
_OLD_AMOUNT_RE = re.compile(_AMOUNT_RE.pattern.removesuffix(r"(?![\w/])") + r"(?![\w/-])", re.IGNORECASE)
_OLD_MEASURE_RE = re.compile(_MEASURE_RE.pattern.replace("(?P<a>an?)", r"(?P<a>(?:half\s+)?an?)"), re.IGNORECASE)
assert _OLD_AMOUNT_RE.pattern != _AMOUNT_RE.pattern and _OLD_MEASURE_RE.pattern != _MEASURE_RE.pattern


def changed_examples(name: str) -> set[str]:
    """The ids of ``name``'s examples with a sentence whose lexical score the rule changes."""
    out = set()
    for ex in load_dataset(name):
        texts = [strip_markup(s.text) for s in SentenceTracker.split_text(ex.response)]
        if not texts:
            continue
        new = LexicalScorer().score_many(texts, ex.context, ex.question or "")
        with (mock.patch("faithwatch.text.units._AMOUNT_RE", _OLD_AMOUNT_RE),
              mock.patch("faithwatch.text.units._MEASURE_RE", _OLD_MEASURE_RE)):
            old = LexicalScorer().score_many(texts, ex.context, ex.question or "")
        if new != old:
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
