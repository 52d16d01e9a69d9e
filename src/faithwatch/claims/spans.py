"""Character spans: sentences, sub-sentences, reference chunks, and lexical localisation of claims.

Everything here is deterministic and model-free. Word matching reuses the lexical alignment scorer's
normalisation (lowercase, crude suffix stemming, stop words, ``1,000`` == ``1000``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from faithwatch.text import STOP_WORDS, normalise_number, stem
from faithwatch.text import sentence_spans as text_sentence_spans

Span = tuple[int, int]

# numbers first ("3.5", "1,000"), then words with inner apostrophes/hyphens
_TOKEN_RE = re.compile(r"\d+(?:[.,]\d+)*|\w(?:[\w'’-]*\w)?")
_WORD_RUN = re.compile(r"\S+")
# sub-sentence boundaries: ; or : + space, a spaced dash, a comma before a connective, or a bare
# contrastive/causal connective (but not a bare "and": "salt and pepper" is one claim)
# (not before "which"/"who": a non-restrictive relative clause would cut the main clause in two)
_CONNECTIVES = "and|but|or|so|yet|while|whereas|although|though|because"
_CLAUSE_BREAK = re.compile(
    rf"[;:](?=\s)|\s[—–-]{{1,2}}(?=\s)|,(?=\s+(?:{_CONNECTIVES})\b)|(?<=\w)\s+(?=(?:but|whereas|although|because)\b)",
    re.IGNORECASE,
)
#: a sub-sentence needs at least this many words; shorter pieces are merged into a neighbour
MIN_SUBSENTENCE_WORDS = 3


def sentence_spans(text: str, language: str = "en") -> list[Span]:
    """Sentence spans of ``text`` (:func:`faithwatch.text.sentence_spans`); the whole text when pysbd finds no
    sentence (e.g. no letters)."""
    out = text_sentence_spans(text, language)
    if not out and text.strip():  # pysbd found nothing (e.g. no letters): the whole text is one sentence
        start = len(text) - len(text.lstrip())
        out.append((start, start + len(text.strip())))
    return out


def _strip_span(text: str, start: int, end: int) -> Span:
    raw = text[start:end]
    lead = len(raw) - len(raw.lstrip())
    return start + lead, start + lead + len(raw.strip())


def _n_words(text: str) -> int:
    return sum(1 for _ in _TOKEN_RE.finditer(text))


def subsentence_spans(text: str, language: str = "en") -> list[Span]:
    """Clause-like pieces of each sentence (a deterministic heuristic, no model).

    A sentence is cut after ``;``/``:``, around a spaced dash, before a comma that introduces a
    connective (``, and``, ``, but``, ``, while`` ...) and before a bare ``but``/``whereas``/
    ``although``/``because``. Pieces with fewer than :data:`MIN_SUBSENTENCE_WORDS` words are merged
    into the piece before them (or after them, for the first one). Pieces never overlap.
    """
    out: list[Span] = []
    for s_start, s_end in sentence_spans(text, language):
        sentence = text[s_start:s_end]
        cuts = [0]
        for m in _CLAUSE_BREAK.finditer(sentence):
            cut = m.start() if not m.group(0).strip() else m.end()  # punctuation stays with the left piece
            if cuts[-1] < cut < len(sentence):
                cuts.append(cut)
        cuts.append(len(sentence))
        pieces = [_strip_span(text, s_start + a, s_start + b) for a, b in zip(cuts, cuts[1:], strict=False)]
        pieces = [p for p in pieces if p[1] > p[0]]
        merged: list[Span] = []
        for piece in pieces:
            if merged and (_n_words(text[piece[0] : piece[1]]) < MIN_SUBSENTENCE_WORDS
                           or _n_words(text[merged[-1][0] : merged[-1][1]]) < MIN_SUBSENTENCE_WORDS):
                merged[-1] = (merged[-1][0], piece[1])
            else:
                merged.append(piece)
        out.extend(merged)
    return out


# ---- lexical matching ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Token:
    """A word or number of a text: its match key and character span."""

    key: str
    start: int
    end: int
    stop: bool


def tokens(text: str) -> list[Token]:
    """Word/number tokens with match keys (stems; normalised numbers) and character spans."""
    out: list[Token] = []
    for m in _TOKEN_RE.finditer(text):
        word = m.group(0)
        if word[0].isdigit():
            out.append(Token(normalise_number(word), m.start(), m.end(), False))
        else:
            lower = word.lower().replace("’", "'")
            out.append(Token(stem(word), m.start(), m.end(), lower in STOP_WORDS))
    return out


def content_keys(text: str) -> set[str]:
    """Match keys of the content words/numbers of ``text`` (all words when it has only stop words)."""
    toks = tokens(text)
    keys = {t.key for t in toks if not t.stop}
    return keys or {t.key for t in toks}


#: cost of an unmatched content word inside a claim's window, in matched words (see :func:`locate`)
WINDOW_GAP_COST = 0.5


def _best_window(toks: list[Token], wanted: set[str], required: set[str]) -> tuple[Span, int]:
    """The window of ``toks`` that best holds the ``wanted`` keys: ``(span, matched keys)``.

    Windows start and end on matched tokens and must hold every ``required`` key; the best has the most
    distinct matched keys minus :data:`WINDOW_GAP_COST` per unmatched content word inside it (so a far
    repeat of the subject does not stretch the span over a whole clause), then is the shortest.
    """
    hits = [i for i, t in enumerate(toks) if t.key in wanted]
    best: tuple[float, int, Span, int] | None = None
    for a, i in enumerate(hits):
        seen: set[str] = set()
        gaps = 0
        prev = i
        for j in hits[a:]:
            gaps += sum(1 for t in toks[prev + 1 : j] if not t.stop and t.key not in wanted)
            prev = j
            seen.add(toks[j].key)
            if not required <= seen:
                continue
            span = (toks[i].start, toks[j].end)
            key = (len(seen) - WINDOW_GAP_COST * gaps, -(span[1] - span[0]), span, len(seen))
            if best is None or key[:2] > best[:2]:
                best = key
    assert best is not None  # the required keys occur in toks
    return best[2], best[3]


def locate(
    claim: str, text: str, units: list[Span] | None = None, focus: str | None = None
) -> tuple[Span | None, float]:
    """Map a claim (e.g. a triplet's words) to the best span of ``text``.

    The unit (by default: sentence) holding the largest share of the claim's content words wins. With
    ``focus`` (e.g. a triplet's relation and tail) the share of the focus words decides first: a
    triplet's subject is often a pronoun in the response ("It was completed in 1889"), so the sentence
    is found by what is said of it. Ties go to the tighter match, then the earlier unit. Inside the unit
    the span is the window that holds the focus words found there and the most other claim words
    without stretching over unrelated words (:func:`_best_window`). Returns ``(span, coverage)`` with
    coverage the share of the claim's words inside the span; ``(None, 0.0)`` when no claim word occurs
    in ``text``.
    """
    wanted = content_keys(claim)
    if not wanted or not text.strip():
        return None, 0.0
    focus_keys = (content_keys(focus) & wanted) if focus else set()
    all_toks = tokens(text)
    best: tuple[float, float, int, Span, int] | None = None
    for u_start, u_end in units if units is not None else sentence_spans(text):
        toks = [t for t in all_toks if t.start >= u_start and t.end <= u_end]
        present = wanted & {t.key for t in toks}
        if not present:
            continue
        focus_present = focus_keys & present
        span, matched = _best_window(toks, present, focus_present)
        focus_share = len(focus_present) / len(focus_keys) if focus_keys else 0.0
        key = (focus_share, len(present) / len(wanted), -(span[1] - span[0]), span, matched)
        if best is None or key[:3] > best[:3]:
            best = key
    if best is None:
        return None, 0.0
    return best[3], best[4] / len(wanted)


# ---- finding quotes -----------------------------------------------------------------------------

_QUOTE_CHARS = "\"'“”‘’`«»"
_FOLD = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"'})


def _fold(text: str) -> tuple[str, list[int]]:
    """Lowercased text with whitespace runs collapsed to one space, and each char's original index."""
    chars: list[str] = []
    index: list[int] = []
    for i, ch in enumerate(text):
        if ch.isspace():
            if not chars or chars[-1] == " ":
                continue
            ch = " "
        chars.append(ch.lower().translate(_FOLD))
        index.append(i)
    return "".join(chars), index


def find_quote(quote: str, text: str) -> Span | None:
    """Span of ``quote`` in ``text``, ignoring case, whitespace runs, curly quotes, surrounding quote
    marks and a trailing ellipsis; ``None`` when it is not there verbatim."""
    q = quote.strip().strip(_QUOTE_CHARS).strip()
    q = re.sub(r"(\.\.\.|…)$", "", q).strip()
    if not q:
        return None
    needle, _ = _fold(q)
    hay, index = _fold(text)
    pos = hay.find(needle.strip())
    if pos < 0:
        return None
    return index[pos], index[pos + len(needle.strip()) - 1] + 1


# ---- reference chunks ---------------------------------------------------------------------------


def _split_long(text: str, start: int, end: int, budget: int, n_tokens: Callable[[str], int]) -> list[Span]:
    """Cut an over-long sentence at word boundaries into pieces of at most ``budget`` tokens."""
    words = [(start + m.start(), start + m.end()) for m in _WORD_RUN.finditer(text[start:end])]
    pieces: list[Span] = []
    cur: Span | None = None
    for w in words:
        if cur is None:
            cur = w
        elif n_tokens(text[cur[0] : w[1]]) <= budget:
            cur = (cur[0], w[1])
        else:
            pieces.append(cur)
            cur = w
    if cur is not None:
        pieces.append(cur)  # a single word over the budget stays whole (the model truncates it)
    return pieces


def chunk_spans(text: str, budget: int, n_tokens: Callable[[str], int]) -> list[Span]:
    """Pack the sentences of ``text`` greedily into chunks of at most ``budget`` tokens.

    Chunks are character spans of ``text`` (original whitespace kept); a sentence longer than the
    budget is cut at word boundaries.
    """
    if budget < 1:
        raise ValueError(f"chunk budget must be >= 1 token, got {budget}")
    pieces: list[Span] = []
    for s, e in sentence_spans(text):
        pieces.extend([(s, e)] if n_tokens(text[s:e]) <= budget else _split_long(text, s, e, budget, n_tokens))
    chunks: list[Span] = []
    cur: Span | None = None
    for p in pieces:
        if cur is None:
            cur = p
        elif n_tokens(text[cur[0] : p[1]]) <= budget:
            cur = (cur[0], p[1])
        else:
            chunks.append(cur)
            cur = p
    if cur is not None:
        chunks.append(cur)
    return chunks


def sentence_around(span: tuple[int, int] | None, text: str) -> tuple[int, int] | None:
    """The sentence of ``text`` that holds ``span`` (``span`` itself if none does; ``None`` for ``None``)."""
    if span is None:
        return None
    return next(((s, e) for s, e in sentence_spans(text) if s <= span[0] and span[1] <= e), span)
