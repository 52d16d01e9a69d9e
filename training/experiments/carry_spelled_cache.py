"""Carry the text-only feature caches over a spelled-number rule without re-running the models on every example.

Spelled-number rule 1 (lexical scorer 11 -> 14, edits 44 -> 46, `align_score` and the LSS tagger keyed by
``text.SPELLED_RULE``) changes a score only where ``text.digits_for_words`` changes a text: a context, a question or
a sentence holding a number written in two or more words; rule 4 (lexical 20 -> 21, edits 57 -> 58, "spelled1" ->
"spelled4") only where it holds an ordinal from 11th to 99th in words (``text.ordinals_in_digits``); rule 5 B
(lexical 21 -> 22, edits 59 -> 60, ``SPELLED_RULE`` unchanged, so the tagger's caches carry whole) only where it
holds a share written as a fraction in words (``text.shares_as_percents``). So the new
caches are the old ones without the examples where the rule changes a text (``align_score``'s text cache and the
tagger's rows); the next ``faithwatch eval`` or ``train`` computes those few again, as for any example missing from
a cache. Existing new folders are left alone.

    python training/experiments/carry_spelled_cache.py [--also DATA ...]

--also adds data sets beyond the detector's (e.g. training/data/ragtruth-data2txt.jsonl).
"""

from __future__ import annotations

import shutil
import sys
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.parquet as pq
from aggregator_variants import AUGMENT, SETS  # sibling script, on sys.path when this one runs

from faithwatch.alignment import get_scorer
from faithwatch.data.loaders import load_dataset
from faithwatch.eval.features import _drop_examples, text_cache_key
from faithwatch.eval.text_features import text_cache_folder
from faithwatch.models.folders import cache_dir
from faithwatch.sentences import SentenceTracker
from faithwatch.signals.tagger import TaggerSignal
from faithwatch.store import write_atomic
from faithwatch.text import SPELLED_RULE, shares_as_percents, strip_markup

#: the lexical scorer's version before the rule, and with it (rule 1: "11", "14"; rule 5 B here)
OLD_LEXICAL, NEW_LEXICAL = "21", "22"
#: the spelled-number rule in the old versions (rule 1: none, the suffix absent; rule 5 B: "spelled4", unchanged)
OLD_RULE = "spelled4"
#: what the rule changes in a text (rule 1: ``digits_for_words``; rule 5 B: the shares)
RULE = shares_as_percents


def changed_examples(name: str) -> set[str]:
    """The ids of ``name``'s examples with a text that the rule reads differently (context, question, a sentence)."""
    out = set()
    for ex in load_dataset(name):
        sentences = SentenceTracker.split_text(ex.response)
        texts = [ex.context, ex.question or "", *(strip_markup(s.text) for s in sentences)]
        if any(RULE(t) != t for t in texts):
            out.add(ex.id)
    return out


def _copy_without(old, new, ids: set[str], drop) -> None:
    tmp = new.with_name(new.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(old, tmp)
    drop(tmp, ids)
    tmp.rename(new)


def text_caches(scorer, name: str, old_version: str, root) -> tuple:
    """``name``'s ``align_score`` text cache folders under ``old_version`` and under the scorer's own version."""
    new_version = scorer.version
    scorer.version = old_version
    try:
        old = root / text_cache_key(scorer, name)
    finally:
        scorer.version = new_version
    return old, root / text_cache_key(scorer, name)


def pending(label: str, old, new) -> bool:
    """Whether ``old`` is to be carried to ``new``; says why not when it is not (already carried, no old cache)."""
    if new.exists() or not old.exists():
        print(f"{label}: {'already carried' if new.exists() else 'no old cache'} ({new.name})")
        return False
    return True


def also_sets() -> list[str]:
    """The data sets named after ``--also`` on the command line (options after them left out)."""
    args = sys.argv[1:]
    return [a for a in args[args.index("--also") + 1:] if not a.startswith("--")] if "--also" in args else []


def _drop_rows(folder, ids: set[str]) -> None:
    for f in sorted(folder.glob("rows-*.parquet")):
        table = pq.read_table(f)
        keep = ~table.column("example_id").to_pandas().isin(ids).to_numpy()
        if not keep.all():
            kept = table.filter(pa.array(keep))
            write_atomic(f, lambda tmp, kept=kept: pq.write_table(kept, tmp))


def main(also: list[str]) -> None:
    scorer = get_scorer("nli-minilm+lexical+embedding")
    new_version = scorer.version
    assert new_version.endswith(f"+{SPELLED_RULE}") and f"+{NEW_LEXICAL}+" in new_version, new_version
    old_version = new_version.removesuffix(SPELLED_RULE).replace(f"+{NEW_LEXICAL}+", f"+{OLD_LEXICAL}+") + OLD_RULE
    tagger = TaggerSignal()
    root = cache_dir() / "features"
    for name in (*SETS, *AUGMENT, *also):
        ids = changed_examples(name)
        old, new = text_caches(scorer, name, old_version, root)
        new_tags = text_cache_folder(tagger, name, root)
        before = SimpleNamespace(name=tagger.name, version=tagger.version.removesuffix(SPELLED_RULE) + OLD_RULE,
                                 feature_names=tagger.feature_names, precision=tagger.precision)
        old_tags = text_cache_folder(before, name, root)
        carries = (("align_score", old, new, _drop_examples), ("tagger", old_tags, new_tags, _drop_rows))
        for kind, src, dst, drop in carries:
            if not pending(f"{name} {kind}", src, dst):
                continue
            _copy_without(src, dst, ids, drop)
            print(f"{name} {kind}: {len(ids)} examples left to recompute -> {dst.name}")


if __name__ == "__main__":
    main(also_sets())
