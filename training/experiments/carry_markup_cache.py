"""Carry the text-only feature caches over markup rule 1 without recomputing unchanged sentences.

Markup rule 1 (`faithwatch.text.strip_markup`, docs/transfer.md "Answers written with markup") changes the text the
signals read only for sentences with a list marker, citation, heading or emphasis; it renames every cache folder.
This copies each data set's `text-*` cache (sentences and `align_score`) to its new name with `align_score`
recomputed for the changed sentences only, and each `tagger-*` cache without the examples that hold a changed
sentence (the next `select` / `eval` tags just those). A full recompute takes about 1.5 h on 2 CPU cores.

    python training/experiments/carry_markup_cache.py [--from markup1] [DATA ...]   # default: the six sets and
                                                                                    # the augmentation set

--from names the rule the existing caches were made under (default: none, the caches before markup rule 1). Every
sentence with markup is recomputed, whether or not the new rule reads it otherwise than the old one; from markup3
(rule 4 added), only the sentences that open with a connective; from markup4 (rule 7 added), only those that open
with a presentation before a claim.
"""

from __future__ import annotations

import shutil
import sys

import numpy as np
from aggregator_variants import AUGMENT, SETS  # sibling script, on sys.path when this one runs

import faithwatch.eval.features as features
import faithwatch.eval.text_features as text_features
from faithwatch.alignment import get_scorer
from faithwatch.data.loaders import load_dataset
from faithwatch.eval.features import _align_example, read_shards, safe_name, spec_digest, write_shard
from faithwatch.models.folders import cache_dir
from faithwatch.signals.tagger import TaggerSignal
from faithwatch.text import MARKUP_RULE, strip_marks, strip_markup
from faithwatch.text.markup import _PRESENTED


def old_text_key(scorer, dataset: str, old: str | None) -> str:
    spec = {"schema": features.TEXT_CACHE_SCHEMA, "alignment": scorer.name, "alignment_version": scorer.version}
    if old:
        spec["markup"] = old
    return f"text-{safe_name(dataset)}-{spec_digest(spec)}"


def fresh(folder):
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    return tmp


def carry_text(scorer, dataset: str, root, old_rule: str | None) -> set[str]:
    """The new text cache of ``dataset``; returns the ids of examples with a changed sentence."""
    old, new = root / old_text_key(scorer, dataset, old_rule), root / features.text_cache_key(scorer, dataset)
    sentences = read_shards(old if old.exists() else new, "sentences", ["example_id", "sentence_index"])
    if sentences.empty:
        print(f"{dataset}: no cache")
        return set()
    changed = sentences.text.map(strip_markup) != sentences.text  # any markup: recomputed (a superset of the changed)
    if old_rule == "markup3":  # rule 4 reads only sentences that open with a connective otherwise
        changed = sentences.text.map(strip_markup) != sentences.text.map(strip_marks)
    if old_rule == "markup4":  # rule 7 (5, 6 not kept) reads only sentences that open with a presentation otherwise
        changed = sentences.text.map(lambda t: bool(_PRESENTED.match(strip_marks(t))))
    ids = set(sentences.example_id[changed])
    if new.exists():
        print(f"{dataset}: text cache already carried ({new.name}); {len(ids)} examples hold changed sentences")
        return ids
    by_id = {e.id: e for e in load_dataset(dataset)}
    col = sentences.columns.get_loc("align_score")
    before = sentences.align_score[changed].to_numpy()
    for ex_id, idx in sentences[changed].groupby("example_id").indices.items():
        rows = np.flatnonzero(changed.to_numpy())[idx]
        sentences.iloc[rows, col] = _align_example(scorer, sentences.text.iloc[rows].tolist(), by_id[ex_id])
    tmp = fresh(new)
    for f in old.iterdir():
        if not f.name.startswith("sentences-"):
            shutil.copy2(f, tmp / f.name)
    write_shard(tmp, "sentences", sentences.to_dict("records"), 0)
    tmp.rename(new)
    moved = np.abs(sentences.align_score[changed].to_numpy() - before)
    print(f"{dataset}: {len(sentences)} sentences, {int(changed.sum())} changed in {len(ids)} examples "
          f"(align_score moved by {moved.mean() if len(moved) else 0:.3f} on average) -> {new.name}")
    return ids


def carry_tagger(dataset: str, ids: set[str], root, old_rule: str | None) -> None:
    signal = TaggerSignal()
    new = text_features.text_cache_folder(signal, dataset, root)
    version, original = signal.version, TaggerSignal.version
    was = f"+{old_rule}" if old_rule else ""
    TaggerSignal.version = property(lambda self: version.replace(f"+{MARKUP_RULE}", was))  # the old key
    try:
        old = text_features.text_cache_folder(signal, dataset, root)
    finally:
        TaggerSignal.version = original
    if new.exists() or not old.exists():
        print(f"  tagger: {'already carried' if new.exists() else 'no old cache'} ({new.name})")
        return
    rows = text_features._read(old)
    kept = rows[~rows.example_id.isin(ids)]
    tmp = fresh(new)
    write_shard(tmp, "rows", kept.to_dict("records"), 0)
    tmp.rename(new)
    print(f"  tagger: {len(kept)} of {len(rows)} rows kept ({len(ids)} examples to tag again) -> {new.name}")


def main(sets: list[str], old_rule: str | None) -> None:
    scorer = get_scorer("nli-minilm+lexical+embedding")
    root = cache_dir() / "features"
    for dataset in sets:
        ids = carry_text(scorer, dataset, root, old_rule)
        carry_tagger(dataset, ids, root, old_rule)


if __name__ == "__main__":
    args = sys.argv[1:]
    rule = None
    if args[:1] == ["--from"]:
        rule, args = args[1], args[2:]
    main(args or [*SETS, *AUGMENT], rule)
