"""Near-copy edit evidence: what a sentence changed in the context sentence it restates.

A sentence that copies one context sentence but swaps a number, flips a negation or replaces a word is the
classic blatant error (and the kind of edit that benchmarks of small factual changes make). The sentence and
every context sentence are tokenised (numbers normalised, spelled-out numbers as digits, "n't" as "not", crude
stems); the context sentence whose alignment (:mod:`difflib`) covers most of the sentence's content tokens is
its *source*. Features (see :data:`EDIT_FEATURES`):

* ``edit_match`` - share of the sentence's content tokens aligned to the source, in [0, 1];
* ``edit_swap_num`` - replaced spans with a number on both sides (a changed number or date);
* ``edit_swap_word`` - short replaced spans (at most :data:`MAX_SWAP_TOKENS` tokens) with a content word on the
  sentence's side (a swapped name, place, verb or antonym);
* ``edit_neg_flip`` - 1 when the sentence and its source differ in their number of negations.

The swap and flip counts are only taken when ``edit_match`` >= :data:`MIN_MATCH`: a loose paraphrase has no
single source, and its "edits" say nothing.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from faithwatch.alignment.base import validate_inputs
from faithwatch.alignment.embedding import split_sentences
from faithwatch.alignment.lexical import NUMBER_WORDS, is_stop, normalise_number, stem

#: what :meth:`EditScorer.evidence` returns (the ``edits`` signal's features)
EDIT_FEATURES = ("edit_match", "edit_swap_num", "edit_swap_word", "edit_neg_flip")
#: below this share of aligned content tokens the sentence has no source, and no edits are counted
MIN_MATCH = 0.5
#: longest replaced span (sentence side, tokens) counted as a word swap
MAX_SWAP_TOKENS = 3
NEGATIONS = frozenset({"not", "no", "never", "without", "none", "nor", "neither", "nobody", "nothing", "cannot"})

_TOKEN_RE = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?|\w+(?:['’]\w+)?")


@dataclass(frozen=True)
class _Token:
    number: bool
    key: str  # normalised number or stem
    content: bool  # a number or a non-stop word


def tokens(text: str) -> list[_Token]:
    """Comparable tokens of ``text``: numbers normalised (spelled-out ones too), words stemmed, n't as not."""
    out: list[_Token] = []
    for m in _TOKEN_RE.finditer(text):
        word = m.group(0)
        if word[0].isdigit():
            out.append(_Token(True, normalise_number(word), True))
            continue
        low = word.lower().replace("’", "'")
        if low.endswith("n't") and len(low) > 3:
            out.append(_Token(False, stem(low[:-3]), not is_stop(low)))
            out.append(_Token(False, "not", False))
        elif low in NUMBER_WORDS:
            out.append(_Token(True, NUMBER_WORDS[low], True))
        else:
            out.append(_Token(False, low if low in NEGATIONS else stem(low), not is_stop(low)))
    return out


def _negations(toks: list[_Token]) -> int:
    return sum(1 for t in toks if not t.number and t.key in NEGATIONS)


def _coverage(sent: list[_Token], source: list[_Token]) -> tuple[float, difflib.SequenceMatcher]:
    matcher = difflib.SequenceMatcher(None, [t.key for t in sent], [t.key for t in source], autojunk=False)
    aligned: set[int] = set()
    for a, _, n in matcher.get_matching_blocks():
        aligned.update(range(a, a + n))
    content = [i for i, t in enumerate(sent) if t.content]
    return (sum(1 for i in content if i in aligned) / len(content) if content else 0.0), matcher


class EditScorer:
    """Near-copy edit evidence of sentences against a context (see the module doc); caches the last context."""

    name = "edits"

    def __init__(self) -> None:
        self._key: str | None = None
        self._sources: list[list[_Token]] = []

    def _context(self, context: str) -> list[list[_Token]]:
        if self._key != context:
            self._sources = [tokens(s) for s in split_sentences(context)]
            self._key = context
        return self._sources

    def evidence(self, sentence: str, context: str) -> dict[str, float]:
        """The :data:`EDIT_FEATURES` of ``sentence`` against ``context``."""
        validate_inputs([sentence], context)
        sent = tokens(sentence)
        best: tuple[float, list[_Token], difflib.SequenceMatcher | None] = (0.0, [], None)
        for source in self._context(context):
            cov, matcher = _coverage(sent, source)
            if cov > best[0]:
                best = (cov, source, matcher)
        match, source, matcher = best
        out = {"edit_match": match, "edit_swap_num": 0.0, "edit_swap_word": 0.0, "edit_neg_flip": 0.0}
        if matcher is None or match < MIN_MATCH:
            return out
        for op, a1, a2, b1, b2 in matcher.get_opcodes():
            if op != "replace":
                continue
            mine, theirs = sent[a1:a2], source[b1:b2]
            if any(t.number for t in mine) and any(t.number for t in theirs):
                out["edit_swap_num"] += 1
            elif a2 - a1 <= MAX_SWAP_TOKENS and any(t.content and not t.number for t in mine):
                out["edit_swap_word"] += 1
        out["edit_neg_flip"] = float(_negations(sent) != _negations(source))
        return out
