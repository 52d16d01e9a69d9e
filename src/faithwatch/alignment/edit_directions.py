"""The numbers that take the direction of a change ("fell 8%", "a 22% drop"; edits v84): :func:`directions`
(see :mod:`faithwatch.alignment.edits`)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from faithwatch.alignment.edit_tokens import _Token
from faithwatch.alignment.edit_words import DIRECTION_FILLERS, DIRECTIONS
from faithwatch.text import CURRENCY_WORDS, stem

#: most tokens between a direction word and the number after it ("fell by 4.5"; :func:`directions`)
MAX_DIRECTION_GAP = 3
_CURRENCY_KEYS = frozenset(stem(word) for word in CURRENCY_WORDS.values())


@dataclass(frozen=True)
class _Moved:
    """A number with the direction of the change it measures (v84): ``way`` 0 up, 1 down; ``word`` says so."""

    number: _Token
    way: int
    word: _Token
    leads: bool  # the word stands before the number ("fell 8"), not after it ("8 drop")

    def words(self) -> str:
        """The word and the number in their order, as written."""
        return " ".join((self.word.text, self.number.text) if self.leads else (self.number.text, self.word.text))


def _direction(tok: _Token, after: _Token | None) -> int | None:
    """0 (up) or 1 (down) for a word of a change's direction (:data:`DIRECTIONS`), else None; "up to" and "down to"
    are none (a bound)."""
    if tok.number or (tok.key in ("up", "down") and after is not None and after.key == "to"):
        return None
    return next((i for i, words in enumerate(DIRECTIONS) if tok.key in words), None)


def _filler(tok: _Token) -> bool:
    """A word between a number and its direction that neither counts nor blocks ("per cent", a currency word)."""
    return not tok.number and (tok.key in DIRECTION_FILLERS or (not tok.content and tok.key in _CURRENCY_KEYS))


def _year(toks: list[_Token], i: int) -> bool:
    """Whether the number ``toks[i]`` reads as a year: a whole number 1800-2100 with no scale word, or a range's end."""
    after = toks[i + 1] if i + 1 < len(toks) else None
    key = toks[i].key  # ASCII digits only: "¹" (a footnote mark) is a digit to str.isdigit, not to int()
    return bool(toks[i].year) or (key.isascii() and key.isdigit() and 1800 <= int(key) <= 2100
                                  and not (after is not None and after.scale))


def _word_before(toks: list[_Token], i: int) -> _Moved | None:
    """The direction word at most :data:`MAX_DIRECTION_GAP` tokens before the number ``toks[i]``, in its clause, with
    no other number between (fillers not counted)."""
    gap, j = 0, i - 1
    while j >= 0 and gap < MAX_DIRECTION_GAP and toks[j].clause == toks[i].clause and not toks[j].number:
        if not _filler(toks[j]):
            gap += 1
            way = _direction(toks[j], toks[j + 1])
            if way is not None:
                return _Moved(toks[i], way, toks[j], leads=gap == 1)  # leads: right before it, so it wins a tie
        j -= 1
    return None


def _word_after(toks: list[_Token], i: int) -> _Moved | None:
    """The direction word right after the number ``toks[i]`` and its scale word or fillers, in its clause."""
    k = i + 1
    while k < len(toks) and (toks[k].scale or _filler(toks[k])):
        k += 1
    if k == len(toks) or toks[k].clause != toks[i].clause:
        return None
    way = _direction(toks[k], toks[k + 1] if k + 1 < len(toks) else None)
    return None if way is None else _Moved(toks[i], way, toks[k], leads=False)


def directions(toks: list[_Token]) -> list[_Moved]:
    """The numbers of ``toks`` that take the direction of a change (v84): a direction word (:data:`DIRECTIONS`)
    before the number ("fell by 4.5": :func:`_word_before`) or right after it ("a 22% drop", "12 per cent higher":
    :func:`_word_after`); the nearer wins, the one before a tie. Years and list numbers take none; a number that
    ends its sentence ("… fell to 41,000.") is no list number (v85)."""
    out = []
    for i, tok in enumerate(toks):
        if not tok.number or tok.scale or (tok.listed and i < len(toks) - 1) or _year(toks, i):
            continue
        before, after = _word_before(toks, i), _word_after(toks, i)
        found = before if before and (before.leads or after is None) else after
        if found:
            out.append(replace(found, leads=found is before))
    return out
