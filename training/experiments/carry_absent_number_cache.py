"""Carry the tagger's feature caches over rule B of docs/lss.md ("A number the reference lacks") without tagging
every example again.

Rule B (B2; measured and not kept, its code reverted, so this runs only with that code back) caps, in the
``tagger`` signal, the support of a word holding a number the context lacks; it changes a row
only where a sentence holds a number that ``novel_numbers`` counts. So the new cache is the old one without the
examples that have such a sentence (their context, their sentences without markup); the next ``faithwatch eval`` or
``train`` tags those again, as for any example missing from a cache. Existing new folders are left alone.

    python training/experiments/carry_absent_number_cache.py [--also DATA ...]
"""

from __future__ import annotations

import sys
from types import SimpleNamespace

from aggregator_variants import AUGMENT, SETS  # sibling script, on sys.path when this one runs
from carry_spelled_cache import _copy_without, _drop_rows

from faithwatch.alignment.lexical import LexicalScorer
from faithwatch.claims.lss import ABSENT_NUMBER_RULE
from faithwatch.data.loaders import load_dataset
from faithwatch.eval.text_features import text_cache_folder
from faithwatch.models.folders import cache_dir
from faithwatch.sentences import SentenceTracker
from faithwatch.signals.tagger import TaggerSignal
from faithwatch.text import strip_markup


def changed_examples(name: str) -> set[str]:
    """The ids of ``name``'s examples with a sentence holding a number its context lacks."""
    lexical, out = LexicalScorer(), set()
    for ex in load_dataset(name):
        for s in SentenceTracker.split_text(ex.response):
            text = strip_markup(s.text)
            if text.strip() and lexical.novel_number_forms(text, ex.context):
                out.add(ex.id)
                break
    return out


def main(also: list[str]) -> None:
    tagger = TaggerSignal()
    assert tagger.version.endswith(f"+{ABSENT_NUMBER_RULE}"), tagger.version
    root = cache_dir() / "features"
    before = SimpleNamespace(name=tagger.name, version=tagger.version.removesuffix(f"+{ABSENT_NUMBER_RULE}"),
                             feature_names=tagger.feature_names, precision=tagger.precision)
    for name in (*SETS, *AUGMENT, *also):
        old, new = text_cache_folder(before, name, root), text_cache_folder(tagger, name, root)
        if new.exists() or not old.exists():
            print(f"{name}: {'already carried' if new.exists() else 'no old cache'} ({new.name})")
            continue
        ids = changed_examples(name)
        _copy_without(old, new, ids, _drop_rows)
        print(f"{name}: {len(ids)} examples left to tag again -> {new.name}")


if __name__ == "__main__":
    args = sys.argv[1:]
    main(args[args.index("--also") + 1:] if "--also" in args else [])
