"""Sentences: the one pysbd wrapper (sentence spans and texts), repeated sentences, passages cut to a budget."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

import pysbd
from pysbd.utils import TextSpan

#: a piece with a word character in it (a piece without one is punctuation, merged into the sentence before it)
WORDISH = re.compile(r"\w")


_WORD = re.compile(r"\w+")


def word_key(text: str) -> tuple[str, ...]:
    """``text``'s words in lower case, punctuation and spacing aside: two sentences with one key say the same."""
    return tuple(w.lower() for w in _WORD.findall(text))


#: leading list markers: a number of one or two digits with "." or ")", or a bullet (not a letter: "A. Smith")
_LIST_MARKS = re.compile(r"^\s*(?:(?:\d{1,2}[.)]|[-*•·])\s+)+")


def repeats(sentence: str, earlier: Iterable[str]) -> bool:
    """Whether ``sentence`` says one of ``earlier`` again, word for word (case, punctuation and leading list markers
    aside: "3. It is 330 m." repeats "1. It is 330 m."); a sentence without words repeats nothing."""
    key = _repeat_key(sentence)
    return bool(key) and any(_repeat_key(e) == key for e in earlier)


@lru_cache(maxsize=4096)  # an answer's earlier sentences are compared again at every new one
def _repeat_key(sentence: str) -> tuple[str, ...]:
    return word_key(_LIST_MARKS.sub("", sentence, count=1))


_local = threading.local()


class _Segmenter(pysbd.Segmenter):
    r"""pysbd's segmenter, its sentences placed in the text without a regex per sentence: pysbd compiles
    ``re.escape(sentence) + r"\s*"`` for each one (and evicts the patterns its rules reuse from re's cache),
    a third of a split's time; the spans are the same (tested against pysbd's own)."""

    def sentences_with_char_spans(self, sentences: list[str]) -> list[TextSpan]:
        """Each sentence's first occurrence, with the whitespace after it, that ends after the one before."""
        text, spans, prior_end = self.original_text, [], 0
        for sent in sentences:
            span = _first_match_after(text, sent, prior_end)
            if span is not None:
                spans.append(TextSpan(text[span[0]:span[1]], *span))
                prior_end = span[1]
        return spans


def _first_match_after(text: str, sent: str, prior_end: int) -> tuple[int, int] | None:
    r"""The first of ``re.finditer(re.escape(sent) + r"\s*", text)``'s matches that ends after ``prior_end``."""
    pos = 0
    while pos <= len(text):
        start = text.find(sent, pos)
        if start < 0:
            return None
        end = start + len(sent)
        while end < len(text) and text[end].isspace():  # what re's \s matches in a str
            end += 1
        if end > prior_end:
            return start, end
        pos = end if end > start else start + 1  # matches do not overlap; an empty one moves on a character
    return None


def segmenter(language: str = "en", char_span: bool = True) -> pysbd.Segmenter:
    """The pysbd segmenter (``clean=False``: the text is never rewritten), one per language, mode and thread
    (a segmenter keeps state while it segments)."""
    cache = _local.__dict__.setdefault("segmenters", {})
    key = (language, char_span)
    if key not in cache:
        cache[key] = _Segmenter(language=language, clean=False, char_span=char_span)
    return cache[key]


def split_sentences(text: str, language: str = "en") -> list[str]:
    """The sentences of ``text`` as pysbd gives them, whitespace-stripped, blank pieces dropped (the whole stripped
    text when pysbd finds none). Memoised: several signals split the same context."""
    return list(_split_cached(text, language))


@lru_cache(maxsize=256)
def _split_cached(text: str, language: str) -> tuple[str, ...]:
    pieces = [s for s in (p.strip() for p in segmenter(language, char_span=False).segment(text)) if s]
    return tuple(pieces or [text.strip()])


def sentence_spans(text: str, language: str = "en", pieces: Iterable[Any] | None = None) -> list[tuple[int, int]]:
    """``(start, end)`` character spans of the sentences of ``text``.

    pysbd's spans (or ``pieces``, spans with ``start``/``end`` from it) may overlap (e.g. on "......"): they are
    clamped; whitespace is stripped, blank pieces dropped and punctuation-only pieces merged into the sentence
    before them.
    """
    out: list[tuple[int, int]] = []
    prev_end = 0
    for piece in segmenter(language).segment(text) if pieces is None else pieces:
        lo = max(piece.start, prev_end)
        raw = text[lo:piece.end]
        prev_end = max(prev_end, piece.end)
        if not raw.strip():
            continue
        start = lo + len(raw) - len(raw.lstrip())
        end = start + len(raw.strip())
        if out and not WORDISH.search(raw):
            out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


def cut_passages(passages: list[str], max_chars: int) -> tuple[list[str], int]:
    """``passages`` with their tail cut so that together they hold at most ``max_chars`` characters (later passages
    dropped, the crossing one shortened), and how many characters were cut."""
    kept, left = [], max_chars
    for passage in passages:
        if left <= 0:
            break
        kept.append(passage[:left])
        left -= len(kept[-1])
    return kept, sum(len(p) for p in passages) - sum(len(p) for p in kept)
