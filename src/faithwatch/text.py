"""Text helpers shared by the runtime and the reports: the one pysbd wrapper (sentence spans), stop words, number
normalisation, stemming and answer preambles."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache
from typing import Any, NamedTuple

import pysbd

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


def segmenter(language: str = "en", char_span: bool = True) -> pysbd.Segmenter:
    """The pysbd segmenter (``clean=False``: the text is never rewritten), one per language, mode and thread
    (a segmenter keeps state while it segments)."""
    cache = _local.__dict__.setdefault("segmenters", {})
    key = (language, char_span)
    if key not in cache:
        cache[key] = pysbd.Segmenter(language=language, clean=False, char_span=char_span)
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


_STOP_WORDS_TEXT = """
    a about above after again against all also am an and any are aren't as at be because been
    before being below between both but by can cannot could couldn't did didn't do does doesn't
    doing don't down during each either etc few for from further had hadn't has hasn't have
    haven't having he he'd he'll he's her here here's hers herself him himself his how how's i i'd
    i'll i'm i've if in into is isn't it it's its itself just let's may me might more most much
    must mustn't my myself neither no nor not now of off on once one only or other ought our ours
    ourselves out over own per same shall shan't she she'd she'll she's should shouldn't so some
    such than that that's the their theirs them themselves then there there's these they they'd
    they'll they're they've this those though through thus to too under until up upon us very via
    was wasn't we we'd we'll we're we've were weren't what what's when when's where where's whether
    which while who who's whom whose why why's will with won't would wouldn't yes yet you you'd
    you'll you're you've your yours yourself yourselves
"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())

# spelled-out numbers in the *context* that support a digit in the sentence
#: the whole numbers to twenty spelled out, in order ("zero" … "twenty")
SMALL_NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                      "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
                      "twenty")
#: the tens spelled out, with their values
TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
NUMBER_WORDS = {w: str(i) for i, w in enumerate(SMALL_NUMBER_WORDS)}
NUMBER_WORDS.update({w: str(v) for w, v in TENS.items()})
NUMBER_WORDS.update(
    {
        "hundred": "100",
        "thousand": "1000",
        "million": "1000000",
        "billion": "1000000000",
        "dozen": "12",
        "half": "0.5",
    }
)

#: how the text signals read a number written in words of two or more ("three hundred" as "300") and an ordinal
#: from 11th to 99th in words ("twenty-first" as "21st"): part of their versions (:func:`digits_for_words`;
#: spelled-number rules 2 and 4: docs/transfer.md, "Numbers written in words")
SPELLED_RULE = "spelled4"


def _alternatives(words: Sequence[str]) -> str:
    return "|".join(sorted(words, key=len, reverse=True))


_UNIT_WORDS = _alternatives(SMALL_NUMBER_WORDS[1:10])
_TENS_WORDS = _alternatives(TENS)
_BELOW_100 = rf"(?:(?:{_TENS_WORDS})(?:[\s-](?:{_UNIT_WORDS}))?|(?:{_alternatives(SMALL_NUMBER_WORDS[:20])}))"
_BELOW_1000 = rf"(?:{_BELOW_100}\s+hundred(?:\s+(?:and\s+)?{_BELOW_100})?|{_BELOW_100})"
_SPELLED_RE = re.compile(rf"\b{_BELOW_1000}(?:\s+thousand(?:\s+(?:and\s+)?{_BELOW_1000})?)?\b", re.IGNORECASE)
#: the value of each number word below a hundred ("zero" … "twenty", the tens)
WORD_VALUES = {**{w: i for i, w in enumerate(SMALL_NUMBER_WORDS)}, **TENS}


#: ordinals in words, by value: "first" … "ninth" (read only after a tens word), "eleventh" … "nineteenth" and the
#: tens' ("twentieth" … "ninetieth"); "tenth" and "first" … "ninth" alone stay words (rule 4)
_UNIT_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
                  "eighth": 8, "ninth": 9}
_OWN_ORDINALS = {"eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14, "fifteenth": 15,
                 "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19, "twentieth": 20,
                 "thirtieth": 30, "fortieth": 40, "fiftieth": 50, "sixtieth": 60, "seventieth": 70, "eightieth": 80,
                 "ninetieth": 90}
_ARTICLE_BEFORE = re.compile(r"\b[Aa]n?\s+$")
_ORDINAL_RE = re.compile(rf"\b(?:({_TENS_WORDS})[\s-]({_alternatives(_UNIT_ORDINALS)})|"
                         rf"({_alternatives(_OWN_ORDINALS)}))\b", re.IGNORECASE)


def _ordinal_suffix(value: int) -> str:
    """The suffix of ``value`` as an ordinal in digits: "st" (21), "nd" (42), "rd" (63), "th" (11, 12, 13, 30)."""
    if value % 100 in (11, 12, 13):
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(value % 10, "th")


def spelled_ordinals(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, digits)`` of each ordinal from 11th to 99th written in words: "twenty-first" ("21st"),
    "forty second" ("42nd"), "fifteenth" ("15th"), "sixtieth" ("60th"); not "first" … "tenth" alone."""
    out = []
    for m in _ORDINAL_RE.finditer(text):
        tens, unit, own = m.groups()
        if tens and unit.lower() == "second" and _ARTICLE_BEFORE.search(text, 0, m.start()):
            continue  # "a thirty-second advert": a length of time
        value = TENS[tens.lower()] + _UNIT_ORDINALS[unit.lower()] if tens else _OWN_ORDINALS[own.lower()]
        out.append((m.start(), m.end(), f"{value}{_ordinal_suffix(value)}"))
    return out


def _replaced(text: str, spans: list[tuple[int, int, str]]) -> str:
    parts, last = [], 0
    for start, end, digits in spans:
        parts += [text[last:start], digits]
        last = end
    return "".join(parts) + text[last:] if parts else text


def ordinals_in_digits(text: str) -> str:
    """``text`` with each ordinal of :func:`spelled_ordinals` in digits ("the twenty-first century": "the 21st
    century")."""
    return _replaced(text, spelled_ordinals(text))


def spelled_numbers(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, digits)`` of each run of two or more number words of ``text`` that spells one whole number
    below a million: "twenty-five" (25), "four hundred and fifty" (450), "twelve hundred" (1200), "twenty-five
    thousand" (25,000); not "nineteen ninety", "one or two" or a single word. Digits from 10,000 up are grouped by
    commas, as news text writes them; below, not ("two thousand and nineteen" is more often a year than a count)."""
    out = []
    for m in _SPELLED_RE.finditer(text):
        words = [w for w in re.findall(r"[a-z]+", m.group(0).lower()) if w != "and"]
        if len(words) < 2:
            continue
        total = current = 0
        for w in words:
            if w == "hundred":
                current *= 100
            elif w == "thousand":
                total, current = total + current * 1000, 0
            else:
                current += WORD_VALUES[w]
        value = total + current
        out.append((m.start(), m.end(), format(value, ",") if value >= 10_000 else str(value)))
    return out


_SHARE_DENOMINATORS = {"third": 3, "quarter": 4, "fifth": 5, "tenth": 10}
_NUMERATORS = {"a": 1, **{w: i for i, w in enumerate(SMALL_NUMBER_WORDS[1:10], start=1)}}
_FRACTION_RE = re.compile(rf"\b({_alternatives(_NUMERATORS)})[\s-]({_alternatives(_SHARE_DENOMINATORS)})s?\s+of\b",
                          re.IGNORECASE)
_HALF_RE = re.compile(r"\b(?:one[\s-])?half(?:(\s+of\b)|(?=\s+(?:the|its|their|his|her|our|your|all|these|those)\b))",
                      re.IGNORECASE)
#: the words after which a fraction is no share ("the first half of the season", "the third of May")
_NO_SHARE_AFTER = frozenset(("the", "a", "first", "second", "other", "latter", "former", "final", "last", "next",
                             "each", "every"))
_WORD_BEFORE = re.compile(r"(\w+)\s+$")
_WORD_AFTER = re.compile(r"\s+[^\W\d_]")
_WHOLE = rf"\d+|{_alternatives(SMALL_NUMBER_WORDS[1:11])}|hundred"
_TIME_UNITS = r"seconds?|minutes?|hours?|days?|weeks?|months?|years?|decades?|centuries|century|games?|matches?"
_IN_RE = re.compile(rf"(?<![\d.,])\b({_WHOLE})\s+(?:in|out\s+of)\s+({_WHOLE})\b(?![.,]\d)(?!\s+(?:{_TIME_UNITS})\b)"
                    r"(\s+of\b)?", re.IGNORECASE)


def _whole(word: str) -> int:
    low = word.lower()
    return 100 if low == "hundred" else WORD_VALUES[low] if low in WORD_VALUES else int(low)


def _percent(numerator: int, denominator: int) -> str:
    """``numerator / denominator`` in percent, normalised: exact with at most one decimal ("12.5"), else whole
    ("33")."""
    value = Decimal(100 * numerator) / denominator
    if value == value.quantize(Decimal("0.1")):
        return normalise_number(format(value.quantize(Decimal("0.1")), "f"))
    return str(value.quantize(Decimal("1"), rounding=ROUND_HALF_UP))


def _a_share_here(text: str, start: int) -> bool:
    """Whether a fraction at ``start`` may be a share: not right after a word of :data:`_NO_SHARE_AFTER` (the word
    before read from a short window, so a text's shares cost time in its length only)."""
    m = _WORD_BEFORE.search(text, max(0, start - 24), start)
    return not (m and m.group(1).lower() in _NO_SHARE_AFTER)


def spelled_shares(text: str) -> list[tuple[int, int, str, bool]]:
    """``(start, end, percent, of)`` of each share of ``text`` written as a fraction in words: its percentage as a
    normalised number, and whether it reads with "of" after it (spelled-number rule 5 B): "half of" / "half the"
    ("50", "50% of"), "two-thirds of" ("67"), "a quarter of" ("25"), "one in four" / "one out of four" ("25"); not
    "the first half of", "a third quarter", "two in five minutes". In order, none overlapping. The edits rules read
    each as its number and "of"; the lexical scorer finds a number by a context's share (:func:`share_values`); the
    other signals read the words."""
    spans = []
    for m in _HALF_RE.finditer(text):
        if _a_share_here(text, m.start()):
            spans.append((m.start(), m.end(), "50", True))
    for m in _FRACTION_RE.finditer(text):
        numerator, denominator = _NUMERATORS[m.group(1).lower()], _SHARE_DENOMINATORS[m.group(2).lower()]
        if numerator < denominator and _a_share_here(text, m.start()):
            spans.append((m.start(), m.end(), _percent(numerator, denominator), True))
    for m in _IN_RE.finditer(text):
        numerator, denominator = _whole(m.group(1)), _whole(m.group(2))
        if 1 <= numerator < denominator and (denominator <= 10 or denominator == 100):
            of = bool(m.group(3) or _WORD_AFTER.match(text, m.end()))
            spans.append((m.start(), m.end(), _percent(numerator, denominator), of))
    out: list[tuple[int, int, str, bool]] = []
    for span in sorted(spans):
        if not out or span[0] >= out[-1][1]:
            out.append(span)
    return out


def share_values(text: str) -> list[tuple[int, str, str | None]]:
    """``(start, percent, bound)`` of each share of :func:`spelled_shares`: where it starts, its percentage as a
    normalised number ("two-thirds of": "67") and the kind of bound word before it (:func:`bound_before`), if any."""
    return [(start, percent, bound_before(text, start)) for start, _, percent, _ in spelled_shares(text)]


def shares_as_percents(text: str) -> str:
    """``text`` with each share of :func:`spelled_shares` written as its percentage ("One in four adults smokes." ->
    "25% of adults smokes."; "half the staff" -> "50% of the staff")."""
    return _replaced(text, [(start, end, f"{percent}% of" if of else f"{percent}%")
                            for start, end, percent, of in spelled_shares(text)])


@lru_cache(maxsize=4096)
def digits_for_words(text: str) -> str:
    """``text`` with each number of :func:`spelled_numbers` and each ordinal of :func:`spelled_ordinals` written in
    digits ("The school has three hundred pupils." -> "The school has 300 pupils."; "the twenty-first century" -> "the
    21st century"): how every text signal reads a sentence and its context (memoised: every sentence of a response
    brings the same context)."""
    text = ordinals_in_digits(text)
    return _replaced(text, spelled_numbers(text))


# a number: digits with optional thousands separators and decimals; signs are ignored because a
# leading "-" is far more often a dash or range ("2010-2015") than a minus
NUMBER_RE = re.compile(r"(?<![\w.])\d+(?:,\d{3})*(?:\.\d+)?")
# tokenised news text writes "3, 800" or "26 , 000" for 3,800 and 26,000
_SPACED_THOUSANDS = re.compile(r"(?<=\d) ?, (?=\d{3}\b)")
_SUFFIXES = (
    "ations",
    "ation",
    "ingly",
    "ities",
    "ness",
    "ment",
    "ings",
    "ing",
    "ies",
    "ied",
    "ed",
    "es",
    "ly",
    "s",
)


#: words that scale the number right before them ("5.7 billion", "5.7bn", "£45m", "3k"), as powers of ten
MAGNITUDES = {"thousand": 3, "k": 3, "million": 6, "m": 6, "mn": 6, "mln": 6, "billion": 9, "bn": 9, "b": 9,
              "trillion": 12, "tn": 12, "trn": 12}
_QUANTITY_RE = re.compile("(" + NUMBER_RE.pattern + r")(?:\s?(" + "|".join(sorted(MAGNITUDES, key=len, reverse=True))
                          + r")\b)?", re.IGNORECASE)
# words that only say how the number before them is written: a spelled magnitude or a percent word
_NUMBER_UNIT_RE = re.compile(r"(?<=\d)\s?(?:" + "|".join(w for w in MAGNITUDES if len(w) > 1)
                             + r"|per\s?cent|percent|pct)\b", re.IGNORECASE)
#: currency symbols and the word a text may use instead ("£45m" = "45 million pounds"); the edits tokens read a
#: symbol as its word (edits version 52)
CURRENCY_WORDS = {"£": "pounds", "$": "dollars", "€": "euros", "¥": "yen"}
#: magnitude abbreviations that scale any number before them ("3bn"), and the letters that do only after a currency
#: symbol and a number ("£3m", "$40k"; elsewhere "m" is more often metres): edits version 44
_SCALE_AFTER_ANY = frozenset({"bn", "mn", "mln", "tn", "trn", "trillion"})
_SCALE_AFTER_MONEY = frozenset({"m", "k", "b"})
_SCALE_WORDS = _SCALE_AFTER_ANY | _SCALE_AFTER_MONEY
_CURRENCY_SYMBOLS = tuple(CURRENCY_WORDS)


def scale_after(text: str, number_start: int, number_end: int, word_start: int, word: str) -> str | None:
    """The value ("1000000000") of the magnitude word ``word`` at ``word_start`` when it scales the number at
    ``number_start:number_end`` right before it (at most one space between): "bn", "mn", "tn" after any number, "m",
    "k", "b" only after a currency symbol and a number; None otherwise."""
    low = word.lower()
    if text[number_end:word_start] not in ("", " ") or low not in _SCALE_WORDS:
        return None
    if low in _SCALE_AFTER_MONEY and not text[max(0, number_start - 2):number_start].strip().endswith(
            _CURRENCY_SYMBOLS):
        return None
    return str(10 ** MAGNITUDES[low])


#: the months a date may abbreviate ("Feb. 14", "3 Mar 2015"; lexical scorer version 9, edits version 42)
MONTH_ABBREVIATIONS = {"jan": "january", "feb": "february", "mar": "march", "apr": "april", "jun": "june",
                       "jul": "july", "aug": "august", "sep": "september", "sept": "september", "oct": "october",
                       "nov": "november", "dec": "december"}
#: what follows a word that a number completes ("Feb. 14", tokenised "feb . 14"; "No. 1", "no 10")
NUMBER_AFTER = re.compile(r"\s?\.?\s*\d")
_NUMBER_BEFORE = re.compile(r"\d(?:st|nd|rd|th)?\.?\s*$", re.IGNORECASE)


def month_name(text: str, start: int, end: int) -> str | None:
    """The month (lower case) that the word ``text[start:end]`` abbreviates when it is a month's abbreviation next
    to a number ("Feb. 14", "3 Mar 2015", "14th Feb"); None for any other word ("Jan Smith", "mar the view")."""
    month = MONTH_ABBREVIATIONS.get(text[start:end].lower())
    if month and (NUMBER_AFTER.match(text, end) or _NUMBER_BEFORE.search(text[max(0, start - 8):start])):
        return month
    return None


# a year range written short: "2007-08", "1914–18", "2019/20" (not inside a date such as "2007-08-15")
_YEAR_RANGE = re.compile(r"(?<![\w.,/–-])((?:1[5-9]|20)\d{2})\s?[-–/]\s?(\d{2})(?!\w|[.,/–-]\d)")
#: the most years a short range may span ("2001-11" is 2001 to 2011)
MAX_RANGE_YEARS = 20


def year_range_ends(text: str) -> dict[int, str]:
    """The end years of ``text``'s short year ranges written in full, by the offset of their two digits:
    ``"2007-08"`` -> ``{5: "2008"}``; the two digits take the first year's century, or the next when that is not
    later ("1999-00" ends in 2000); an end more than :data:`MAX_RANGE_YEARS` after the first is no range."""
    out = {}
    for m in _YEAR_RANGE.finditer(text):
        first = int(m.group(1))
        end = first // 100 * 100 + int(m.group(2))
        if end <= first:
            end += 100
        if end - first <= MAX_RANGE_YEARS:
            out[m.start(2)] = str(end)
    return out


def _quantity_matches(text: str) -> Iterable[tuple[str, int, str, frozenset[str], str | None]]:
    """Each number of ``text`` (thousands joined): the joined text, where the number starts, its form as written
    and the forms and value of :func:`quantities`."""
    text = join_thousands(text)
    ends = year_range_ends(text)
    for m in _QUANTITY_RE.finditer(text):
        written = normalise_number(m.group(1))
        forms, value = {written}, None
        if m.start(1) in ends:
            forms.add(ends[m.start(1)])
        if m.group(2) is not None:
            value = normalise_number(format(Decimal(written).scaleb(MAGNITUDES[m.group(2).lower()]), "f"))
            forms.add(value)
        yield text, m.start(1), written, frozenset(forms), value


def quantities(text: str) -> list[tuple[frozenset[str], str | None]]:
    """Each number of ``text`` as :func:`number_forms` gives its forms, with its value when a magnitude follows it
    (``"$5.7bn"``: ``({"5.7", "5700000000"}, "5700000000")``; ``"5.7"``: ``({"5.7"}, None)``)."""
    return [(forms, value) for _, _, _, forms, value in _quantity_matches(text)]


#: words that bound the number right after them (a currency symbol between), by what a number of the source must
#: be to satisfy them: from the bound to :data:`BOUND_RATIO` times it ("above"), from the bound over that ratio to
#: the bound ("below"), within :data:`NEAR_SHARE` of it ("near"): "more than 300" restates "340", not "about 340"
#: (lexical scorer version 19, edits version 56; "no more than", "upwards of" and the like: 20, 57)
BOUND_WORDS = {"more than": "above", "over": "above", "above": "above", "at least": "above",
               "no fewer than": "above", "no less than": "above", "not less than": "above", "upwards of": "above",
               "in excess of": "above",
               "almost": "below", "nearly": "below", "under": "below", "below": "below", "less than": "below",
               "fewer than": "below", "up to": "below", "no more than": "below", "not more than": "below",
               "at most": "below",
               "about": "near", "around": "near", "roughly": "near", "approximately": "near", "some": "near",
               "close to": "near"}
BOUND_RATIO = Decimal("1.5")
NEAR_SHARE = Decimal("0.15")
# a bound word right before the end (a currency symbol between), not negated ("no more than" is no "more than")
_BOUND_RE = re.compile(r"(?:^|(?<!\bno)(?<!\bnot)\s)(" + "|".join(sorted(map(re.escape, BOUND_WORDS), key=len,
                                                                        reverse=True))
                       + r")\s*[" + "".join(map(re.escape, CURRENCY_WORDS)) + r"]?$", re.IGNORECASE)


def bound_before(text: str, start: int) -> str | None:
    """The kind of bound (a value of :data:`BOUND_WORDS`) that the words right before ``start`` put on the number
    there, or None; a negated one ("no more than", "not less than") is none."""
    m = _BOUND_RE.search(" ".join(text[max(0, start - 32):start].split()[-4:]) if start else "")
    return BOUND_WORDS[m.group(1).lower()] if m else None


def satisfies(kind: str, bound: Decimal, value: Decimal) -> bool:
    """Whether a source's ``value`` satisfies a sentence's ``bound`` of ``kind`` (see :data:`BOUND_WORDS`)."""
    if bound <= 0:
        return False
    if kind == "above":
        return bound <= value <= bound * BOUND_RATIO
    if kind == "below":
        return bound / BOUND_RATIO <= value <= bound
    return abs(value - bound) <= NEAR_SHARE * bound


_VALUE_RE = re.compile(r"\d+(?:\.\d+)?")


def number_value(form: str) -> Decimal | None:
    """A normalised number form (:func:`normalise_number`) as a value, or None when it reads as none."""
    return Decimal(form) if _VALUE_RE.fullmatch(form) else None


def bounded_quantities(text: str) -> list[tuple[frozenset[str], str | None, tuple[str, Decimal] | None]]:
    """Each number of :func:`quantities` with its bound: the kind of :func:`bound_before` and the number's value
    (with its magnitude: "almost £5m" is below 5000000), or None."""
    out = []
    for joined, start, written, forms, value in _quantity_matches(text):
        kind = bound_before(joined, start)
        out.append((forms, value, (kind, Decimal(value or written)) if kind else None))
    return out


def number_forms(text: str) -> list[frozenset[str]]:
    """Each number of ``text`` (tokenised thousands joined) as the normalised forms it may be compared in: as
    written and, when a magnitude follows it, its value (``"$5.7bn"`` -> ``{"5.7", "5700000000"}``, the same
    value as ``"5.7 billion"`` or ``"5,700 million"``); the short end of a year range also as its full year
    (``"2007-08"``: ``{"8", "2008"}``, :func:`year_range_ends`)."""
    return [forms for forms, _ in quantities(text)]


def number_unit_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the magnitude and percent words written right after a number ("5.7 *billion*",
    "12 *per cent*"): part of how the number is written, not content of their own."""
    return [m.span() for m in _NUMBER_UNIT_RE.finditer(text)]


def join_thousands(text: str) -> str:
    """``text`` with tokenised thousands separators ("3, 800", "26 , 000") joined ("3,800")."""
    return _SPACED_THOUSANDS.sub(",", text)


#: units a conversion in parentheses may go between: written form (lower case, "°" and "degrees" left out) -> (kind,
#: factor to the kind's base unit); temperatures are converted apart
_UNIT_FACTORS = {
    **dict.fromkeys(("km", "kilometre", "kilometres", "kilometer", "kilometers"), ("length", 1000.0)),
    **dict.fromkeys(("m", "metre", "metres", "meter", "meters"), ("length", 1.0)),
    **dict.fromkeys(("cm", "centimetre", "centimetres", "centimeter", "centimeters"), ("length", 0.01)),
    **dict.fromkeys(("mm", "millimetre", "millimetres", "millimeter", "millimeters"), ("length", 0.001)),
    **dict.fromkeys(("mile", "miles", "mi"), ("length", 1609.344)),
    **dict.fromkeys(("yard", "yards", "yd", "yds"), ("length", 0.9144)),
    **dict.fromkeys(("foot", "feet", "ft"), ("length", 0.3048)),
    **dict.fromkeys(("inch", "inches", "in"), ("length", 0.0254)),
    **dict.fromkeys(("kg", "kilogram", "kilograms", "kilo", "kilos"), ("mass", 1.0)),
    **dict.fromkeys(("g", "gram", "grams"), ("mass", 0.001)),
    **dict.fromkeys(("lb", "lbs", "pound", "pounds"), ("mass", 0.45359237)),
    **dict.fromkeys(("oz", "ounce", "ounces"), ("mass", 0.028349523125)),
    **dict.fromkeys(("stone", "st"), ("mass", 6.35029318)),
    **dict.fromkeys(("l", "litre", "litres", "liter", "liters"), ("volume", 1.0)),
    **dict.fromkeys(("ml", "millilitre", "millilitres", "milliliter", "milliliters"), ("volume", 0.001)),
    **dict.fromkeys(("gallon", "gallons", "gal"), ("volume", 3.785411784)),
    **dict.fromkeys(("mph", "miles per hour"), ("speed", 0.44704)),
    **dict.fromkeys(("km/h", "kmh", "kph", "kilometres per hour", "kilometers per hour"), ("speed", 1 / 3.6)),
    **dict.fromkeys(("acre", "acres"), ("area", 4046.8564224)),
    **dict.fromkeys(("hectare", "hectares", "ha"), ("area", 10000.0)),
    **dict.fromkeys(("f", "fahrenheit"), ("temperature", 0.0)),
    **dict.fromkeys(("c", "celsius", "centigrade"), ("temperature", 0.0)),
    # units of time, in days (unit rule 1)
    **dict.fromkeys(("second", "seconds", "sec", "secs"), ("time", 1 / 86400)),
    **dict.fromkeys(("minute", "minutes", "min", "mins"), ("time", 1 / 1440)),
    **dict.fromkeys(("hour", "hours", "hr", "hrs"), ("time", 1 / 24)),
    **dict.fromkeys(("day", "days"), ("time", 1.0)),
    **dict.fromkeys(("week", "weeks"), ("time", 7.0)),
    **dict.fromkeys(("fortnight", "fortnights"), ("time", 14.0)),
    **dict.fromkeys(("month", "months"), ("time", 365.2425 / 12)),
    **dict.fromkeys(("year", "years"), ("time", 365.2425)),
    **dict.fromkeys(("decade", "decades"), ("time", 3652.425)),
    **dict.fromkeys(("century", "centuries"), ("time", 36524.25)),
}
_UNIT = (r"(?:°\s?|degrees?\s+)?(?:" + "|".join(re.escape(u) for u in sorted(_UNIT_FACTORS, key=len, reverse=True))
         + r")(?![\w/])\.?")
_AMOUNT = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_CONVERSION = re.compile(rf"(?<![\w.])(?P<a>{_AMOUNT})\s?(?P<ua>{_UNIT})\s*(?P<paren>\(\s*(?:about|approximately|"
                         rf"approx\.|roughly|around|~)?\s*(?P<b>{_AMOUNT})\s?(?P<ub>{_UNIT})\s*\))", re.IGNORECASE)
#: how far a written conversion may be from the exact one: this share of it, or this much
CONVERSION_TOLERANCE = (0.03, 1.0)


def _unit_key(written: str) -> str:
    """A unit as :data:`_UNIT_FACTORS` keys it: lower case, without "°", "degrees" or a final full stop."""
    return re.sub(r"^(?:°\s?|degrees?\s+)", "", written.lower()).rstrip(".")


def _in_unit(value: float, source: str, target: str) -> float | None:
    """``value`` in unit ``source`` written in unit ``target``; ``None`` for units of two kinds, or the same unit."""
    a, b = _unit_key(source), _unit_key(target)
    kind_a, factor_a = _UNIT_FACTORS.get(a, ("", 0.0))
    kind_b, factor_b = _UNIT_FACTORS.get(b, ("", 0.0))
    if not kind_a or kind_a != kind_b:
        return None
    if kind_a == "temperature":
        if a[0] == b[0]:
            return None  # °F to °F, °C to °C
        return (value - 32) * 5 / 9 if a[0] == "f" else value * 9 / 5 + 32
    return None if factor_a == factor_b else value * factor_a / factor_b


def drop_conversions(text: str) -> str:
    """``text`` without each parenthesis that only converts the number with a unit right before it into another unit
    of the same kind ("165°F (74°C)" -> "165°F"; within :data:`CONVERSION_TOLERANCE`); a wrong conversion stays."""
    def keep_or_drop(m: re.Match[str]) -> str:
        exact = _in_unit(float(m.group("a").replace(",", "")), m.group("ua"), m.group("ub"))
        written = float(m.group("b").replace(",", ""))
        share, absolute = CONVERSION_TOLERANCE
        if exact is None or abs(written - exact) > max(share * abs(exact), absolute):
            return m.group(0)
        return m.group(0)[: m.start("paren") - m.start()].rstrip()

    return _CONVERSION.sub(keep_or_drop, text) if "(" in text else text


#: the units a quantity of :func:`measures` is read in: the table's but temperatures and the bare "m", "in", "st"
#: and "l" (as often "million", a preposition or a letter)
_MEASURE_UNITS = {u: v for u, v in _UNIT_FACTORS.items() if v[0] != "temperature" and u not in ("m", "in", "st", "l")}
_MEASURE_UNIT = "|".join(re.escape(u) for u in sorted(_MEASURE_UNITS, key=len, reverse=True))
_MEASURE_RE = re.compile(
    rf"(?<![\w.,])(?:(?P<n>{_AMOUNT}|{_alternatives([w for w in WORD_VALUES if w != 'zero'])})[\s-]?"
    rf"|(?P<a>an?)\s+)"  # "a week": no number (unit rule 2; "half an hour" is an amount, read first)
    rf"(?P<u>{_MEASURE_UNIT})(?![\w/])",
    re.IGNORECASE)
#: an article quantity after "of", or before "and" and a number, "a", "an" or "half", is part of a larger amount
#: (rule 2 B: "a period of a week", "a week and a day"; the amounts of unit rule 2 C are read before it)
_PART_BEFORE = re.compile(r"\bof\s+$", re.IGNORECASE)
_PART_AFTER = re.compile(rf"\s+and\s+(?:an?|half|{_AMOUNT}|{_alternatives(list(WORD_VALUES))})\b", re.IGNORECASE)
#: a share of a unit in words ("half", "a half", "a quarter", "three-quarters", "two-thirds"; unit rule 2 C)
_PART = (rf"(?:(?:{_alternatives(_NUMERATORS)})[\s-])?(?:half|(?:{_alternatives(_SHARE_DENOMINATORS)})s?)")
_WHOLE_AMOUNT = rf"{_AMOUNT}|{_BELOW_100}"
#: a determiner after "of": a share followed by it is a share of something else ("2 km and a third of the route";
#: unit rule 2 E reads "a kilogram and a quarter of minced beef")
_DETERMINER = r"(?:the|an?|this|that|these|those|its|their|his|her|our|your|my)\b"
#: the amounts of unit rule 2 C: a share of an article quantity ("three-quarters of an hour", "half a mile"); an
#: article or number quantity and a share ("a day and a half") or a number quantity of a smaller unit ("an hour and
#: 20 minutes"); a number and a share before the unit ("two and a half kilometres")
_AMOUNT_RE = re.compile(
    rf"(?<![\w.,])(?:(?:(?P<fp>{_PART})\s+of|(?P<fh>half))\s+an?\s+(?P<fu>{_MEASURE_UNIT})"
    rf"|(?P<cw>an?\s+|(?:{_WHOLE_AMOUNT})[\s-]?)(?P<cu>{_MEASURE_UNIT})\s+and\s+"
    rf"(?:(?P<cp>{_PART})(?!\s+an?\b)(?!\s+of\s+{_DETERMINER})|(?P<cn>{_WHOLE_AMOUNT})[\s-]?(?P<cs>{_MEASURE_UNIT}))"
    rf"|(?P<nw>{_WHOLE_AMOUNT})\s+and\s+(?P<np>{_PART})[\s-](?P<nu>{_MEASURE_UNIT}))(?![\w/])",
    re.IGNORECASE)
#: how far apart two quantities in different units may be and be one: this share of the sentence's (unit rule 1)
SAME_QUANTITY_SHARE = 0.05


class Measure(NamedTuple):
    """A quantity with a unit (:func:`measures`): the number normalised ("" for "a week": unit rule 2), the unit as
    written (lower case), its kind, the quantity in the kind's base unit, and the words written for it when it is
    not a number and its unit (lower case): the article of "a week", an amount whole ("three-quarters
    of an hour", "an hour and 20 minutes": unit rule 2 C; its number is then its value in ``unit``)."""

    number: str
    unit: str
    kind: str
    base: float
    written: str = ""

    @property
    def amount(self) -> bool:
        """Whether it is an amount of unit rule 2 C (a share of a unit, or a compound of two)."""
        return bool(self.number and self.written)


def _whole_value(written: str) -> float:
    """A whole of an amount: digits, "a" / "an" (one), or a number below a hundred in words ("twenty-five")."""
    words = re.findall(r"[^\W\d_]+", written.lower())
    if not words:
        return float(written.replace(",", ""))
    return 1.0 if words[0] in ("a", "an") else float(sum(WORD_VALUES[w] for w in words))


def _part_value(written: str) -> float | None:
    """The value of a share of :data:`_PART` ("three-quarters": 0.75, "a half": 0.5); ``None`` for one of a
    whole or more ("four-thirds")."""
    *numerator, denominator = re.split(r"[\s-]+", written.lower())
    top = _NUMERATORS[numerator[0]] if numerator else 1
    bottom = 2 if denominator == "half" else _SHARE_DENOMINATORS[denominator.rstrip("s")]
    return top / bottom if top < bottom else None


def _amount(m: re.Match[str]) -> tuple[float, str] | None:
    """The value of an amount of :data:`_AMOUNT_RE` in the unit it ends with, and that unit; ``None`` if it is none
    (a share of a whole or more, a second unit of another kind or not smaller)."""
    if m.group("fp") or m.group("fh"):
        return _part_value(m.group("fp") or "half"), m.group("fu")
    if m.group("nw"):
        part = _part_value(m.group("np"))
        return (None if part is None else _whole_value(m.group("nw")) + part), m.group("nu")
    whole, unit = _whole_value(m.group("cw")), m.group("cu")
    if m.group("cp"):
        part = _part_value(m.group("cp"))
        return (None if part is None else whole + part), unit
    (kind, big), (small_kind, small) = _MEASURE_UNITS[unit.lower()], _MEASURE_UNITS[m.group("cs").lower()]
    if small_kind != kind or small >= big:
        return None
    return whole * big / small + _whole_value(m.group("cn")), m.group("cs")


def amounts(text: str) -> list[tuple[int, int, Measure]]:
    """``(start, end, quantity)`` of each amount of ``text`` written as a share or compound of a unit (unit rule
    2 C): "three-quarters of an hour" (0.75 hour), "half a mile", "a day and a half" (1.5 day), "an hour and 20
    minutes" (80 minutes), "two and a half kilometres" (2.5 kilometres); "a litre and a half of milk" too, not "2 km
    and a third of the route" (unit rule 2 E); in order, none overlapping."""
    out = []
    for m in _AMOUNT_RE.finditer(text):
        value, unit = _amount(m) or (None, "")
        if value is None:
            continue
        unit = unit.lower()
        kind, factor = _MEASURE_UNITS[unit]
        number = normalise_number(f"{value:.6f}")
        written = " ".join(m.group(0).lower().split())
        out.append((m.start(), m.end(), Measure(number, unit, kind, value * factor, written)))
    return out


def measures(text: str) -> list[Measure]:
    """Each quantity of ``text``: a number (digits, or words as :func:`digits_for_words` reads them, a single number
    word too) right before a unit of length, mass, volume, speed, area or time ("two weeks", "4.5 km", "20 mph";
    unit rule 1); "a" or "an" before one ("a week"; no number: unit rule 2), unless after "of" or before "and a
    …" (rule 2 B); an amount of :func:`amounts` ("three-quarters of an hour"; unit rule 2 C). In order."""
    read = join_thousands(digits_for_words(text))
    found = amounts(read)
    out = [(start, q) for start, _, q in found]
    for m in _MEASURE_RE.finditer(read):
        if any(start < m.end() and m.start() < end for start, end, _ in found):
            continue  # inside an amount
        unit = m.group("u").lower()
        kind, factor = _MEASURE_UNITS[unit]
        if m.group("a"):
            if _PART_BEFORE.search(read, 0, m.start()) or _PART_AFTER.match(read, m.end()):
                continue  # "a period of a week", "a week and a day": part of a larger amount (rule 2 B)
            out.append((m.start(), Measure("", unit, kind, factor, " ".join(m.group("a").lower().split()))))
            continue
        low = m.group("n").lower()
        number = str(WORD_VALUES[low]) if low in WORD_VALUES else normalise_number(low)
        out.append((m.start(), Measure(number, unit, kind, float(number) * factor)))
    return [q for _, q in sorted(out, key=lambda x: x[0])]


def same_quantity(mine: Measure, theirs: Measure) -> bool:
    """Whether ``theirs`` is the quantity ``mine`` in another unit of its kind: equal within
    :data:`SAME_QUANTITY_SHARE` once converted ("14 days" and "two weeks"; "10 km" and "6 miles" too); or, one of
    them an amount (unit rule 2 C), in the same unit at the same value ("a day and a half" and "1.5 days")."""
    if mine.kind != theirs.kind:
        return False
    if _MEASURE_UNITS[mine.unit][1] == _MEASURE_UNITS[theirs.unit][1]:
        return (mine.amount or theirs.amount) and abs(mine.base - theirs.base) <= 1e-9 * abs(mine.base)
    return abs(mine.base - theirs.base) <= SAME_QUANTITY_SHARE * abs(mine.base)


def amount_numbers(quantity: Measure) -> frozenset[str]:
    """The numbers written inside an amount ("an hour and 20 minutes": ``{"20"}``), normalised."""
    return frozenset(normalise_number(n) for n in re.findall(_AMOUNT, quantity.written)) if quantity.amount \
        else frozenset()


_SPACED_DECIMAL = re.compile(r"(?<![\w.,])(\d+)\. (\d+)\b")


def join_decimals(text: str) -> str:
    """``text`` with the decimals a tokeniser wrote with a space after the point joined ("31. 8" -> "31.8"): a copy
    to read a context's numbers from besides the text itself, whose digits on each side stay its numbers (the
    point may also end a sentence)."""
    return _SPACED_DECIMAL.sub(r"\1.\2", text)


def spaced_decimals(text: str) -> frozenset[str]:
    """The normalised numbers that :func:`join_decimals` makes of ``text`` ("31. 8" -> ``{"31.8"}``)."""
    return frozenset(normalise_number(f"{a}.{b}") for a, b in _SPACED_DECIMAL.findall(text))


def normalise_number(text: str) -> str:
    """Canonical form of a number: ``"1,000"`` -> ``"1000"``, ``"3.50"`` -> ``"3.5"``, ``"07"`` -> ``"7"``."""
    t = text.replace(",", "")
    if "." in t:
        t = t.rstrip("0").rstrip(".")
    t = t.lstrip("0") or "0"
    return "0" + t if t.startswith(".") else t


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Crude suffix stripping so that "reports"/"reported"/"reporting" match; lowercases."""
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    for suf in _SUFFIXES:
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            w = w[: -len(suf)]
            break
    if len(w) > 3 and w.endswith("e"):  # "rate"/"rated" -> "rat"
        w = w[:-1]
    return w


def is_stop(word: str) -> bool:
    """Whether ``word`` is a stop word (case- and apostrophe-insensitive)."""
    return word.lower().replace("’", "'") in STOP_WORDS


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


_SOURCE_NOUN = (r"(?:passages?|context|texts?|information|documents?|articles?|sources?|search\s+results?"
                r"|references?|excerpts?)")
#: one answer preamble at the start of a sentence: words about the task, not the world
_PREAMBLE_RE = re.compile(
    r"\s*(?:"
    r"(?:sure|certainly|of\s+course|okay)\s*[!,.]\s*"  # "Sure! ..."
    r"|(?:based\s+(?:on|upon)|according\s+to|as\s+(?:stated|mentioned|described)\s+in|from|in)\s+"
    r"(?:(?:the|this|these|my)\s+)?(?:(?:given|provided|above|retrieved|available)\s+)?" + _SOURCE_NOUN
    + r"(?:\s+\d+(?:\s*(?:,|and|&)\s*\d+)*)?(?:\s+(?:provided|given|above))?"  # "Based on passage 3, ..."
    r"(?:\s+(?:provided|given|found|presented)\s+in\s+(?:the\s+)?" + _SOURCE_NOUN + r")?\s*[,:]\s*"
    r"|(?:the\s+)?(?:short\s+|final\s+|correct\s+)?answer(?:\s+to\s+(?:the|your|this)\s+question)?\s+is\s*:?\s+"
    r"|(?:the\s+)?(?:short\s+|final\s+)?answer\s*:\s*"  # "Answer: 42"
    r"|(?:the\s+)?(?:passage|context|text|article|document)s?\s+(?:says?|states?|mentions?|indicates?)\s+that\s+"
    r")",
    re.IGNORECASE,
)


def preamble_end(sentence: str) -> int:
    """Where ``sentence``'s claim starts: the end of the answer preambles it opens with ("The answer is Japan." -> 14,
    "Based on the given passages, X" -> the start of X); 0 when it has none or is nothing but a preamble."""
    end = 0
    while (m := _PREAMBLE_RE.match(sentence, end)) and WORDISH.search(sentence, m.end()):
        end = m.end()
    return end


#: the rule of :func:`strip_markup`: part of the text signals' versions and of the text-feature cache keys
MARKUP_RULE = "markup7"
#: a list marker or heading mark opening a sentence ("1. ", "2) ", "(3) ", "- ", "* ", "• ", "## ")
_LEAD_MARK = re.compile(r"\s*(?:(?:[-*•]|\d{1,3}[.)]|\(\d{1,3}\))\s+|#{1,6}\s+)")
_SOURCE = r"(?:sources?|docs?|documents?|passages?|refs?|references?|contexts?)"
_NUMBERS = r"#?\d{1,3}(?:\s*(?:[,&–-]|and)\s*#?\d{1,3})*"
#: a citation marker and the space before it ("[1]", "[1, 2]", "[1-3]", "[^1]", "[Doc 2]", "【1】"; rule 3: "(Passage
#: 1)", "(Source: Doc 3)", "(see passage 2)"; superscript footnote digits are not read: docs/transfer.md, rule 2)
_CITATION = re.compile(
    r"\s*(?:\[(?:\^?\d{1,3}(?:\s*[,–-]\s*\d{1,3})*|(?:doc(?:ument)?|source|passage|ref(?:erence)?|context)\s*#?\d{1,3})\]"
    r"|【\d{1,3}(?:†[^】]*)?】"
    r"|\((?:see\s+)?" + _SOURCE + r"\s*:?\s*(?:" + _SOURCE + r"\s*)?" + _NUMBERS + r"\))", re.IGNORECASE)
#: a Markdown link: its text stays, its target goes (rule 3)
_LINK = re.compile(r"\[([^\[\]]+)\]\((?:https?://|www\.)[^)\s]*\)")
#: emphasis marks around a phrase ("**x**", "__x__", "`x`"); a single "*" is left alone ("s***")
_EMPHASIS = re.compile(r"\*\*(?=[^\s*])(.+?)(?<=[^\s*])\*\*|(?<![\w_])__(?=[^\s_])(.+?)(?<=[^\s_])__(?![\w_])"
                       r"|`(?=[^\s`])([^`]+?)(?<=[^\s`])`")


#: a connective opening a sentence, and its comma ("In summary, ", "Overall, "): markup rule 4
_CONNECTIVE = re.compile(r"\s*(?:in\s+summary|in\s+conclusion|to\s+summari[sz]e|to\s+sum\s+up|in\s+short|overall"
                         r"|additionally|furthermore|moreover|also|however|finally|in\s+addition|besides|therefore"
                         r"|thus)\s*,\s+", re.IGNORECASE)


def _unemphasise(text: str) -> str:
    """``text`` with its emphasis marks ("**x**", "__x__") removed."""
    return _EMPHASIS.sub(lambda m: next(g for g in m.groups() if g is not None), text)


def strip_markup(sentence: str) -> str:
    """``sentence`` as the text signals read it (markup rules 1, 3, 4 and 7): without a leading list marker or
    heading mark, citation markers ("[1]", "(Passage 2)"), emphasis marks ("**x**") and link targets, which are
    formatting, and without a leading presentation ("Here is the answer: ") or connective ("In summary, ",
    "Overall, "), which relate the sentence to the answer or to others: none are words of the claim ("1. In
    summary, built in 1889 [2]." -> "Built in 1889."). A sentence that is nothing but these is kept as it is."""
    out = strip_marks(sentence)
    shown = _PRESENTED.match(out)  # "Here is the answer: " before the claim (rule 7)
    if shown and WORDISH.search(out, shown.end()):
        rest = out[shown.end():]
        out = rest[:1].upper() + rest[1:]
    lead = _CONNECTIVE.match(out)
    if lead and WORDISH.search(out, lead.end()):
        rest = out[lead.end():]
        out = rest[:1].upper() + rest[1:]
    return out


def strip_marks(sentence: str) -> str:
    """``sentence`` without its formatting (markup rules 1 and 3; :func:`strip_markup` without rule 4)."""
    out = _LINK.sub(r"\1", sentence)
    out = _CITATION.sub("", out)
    out = _unemphasise(out)
    lead = _LEAD_MARK.match(out)
    if lead and WORDISH.search(out, lead.end()):
        out = out[lead.end():]
    return out if out.strip() else sentence


#: the rule of :func:`is_framing`: part of the monitor's scoring config (detectors.framing)
FRAMING_RULE = "framing8"
#: how a framing line presents what follows ("Here is a summary of the article:"), after at most one introductory
#: phrase and its comma ("Based on the provided structured data, here is ..."; rule 4)
_PRESENTATION = re.compile(r"(?:[^,;:.!?]{1,80},\s+)?(?:(?:so|therefore|in\s+summary)\s*,?\s+)?"
                           r"(?:here\s+(?:is|are)|here['’]s|below\s+(?:is|are)|the\s+following\s+(?:is|are))\b",
                           re.IGNORECASE)
#: a presentation, what it presents and its ":", before a claim on the same sentence ("Here is the answer: "; rule 7)
_PRESENTED = re.compile(_PRESENTATION.pattern + r"[^:.!?]{0,80}:\s+", re.IGNORECASE)
#: a framing line's end: "as follows:", "these steps:", "the following:" and up to four words without a digit
#: ("... in the following ways:"; rule 4)
_FOLLOWS = re.compile(r"(?:as\s+follows|the\s+following(?:\s+[^\s\d:]+){0,4}|these\s+steps)\s*:$", re.IGNORECASE)
#: a closing line addressed to the user ("I hope this helps!", "Let me know if ..."); framing rule 2
_CLOSER = re.compile(r"(?:i\s+)?hope\s+(?:this|that|it)\s+helps|let\s+me\s+know\s+if|feel\s+free\s+to"
                     r"|if\s+you\s+have\s+any\s+(?:(?:other|more|further|additional)\s+)?questions"
                     r"|is\s+there\s+anything\s+else|(?:happy|glad)\s+to\s+help", re.IGNORECASE)
#: a pleasantry alone ("Sure!", "Great question!"), or two joined by a comma; framing rule 8
_PLEASANTRY_WORD = (r"(?:(?:that['’]?s\s+a\s+|what\s+a\s+)?(?:great|good|excellent|interesting)\s+question"
                    r"|sure(?:\s+thing)?|certainly|of\s+course|absolutely|definitely|okay|ok|alright|all\s+right|got\s+it|great"
                    r"|no\s+problem|thanks|thank\s+you(?:\s+(?:so|very)\s+much)?|you['’]re\s+welcome|hello"
                    r"|hi(?:\s+there)?)")
_PLEASANTRY = re.compile(_PLEASANTRY_WORD + r"(?:\s*,\s*" + _PLEASANTRY_WORD + r")?\s*[!.]*", re.IGNORECASE)
#: a Markdown heading ("## Key facts"): a title, not a claim; framing rule 3
_HEADING = re.compile(r"\s*#{1,6}\s+\S")
#: a Markdown table's separator row ("|---|:---:|") and any row ("| a | b |"); framing rule 5
_TABLE_SEPARATOR = re.compile(r"\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)+\|?\s*")
_TABLE_ROW = re.compile(r"\s*\|.*\|\s*")
#: a sentence of footnote digits only ("¹" after the stop, split off by the splitter); framing rule 6
_FOOTNOTE = re.compile(r"\s*[\u00b9\u00b2\u00b3\u2070\u2074-\u2079][\s\u00b9\u00b2\u00b3\u2070\u2074-\u2079]*")

#: a list of sources (framing rule 7): its heading ("Sources:"), a line of citations ("Source: Passage 1") and a
#: bracketed entry ("[1] Eiffel Tower - Wikipedia")
_SOURCES_WORD = r"(?:sources?|references?|citations?|bibliography|works\s+cited)(?:\s+used)?"
_SOURCES_HEAD = re.compile(_SOURCES_WORD + r"\s*:?", re.IGNORECASE)
_REF = r"\[?\s*(?:(?:passages?|documents?|docs?|sources?|refs?|references?)\s+)?#?\d{1,3}\s*\]?"
_SOURCES_LINE = re.compile(_SOURCES_WORD + r"\s*:\s*" + _REF + r"(?:\s*(?:,\s*and|,|;|&|and)\s*" + _REF + r")*\s*\.?",
                           re.IGNORECASE)
_ENTRY = re.compile(r"\[\d{1,3}\]\s+\S")
_URL = re.compile(r"https?://|www\.", re.IGNORECASE)


def _sources(sentence: str) -> bool:
    """A sources heading, a line of citations or a bracketed reference entry (framing rule 7)."""
    text = _unemphasise(sentence).strip()
    if _SOURCES_HEAD.fullmatch(text) or _SOURCES_LINE.fullmatch(text):
        return True
    return bool(_ENTRY.match(text)) and (bool(_URL.search(text)) or not text.endswith((".", "!", "?")))


def _table_header(sentence: str) -> bool:
    """A table's header: rows ending in a separator row, or a separator row alone (framing rule 5)."""
    lines = [x for x in sentence.strip().splitlines() if x.strip()]
    return bool(lines) and bool(_TABLE_SEPARATOR.fullmatch(lines[-1])) and all(
        _TABLE_ROW.fullmatch(x) for x in lines[:-1])


def is_framing(sentence: str) -> bool:
    """Whether ``sentence`` is a framing line (docs/transfer.md, "Framing lines"), which makes no claim about the
    world: a line about the answer itself that ends in ":" and presents what follows ("Here is a concise summary
    of the passage:", "Based on the given passages, here are the steps:", "To cook brats, follow these steps:";
    rule 1; also after an introductory phrase, "Based on the structured data, here is an overview:", and ending
    "… the following methods:": rule 4), or a closing line addressed to the user ("I hope this helps!", "Let me know
    if you have any other questions."; rule 2), a Markdown heading ("## Key facts"; rule 3), a table's header row
    over its separator row ("|---|---|"; rule 5), footnote digits alone ("¹"; rule 6), or part of a list of sources
    ("Sources:", "Source: Passage 1", "[1] Eiffel Tower - Wikipedia"; rule 7), or a pleasantry alone ("Sure!",
    "Great question!"; rule 8). Other headings
    ("Ingredients:") and lines about a passage ("The passage describes three groups:") are none."""
    if _HEADING.match(sentence) or _table_header(sentence) or _FOOTNOTE.fullmatch(sentence) or _sources(sentence):
        return True
    text = strip_markup(sentence).strip()
    if _CLOSER.match(text) or _PLEASANTRY.fullmatch(text):
        return True
    if not text.endswith(":"):
        return False
    text = text[preamble_end(text):]
    return bool(_PRESENTATION.match(text) or _FOLLOWS.search(text))


def strip_preamble(sentence: str) -> str:
    """``sentence`` from :func:`preamble_end` on ("The answer is Japan." -> "Japan."): the claim that the surface
    checks read."""
    return sentence[preamble_end(sentence):]


def asked(text: str) -> str:
    """What ``text`` asks: its sentences that end in "?"; without one, the text if it is one sentence (a search
    query: "how to fold a quilt"), else nothing (a dialogue history or an instruction that asks no question)."""
    sentences = split_sentences(text) if text and text.strip() else []
    questions = [x for x in sentences if x.rstrip().endswith("?")]
    return " ".join(questions) if questions else (sentences[0] if len(sentences) == 1 else "")


#: how an instruction to summarise starts ("Write a short summary of ...", "Summarize the article."): its words
#: ("write", "short", "news") are the task's, so they lend the answer no support
_SUMMARY_INSTRUCTION = re.compile(r"\s*(?:write|summari[sz]e)\b", re.IGNORECASE)


@lru_cache(maxsize=256)
def question_support(question: str) -> str:
    """The words of ``question`` that an answer may reuse as given (lexical scorer version 6): what it
    :func:`asked` ("What is the main ingredient of tofu?": "main ingredient" is the user's, not a claim the context
    must hold); nothing for an instruction to summarise."""
    if not question or _SUMMARY_INSTRUCTION.match(question):
        return ""
    return asked(question)


#: a turn of a chat or meeting transcript: maybe a time ("[00:01:02]"), a speaker of one to three words (the first
#: a letter's: "Speaker 1"), a colon, the message
_TURN = re.compile(r"^\s*(?:[\[(]?\d{1,2}:\d{2}(?::\d{2})?[\])]?\s+)?"
                   r"([^\W\d_][\w.'’-]*(?: [\w.'’-]+){0,2})\s*:\s+\S")


#: what the CLI and ``/healthz`` say after "N contexts read" when contexts read as transcripts
TRANSCRIPT_NOTE = ('as a chat or meeting transcript ("Name: message" lines). On summaries of chats the detector was '
                   'measured at chance (FacEval, DialSummEval; never trained on; docs/transfer.md, "Chat summaries"): '
                   "do not rely on its verdicts there.")


def is_transcript(text: str | Sequence[str]) -> bool:
    """Whether ``text`` (or passages, read together) reads as a chat or meeting transcript: three or more lines,
    at least 80% of them turns ("Amanda: I baked cookies"), by two or more speakers, one of them speaking twice or
    more (so a record of fields, "Name: Ada / Born: 1815", is none, and neither is a list of two or more such
    records, three or more fields in the same order each time). faithwatch's detector was measured at chance on
    summaries of chats (docs/transfer.md, "Chat summaries"), so the CLI notes such contexts."""
    lines = [line for part in ([text] if isinstance(text, str) else text) for line in part.splitlines()
             if line.strip()]
    speakers = [m.group(1).casefold() for line in lines if (m := _TURN.match(line))]
    n = len(set(speakers))
    # a list of records: three or more fields, the same order each time, at least twice ("Title: … / Author: …")
    cyclic = n >= 3 and len(speakers) >= 2 * n and speakers[:-n] == speakers[n:]
    return (len(lines) >= 3 and len(speakers) >= 0.8 * len(lines) and n >= 2 and len(speakers) > n
            and not cyclic)
