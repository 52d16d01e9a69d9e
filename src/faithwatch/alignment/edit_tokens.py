"""The tokens the ``edits`` features compare: numbers normalised (spelled-out ones, shares, ordinals and
magnitudes too), words stemmed, "n't" as "not", each marked with its clause, capitals and bound
(:func:`tokens`), and the acronyms a context's names spell (see :mod:`faithwatch.alignment.edits`)."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, replace
from functools import lru_cache

from faithwatch.alignment.edit_words import NEGATING_VERBS, NEGATIONS, SCALE_WORDS, lowercase_word
from faithwatch.text import (
    CURRENCY_WORDS,
    NUMBER_AFTER,
    NUMBER_WORDS,
    Measure,
    amounts,
    bound_before,
    is_stop,
    join_thousands,
    month_name,
    normalise_number,
    ordinals_in_digits,
    regnal_ordinals,
    roman_numerals,
    scale_after,
    spelled_numbers,
    spelled_shares,
    stem,
    year_range_ends,
)

_TOKEN_RE = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?|(?<![\w-])[Nn][Oo]-[^\W\d_]+|\w+(?:['’]\w+)?"
                       + "|[" + "".join(map(re.escape, CURRENCY_WORDS)) + "]")  # a currency symbol (v52)
#: "a.m." and "p.m.", read as "am" and "pm" (v51)
_AM_PM_RE = re.compile(r"\b([ap])\.m\.", re.I)
#: what follows a list number ("4 Serve with rice.", "Step 6: Serve …"; v50)
_LISTED_RE = re.compile(r"[.):]|\s+[A-Z]")
#: the key of "no" read as "number" (v38)
_NUMBER_KEY = stem("number")
#: a run of capitalised words that an acronym may spell: the words, with these joining them inside it (v30)
_NAME_WORD_RE = re.compile(r"[A-Za-z][\w'’]*|&")
_ACRONYM_JOINERS = frozenset({"of", "and", "for", "the", "&"})
#: the shortest and longest acronym read as a name of the context (v30)
ACRONYM_LENGTHS = (2, 6)
#: where a clause of a sentence ends: a semicolon or colon, or a conjunction that opens another statement
_CLAUSE_RE = re.compile(r"[;:]|,\s*(?=(?:and|but|so|yet)\b)|\b(?:but|while|whereas|although|though)\b", re.I)


@dataclass(frozen=True)
class _Token:
    number: bool
    key: str  # normalised number or stem
    content: bool  # a number or a non-stop word
    entity: bool = False  # capitalised inside the text, or all capitals (a name, place or acronym)
    clause: int = 0  # which clause of its text it is in (:data:`_CLAUSE_RE`)
    scale: bool = False  # a scale word of a number ("million"): its key is the scale (v12)
    year: str = ""  # the short end of a year range ("08" of "2007-08"): its full year, read by "found" only (v41)
    caps: bool = False  # written in capitals, two or more ("EPA"): maybe an acronym (v30)
    listed: bool = False  # digits followed by ".", ")", ":" or a capitalised word: maybe a list number (v50)
    bound: str = ""  # a number's bound ("more than 300": "above"; `text.bound_before`; v56)
    text: str = ""  # as written (what a change shows; compared only joined: `edits._joined`, v113)
    amount: Measure | None = None  # the amount of unit rule 2 C it is part of ("a day and a half"; v62)
    name: bool = False  # capitalised, in any place, a content word English does not write in lower case (v89)
    roman: str = ""  # a Roman numeral's value ("XIV": "14"; `text.roman_numerals`), or a ruler's ordinal word's
    # ("Eighth" of "Henry the Eighth": "8"; `text.regnal_ordinals`, v105), read only where a change is judged (v101)


def tokens(text: str) -> list[_Token]:
    """Comparable tokens of ``text``: numbers normalised (spelled-out ones too), words stemmed, n't as not; the tokens
    of an amount of unit rule 2 C marked with it (v62)."""
    return list(_tokens(text))


@lru_cache(maxsize=4096)  # a sentence is read again for its reversed changes; tokens are frozen
def _tokens(text: str) -> tuple[_Token, ...]:
    out: list[_Token] = []
    text = _AM_PM_RE.sub(lambda m: m.group(1) + "m", join_thousands(text))  # "p.m.": pm, as "9pm" (v51)
    text = ordinals_in_digits(text)  # "twenty-first": 21 and "st", as "21st" (v58)
    ends = [m.start() for m in _CLAUSE_RE.finditer(text)]
    years = year_range_ends(text)  # "2007-08": the "08" is also 2008 (v41)
    spelled = {start: (end, digits) for start, end, digits in spelled_numbers(text)}  # "three hundred": 300 (v46)
    shares = {start: rest for start, *rest in spelled_shares(text)}  # "two-thirds of": 67 and "of" (v60)
    romans = {start: (end, value) for start, end, value in roman_numerals(text)}  # "XIV": 14 (v101)
    # "Henry the Eighth": "Eighth" is 8, as "VIII" is (v105; "the 14th" is a number already)
    romans |= {start: (end, value) for start, end, value in regnal_ordinals(text, words_only=True)}
    number: tuple[int, int] | None = None  # the span of the number token just before, if any
    skip = 0  # the end of the number in words just read
    starts: list[int] = []  # where the match that gave each token starts (for amounts: v62)
    start = 0
    for m in _TOKEN_RE.finditer(text):
        starts += [start] * (len(out) - len(starts))  # the tokens of the last match
        start = m.start()
        if m.start() < skip:
            continue
        word, clause = m.group(0), bisect.bisect_right(ends, m.start())
        if word in CURRENCY_WORDS:  # its currency's word, not a content token (v52)
            out.append(_Token(False, stem(CURRENCY_WORDS[word]), False, clause=clause, text=word))
            continue
        if m.start() in shares:
            skip, percent, of = shares[m.start()]
            out += _share_tokens(text[m.start():skip], percent, of, clause, bound_before(text, m.start()) or "")
            number = None
            continue
        if m.start() in spelled:
            skip, digits = spelled[m.start()]
            out.append(_Token(True, normalise_number(digits), True, clause=clause, text=text[m.start():skip],
                              bound=bound_before(text, m.start()) or ""))
            number = None
            continue
        if word[0].isdigit():
            year = years.get(m.start(), "")
            out.append(_Token(True, normalise_number(word), True, clause=clause, text=word, year=year,
                              listed=bool(_LISTED_RE.match(text, m.end())), bound=bound_before(text, m.start()) or ""))
            number = m.span()
            continue
        scale = scale_after(text, *number, m.start(), word) if number else None
        number = None
        if scale:  # "£3m", "3bn": a scale word, as "million" is (v44)
            out.append(_Token(True, scale, True, clause=clause, scale=True, text=word))
            continue
        low = month_name(text, m.start(), m.end()) or word.lower().replace("’", "'")  # "Feb. 14": february (v42)
        if low.endswith("n't") and len(low) > 3:
            out.append(_Token(False, stem(low[:-3]), not is_stop(low), clause=clause, text=word[:-3]))
            out.append(_Token(False, "not", False, clause=clause, text=word[-3:]))
        elif low in NUMBER_WORDS:
            out.append(_Token(True, NUMBER_WORDS[low], True, clause=clause, scale=low in SCALE_WORDS, text=word))
        elif low == "no" and NUMBER_AFTER.match(text, m.end()):  # "No. 1" is "number 1"; "no one" a negation (v38)
            out.append(_Token(False, _NUMBER_KEY, True, clause=clause, text=word))
        else:
            caps = len(word) > 1 and word.isupper()
            entity = (word[0].isupper() and bool(out)) or caps
            content = not is_stop(low)
            name = content and word[0].isupper() and not lowercase_word(low)
            value = romans.get(m.start(), (0, 0))  # "Louis XIV", "Type II": keyed as written, judged by value (v101)
            out.append(_Token(False, _key(low), content, entity, clause, caps=caps, text=word, name=name,
                              roman=str(value[1]) if value[0] == m.end() else ""))
    starts += [start] * (len(out) - len(starts))
    return tuple(_in_amounts(out, starts, amounts(text)))


def _in_amounts(toks: list[_Token], starts: list[int], spans: list[tuple[int, int, Measure]]) -> list[_Token]:
    """``toks`` with each token of an amount of unit rule 2 C (by where it starts, ``starts``) marked with it; their
    keys stay as written, so a copy of an amount aligns as before (v62)."""
    if not spans:
        return toks
    out = []
    for token, at in zip(toks, starts, strict=True):
        inside = [q for begin, end, q in spans if begin <= at < end]
        out.append(replace(token, amount=inside[0]) if inside else token)
    return out


def _share_tokens(written: str, percent: str, of: bool, clause: int, bound: str) -> list[_Token]:
    """The tokens of a share written in words (``written``: "two-thirds of", "one in four", "half") read as its
    percentage (``percent``, with "of" after it when ``of``), as "67% of" gives them, each showing what it stands for
    ("of" shows nothing where it is not written: "half the")."""
    written_of = re.search(r"\s+of$", written, re.IGNORECASE)
    number = _Token(True, percent, True, clause=clause, bound=bound,
                    text=written[:written_of.start()] if written_of else written)
    if not of:
        return [number]
    return [number, _Token(False, _key("of"), False, clause=clause, text="of" if written_of else "")]


def _key(low: str) -> str:
    """A lower-cased word's key: a negation word as written, another word by its stem, marked when that stem is a
    negation word ("note" stems to "not": no negation, v38)."""
    if low in NEGATIONS:
        return low
    key = stem(low)
    return f"{key}~" if key in NEGATIONS else key


def _acronyms(text: str) -> frozenset[str]:
    """The keys of the acronyms that runs of capitalised words of ``text`` spell ("EPA" for "the Environmental
    Protection Agency", "IMF" for "International Monetary Fund"; "of", "and", "for", "the", "&" inside a run are
    skipped), every run of :data:`ACRONYM_LENGTHS` words of a longer one too (v30)."""
    out: set[str] = set()
    runs: list[list[str]] = [[]]
    end = 0
    for m in _NAME_WORD_RE.finditer(text):
        word = m.group(0)
        if text[end:m.start()].strip():  # punctuation ends a run
            runs.append([])
        end = m.end()
        if word[0].isupper():
            runs[-1].append(word[0].lower())
        elif not (runs[-1] and word.lower() in _ACRONYM_JOINERS):
            runs.append([])
    low, high = ACRONYM_LENGTHS
    for run in runs:
        out.update(stem("".join(run[i:j])) for i in range(len(run))
                   for j in range(i + low, min(len(run), i + high) + 1))
    return frozenset(out)


def _negations(toks: list[_Token]) -> int:
    """How many negations ``toks`` hold: negation words, and verbs that negate ("failed to", "lacks": v36)."""
    return sum(1 for t in toks if not t.number and (t.key in NEGATIONS or t.text.lower() in NEGATING_VERBS))
