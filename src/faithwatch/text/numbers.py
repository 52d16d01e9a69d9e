"""Numbers: spelled numbers, ordinals and shares in digits, magnitudes, bounds, year ranges, months, decimals and the
normal form of a number."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache
from itertools import takewhile

from faithwatch.text.words import is_stop

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


#: the suffixes of an ordinal in digits ("21st", "42nd", "63rd", "14th"), and a regex alternation of them
ORDINAL_SUFFIXES = ("st", "nd", "rd", "th")
ORDINAL_SUFFIX_RE = "|".join(ORDINAL_SUFFIXES)


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


#: the names of the months and weekdays, lower case
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
#: the months a date may abbreviate ("Feb. 14", "3 Mar 2015"; lexical scorer version 9, edits version 42)
MONTH_ABBREVIATIONS = {"jan": "january", "feb": "february", "mar": "march", "apr": "april", "jun": "june",
                       "jul": "july", "aug": "august", "sep": "september", "sept": "september", "oct": "october",
                       "nov": "november", "dec": "december"}
#: what follows a word that a number completes ("Feb. 14", tokenised "feb . 14"; "No. 1", "no 10")
NUMBER_AFTER = re.compile(r"\s?\.?\s*\d")
_NUMBER_BEFORE = re.compile(rf"\d(?:{ORDINAL_SUFFIX_RE})?\.?\s*$", re.IGNORECASE)


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


#: a well-formed Roman numeral of the letters I, V, X and L (1 to 89): its tens and its units
_ROMAN_RE = re.compile(r"(XL|L?X{0,3})(IX|IV|V?I{0,3})")
_ROMAN_VALUES = {"I": 1, "V": 5, "X": 10, "L": 50}


#: nouns that number what they name, after which "I" alone is a Roman numeral ("Phase I", "Type I")
NUMBERED_NOUNS = frozenset({"phase", "type", "stage", "level", "class", "grade", "category", "tier", "part", "chapter",
                            "volume", "book", "act", "scene", "title", "article", "section", "division", "series",
                            "season", "round", "league", "war"})
#: titles that lead a name numbered by a Roman numeral, "I" too ("King Edmund I", "Pope John Paul I")
TITLES = frozenset({"king", "queen", "pope", "emperor", "empress", "tsar", "czar", "prince", "princess", "duke",
                    "duchess", "count", "countess", "earl", "sultan", "shah", "pharaoh"})
_ROMAN_WORD_RE = re.compile(r"(?<![\w'’-])[IVXL]+(?![\w'’-])")
_WORD_RE = re.compile(r"[^\W\d_][\w'’]*|\d\S*")


def roman_numerals(text: str) -> list[tuple[int, int, int]]:
    """The Roman numerals of ``text`` read as numbers, as ``(start, end, value)``: a word of capitals
    (:func:`roman_value`) after a capitalised word, spaces only between ("Louis XIV", "Type II", "Super Bowl
    XXIV"); "I" alone only after a numbering noun (:data:`NUMBERED_NOUNS`, "War" too) or a name led by a title
    among the two words before it (:data:`TITLES`): "a Phase I trial", "World War I", "Queen Matilda I", not
    "Yesterday I went" or "in New York I saw" (edits version 101, lexical version 29)."""
    out = []
    for m in _ROMAN_WORD_RE.finditer(text):
        value = roman_value(m.group(0))
        before = text[max(0, m.start() - 80):m.start()]
        if not value or not before.endswith(" "):
            continue
        words = _WORD_RE.findall(before)
        if not words or not words[-1][0].isupper() or not before.rstrip(" ").endswith(words[-1]):
            continue
        led = list(takewhile(lambda w: w[0].isupper(), reversed(words[-3:])))  # the capitalised words before it
        if m.group(0) == "I" and words[-1].lower() not in NUMBERED_NOUNS and not any(
                w.lower() in TITLES for w in led[1:]):
            continue
        out.append((m.start(), m.end(), value))
    return out


#: the ordinal words "First" to "Tenth" a ruler's number is written in ("Henry the Eighth"); from "Eleventh" on,
#: both signals read an ordinal word in digits ("the 14th": :func:`ordinals_in_digits`)
_REGNAL_WORDS = {**_UNIT_ORDINALS, "tenth": 10}
_REGNAL_RE = re.compile(rf"(?<![\w'’-])([A-Z][\w'’-]*) the "
                        rf"({_alternatives(_REGNAL_WORDS)}|\d{{1,2}}(?:{ORDINAL_SUFFIX_RE}))\b", re.IGNORECASE)
#: capitalised words that are no ruler's name before "the" and an ordinal ("Friday the 13th", "May the Fourth")
_NOT_RULERS = frozenset(WEEKDAYS + MONTHS)
_CAPITALISED_NEXT = re.compile(r"\s+[A-Z]")


def regnal_ordinals(text: str, words_only: bool = False) -> list[tuple[int, int, int]]:
    """A ruler's number written as an ordinal after "the", as ``(start, end, value)`` of the ordinal: "Henry the
    Eighth" (8), "Louis the 14th" (14, as :func:`ordinals_in_digits` writes "the Fourteenth"). The ordinal word is
    capitalised ("First" to "Tenth"); the name before "the" is capitalised and no stop word, weekday or month; no
    capitalised word follows ("the Second World War" is none); ``words_only``: the ordinal words alone (a digit
    ordinal is a number already). Edits version 105, lexical version 30."""
    out = []
    for m in _REGNAL_RE.finditer(text):
        name, ordinal = m.group(1), m.group(2)
        if not name[0].isupper() or name.lower() in _NOT_RULERS or is_stop(name.lower()):
            continue
        if text[m.start(2) - 4:m.start(2)] != "the " or (ordinal[0].isalpha() and not ordinal[0].isupper()):
            continue
        if words_only and not ordinal[0].isalpha():
            continue
        if _CAPITALISED_NEXT.match(text, m.end()):
            continue
        value = _REGNAL_WORDS.get(ordinal.lower()) or int(ordinal[:-2])
        out.append((m.start(2), m.end(2), value))
    return out


def roman_value(word: str) -> int | None:
    """The value of ``word`` as a Roman numeral written in capitals of I, V, X and L ("XIV": 14; 1 to 89), or None
    ("L" alone, lower case and ill-formed numerals such as "IIII" or "VX" are none)."""
    if not word or word == "L" or not _ROMAN_RE.fullmatch(word):
        return None
    total = 0
    for letter, after in zip(word, word[1:] + " ", strict=True):
        value = _ROMAN_VALUES[letter]
        total += -value if value < _ROMAN_VALUES.get(after, 0) else value
    return total
