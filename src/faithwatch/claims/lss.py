"""Longest Supported Subsequence (LSS, paper 004): the longest subsequence of a claim's words that a reference supports.

The paper generates the LSS with a fine-tuned T5-XL; no such model is available here, so faithwatch *searches*
for it, guided by any :class:`~faithwatch.alignment.AlignmentScorer`: a word subsequence ``S`` is **supported**
when ``scorer.score(" ".join(S), reference) >= threshold``.

Words
    The claim is split on whitespace; a token without any letter or digit (``"-"``, ``"—"``) is glued to the
    word before it (or after it, at the start), so ``len(words)`` counts real words. A word is a *content word*
    when one of its alphanumeric tokens is not a stop word (:data:`faithwatch.text.STOP_WORDS`).

Lexical pre-filter (``prefilter=True``)
    A word is *absent* when one of its content tokens does not occur in the reference (tokens compared after the
    lexical scorer's crude stemming; numbers after normalisation, ``"1,000"`` = ``"1000"``, and spelled-out small
    numbers of the reference count). Absent words are the first deletion candidates.

Search (deterministic; every scorer call goes through ``score_many`` in batches, results are cached by text)
    1. Score the whole claim (its *claim support*). Supported: the LSS is the whole claim, stop.
    2. Pre-filter jump: with ``prefilter`` and at least one absent word, also score the claim without all absent
       words (one call). It joins the beam.
    3. Beam deletion: the beam (at most ``beam_width`` states, best first) is expanded by deleting one span of
       1..``max_span`` consecutive kept words from each state; children with fewer than ``min_content_words``
       content words are never scored (a run of function words asserts nothing). Children are scored in priority
       order (spans with an absent word first, then by beam rank, start position, span length), so when the
       budget runs out the most promising ones have been scored. If any scored state is supported, the longest
       supported one is taken (ties: higher support, then earliest deleted positions) and the deletion stops;
       otherwise the ``beam_width`` best children (support, then length, then earliest deleted positions) form
       the next beam. No children left: the LSS is empty.
    4. Re-insertion (``reinsert=True``): words removed on the way are tried back one at a time (all candidates
       in one batch); the candidate with the highest support that stays supported is kept (ties: earliest
       position), until no single word can be added. Without truncation the result is thus 1-maximal: adding
       any one removed word makes it unsupported.

Budget
    At most ``max_evaluations`` distinct texts are scored per claim. When the cap stops the search before it
    ends, ``truncated_search`` is ``True`` and the result is the best *verified* supported subsequence found so
    far, or empty: the score is then a lower bound. It is never filled with unverified words.

Scores
    ``LSSResult.score`` = LSS words / claim words (0 for an empty LSS, 1 for a supported claim). The paper also
    computes standard metrics with the LSS in place of the reference (:func:`~faithwatch.claims.rouge.lss_rouge_l`,
    ``ROUGE-L(claim, LSS)``); its LSS* (the LSS with spelling/grammar fixed by a human or the model) cannot be
    produced by a search over subsequences, but human LSS* texts can be scored with the same functions. To compare a
    found LSS with a human one there are :func:`~faithwatch.claims.rouge.align_to_claim` and
    :func:`~faithwatch.claims.rouge.word_prf` (word-level precision/recall/F1). These metrics are in
    :mod:`faithwatch.claims.rouge`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from faithwatch.alignment.base import AlignmentScorer
from faithwatch.alignment.lexical import LexicalScorer
from faithwatch.errors import InputError, NonFiniteError, check_bools
from faithwatch.text import (
    NUMBER_RE,
    NUMBER_WORDS,
    SMALL_NUMBER_WORDS,
    STOP_WORDS,
    normalise_number,
    number_forms,
    stem,
)
from faithwatch.text.visible import is_blank, require_text

__all__ = [
    "ALGORITHM",
    "LSSResult",
    "absent_words",
    "cap_absent_numbers",
    "content_words",
    "lss",
    "lss_tagged",
    "number_absent_words",
    "split_words",
]

#: name/version of the search algorithm (part of every cache key: bump it when the search changes)
ALGORITHM = "lss-search-v1"
#: name/version of the tagger rule (a word is kept when its support probability reaches the threshold)
TAGGER_ALGORITHM = "lss-tagger-v1"
#: the support probability a claim word keeps at most when it holds a number the reference lacks (docs/lss.md,
#: "A number the reference lacks": annotators keep 4% of such words; rule A, for the LSS metric, was not kept)
ABSENT_NUMBER_CAP = 0.05
#: names that rule where it is applied
ABSENT_NUMBER_RULE = "absentnum1"

_ALNUM_RE = re.compile(r"[^\W_]")
# alphanumeric tokens of a word, keeping inner apostrophes ("don't"); "2012-15" -> "2012", "15"
_TOKEN_RE = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_NUMBER_WORDS = {w: NUMBER_WORDS[w] for w in SMALL_NUMBER_WORDS}  # zero to twenty


# ---------------------------------------------------------------- words


def split_words(text: str) -> list[str]:
    """The claim's words: whitespace tokens, punctuation-only tokens glued to a neighbour (see module doc)."""
    words: list[str] = []
    pending = ""  # punctuation-only tokens before the first real word
    for tok in text.split():
        if _ALNUM_RE.search(tok):
            words.append(f"{pending} {tok}" if pending else tok)
            pending = ""
        elif words:
            words[-1] = f"{words[-1]} {tok}"
        else:
            pending = f"{pending} {tok}" if pending else tok
    if pending:  # no real word at all: keep the punctuation as one "word"
        words.append(pending)
    return words


def _tokens(word: str) -> list[str]:
    return _TOKEN_RE.findall(word)


def _units(text: str) -> tuple[list[str], list[str]]:
    """(normalised numbers, word tokens not starting with a digit) of a text, as the lexical scorer sees them."""
    numbers = [normalise_number(m.group(0)) for m in NUMBER_RE.finditer(text)]
    return numbers, [t for t in _tokens(text) if not t[0].isdigit()]


def _is_stop(token: str) -> bool:
    return token.lower().replace("’", "'") in STOP_WORDS


def content_words(words: Sequence[str]) -> list[bool]:
    """Per word: does it hold a number or a token that is not a stop word?"""
    out = []
    for w in words:
        numbers, toks = _units(w)
        out.append(bool(numbers) or any(not _is_stop(t) for t in toks))
    return out


def _reference_index(reference: str) -> tuple[frozenset[str], frozenset[str]]:
    numbers, toks = _units(reference)
    stems = frozenset(stem(t) for t in toks)
    spelled = {_NUMBER_WORDS[t.lower()] for t in toks if t.lower() in _NUMBER_WORDS}
    return stems, frozenset(numbers) | spelled


def absent_words(words: Sequence[str], reference: str) -> list[bool]:
    """Per word: is one of its numbers or non-stop tokens missing from the reference (the lexical pre-filter)?"""
    stems, ref_numbers = _reference_index(reference)
    out = []
    for w in words:
        numbers, toks = _units(w)
        out.append(any(n not in ref_numbers for n in numbers)
                   or any(stem(t) not in stems for t in toks if not _is_stop(t)))
    return out


def number_absent_words(words: Sequence[str], reference: str) -> list[bool]:
    """Per word: does it hold a number the reference lacks, as the lexical scorer's ``novel_numbers`` reads numbers
    (:meth:`~faithwatch.alignment.lexical.LexicalScorer.novel_number_forms`)?"""
    novel = LexicalScorer().novel_number_forms(" ".join(words), reference) if words else frozenset()
    return [bool(novel) and any(not forms.isdisjoint(novel) for forms in number_forms(w)) for w in words]


def cap_absent_numbers(probs: np.ndarray, words: Sequence[str], reference: str) -> np.ndarray:
    """Word support probabilities with :data:`ABSENT_NUMBER_CAP` as the most a word holding a number the reference
    lacks keeps (:func:`number_absent_words`)."""
    absent = np.array(number_absent_words(words, reference), dtype=bool)
    return np.where(absent, np.minimum(probs, ABSENT_NUMBER_CAP), probs) if absent.any() else np.asarray(probs)


# ---------------------------------------------------------------- result


@dataclass(frozen=True)
class LSSResult:
    """The outcome of :func:`lss` for one claim.

    Attributes:
        claim_words: the claim's words (see :func:`split_words`).
        kept_indices: indices into ``claim_words`` of the LSS, increasing; empty when nothing is supported.
        evaluations: distinct texts scored by the scorer (<= ``max_evaluations``).
        truncated_search: the evaluation cap stopped the search: the score is a lower bound.
        support_of_subsequence: the scorer's support of the LSS text (``None`` for an empty LSS).
        support_of_claim: the scorer's support of the whole claim (its plain alignment score).
        threshold: the support threshold used.
        scorer: the scorer's name.
        word_support: with the tagger (:func:`lss_tagged`), each claim word's support probability.
    """

    claim_words: tuple[str, ...]
    kept_indices: tuple[int, ...]
    evaluations: int
    truncated_search: bool
    support_of_subsequence: float | None
    support_of_claim: float
    threshold: float
    scorer: str = ""
    algorithm: str = field(default=ALGORITHM)
    word_support: tuple[float, ...] | None = None

    @property
    def subsequence_words(self) -> list[str]:
        """The LSS as a list of words."""
        return [self.claim_words[i] for i in self.kept_indices]

    @property
    def text(self) -> str:
        """The LSS as text (its words joined by single spaces; ``""`` when empty)."""
        return " ".join(self.subsequence_words)

    @property
    def length(self) -> int:
        """Number of words of the LSS."""
        return len(self.kept_indices)

    @property
    def score(self) -> float:
        """LSS score: LSS words / claim words, in [0, 1]."""
        return len(self.kept_indices) / len(self.claim_words)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (strict JSON: no NaN)."""
        return {
            "lss": self.text,
            "kept_indices": list(self.kept_indices),
            "lss_length": self.length,
            "claim_length": len(self.claim_words),
            "score": self.score,
            "evaluations": self.evaluations,
            "truncated_search": self.truncated_search,
            "support_of_subsequence": self.support_of_subsequence,
            "support_of_claim": self.support_of_claim,
            "threshold": self.threshold,
            "scorer": self.scorer,
            "algorithm": self.algorithm,
            **({"word_support": list(self.word_support)} if self.word_support is not None else {}),
        }


# ---------------------------------------------------------------- search

State = tuple[int, ...]


class _Search:
    """One claim's search state: the cache of supports and the evaluation budget."""

    def __init__(self, words: list[str], reference: str, scorer: AlignmentScorer, threshold: float,
                 max_evaluations: int, prefilter: bool, min_content_words: int) -> None:
        self.words = words
        self.reference = reference
        self.scorer = scorer
        self.threshold = threshold
        self.budget = max_evaluations
        self.content = content_words(words)
        self.absent = absent_words(words, reference) if prefilter else [False] * len(words)
        self.min_content = min_content_words
        self.by_text: dict[str, float] = {}
        self.evaluations = 0
        self.truncated = False

    def text(self, state: State) -> str:
        return " ".join(self.words[i] for i in state)

    def valid(self, state: State) -> bool:
        return bool(state) and sum(self.content[i] for i in state) >= self.min_content

    def support(self, state: State) -> float:
        return self.by_text[self.text(state)]

    def supported(self, state: State) -> bool:
        return self.support(state) >= self.threshold

    def evaluate(self, states: Sequence[State]) -> list[State]:
        """Score the states not scored yet (in the given priority order, within budget); return the scored ones."""
        todo = list(dict.fromkeys(t for t in map(self.text, states) if t not in self.by_text))  # ordered, unique
        room = self.budget - self.evaluations
        if len(todo) > room:
            self.truncated = True
            todo = todo[:room]
        if todo:
            scores = self.scorer.score_many(todo, self.reference)
            if len(scores) != len(todo):
                raise InputError(f"scorer {self.scorer.name!r} returned {len(scores)} scores for {len(todo)} texts")
            for t, v in zip(todo, scores, strict=True):
                v = float(v)
                if not math.isfinite(v):
                    raise NonFiniteError(f"scorer {self.scorer.name!r} returned {v} for {t!r}")
                self.by_text[t] = v
            self.evaluations += len(todo)
        return [s for s in states if self.text(s) in self.by_text]

    def deleted(self, state: State) -> tuple[int, ...]:
        kept = set(state)
        return tuple(i for i in range(len(self.words)) if i not in kept)

    def rank_key(self, state: State) -> tuple[float, int, tuple[int, ...]]:
        # best first: higher support, then longer, then earliest deleted positions
        return (-self.support(state), -len(state), self.deleted(state))


def _children(search: _Search, beam: Sequence[State], max_span: int) -> list[State]:
    """Deletion children of the beam states, in scoring-priority order, deduplicated, valid ones only."""
    ranked: list[tuple[tuple[int, int, int, int], State]] = []
    for rank, state in enumerate(beam):
        for start in range(len(state)):
            for span in range(1, max_span + 1):
                if start + span > len(state):
                    break
                child = state[:start] + state[start + span :]
                if not search.valid(child):
                    continue
                has_absent = any(search.absent[i] for i in state[start : start + span])
                ranked.append(((0 if has_absent else 1, rank, state[start], span), child))
    ranked.sort(key=lambda kv: kv[0])
    seen: set[State] = set()
    out: list[State] = []
    for _, child in ranked:
        if child not in seen:
            seen.add(child)
            out.append(child)
    return out


def _reinsert(search: _Search, state: State) -> State:
    """Add removed words back one at a time while the subsequence stays supported (best support first)."""
    while True:
        kept = set(state)
        removed = [i for i in range(len(search.words)) if i not in kept]
        if not removed:
            return state
        # present words first (likelier to stay supported), then by position
        removed.sort(key=lambda i: (search.absent[i], i))
        cands = [tuple(sorted((*state, i))) for i in removed]
        scored = search.evaluate(cands)
        ok = [c for c in scored if search.supported(c)]
        if not ok:
            return state
        # highest support; ties: the earliest re-inserted position
        state = min(ok, key=lambda c: (-search.support(c), min(set(c) - kept)))
        if search.truncated:
            return state


def check_threshold(threshold: Any) -> None:
    """A support threshold is a number in (0, 1] (NaN fails too); else an :class:`InputError`."""
    if not (isinstance(threshold, (int, float)) and 0.0 < threshold <= 1.0):
        raise InputError(f"threshold must be in (0, 1], got {threshold!r}", names=("threshold",))


def lss(
    claim: str,
    reference: str,
    scorer: AlignmentScorer,
    *,
    threshold: float = 0.5,
    max_evaluations: int = 200,
    beam_width: int = 2,
    max_span: int = 1,
    prefilter: bool = True,
    reinsert: bool = True,
    min_content_words: int = 1,
) -> LSSResult:
    """Find the Longest Supported Subsequence of ``claim`` given ``reference`` (algorithm in the module doc).

    Args:
        claim: the claim (non-blank).
        reference: the reference text (non-blank).
        scorer: the support scorer, e.g. ``get_scorer("lexical")``; its ``score_many`` is called in batches.
        threshold: support needed to call a subsequence supported, in (0, 1].
        max_evaluations: cap on distinct texts scored for this claim (>= 1).
        beam_width: states kept per deletion step (>= 1).
        max_span: longest run of consecutive kept words deleted in one step (>= 1).
        prefilter: use the lexical pre-filter (absent words first, plus the jump without all of them).
        reinsert: run the re-insertion pass on the supported subsequence found.
        min_content_words: a proper subsequence needs at least this many content words to be scored (>= 0).

    Raises:
        InputError: blank claim or reference, or an out-of-range parameter.
        NonFiniteError: the scorer returned NaN/inf.
    """
    _check_pair(claim, reference)
    check_threshold(threshold)
    check_bools(prefilter=prefilter, reinsert=reinsert)
    for name, value, low in (("max_evaluations", max_evaluations, 1), ("beam_width", beam_width, 1),
                             ("max_span", max_span, 1), ("min_content_words", min_content_words, 0)):
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise InputError(f"{name} must be an integer >= {low}, got {value!r}")

    words = split_words(claim)
    search = _Search(words, reference, scorer, float(threshold), max_evaluations, prefilter, min_content_words)
    full: State = tuple(range(len(words)))
    search.evaluate([full])
    claim_support = search.support(full)

    best: State | None = full if search.supported(full) else None
    beam: list[State] = [full]
    if best is None and prefilter and any(search.absent):
        jump = tuple(i for i in full if not search.absent[i])
        if search.valid(jump) and search.evaluate([jump]):
            beam.append(jump)
            if search.supported(jump):
                best = jump
    while best is None and not search.truncated:
        beam = sorted(beam, key=search.rank_key)[:beam_width]
        children = search.evaluate(_children(search, beam, max_span))
        if not children:  # nothing left to delete (or no budget for it)
            break
        supported = [c for c in children if search.supported(c)]
        if supported:
            best = min(supported, key=lambda c: (-len(c), -search.support(c), search.deleted(c)))
        beam = children
    if best is not None and reinsert and best != full and not search.truncated:
        best = _reinsert(search, best)

    kept = best if best is not None else ()
    return LSSResult(
        claim_words=tuple(words),
        kept_indices=kept,
        evaluations=search.evaluations,
        truncated_search=search.truncated,
        support_of_subsequence=search.support(kept) if kept else None,
        support_of_claim=claim_support,
        threshold=float(threshold),
        scorer=getattr(scorer, "name", type(scorer).__name__),
    )


def lss_tagged(claims: Sequence[str], references: Sequence[str], tagger: Any,
               threshold: float | None = None) -> list[LSSResult]:
    """The LSS of each claim read off a trained tagger (:class:`faithwatch.nli.tagger.LSSTagger`): the words whose
    support probability reaches ``threshold`` (default: the tagger's own), in one batched model pass.

    ``support_of_claim`` is the mean word probability, ``support_of_subsequence`` the lowest kept one; the
    result is not verified by a scorer, so ``evaluations`` is 1 and nothing is truncated.

    Raises:
        InputError: a blank claim or reference, a claim too long for the tagger, or a threshold outside (0, 1].
    """
    thr = tagger.threshold if threshold is None else threshold
    check_threshold(thr)
    words = []
    for claim, reference in zip(claims, references, strict=True):
        _check_pair(claim, reference)
        words.append(split_words(claim))
    out = []
    for w, probs in zip(words, tagger.word_probabilities(words, list(references)), strict=True):
        kept = tuple(i for i, p in enumerate(probs) if p >= thr)
        out.append(LSSResult(
            claim_words=tuple(w), kept_indices=kept, evaluations=1, truncated_search=False,
            support_of_subsequence=float(min(probs[list(kept)])) if kept else None,
            support_of_claim=float(np.mean(probs)), threshold=float(thr), scorer=tagger.version,
            algorithm=TAGGER_ALGORITHM, word_support=tuple(round(float(p), 6) for p in probs)))
    return out


def _check_pair(claim: Any, reference: Any) -> None:
    """A claim and its reference are non-blank text (an :class:`InputError` otherwise)."""
    if not isinstance(claim, str) or is_blank(claim):
        raise InputError("the claim is empty: there is nothing to find a supported subsequence of")
    if not isinstance(reference, str) or is_blank(reference):
        raise InputError("the reference is empty: nothing can support the claim")
    require_text(claim, "the claim")
    require_text(reference, "the reference")
