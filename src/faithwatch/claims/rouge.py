"""ROUGE and word-level metrics of the LSS evaluation (paper 004): ROUGE-L and ROUGE-N by ``rouge-score`` on a
documented tokenisation, the paper's LSS-based ROUGE-L, and the agreement of a found LSS with a human one."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from faithwatch.claims.lss import _tokens, split_words
from faithwatch.errors import InputError

# ROUGE tokens: lowercase ASCII letters/digits, as the reference implementation (rouge-score) does
_ROUGE_TOKEN_RE = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class RougeScore:
    """Precision (over the candidate), recall (over the reference) and F1 of a ROUGE variant, all in [0, 1]."""

    precision: float
    recall: float
    f1: float


def rouge_tokens(text: str) -> list[str]:
    """ROUGE tokens: lowercased, runs of ASCII letters/digits (no stemming), as ``rouge-score``'s default."""
    return _ROUGE_TOKEN_RE.findall(text.lower())


class _RougeTokenizer:
    """The tokenizer given to ``rouge-score``: faithwatch's documented tokenisation (:func:`rouge_tokens`)."""

    def tokenize(self, text: str) -> list[str]:
        return rouge_tokens(text)


#: highest n of :func:`rouge_n` (``rouge-score`` knows the types ``rouge1`` .. ``rouge9``)
_MAX_ROUGE_N = 9


@functools.cache
def _rouge_scorer(rouge_type: str) -> Any:
    """One ``rouge_score.rouge_scorer.RougeScorer`` per ROUGE type, built on first use (imported lazily)."""
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer([rouge_type], use_stemmer=False, tokenizer=_RougeTokenizer())


def _rouge(rouge_type: str, candidate: str, reference: str) -> RougeScore:
    # rouge-score's argument order is (target, prediction): precision is over the prediction (our candidate)
    s = _rouge_scorer(rouge_type).score(reference, candidate)[rouge_type]
    return RougeScore(float(s.precision), float(s.recall), float(s.fmeasure))


def _prf(overlap: int, n_candidate: int, n_reference: int) -> RougeScore:
    if overlap == 0 or n_candidate == 0 or n_reference == 0:
        return RougeScore(0.0, 0.0, 0.0)
    p, r = overlap / n_candidate, overlap / n_reference
    return RougeScore(p, r, 2 * p * r / (p + r))


def rouge_l(candidate: str, reference: str) -> RougeScore:
    """ROUGE-L: LCS of the lowercased word tokens; P = LCS/|candidate|, R = LCS/|reference|, F1 (beta = 1).

    Computed by ``rouge-score`` (``rougeL``, no stemming) on the tokens of :func:`rouge_tokens`. An empty side (no
    tokens) gives 0 for all three.
    """
    return _rouge("rougeL", candidate, reference)


def rouge_n(candidate: str, reference: str, n: int = 1) -> RougeScore:
    """ROUGE-N: clipped n-gram overlap of the lowercased word tokens (P over the candidate, R over the reference).

    Computed by ``rouge-score`` (``rouge<n>``, no stemming) on the tokens of :func:`rouge_tokens`; ``n`` is 1..9.
    An empty side (no n-grams) gives 0 for all three.
    """
    if not 1 <= n <= _MAX_ROUGE_N:
        raise InputError(f"ROUGE-N needs 1 <= n <= {_MAX_ROUGE_N} (rouge-score's rouge1..rouge9), got {n}")
    return _rouge(f"rouge{n}", candidate, reference)


def lss_rouge_l(claim: str, lss_text: str) -> RougeScore:
    """The paper's LSS-based ROUGE-L: ROUGE-L with the claim as candidate and the LSS in place of the reference.

    For an LSS that is a subsequence of the claim, precision = LSS tokens / claim tokens, recall = 1 (0 for an
    empty LSS); with a human LSS* (fixed grammar) it is a proper ROUGE-L.
    """
    return rouge_l(claim, lss_text)


def _norm_word(word: str) -> str:
    return "".join(t.lower() for t in _tokens(word))


def align_to_claim(claim_words: Sequence[str], lss_text: str) -> tuple[int, ...]:
    """Indices of the claim words matched by a (human) LSS text: an LCS of the normalised words.

    Words are compared lowercased with punctuation removed, so ``"Star,"`` matches ``"Star."``; LSS words that are
    not claim words (e.g. in an LSS*) are ignored. Ties of the LCS are resolved towards the earliest claim words.
    """
    a = [_norm_word(w) for w in claim_words]
    b = [_norm_word(w) for w in split_words(lss_text)]
    b = [w for w in b if w]
    n, m = len(a), len(b)
    # suffix DP so that a forward greedy walk takes the earliest matches
    dp = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            dp[i][j] = dp[i + 1][j + 1] + 1 if a[i] and a[i] == b[j] else max(dp[i + 1][j], dp[i][j + 1])
    out: list[int] = []
    i = j = 0
    while i < n and j < m:
        if a[i] and a[i] == b[j] and dp[i][j] == dp[i + 1][j + 1] + 1:
            out.append(i)
            i += 1
            j += 1
        elif dp[i + 1][j] >= dp[i][j + 1]:
            i += 1
        else:
            j += 1
    return tuple(out)


def word_prf(predicted: Iterable[int], gold: Iterable[int]) -> RougeScore:
    """Word-level precision/recall/F1 of predicted kept-word indices against gold ones (paper 004's word metrics).

    Both empty: all 1 (agreement that nothing is supported); exactly one empty: all 0.
    """
    p, g = set(predicted), set(gold)
    if not p and not g:
        return RougeScore(1.0, 1.0, 1.0)
    return _prf(len(p & g), len(p), len(g))
