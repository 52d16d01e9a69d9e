"""Lexical alignment: how much of a sentence's surface content can be found in the context.

Pure Python/regex, no model. The score combines four features of the sentence:

* **content** - fraction of its content words (lowercased, stop words and :data:`FRAME_WORDS` removed,
  crude suffix stemming) that occur in the context;
* **entities** - fraction of its named-entity-like tokens (capitalised tokens not at sentence
  start, all-caps tokens / acronyms anywhere) that occur in the context (case-insensitive);
* **bigrams** - fraction of its word bigrams (stemmed, stop words kept) copied from the context;
* **numbers** - fraction of its numbers (digits, ``1,000``/``3.50``/``12%`` normalised) that
  occur in the context, where spelled-out context numbers (``"two"``) also count. A number with a
  magnitude after it also counts by its value (``"$5.7bn"`` = ``"5.7 billion"`` = ``"5,700 million"``),
  and the magnitude or percent word itself is not content (version 4).

``base`` is the weighted mean of the *available* features among content (0.5), entities (0.25)
and bigrams (0.25) - a feature the sentence does not have (e.g. no entities) is dropped and the
weights re-normalised. A sentence with numbers but no words/entities ("It was 2023.") has
``base`` = its number support fraction. Every number of the sentence missing from the context
then multiplies the score by ``UNSUPPORTED_NUMBER_FACTOR`` (0.35), whatever else is supported:

    score = base * UNSUPPORTED_NUMBER_FACTOR ** n_unsupported_numbers

since an unsupported number is a classic hallucination. A sentence with no content words, no
entities and no numbers (e.g. "Yes, it is.") gets ``NEUTRAL_SCORE`` (0.5): there is nothing to
check, so it is neither supported nor contradicted.

Given the question the sentence answers, the words of what it asks count as found in the context too
(:func:`~faithwatch.text.question_support`; version 6): "The main ingredient of tofu is soybeans." for "What is the
main ingredient of tofu?" claims nothing about "main ingredient" that the context must hold. An instruction to
summarise lends nothing ("Write a short summary of the news." does not make "news" supported).

A year range written short holds its end year in full on either side ("2007-08" and "2007-2008";
:func:`~faithwatch.text.year_range_ends`; version 8; version 7 was a rule not kept), and a month's abbreviation
next to a number is the month ("Feb. 14" is "February 14"; :func:`~faithwatch.text.month_name`; version 9). A sentence's
number written with a magnitude ("£3bn") is found by its value, or by its digits standing in the context with no
magnitude of their own: against "£3m" it is a number the context lacks (version 11; version 10 was a rule not kept).
A number written in two or more words is read in digits, in sentence and context alike ("three hundred" is 300;
:func:`~faithwatch.text.digits_for_words`; version 14; versions 12 and 13 were rules not kept). A decimal a
context writes with a space after the point ("31. 8", a tokeniser's) also holds the number joined ("31.8";
:func:`~faithwatch.text.join_decimals`; version 16; versions 7 and 15 were rules not kept). A sentence's unit
conversion in parentheses that is correct ("165°F (74°C)") is not read: the number before it is
(:func:`~faithwatch.text.drop_conversions`; version 17). A share the context writes as a fraction in words holds its
percentage ("half of" holds 50, "two-thirds of" 67; :func:`~faithwatch.text.share_values`; version 22); a share in
the sentence is no number the context must hold ("more than half" for "a majority"). A number with a unit is found
by a quantity of the context in another unit of its kind, and its unit word with it ("14 days" by "two weeks", within
5%: :func:`~faithwatch.text.same_quantity`; unit rule 1, version 23); "a week" is a quantity too, and an amount
written as a share or compound of a unit is its value: found at it, one novel number at another value of a quantity
of its kind the context holds ("three-quarters of an hour" for "45 minutes" or "60 minutes"; unit rules 2 and 2 C,
version 24).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import NamedTuple

from faithwatch.alignment.base import AlignmentScorer, clamp01, validate_inputs
from faithwatch.text import (
    CURRENCY_WORDS,
    NUMBER_WORDS,
    Measure,
    amount_numbers,
    bounded_quantities,
    digits_for_words,
    drop_conversions,
    is_stop,
    join_decimals,
    measures,
    month_name,
    number_unit_spans,
    number_value,
    preamble_end,
    quantities,
    question_support,
    regnal_ordinals,
    roman_numerals,
    same_quantity,
    satisfies,
    share_values,
    stem,
)

#: value for a sentence with nothing checkable in it (no content words, entities or numbers)
NEUTRAL_SCORE = 0.5
#: factor applied to the score once per number of the sentence that the context lacks
UNSUPPORTED_NUMBER_FACTOR = 0.35
#: what :meth:`LexicalScorer.evidence` returns (the ``lexical`` signal's features)
EVIDENCE_FEATURES = ("lex_content", "lex_bigrams", "novel_content", "novel_numbers", "novel_entities")
#: words an answer uses to talk about the task rather than the world ("The answer is 1965.", "Based on the
#: provided passages, ..."): not content, so they are neither supported nor novel (lexical scorer version 3)
FRAME_WORDS = frozenset((
    "answer", "answers", "question", "questions", "context", "contexts", "passage", "passages", "provided",
    "provide", "based", "according", "information", "text", "mentioned", "mention", "given", "summary", "article",
    "document", "documents", "source", "sources",
))
#: weights of the non-number features (re-normalised over the features present)
FEATURE_WEIGHTS: dict[str, float] = {"content": 0.5, "entities": 0.25, "bigrams": 0.25}

# word-ish tokens with inner apostrophes/hyphens (e.g. "don't", "COVID-19"); ones starting with a
# digit ("1990s", "3rd") are left to the number regex
_TOKEN_RE = re.compile(r"\w(?:[\w'’-]*\w)?")
# the text before a word that makes it sentence-initial: nothing, or end punctuation, then non-words
_SENT_START_RE = re.compile(r"(?:^|[.!?:;])\W*$")


@dataclass(frozen=True)
class _Features:
    #: each number's forms, its value when written with a magnitude and its bound ("more than 300": version 19),
    #: with repeats (each unsupported one counts)
    numbers: tuple[tuple[frozenset[str], str | None, tuple[str, Decimal] | None], ...]
    content: frozenset[str]  # stems of non-stop words
    entities: frozenset[str]  # lowercased stems of entity-like tokens
    bigrams: frozenset[tuple[str, str]]
    measures: tuple[Measure, ...] = ()  # its quantities with a unit ("14 days"; version 23)
    #: the stem and value of each numeral word: a Roman numeral, or a ruler's ordinal word ("Eighth" of "Henry the
    #: Eighth"; version 30)
    numerals: tuple[tuple[str, str], ...] = ()


def _words(text: str) -> list[tuple[str, int]]:
    """Word tokens with their character start offsets, without the magnitude and percent words of numbers; a
    month's abbreviation next to a number as the month, written in the abbreviation's case ("Feb. 14": "February";
    version 9)."""
    units = number_unit_spans(text)
    out = []
    for m in _TOKEN_RE.finditer(text):
        word = m.group(0)
        if word[0].isdigit() or any(a <= m.start() < b for a, b in units):
            continue
        month = month_name(text, m.start(), m.end())
        if month:
            word = month.upper() if word.isupper() else month.capitalize() if word[0].isupper() else month
        out.append((word, m.start()))
    return out


def word_tokens(text: str) -> list[str]:
    """``text``'s word tokens as the scorer reads them (numbers and the magnitude words after them left out)."""
    return [w for w, _ in _words(text)]


def _wordlike(word: str) -> bool:
    """Not a fragment ("a", the "s" of "U.S.") nor an answer-frame word ("answer", "passages")."""
    return len(word) >= 2 and word.lower() not in FRAME_WORDS


def _sentence_features(sentence: str, claim_start: int = 0) -> _Features:
    """The features of ``sentence[claim_start:]``, read in place (a capitalised word right after a cut preamble, as
    in "The answer is China.", is not sentence-initial)."""
    numbers = tuple(bounded_quantities(sentence[claim_start:]))
    words = [(w, i) for w, i in _words(sentence) if i >= claim_start]
    content: set[str] = set()
    entities: set[str] = set()
    for word, start in words:
        if not _wordlike(word):
            continue
        at_start = bool(_SENT_START_RE.search(sentence[:start]))
        letters = [c for c in word if c.isalpha()]
        all_caps = len(letters) >= 2 and all(c.isupper() for c in letters)
        if all_caps or (word[0].isupper() and not at_start and not is_stop(word)):
            entities.add(stem(word))
        if not is_stop(word):
            content.add(stem(word))
    stems = [stem(w) for w, _ in words]
    bigrams = frozenset(zip(stems, stems[1:], strict=False))
    return _Features(numbers, frozenset(content), frozenset(entities), bigrams, tuple(measures(sentence[claim_start:])),
                     _numeral_words(sentence, claim_start))


def _numeral_words(text: str, start: int = 0) -> tuple[tuple[str, str], ...]:
    """The stem and value of each numeral word of ``text[start:]``: a Roman numeral (:func:`roman_numerals`), or a
    ruler's ordinal word (:func:`regnal_ordinals`: "Eighth", not "the 14th", which is a number; version 30)."""
    spans = roman_numerals(text) + regnal_ordinals(text, words_only=True)
    return tuple((stem(text[a:b]), str(value)) for a, b, value in spans if a >= start)


def _claim_features(sentence: str) -> _Features:
    """The features of the sentence's claim: its answer preamble left out (lexical scorer version 5), a number
    written in words read in digits (version 14), a correct unit conversion in parentheses left out (version 17)."""
    sentence = drop_conversions(digits_for_words(sentence))
    return _sentence_features(sentence, preamble_end(sentence))


@dataclass(frozen=True)
class _ContextIndex:
    numbers: frozenset[str]
    bare: frozenset[str]  # the numbers written with no magnitude of their own ("3", "three"; version 11)
    values: tuple[Decimal, ...]  # its numbers written after no bound word, as values, for a bound to read (v19)
    stems: frozenset[str]
    bigrams: frozenset[tuple[str, str]]
    measures: tuple[Measure, ...] = ()  # its quantities with a unit, for one in another unit to read (version 23)
    numerals: frozenset[str] = frozenset()  # the values of its numerals: Roman, and rulers' ordinals (version 30)


def content_stems(text: str) -> frozenset[str]:
    """The stems of ``text``'s content words, as the scorer reads a sentence (stop words, :data:`FRAME_WORDS` and
    the magnitude or percent word after a number left out)."""
    return _sentence_features(text).content


#: lower-case words that may join the parts of one name ("Ludwig van Beethoven", "Lope de Vega")
NAME_PARTICLES = frozenset({"van", "von", "de", "da", "del", "della", "der", "den", "di", "du", "la", "le", "bin",
                            "ibn", "al", "el"})
_RUN_GAP = re.compile(rf"\s+(?:(?:{'|'.join(sorted(NAME_PARTICLES))})\s+)?")


def content_runs(text: str) -> list[frozenset[str]]:
    """``text``'s content words (as :func:`content_stems` reads them) grouped into runs of adjacent words, so that
    a name of several words is one run: "Joseph Haydn." has one, "in Prague and Vienna" two. Words join when only
    spaces, or a name particle (:data:`NAME_PARTICLES`), stand between them."""
    runs: list[set[str]] = []
    end = None
    for word, start in _words(text):
        if not _wordlike(word) or is_stop(word):
            if word.lower() not in NAME_PARTICLES:
                end = None
            continue
        if end is not None and _RUN_GAP.fullmatch(text[end:start]):
            runs[-1].add(stem(word))
        else:
            runs.append({stem(word)})
        end = _TOKEN_RE.match(text, start).end()  # the word as written ("Feb" read as "February")
    return [frozenset(r) for r in runs]


def number_values(text: str) -> frozenset[str]:
    """Every normalised form of ``text``'s numbers, spelled-out ones ("two") included, word by word: as the scorer
    indexes a context, but without reading a number of several words in digits (version 14; decoding.coverage
    reads this)."""
    return _numbers_of(text, [w for w, _ in _words(text)])[0]


def _numbers_of(text: str, words: list[str]) -> tuple[frozenset[str], frozenset[str]]:
    """Every form of ``text``'s numbers, and those written with no magnitude of their own ("3", "three"), both with
    its spelled-out ones (``words``: its word tokens); one pass over its numbers."""
    spelled = {NUMBER_WORDS[w.lower()] for w in words if w.lower() in NUMBER_WORDS}
    numbers, bare = set(spelled), set(spelled)
    for forms, value in quantities(text):
        numbers |= forms
        if value is None:
            bare |= forms
    return frozenset(numbers), frozenset(bare)


def _context_index(context: str) -> _ContextIndex:
    context = digits_for_words(context)  # "three hundred" is 300 (version 14)
    words = [w for w, _ in _words(context)]
    stems = [stem(w) for w in words]
    currencies = {stem(word) for symbol, word in CURRENCY_WORDS.items() if symbol in context}  # "£45m": pounds
    numbers, bare = _numbers_of(context, words)
    joined = join_decimals(context)
    if joined != context:  # "31. 8" also holds 31.8 (version 16)
        more, more_bare = _numbers_of(joined, words)
        numbers, bare = numbers | more, bare | more_bare
    values = _exact_values(context) + (_exact_values(joined) if joined != context else ())
    shares = share_values(context)  # "half of" holds 50 ("50%"), an exact value unless bounded (version 22)
    percents = {p for _, p, _ in shares}
    numerals = {str(value) for _, _, value in roman_numerals(context)}  # "Volume XII" holds 12 (version 29)
    numerals |= {str(value) for _, _, value in regnal_ordinals(context)}  # "Henry the Eighth" holds 8 (version 30)
    numbers, bare = numbers | percents | numerals, bare | percents | numerals
    values += tuple(Decimal(p) for _, p, bound in shares if bound is None)
    return _ContextIndex(numbers, bare, values, frozenset(stems) | currencies,
                         frozenset(zip(stems, stems[1:], strict=False)), tuple(measures(context)), frozenset(numerals))


class _Conversion(NamedTuple):
    """What the context holds of the sentence's quantities in another unit (:func:`_conversion`)."""

    numbers: frozenset[str]  # the sentence's numbers found so, or written inside an amount (unit rule 2 C)
    stems: frozenset[str]  # the stems of the found quantities' words but their numbers
    wrong: int  # the amounts of the sentence the context holds at other values only: each one novel number


def _conversion(f: _Features, ctx: _ContextIndex) -> _Conversion:
    """What the context holds of the sentence's quantities in another unit of their kind ("14 days" against "two
    weeks": ``{"14"}``, the stem of "days"; version 23; "a week" against "7 days": no number, the stems of "a week";
    version 24; "an hour and 20 minutes" against "80 minutes": ``{"20"}`` and the stems of its words; against "90
    minutes": ``{"20"}`` (no number of its own), no words, one wrong amount; unit rule 2 C, version 24)."""
    found = [q for q in f.measures if any(same_quantity(q, c) for c in ctx.measures)]
    wrong = [q for q in f.measures if q.amount and q not in found and any(c.kind == q.kind for c in ctx.measures)]
    inner = frozenset().union(*(amount_numbers(q) for q in found + wrong))
    return _Conversion(frozenset(q.number for q in found if q.number and not q.amount) | inner,
                       frozenset(stem(w) for q in found for w in word_tokens(f"{q.written} {q.unit}")),
                       len(wrong))


def _exact_values(text: str) -> tuple[Decimal, ...]:
    """The values of ``text``'s numbers that follow no bound word ("about 93" is none): what satisfies a bound. A
    number is read by its value with its magnitude, else by its longest form (a year range's end: its full year)."""
    values = (number_value(value or max(forms, key=len)) for forms, value, bound in bounded_quantities(text)
              if bound is None)
    return tuple(v for v in values if v is not None)


def _supported(number: tuple[frozenset[str], str | None, tuple[str, Decimal] | None], ctx: _ContextIndex,
               converted: frozenset[str] = frozenset()) -> bool:
    """Whether the context holds a sentence number: any of its forms; one written with a magnitude ("£3bn") by its
    value, or by its digits standing in the context with no magnitude of their own (version 11); one after a bound
    word by an exact number that satisfies the bound ("more than 300" by "340", not by "about 340": version 19)."""
    forms, value, bound = number
    if not forms.isdisjoint(converted):  # in another unit of its kind (version 23)
        return True
    if value is None:
        found = not forms.isdisjoint(ctx.numbers)
    else:
        found = value in ctx.numbers or not (forms - {value}).isdisjoint(ctx.bare)
    return found or (bound is not None and any(satisfies(*bound, v) for v in ctx.values))


def _valued(f: _Features, ctx: _ContextIndex) -> frozenset[str]:
    """The stems of the sentence's numeral words the context holds by value ("Eighth" of "Henry the Eighth" against
    "Henry VIII"; version 30)."""
    return frozenset(word for word, value in f.numerals if value in ctx.numerals)


def _fraction(items: frozenset | tuple, pool: frozenset) -> float:
    return sum(1 for x in items if x in pool) / len(items)


class LexicalScorer(AlignmentScorer):
    """Surface-overlap scorer (numbers, entities, content words, bigram copy rate); see module doc."""

    name = "lexical"
    #: changes whenever the scores would (feature caches and detectors record it); 2: tokenised thousands joined;
    #: 3: FRAME_WORDS are not content; 4: numbers also count by value ("$5.7bn" = "5.7 billion"), magnitude and
    #: percent words after a number are not content, a currency symbol of the context supports its word; 5: an
    #: answer preamble ("The answer is", "Based on the given passages,") is left out (`text.preamble_end`); 6: the words
    #: of what the question asks support the answer (`text.question_support`); 8: year ranges (`text.year_range_ends`);
    #: 9: months abbreviated (`text.month_name`); 11: a number with a magnitude found by its value; 14: numbers
    #: written in words read in digits (`text.digits_for_words`); 16: a context's "31. 8" holds 31.8
    #: (`text.join_decimals`); 17: a correct unit conversion in parentheses is not read (`text.drop_conversions`);
    #: 19: a number after a bound word found by an exact one that satisfies it (`text.bounded_quantities`); 20: "no
    #: more than", "upwards of" and the like are bound words; 21: ordinals from 11th to 99th in words read in digits
    #: (`text.ordinals_in_digits`); 22: a context's share written as a fraction in words holds its percentage
    #: (`text.share_values`; rule 5 B); 23: a quantity found in another unit of its kind (`text.same_quantity`;
    #: unit rule 1); 24: "a week" is a quantity too, and an amount as a share or compound of a unit is its value,
    #: one novel number at another value (unit rules 2 and 2 C); 25: "a litre and a half of milk" is an amount too
    #: (`text.amounts`; unit rule 2 E); 26: "half an hour-long" is half an hour, as "an hour-long" is an hour (7, 10,
    #: 12, 13, 15, 18, 27: not kept; 28 not landed); 29: a context's Roman numeral holds its number
    #: ("Volume XII" holds 12: `text.roman_numerals`); 30: so does a ruler's number in words ("Henry the Eighth" holds
    #: 8), and a numeral word of the sentence is found by a numeral of its value ("Eighth" against "Henry VIII":
    #: `text.regnal_ordinals`)
    version = "30"
    #: reads the question with the context (:func:`~faithwatch.alignment.base.score_pairs_asked`)
    reads_question = True

    def __init__(self) -> None:
        self._cache_key: str | None = None
        self._cache_index: _ContextIndex | None = None

    def _index(self, context: str, question: str = "") -> _ContextIndex:
        # the monitor calls once per sentence with the same context: index it once
        given = question_support(question)
        text = f"{context}\n{given}" if given else context
        if self._cache_key != text or self._cache_index is None:
            self._cache_index = _context_index(text)
            self._cache_key = text
        return self._cache_index

    def features(self, sentence: str, context: str, question: str = "") -> dict[str, float]:
        """Per-feature support fractions in [0, 1] (only the features the sentence has) plus ``score``; the words of
        what ``question`` asks count as support (:func:`~faithwatch.text.question_support`)."""
        validate_inputs([sentence], context)
        return self._features(_claim_features(sentence), self._index(context, question))

    def _features(self, f: _Features, ctx: _ContextIndex,
                  conv: _Conversion | None = None) -> dict[str, float]:
        """The support fractions and score of ``f`` against ``ctx``; ``conv`` is ``_conversion(f, ctx)`` when the
        caller has it."""
        out: dict[str, float] = {}
        converted, units, wrong = conv if conv is not None else _conversion(f, ctx)
        valued = _valued(f, ctx)
        if f.content:
            out["content"] = _fraction(f.content, ctx.stems | units | valued)
        if f.entities:
            out["entities"] = _fraction(f.entities, ctx.stems | valued)
        if f.bigrams and f.content:  # bigrams of pure stop words say nothing
            out["bigrams"] = _fraction(f.bigrams, ctx.bigrams)
        n_unsupported = sum(1 for n in f.numbers if not _supported(n, ctx, converted)) + wrong
        if f.numbers or wrong:  # a wrong amount is one more number of the sentence (unit rule 2 C)
            out["numbers"] = 1.0 - n_unsupported / (len(f.numbers) + wrong)

        weighted = [(FEATURE_WEIGHTS[k], v) for k, v in out.items() if k in FEATURE_WEIGHTS]
        if weighted:
            base = sum(w * v for w, v in weighted) / sum(w for w, _ in weighted)
        elif "numbers" in out:
            base = out["numbers"]
        else:
            base = NEUTRAL_SCORE
        out["score"] = clamp01(base * UNSUPPORTED_NUMBER_FACTOR**n_unsupported)
        return out

    def evidence(self, sentence: str, context: str, question: str = "") -> dict[str, float]:
        """The separate lexical checks (see :data:`EVIDENCE_FEATURES`), for a trained aggregator to weigh.

        Support fractions are 1.0 when the sentence has nothing of that kind; ``novel_*`` count what the
        context (and what ``question`` asks) lacks (each number / entity / content word once).
        """
        validate_inputs([sentence], context)
        ctx = self._index(context, question)
        f = _claim_features(sentence)
        converted, units, wrong = conv = _conversion(f, ctx)
        feats = self._features(f, ctx, conv)
        found = ctx.stems | _valued(f, ctx)
        return {
            "lex_content": feats.get("content", 1.0),
            "lex_bigrams": feats.get("bigrams", 1.0),
            "novel_content": float(sum(1 for x in f.content if x not in found and x not in units)),
            "novel_numbers": float(len({x for x in f.numbers if not _supported(x, ctx, converted)}) + wrong),
            "novel_entities": float(sum(1 for x in f.entities if x not in found)),
        }

    def novel_number_forms(self, sentence: str, context: str, question: str = "") -> frozenset[str]:
        """The forms (:func:`~faithwatch.text.number_forms`) of the sentence's numbers that ``novel_numbers`` counts,
        less any form that one of its found numbers shares: what a word of the sentence may hold to hold a number
        the context lacks."""
        validate_inputs([sentence], context)
        ctx = self._index(context, question)
        novel: set[str] = set()
        found: set[str] = set()
        f = _claim_features(sentence)
        converted = _conversion(f, ctx).numbers
        for number in f.numbers:
            (found if _supported(number, ctx, converted) else novel).update(number[0])
        return frozenset(novel - found)

    def score_many(self, sentences: Sequence[str], context: str, question: str = "") -> list[float]:
        """Lexical support of each sentence by the context (and what ``question`` asks), in [0, 1]."""
        sents = validate_inputs(sentences, context)
        ctx = self._index(context, question)
        return [self._features(_claim_features(s), ctx)["score"] for s in sents]

    def score_pairs(self, pairs: Sequence[tuple[str, str]], questions: Sequence[str] | None = None) -> list[float]:
        """Lexical support of each (sentence, context) pair, read with its question when ``questions`` is given."""
        qs = [""] * len(pairs) if questions is None else list(questions)
        if len(qs) != len(pairs):
            raise ValueError(f"got {len(qs)} questions for {len(pairs)} pairs")
        out = [0.0] * len(pairs)
        groups: dict[tuple[str, str], list[int]] = {}  # one call per (context, question)
        for i, ((_, context), question) in enumerate(zip(pairs, qs, strict=True)):
            groups.setdefault((context, question), []).append(i)
        for (context, question), idx in groups.items():
            for i, score in zip(idx, self.score_many([pairs[i][0] for i in idx], context, question), strict=True):
                out[i] = score
        return out
