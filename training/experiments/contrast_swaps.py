"""Issue 12, edits versions 4 to 18: a swap within a closed group of contrast words (am/pm, exports/imports,
metres/feet, tallest/shortest, guilty/innocent, first/second, ...), also leading the sentence, a negating prefix
added or dropped (likely/unlikely) and (version 8, not kept) "all"/"every" in place of a restriction count as flips
(scratch; the rules are in training/data/README.md, "A check set for swapped contrast words", each committed
before its code). Compared with version 3's rules (the opposite pairs only, no prefix, no "all"/"every", no leading
swap; the kept versions 4-9 equal them on every set measured here).

1. Lists every sentence of the six labelled sets, the augmentation set, the never-trained-on sets and the blatant
   suite whose ``edits`` features differ between version 3 and the version in force, with its label.
2. Where sentences of the training sets change: LOO AUROC of the shipped recipe on the same caches with v3 and
   current ("v4") features (mean, per set, worst gain over ``align_score``).
3. On the never-trained-on sets: the shipped detector's sentence AUROC with v3 and v4 features, and (where 2 ran)
   that of the recipe retrained on all six sets with v4.

    FAITHWATCH_DATA=../shared/data PYTHONPATH=training/experiments python training/experiments/contrast_swaps.py \
        training/data/ragtruth-data2txt.jsonl training/data/begin-dev-cmu.tsv training/data/begin-dev-tc.tsv \
        build/extra-data/cliff-xsum.jsonl build/extra-data/cliff-cnndm.jsonl
"""

from __future__ import annotations

import json
import re
import sys
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
from aggregator_variants import print_loo, shipped_recipe
from faith_tune_loo import tables_and_data
from sklearn.metrics import roc_auc_score

from faithwatch.alignment import edit_directions, edit_rules, edit_tokens, edit_words
from faithwatch.alignment import edits as edits_module
from faithwatch.detectors.shipped import default_detector
from faithwatch.eval.training import syncheck_scores
from faithwatch.eval.transfer import held_out_aurocs
from faithwatch.text import strip_markup

ROOT = Path(__file__).resolve().parents[2]
FEATURES = ("edit_match", "edit_swap_num", "edit_swap_word", "edit_neg_flip")
#: the opposite pairs as compared up to version 10 (unstemmed, so seven of them never matched stemmed tokens)
V10_PAIRS = frozenset(frozenset(pair.split()) for pair in (
    "rise fall", "rose fell", "risen fallen", "increas decreas", "more less", "most least", "higher lower",
    "highest lowest", "larger smaller", "largest smallest", "before after", "above below", "gain loss", "win los",
    "won lost", "open clos", "first last", "accept reject", "allow forbid", "includ exclud", "success failur",
    "north south", "east west", "earlier later", "maximum minimum", "strong weak", "young old", "major minor",
    "up down", "grew shrank", "support oppos"))
V3_OPPOSITES = V10_PAIRS


class _EditRules:
    """The modules of the edits rules as one (``edits.py`` was split in four in the seventy-fifth session): a name is
    read from the first module that holds it and set in every module that holds it, so a patched rule is the one
    the code reads."""

    MODULES = (edits_module, edit_rules, edit_tokens, edit_directions)

    def __getattr__(self, name: str):
        for module in self.MODULES:
            if hasattr(module, name):
                return getattr(module, name)
        raise AttributeError(name)

    def __setattr__(self, name: str, value) -> None:
        for module in self.MODULES:
            if hasattr(module, name):
                setattr(module, name, value)


edits = _EditRules()


@contextmanager
def version3():
    """The edits rules of version 3: the opposite pairs only, no negating prefix, no "all"/"every" (version 8)."""
    names = ("OPPOSITES", "_prefixed", "_opposed", "QUANTIFIERS", "PARTIALS",  # the last two: version 8 (47f4cd8)
             "_exchanged")
    now = {n: getattr(edits, n) for n in names if hasattr(edits, n)}
    off = {"OPPOSITES": V3_OPPOSITES, "_prefixed": lambda mine, theirs: False, "QUANTIFIERS": frozenset(),
           "_exchanged": lambda *a: [],
           "PARTIALS": frozenset(), "_opposed": lambda mine, theirs, *_: any(  # no source guard (version 9)
               frozenset((a.key, b.key)) in edits.OPPOSITES for a in mine for b in theirs)}
    for n in now:
        setattr(edits, n, off[n])
    found = edits.EditScorer._edits  # no leading replacement counts (version 10)
    edits.EditScorer._edits = lambda self, *a: (lambda m, ops, keys: (m, [o for o in ops if o[0] != "lead"], keys))(
        *found(self, *a))
    try:
        yield
    finally:
        for n, v in now.items():
            setattr(edits, n, v)
        edits.EditScorer._edits = found


@contextmanager
def _version6():
    """With --wordnet: the rules of version 6 (the edits code at this commit, without WordNet's pairs)."""
    now = edits.OPPOSITES
    edits.OPPOSITES = V3_OPPOSITES
    try:
        yield
    finally:
        edits.OPPOSITES = now


@contextmanager
def _version10():
    """With --v10: the opposite pairs compared unstemmed, as up to version 10 (the contrast groups as now: since
    version 12 that is version 12 with the pairs unstemmed; the v11 figures were measured before version 12)."""
    now = edits.OPPOSITES
    pairs = edits.OPPOSITES - edit_words.opposites(edit_words.OPPOSITE_PAIRS, ())
    edits.OPPOSITES = pairs | V10_PAIRS | edit_words.opposites((), edit_words.CONTRASTS)  # a group's pair stays
    try:
        yield
    finally:
        edits.OPPOSITES = now


@contextmanager
def _version11():
    """With --v11: the rules of version 11 (no verbs-of-change group, no scale-word flip)."""
    now, rescaled = edits.OPPOSITES, edits._rescaled
    groups = [g for g in edit_words.CONTRASTS if edits.stem("increase") not in frozenset().union(*g)]
    assert len(groups) == len(edit_words.CONTRASTS) - 1
    edits.OPPOSITES = edit_words.opposites(edit_words.OPPOSITE_PAIRS, tuple(groups))
    edits._rescaled = lambda mine, theirs: False
    try:
        yield
    finally:
        edits.OPPOSITES, edits._rescaled = now, rescaled


@contextmanager
def _version12():
    """With --v12: the rules of version 12 (no stance groups; version 13 and version 14's narrowing "only", measured
    at ca39f94, were not kept)."""
    now = edits.OPPOSITES
    groups = _groups_before("against")
    edits.OPPOSITES = edit_words.opposites(edit_words.OPPOSITE_PAIRS, tuple(groups))
    try:
        yield
    finally:
        edits.OPPOSITES = now


#: the class members version 15 added (by stem)
V15_MEMBERS = frozenset({"m", "c", "f", "sec", "min", "hr", "hrs", "wk", "wks", "yr", "yrs"})


@contextmanager
def _version14():
    """With --v14: the rules of version 14 (no unit abbreviations; version 15's a.m./p.m. and currency-symbol
    tokens, measured at 26d550e, were not kept)."""
    now = edits.OPPOSITES
    edits.OPPOSITES = frozenset(pair for pair in now if not pair & V15_MEMBERS)
    try:
        yield
    finally:
        edits.OPPOSITES = now


@contextmanager
def _patched(values: dict):
    """The edits rules with ``values`` set on :mod:`faithwatch.alignment.edits` (restored after)."""
    now = {name: getattr(edits, name) for name in values}
    for name, value in values.items():
        setattr(edits, name, value)
    try:
        yield
    finally:
        for name, value in now.items():
            setattr(edits, name, value)


#: the baselines that switch one rule off: flag -> what they set on the edits module (the version measured)
RULE_BASELINES = {
    "--v15": {"_exchanged": lambda *a: []},  # version 18: an exchange of two spans (16 and 17 not kept)
    "--v23": {"PREPOSITIONS": frozenset()},  # version 25: no exchange after the same preposition (24 not kept)
    "--v26": {"_anchored": lambda opcodes: []},  # version 28 (first measured as 27): a swap in a paraphrased copy
    "--v28": {"_acronyms": lambda text: frozenset()},  # version 30 B: an acronym of a context name (29, 30 A not kept)
}


@contextmanager
def _groups_until(word: str):
    """The rules with only the contrast groups listed before the first one that holds ``word``: the rules of the
    version before the one that added that group (other rules as now)."""
    now = edits.OPPOSITES
    edits.OPPOSITES = edit_words.opposites(edit_words.OPPOSITE_PAIRS, _groups_before(word))
    try:
        yield
    finally:
        edits.OPPOSITES = now


#: the baselines that only leave out contrast groups: flag -> the first word of the first group left out (--v18:
#: versions 21-23 and 26; --v21: 22, 23, 26; --v22: 23, 26; --v25: 26, first measured as 24; --v30: 31; 19, 20, 24
#: not kept)
GROUP_BASELINES = {"--v18": "mainly", "--v21": "often", "--v22": "beat", "--v25": "prevent", "--v30": "mild"}


def _groups_before(word: str) -> tuple:
    """The contrast groups listed before the first one that holds ``word`` (the first group a version added), so
    that a baseline stays right when later versions append groups."""
    i = next(i for i, g in enumerate(edit_words.CONTRASTS) if edits.stem(word) in frozenset().union(*g))
    return edit_words.CONTRASTS[:i]


#: version 32 against version 31: the modal and bound groups left out, "up to" read as two words
RULE_BASELINES["--v31"] = {"OPPOSITES": edit_words.opposites(edit_words.OPPOSITE_PAIRS, _groups_before("may")),
                           "_bound_keys": lambda toks: [t.key for t in toks]}

#: version 34 (33 not kept) against version 32: a changed negation is a flip whatever else the span changes
RULE_BASELINES["--v32"] = {"_flips": lambda mine, theirs, keys: (
    edits._negations(mine) != edits._negations(theirs) or edits._opposed(mine, theirs, keys)
    or edits._prefixed(mine, theirs) or edits._rescaled(mine, theirs))}

#: version 35 against version 34: no doubled-consonant forms (banned, winning), no "forbidden" or "forbade"
_V34_CONTRASTS = tuple(edit_words.classes(g.replace(" forbidden forbade", ""), doubled=False)
                       for g in edit_words.CONTRAST_GROUPS)
RULE_BASELINES["--v34"] = {
    "OPPOSITES": edit_words.opposites(edit_words.OPPOSITE_PAIRS, _V34_CONTRASTS, doubled=False),
    "UNIT_GROUPS": tuple(frozenset().union(*g) for g in _V34_CONTRASTS if frozenset().union(*g) & {
        edits.stem(w) for w in ("metre", "tonne", "euro", "minute", "celsius", "litre", "acre")})}

#: version 36 against version 35: only negation words count as negations, no verb that negates
RULE_BASELINES["--v35"] = {"_negations": lambda toks: sum(1 for t in toks if not t.number
                                                          and t.key in edit_words.NEGATIONS)}

#: version 37 against version 36: no contradictory cancels a changed negation
RULE_BASELINES["--v36"] = {"CONTRADICTORIES": frozenset()}

#: version 38 against version 37: "note" keyed as "not", "No. 1" and "no-fly" with a negation "no"
RULE_BASELINES["--v37"] = {"_TOKEN_RE": re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?|\w+(?:['’]\w+)?"),
                           "_NUMBER_AFTER": re.compile(r"(?!)"),
                           "_key": lambda low: low if low in edit_words.NEGATIONS else edits.stem(low)}


def edit_columns(pairs: list[tuple[str, str]]) -> pd.DataFrame:
    """The edits features of (sentence, context) pairs under the rules in force (of the sentence as the signal reads
    it: without markup, markup rules 1-4)."""
    scorer = edits.EditScorer()
    return pd.DataFrame([scorer.evidence(strip_markup(s), c) for s, c in pairs], columns=list(FEATURES))


def changed(name: str, table: pd.DataFrame, contexts: dict[str, str]) -> pd.DataFrame:
    """``table`` with its v3 edits features (``table`` holds v4's); prints the rows where they differ."""
    pairs = [(t, contexts[e]) for t, e in zip(table.text, table.example_id, strict=True)]
    new = edit_columns(pairs)
    assert np.allclose(new.to_numpy(), table[list(FEATURES)].to_numpy(), equal_nan=True), "tables are not v4"
    with version3():
        old = edit_columns(pairs)
    diff = np.flatnonzero((old.to_numpy() != new.to_numpy()).any(axis=1))
    labels = table.label.iloc[diff].value_counts(dropna=False).to_dict() if len(diff) else {}
    print(f"{Path(name).stem:<22} sentences {len(table):>6}  changed {len(diff):>3}  labels {labels}", flush=True)
    for i in diff:
        print(f"    label {table.label.iloc[i]}: {table.text.iloc[i][:150]!r}  flip {old.edit_neg_flip[i]:.0f} -> "
              f"{new.edit_neg_flip[i]:.0f}", flush=True)
    return table.assign(**{f: old[f].to_numpy() for f in FEATURES})


def blatant() -> None:
    """The blatant suite's items whose edits features change."""
    items = [json.loads(line) for line in (ROOT / "tests" / "data" / "blatant.jsonl").open(encoding="utf-8")]
    pairs = [(it["sentence"], it["context"]) for it in items]
    new = edit_columns(pairs)
    with version3():
        old = edit_columns(pairs)
    diff = np.flatnonzero((old.to_numpy() != new.to_numpy()).any(axis=1))
    print(f"blatant suite: {len(items)} items, changed {len(diff)}", flush=True)
    for i in diff:
        print(f"    {items[i].get('label')}: {items[i]['sentence'][:150]!r}", flush=True)


def main(never_seen: list[str]) -> None:
    global V3_OPPOSITES, version3
    if never_seen[:1] == ["--wordnet"]:  # version 6 against version 6 + WordNet's pairs (v7 as pre-registered)
        from wordnet_antonyms import wordnet_pairs

        V3_OPPOSITES, never_seen = edits.OPPOSITES, never_seen[2:]
        edits.OPPOSITES = edits.OPPOSITES | wordnet_pairs(Path(sys.argv[2]))
        version3 = _version6
    if never_seen[:1] and never_seen[0] in GROUP_BASELINES:  # the version that added groups against the one before
        never_seen, version3 = never_seen[1:], partial(_groups_until, GROUP_BASELINES[never_seen[0]])
    if never_seen[:1] and never_seen[0] in RULE_BASELINES:  # the version that added a rule against the one before
        never_seen, version3 = never_seen[1:], partial(_patched, RULE_BASELINES[never_seen[0]])
    if never_seen[:1] == ["--v14"]:  # version 15 (unit abbreviations) against version 14
        never_seen, version3 = never_seen[1:], _version14
    if never_seen[:1] == ["--v12"]:  # version 14 (stance groups) against version 12
        never_seen, version3 = never_seen[1:], _version12
    if never_seen[:1] == ["--v11"]:  # version 12 (verbs of change, scale words) against version 11
        never_seen, version3 = never_seen[1:], _version11
    if never_seen[:1] == ["--v10"]:  # version 11 (the opposite pairs stemmed) against version 10
        never_seen, version3 = never_seen[1:], _version10
    blatant()
    tables, data, _ = tables_and_data(never_seen)
    measured = {n for n in tables if Path(n).stem in {Path(m).stem for m in never_seen}}  # keys: the sets' stems
    old_tables, n_changed = {}, 0
    for name, t in tables.items():
        contexts = {e.id: e.context for e in data[name].examples}
        old_tables[name] = changed(name, t, contexts)
        if name not in measured:
            n_changed += int((old_tables[name][list(FEATURES)].to_numpy() != t[list(FEATURES)].to_numpy()).any(1).sum())
    det = default_detector(None)
    for name in sorted(measured):
        t, o = tables[name], old_tables[name]
        y = t.label.to_numpy().astype(int)
        print(f"{Path(name).stem:<22} shipped detector AUROC v3 {roc_auc_score(y, -syncheck_scores(det, o)):.4f}  "
              f"v4 {roc_auc_score(y, -syncheck_scores(det, t)):.4f}", flush=True)
    if n_changed:
        training_sets = {n: t for n, t in tables.items() if n not in measured}
        v3 = held_out_aurocs({n: old_tables[n] for n in training_sets}, shipped_recipe(), "text-only")
        v4 = held_out_aurocs(training_sets, shipped_recipe(), "text-only")
        for n in v3:
            print(f"{Path(n).stem:<22} LOO AUROC v3 {v3[n]:.5f}  v4 {v4[n]:.5f}  change {v4[n] - v3[n]:+.5f}")
        print(f"mean: v3 {np.mean(list(v3.values())):.5f}  v4 {np.mean(list(v4.values())):.5f}")
        print_loo({n: old_tables[n] for n in training_sets}, {"shipped recipe, edits v3": shipped_recipe()})
        print_loo(training_sets, {"shipped recipe, edits v4": shipped_recipe()})
    else:
        print("no sentence of the training sets changes: the shipped detector and its LOO table stand")


if __name__ == "__main__":
    main(sys.argv[1:])
