"""Question coverage: how many parts of a question an answer fills (FOD's question-aware term).

A faithfulness score cannot tell an answer from a faithful sentence that does not answer ("The first ascent took
place in 1953." for a mountain's height), nor a full answer from one fact of "Who wrote it, and in which year?".
This module reads the question's *slots*, one per wh-clause ("Who wrote X" / "in which year"), and counts how many
of them an answer fills:

* a **numeric** slot ("how many", "in which year", "when did", "how tall", "..., in metres") is filled by a number
  that the question does not hold ("when" only as a question word, before an auxiliary: not "when you have ...");
  a year written as a date ("in 1953", "May 1953", "1953 AD") fills a *time* slot ("when", "which year/date/
  century/decade", "how old", "how long has ...") but not a quantity ("How high is Everest?" is not answered by
  "It was first climbed in 1953."), and a number written with a unit ("412 metres", "30 percent") does not fill
  a *count* slot ("how many" and a noun that is not a unit: "how many people", not "how many metres"): "The
  bridge is 412 metres long." does not say how many people cross it;
* any other slot is filled by a run of adjacent content words that the question does not hold (one name of
  several words, "Joseph Haydn", fills one slot; stop words and the answer-frame words of
  :data:`~faithwatch.alignment.lexical.FRAME_WORDS` do not count), or by a spare number that is not a date. A run
  fills once however often it is said ("The answer is Ethiopia. The answer is Ethiopia." fills one slot), and a
  run made only of lower-case verb forms and adverbs (:func:`verb_like`: "written", "located", "flew",
  "originally") fills nothing: "The Little Mermaid was written by Hans Christian Andersen." leaves "in which
  country was he born?" open.

With the **context** (FOD passes the one it answers from), a word slot takes only what the context offers for it:
a run that shares a word with a context sentence about that slot (one that holds a content word of the slot's
clause, such as "Eiffel" or "stand" in "In which city does the Eiffel Tower stand", or the sentence right after
one when it opens by referring back, "It was written by ...": :data:`REFER_BACK`). A next sentence that starts
afresh ("Germany finished third." after the sentence naming the winner) offers nothing, so restating it does not
fill the slot. Then what the model remembers instead of what the context says
("The Eiffel Tower stands in Paris, France." from a context that puts it in Lyon) fills nothing, and neither does
"The answer is: Constantinople fell in 1461." fill "which sultan captured the city". A slot none of whose words
the context holds ("in which country", where the context never says "country") takes any run, as without the
context. A run fills one slot; a spare number still fills any word slot.

So an echo of the question, or "It is a sport." for "Which sport ...?", fills nothing. The check is lexical: it
says whether the answer *says something* of the kind asked for, not whether it is right (that is the detector's
job). Only what the text asks is read: its sentences that end in "?", or the whole text if it is one sentence. A
text without a wh-clause there (an instruction such as "Summarise the article.", a yes/no question, a dialogue
history that ends in a statement) has no slots, and FOD then runs exactly as without this term.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from faithwatch.alignment.lexical import content_runs, content_stems, number_values, word_tokens
from faithwatch.text import (
    MONTH_ABBREVIATIONS,
    MONTHS,
    NUMBER_WORDS,
    ORDINAL_SUFFIX_RE,
    asked,
    normalise_number,
    number_forms,
    split_sentences,
    stem,
)

_WH = r"(?:who|whom|whose|what|which|where|when|why|how)"
# a clause boundary: a comma (and optional "and"/"or") or a bare "and", before a wh-word that at most two words
# precede ("in which year", "aboard which spacecraft", "and what is")
_SPLIT = re.compile(rf"\s*,\s*(?:(?:and|or)\s+)?(?=(?:[\w-]+\s+){{0,2}}{_WH}\b)|\s+and\s+(?=(?:[\w-]+\s+)?{_WH}\b)",
                    re.IGNORECASE)
_HAS_WH = re.compile(rf"\b{_WH}\b", re.IGNORECASE)
_UNITS = (r"metres|meters|kilometres|kilometers|miles|feet|foot|inches|centimetres|centimeters|millimetres|"
          r"seconds|minutes|hours|days|weeks|months|years|degrees|celsius|fahrenheit|kelvin|kilograms|grams|"
          r"tonnes|tons|pounds|litres|liters|percent|per cent")
_AUX = r"(?:did|does|do|is|was|were|are|will|would|can|could|should|has|have|had)"
_WHAT_NOUN = r"\b(?:what|which)\s+(?:(?:is|was|are|were)\s+)?(?:(?:its|the|their|his|her)\s+)?(?:[\w-]+\s+)?"
# a time: "when did", "which year", and ages and durations that a date answers ("how old", "how long has ...")
_WHEN = (rf"\bwhen\s+{_AUX}\b|{_WHAT_NOUN}(?:year|date|century|decade)\b"
         r"|\bhow\s+old\b|\bhow\s+long\s+(?:ago|has|have|had)\b")
_TIME = re.compile(_WHEN, re.IGNORECASE)
_NUMERIC = re.compile(
    rf"\bhow\s+(?:many|much|high|tall|long|far|old|big|large|deep|wide|heavy|fast|often)\b|{_WHEN}"
    rf"|{_WHAT_NOUN}(?:age|number|temperature|percentage|population|height|length|speed)\b"
    rf"|\bin\s+(?:{_UNITS})\b",
    re.IGNORECASE)
_MONTHS = "|".join(MONTHS + tuple(MONTH_ABBREVIATIONS))
_YEAR = r"(1\d{3}|20\d{2})"
# a year written as a date: a span ("between 1887 and 1889", "1887-1889"), after a preposition or a month ("in
# 1953", "May 29, 1953", "29 May 1953"; the day is part of the date), or with an era
_DAY = rf"(\d{{1,2}})(?:{ORDINAL_SUFFIX_RE})?"
_YEAR_END = r"\b(?![.,]\d)"  # not part of a longer number ("1953.5")
_NOT_UNIT = rf"{_YEAR_END}(?!\s*(?:{_UNITS})\b)"
_DATE = re.compile(
    rf"\b(?:between|from)\s+{_YEAR}\s+(?:and|to|until|till|through)\s+{_YEAR}{_NOT_UNIT}"  # a span of years
    rf"|\b{_YEAR}\s*[-\u2013]\s*{_YEAR}{_NOT_UNIT}"
    rf"|\b(?:in|since|until|till|by|from|after|before|during|around|circa|of)\s+{_YEAR}{_YEAR_END}"
    rf"|\b(?:{_MONTHS})\.?\s+(?:{_DAY},?\s+)?{_YEAR}\b"
    rf"|\b{_DAY}\s+(?:{_MONTHS})\.?,?\s+{_YEAR}\b"
    rf"|\b{_YEAR}\s*(?:AD|BC|BCE|CE)\b",
    re.IGNORECASE)


# a count: "how many" and a noun that is not a unit ("how many people", not "how many metres")
_COUNT = re.compile(rf"\bhow\s+many\s+(?!(?:{_UNITS})\b)[a-z]", re.IGNORECASE)
# a measurement: a number written with a unit after it ("412 metres", "30 per cent"): it does not fill a count
_MEASURE = re.compile(rf"(\d[\d,.]*)\s*(?:{_UNITS})\b", re.IGNORECASE)


@dataclass(frozen=True)
class Slot:
    """One part of a question: its clause, whether a number fills it, whether it asks for a time (a year
    written as a date fills only such a numeric slot), and whether it asks for a count (a number written with a
    unit does not fill it)."""

    clause: str
    numeric: bool
    time: bool = False
    count: bool = False


@lru_cache(maxsize=1024)
def question_slots(question: str) -> tuple[Slot, ...]:
    """The slots of ``question``: one per clause with a wh-word in what it :func:`asked` (none without one)."""
    clauses = [c.strip(" ?.!") for c in _SPLIT.split(asked(question or ""))]
    return tuple(Slot(c, bool(_NUMERIC.search(c)), bool(_TIME.search(c)), bool(_COUNT.search(c))) for c in clauses
                 if c and _HAS_WH.search(c))


#: stems of spelled-out numbers: they fill numeric slots, not word slots
_NUMBER_STEMS = frozenset(stem(w) for w in NUMBER_WORDS)

_VERB_FORMS_TEXT = """
    is was are were be been being lies lie lay lying flows runs ran stands stood sits sat lives located situated
    found born built made called named known written wrote painted composed invented discovered designed founded
    became become began begun bore borne brought bought chose chosen came did done drew drawn fell fallen flew flown
    fought gave given grew grown held hid hidden kept knew led left lost meant met paid rose risen said sang sung saw
    seen sent shot showed shown sold spoke spoken spent stole stolen struck swam swum taught thought told took taken
    went gone wore worn wove woven set put"""
#: lower-case verb forms that say how, not what ("The city is located in Poland."): they fill no slot
VERB_FORMS = frozenset(_VERB_FORMS_TEXT.split())
_NOT_VERB_LIKE_TEXT = """hundred sacred kindred naked wicked rugged ragged beloved family assembly monopoly
    butterfly anomaly supply reply rally jelly belly holly folly bully"""
#: lower-case words that end like a past form or an adverb but name things ("red" is too short to count)
_NOT_VERB_LIKE = frozenset(_NOT_VERB_LIKE_TEXT.split())


def verb_like(word: str) -> bool:
    """Whether ``word`` reads as a verb form or an adverb: lower case, and listed in :data:`VERB_FORMS` or a past
    form ("orbited", 5+ letters, -ed) or an adverb ("originally", 6+ letters, -ly)."""
    low = word.lower()
    if word != low or low in _NOT_VERB_LIKE:
        return False
    return low in VERB_FORMS or (len(low) >= 5 and low.endswith("ed")) or (len(low) >= 6 and low.endswith("ly"))


def answer_runs(answer: str) -> list[frozenset[str]]:
    """The distinct content runs of ``answer`` that may fill a slot: without repeats and without runs made only of
    :func:`verb_like` words."""
    verbs = {stem(w) for w in word_tokens(answer) if verb_like(w)}
    runs: list[frozenset[str]] = []
    for run in content_runs(answer):
        if run not in runs and not run <= verbs:
            runs.append(run)
    return runs


@lru_cache(maxsize=1024)
def _given(question: str) -> tuple[frozenset[str], frozenset[str]]:
    """The numbers and content-word stems ``question`` already holds (they fill nothing)."""
    return number_values(question), content_stems(question)


def _new_numbers(answer: str, given: frozenset[str]) -> tuple[int, int, int]:
    """How many numbers ``answer`` holds that are not ``given``, how many of them are parts of dates (a year
    written as a date, its day; a number written two ways, "45m" = 45 and 45000000, counts once), and how many
    are measurements (written with a unit after them) and not dates."""
    forms = number_forms(answer)
    written = frozenset().union(*forms)
    numbers = {f for f in forms if f.isdisjoint(given)}
    numbers |= {frozenset({v}) for v in number_values(answer) - written - given}  # spelled out: "three"
    dates = {normalise_number(x) for m in _DATE.finditer(answer) for x in m.groups() if x}
    measures = {normalise_number(m.group(1)) for m in _MEASURE.finditer(answer)}
    in_dates = [not f.isdisjoint(dates) for f in numbers]
    measured = sum(1 for f, d in zip(numbers, in_dates, strict=True) if not d and not f.isdisjoint(measures))
    return len(numbers), sum(in_dates), measured


@lru_cache(maxsize=256)
def _context_sentences(context: str) -> tuple[frozenset[str], ...]:
    """The content stems of each sentence of ``context``."""
    return tuple(content_stems(s) for s in split_sentences(context)) if context.strip() else ()


#: first words of a sentence that goes on about the one before it ("It was written by ...")
REFER_BACK = frozenset(["it", "its", "he", "his", "she", "her", "they", "their", "this", "these", "those", "there"])


@lru_cache(maxsize=256)
def _refers_back(context: str) -> tuple[bool, ...]:
    """Whether each sentence of ``context`` opens with a word that refers back (:data:`REFER_BACK`)."""
    if not context.strip():
        return ()
    return tuple(bool(s.split()) and s.split()[0].strip("\"'(").lower() in REFER_BACK for s in split_sentences(context))


@lru_cache(maxsize=256)
def _offers(question: str, context: str) -> tuple[frozenset[str] | None, ...]:
    """For each word slot of ``question``, the stems ``context`` offers for it (its sentences about the slot and
    the ones right after them that refer back, less the question's words); None when no sentence holds a content
    word of the slot's clause. Once per question and context: FOD asks again for every candidate sentence."""
    sentences = _context_sentences(context)
    goes_on = _refers_back(context)
    words_given = _given(question)[1]
    out = []
    for slot in (s for s in question_slots(question) if not s.numeric):
        own = content_stems(slot.clause)
        hits = {k for i, c in enumerate(sentences) if c & own
                for k in (i, i + 1) if k < len(sentences) and (k == i or goes_on[k])}
        out.append(frozenset().union(*(sentences[k] for k in hits)) - words_given if hits else None)
    return tuple(out)


def _matched(options: list[set[int]]) -> int:
    """The most slots that distinct runs can fill (``options[i]``: the runs slot i may take; a bipartite
    matching by augmenting paths, a handful of slots and runs)."""
    owner: dict[int, int] = {}

    def take(slot: int, seen: set[int]) -> bool:
        for run in options[slot]:
            if run not in seen:
                seen.add(run)
                if run not in owner or take(owner[run], seen):
                    owner[run] = slot
                    return True
        return False

    return sum(take(i, set()) for i in range(len(options)))


def filled(question: str, answer: str, context: str = "") -> int:
    """How many of ``question``'s slots ``answer`` fills (0 ... ``len(question_slots(question))``); with
    ``context``, a word slot takes only a run the context offers for it (see the module doc)."""
    slots = question_slots(question)
    if not slots:
        return 0
    numbers_given, words_given = _given(question)
    numbers, dates, measured = _new_numbers(answer, numbers_given)
    runs = [run for run in answer_runs(answer) if run - words_given - _NUMBER_STEMS]
    times = sum(s.time for s in slots)
    counts = sum(s.count and not s.time for s in slots)  # a count slot is numeric ("how many")
    quantities = sum(s.numeric and not s.time for s in slots) - counts
    by_count = min(counts, numbers - dates - measured)  # a count takes a number without a unit
    by_quantity = by_count + min(quantities, numbers - dates - by_count)
    by_time = min(times, numbers - by_quantity)
    spare = numbers - dates - by_quantity - max(0, by_time - dates)  # a date fills only a time slot
    options = [{j for j, run in enumerate(runs) if offer is None or run & offer}  # the runs each word slot may take
               for offer in _offers(question, context)]
    return by_quantity + by_time + min(len(options), _matched(options) + spare)


def fillers(question: str, answer: str, context: str = "") -> frozenset[str]:
    """What of ``answer`` may fill a slot of ``question``, as :func:`filled` reads it: the content stems of its runs
    that a word slot may take (with ``context``, a run the context offers for the slot; the question's own words
    left out), and its numbers that the question does not hold, each as ``"#<value>"``. Two answers that share one
    say the same thing in a slot."""
    numbers_given, words_given = _given(question)
    offers = _offers(question, context)
    out: set[str] = set()
    for run in answer_runs(answer):
        run = run - words_given - _NUMBER_STEMS
        if run and any(offer is None or run & offer for offer in offers):
            out |= run
    return frozenset(out | {f"#{n}" for n in number_values(answer) - numbers_given})


def open_slots(question: str, answer: str, context: str = "") -> int:
    """How many of ``question``'s slots ``answer`` leaves open (``context``: see :func:`filled`)."""
    return len(question_slots(question)) - filled(question, answer, context)


#: sentences in a row that fill nothing before FOD lets an answer with open slots end after all
PATIENCE = 2


@dataclass(frozen=True)
class Coverage:
    """The coverage of one question, as FOD's search uses it (no slots: every answer is complete), read against
    the ``context`` the answer comes from (empty: any run fills a word slot)."""

    question: str
    context: str = ""

    @property
    def slots(self) -> tuple[Slot, ...]:
        """The question's slots."""
        return question_slots(self.question)

    def open(self, sentences: list[str]) -> int:
        """How many slots the answer made of ``sentences`` leaves open."""
        return open_slots(self.question, " ".join(sentences), self.context) if self.slots else 0

    def stalled(self, sentences: list[str]) -> int:
        """How many of the last ``sentences`` of an answer filled no slot."""
        count = 0
        for k in range(len(sentences), 0, -1):
            if self.open(sentences[:k - 1]) > self.open(sentences[:k]):
                break
            count += 1
        return count

    def must_go_on(self, sentences: list[str]) -> bool:
        """Whether an answer made of ``sentences`` may not end yet: slots are open and it filled one lately."""
        return self.open(sentences) > 0 and self.stalled(sentences) < PATIENCE
