"""Units: quantities with a unit of measure, conversions written in parentheses, and when two are one quantity."""

from __future__ import annotations

import re
from typing import NamedTuple

from faithwatch.text.numbers import (
    _BELOW_100,
    _NUMERATORS,
    _SHARE_DENOMINATORS,
    WORD_VALUES,
    _alternatives,
    digits_for_words,
    join_thousands,
    normalise_number,
)

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
        return float(written.replace(",", "").rstrip(" -"))  # "14-" of "a 14-hour and 30-minute shift"
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
