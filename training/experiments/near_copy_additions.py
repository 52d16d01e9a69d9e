"""Issue 12, diagnostics counted before any rule (2026-12-02, sixty-fifth and sixty-sixth sessions), none built
(docs/transfer.md, "Words added to a near copy, and a name of the context swapped in" and "A word of the question
put in"):

* ``--added``: near copies whose local edits add (difflib "delete") a content word found nowhere in the context,
  with nothing replaced ("Former", "Swedish-born", "controversial" put into a copied sentence);
* ``--names``: near copies whose change puts a name of the context (capitalised, not an acronym, not a word of a
  contrast group) where the source sentence has another name, the source lacking the new one and the sentence the
  old one, the two not parts of one run of capitalised words of the context nor sharing their first four letters
  ("Mark Hill told reporters …" for "Dr. Lisa Chen … told reporters …").
* ``--asked`` (2026-12-02, sixty-sixth session): sentences whose flip or swap puts in only content words of the
  question ("… how to make styrofoam look like stone", asked about stone, where the passage says concrete).

Each prints, per set, how many sentences it fires on and their labels.

    FAITHWATCH_DATA=../shared/data PYTHONPATH=training/experiments python training/experiments/near_copy_additions.py \\
        --added training/data/ragtruth-data2txt.jsonl training/data/begin-dev-cmu.tsv training/data/begin-dev-tc.tsv \\
        build/extra-data/cliff-xsum.jsonl build/extra-data/cliff-cnndm.jsonl        # (--names the same way; 2 min)
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from faith_tune_loo import tables_and_data

from faithwatch.alignment.edit_words import CONTRASTS
from faithwatch.alignment.edits import EditScorer, tokens
from faithwatch.text import question_support, split_sentences

SHOWN = 10
SWAPS = ("edit_neg_flip", "edit_swap_word", "edit_swap_num")
GROUPED = frozenset().union(*(frozenset().union(*group) for group in CONTRASTS))


def name_runs(context: str) -> list[set[str]]:
    """The keys of each run of two or more capitalised words of the context ("Marcus Rashford")."""
    out = []
    for sentence in split_sentences(context):
        run: set[str] = set()
        for t in [*tokens(sentence), None]:
            if t is not None and t.entity and not t.number:
                run.add(t.key)
                continue
            if len(run) > 1:
                out.append(run)
            run = set()
    return out


def added(scorer: EditScorer, text: str, context: str) -> str | None:
    _, edits = scorer.local_edits(text, context)
    for op, mine, theirs in edits:
        if op == "delete" and not theirs and any(
                t.content and not t.number and not scorer.in_context(t) for t in mine):
            return "+" + " ".join(t.text for t in mine)
    return None


def _names(toks: list) -> list:
    return [t for t in toks if t.entity and t.content and not t.number and not t.caps and t.key not in GROUPED]


def context_name(scorer: EditScorer, text: str, context: str) -> str | None:
    _, edits, held, _ = scorer._edits(text, context)
    for op, mine, theirs in edits:
        new, old = _names(mine), _names(theirs)
        if op not in ("replace", "lead", "anchored") or not new or not old:
            continue
        if (not all(scorer.in_context(t) for t in new) or any(t.key in held.source for t in new)
                or any(t.key in held.sentence for t in old)
                or any(a.key.startswith(b.key[:4]) or b.key.startswith(a.key[:4]) for a in new for b in old)
                or any(a.key in run and b.key in run for run in name_runs(context) for a in new for b in old)):
            continue
        return f"{' '.join(t.text for t in theirs)!r} -> {' '.join(t.text for t in mine)!r}"
    return None


def count_by_set(never_seen: list[str], test: Callable[..., str | None], shown: int = SHOWN,
                 asked: bool = False) -> None:
    """Print, per labelled set and per set of ``never_seen``, how many sentences ``test`` (scorer, sentence, context,
    and with ``asked`` the question) describes, by label, and the first ``shown`` descriptions of each set."""
    tables, data, _ = tables_and_data(never_seen)
    scorer = EditScorer()
    for name, table in tables.items():
        examples = {e.id: e for e in data[name].examples}
        counts: Counter = Counter()
        for text, example_id, label in zip(table.text, table.example_id, table.label, strict=True):
            example = examples[example_id]
            found = test(scorer, text, example.context, *((example.question or "",) if asked else ()))
            if found:
                counts[int(label)] += 1
                if sum(counts.values()) <= shown:
                    print(f"   [{label}] {found}: {text[:110]!r}")
        print(f"{Path(name).stem:<20} fires on {sum(counts.values()):>4} of {len(table):>5}: faithful {counts[0]}, "
              f"unfaithful {counts[1]} (unfaithful in the set: {table.label.mean():.3f})", flush=True)


def asked_word(scorer: EditScorer, text: str, context: str, question: str) -> str | None:
    """The first flip or swap of ``text`` whose new content words are all words the question asks with
    (:func:`~faithwatch.text.question_support`, as the lexical scorer reads them)."""
    asked = {t.key for t in tokens(question_support(question))}
    for change in scorer.changes(text, context)[1]:
        new = [t for t in tokens(change.sentence) if t.content]
        if change.feature in SWAPS and new and all(t.key in asked for t in new):
            return f"{change.source!r} -> {change.sentence!r}"
    return None


MODES = {"--added": added, "--names": context_name, "--asked": asked_word}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in MODES:
        sys.exit(f"usage: near_copy_additions.py {'|'.join(MODES)} [NEVER-SEEN SET ...]")
    count_by_set(sys.argv[2:], MODES[sys.argv[1]], asked=sys.argv[1] == "--asked")
