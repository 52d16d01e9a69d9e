"""Near-copy edit evidence: what a sentence changed in the context sentence it restates.

A sentence that copies one context sentence but swaps a number, flips a negation or replaces a word is the
classic blatant error (and the kind of edit that benchmarks of small factual changes make). The sentence and
every context sentence are tokenised (numbers normalised, spelled-out numbers as digits, "n't" as "not", crude
stems); the context sentence whose alignment (:mod:`difflib`) covers most of the sentence's content tokens is
its *source*. Features (see :data:`EDIT_FEATURES`):

* ``edit_match`` - share of the sentence's content tokens aligned to the source, in [0, 1];
* ``edit_swap_num`` - replaced spans with a number on both sides, the sentence's number found nowhere in the
  context (a changed number or date);
* ``edit_swap_word`` - replaced spans with a name-like word (capitalised) found nowhere in the context (a swapped
  name or place; an acronym of a run of the context's capitalised words, "EPA", counts as found: v30);
* ``edit_neg_flip`` - changed spans that add or drop a negation (a word; a verb that negates, "failed to",
  :data:`NEGATING_VERBS`, v36; or a prefix: likely/unlikely, :data:`NEGATING_PREFIXES`), swap a word for its
  opposite (rose/fell, before/after, ...: :data:`OPPOSITES`) or for another of its closed group (am/pm,
  exports/imports, mother/father, metres/feet, dollars/euros, tallest/shortest, increased/reduced, may/must, ...:
  :data:`~faithwatch.alignment.edit_words.CONTRASTS`; "up to" reads as "at most" there: v32), swap a scale word of a
  number for another ("6.3 million" -> "6.3 billion": :data:`SCALE_WORDS`), exchange the two sides of a relation
  ("Brazil beat Germany" for "Germany beat Brazil": :func:`_exchanged`), or widen the source to all with a universal
  word (:data:`UNIVERSALS`): in place of content words of the source ("free for Plus members" -> "free for
  everyone"; "Plus members get" -> "Everyone gets"), or inserted where the copy leaves a restriction out ("is always
  free", when the source speaks of no "all", "every" or "each"); or "all", "every" or "each" in place of a partial
  quantifier or frequency word ("All residents" for "Some residents", "always" for "usually": :data:`PARTIAL`,
  v68). A widening counts at either end of the sentence, however long the source's end is. So does a copy that
  makes one of several the only one, leaving out "one of" or "among" before "the" ("the largest lender" for "one
  of the largest lenders": v69).

Only local changes of a near copy count (:func:`_inner`): changes between the first and last aligned run, or a
short replacement at the end, or a widening; at most :data:`MAX_EDITS` of them (a widening outside the aligned
part is not counted towards it), each of at most :data:`MAX_SWAP_TOKENS` tokens of the sentence for at most one
more of the source. A summary sentence that keeps half of its source cuts clauses, and
a list number leading it differs, without changing a fact; a negation inside a cut clause is not flipped. Nothing
is counted when ``edit_match`` < :data:`MIN_MATCH`: a loose paraphrase has no single source. A copy with more
changes is a paraphrase of its source; in it, only a word swapped in place (:func:`_anchored`) for its opposite,
another scale word or a number found nowhere in the context counts (v27), not one unit for another (v28). The
word lists are in :mod:`faithwatch.alignment.edit_words`. Words that only look like negations are none (v38):
"note" (which stems to "not"), "No. 1" (the abbreviation of "number"), "no-fly" (one word with the next). The
short end of a year range is found in the context by its full year too ("2007-08" restates "2007-2008"), while
difflib aligns the keys as written, so "1997-98" against "1998-99" is a swapped number (v41). A month's
abbreviation next to a number is keyed as the month ("Feb. 14"), and months and weekdays are contrast groups (v42).
A magnitude abbreviation after a number ("3bn"; "£3m" after a currency symbol) is a scale word (v44). A number
written in two or more words is one number token, its value ("three hundred" restates "300": v46). A decimal the
context writes with a space after the point ("31. 8") is found as the number joined ("31.8": v48). A sentence's
correct unit conversion in parentheses ("165°F (74°C)") is left out of what is compared (v49). A number swapped in
a change leading the sentence ("24 people were injured" for "25 people …") counts as ``edit_swap_num``, unless
either number reads as a list number, followed by ".", ")", ":" or a capitalised word ("Step 6: Serve" for "4
Serve": v50). "a.m." and "p.m." are read as "am" and "pm", as "9am" is (v51). A currency symbol
(€, $, £, ¥) is read as its currency's word, not a content token ("$15" for "€15" swaps dollars for euros: v52).
A short replacement ending the sentence for a longer end of its source is read as a swap of as many source tokens,
the rest being cut ("Doors open at 7 a.m." for "… at 7 p.m. and the concert starts at 8 p.m.": v53); a number
ending it is no list number ("… used by 1,430." for "… used by 1,340 patients in …": v54). A number after a bound
word that its source's exact number satisfies is no swapped number ("more than 300" for "340": v56; "no more than
450" for "438": v57). An ordinal from 11th to 99th written in words is the number and suffix it is in digits
("twenty-first" restates "21st"; "20th" swaps it: v58). A number written with a magnitude and the same value in
full digits are no swap ("1.5 million" for "1,500,000": v59). A share written as a fraction in words is its
percentage ("two-thirds of" restates "67% of"; "a third of" swaps "50% of": v60). A quantity restated in another
unit of its kind is no change ("180 minutes" for "three hours", "8 km" for "five miles"; within 5%: unit rule 1,
v61), one written with an article too ("a week" for "7 days": unit rule 2). A change whose sentence side is an
amount written as a share or compound of a unit, and whose source side a quantity of its kind, is no change at its
value and a swapped number at another ("three-quarters of an hour" restates "45 minutes", "a day and a half" swaps
"24 hours"; unit rule 2 C, v62); so is a source side that is an amount ("twelve hours" for "a day and a half"
swaps it; unit rule 2 E, v63; "half an hour-long" is half an hour: v64). A short replacement starting the sentence
for a longer lead-in of its source is read against as many of the lead-in's last tokens, the rest being cut, and
judged as a change leading the sentence ("33% of voters …" for "The poll found that 67% of voters …": v65); so is
the last token of a longer reworded lead-in before an aligned run, against the source's, if the context lacks it
("plans to open two of its factories" for "said it would close two of its factories": v66). A negation leading the
source or the sentence, before an aligned run of at least :data:`MIN_ANCHOR` tokens, counts when it is left out or
added alone ("Passengers were hurt" for "No passengers were hurt") or replaced by words with no negation ("Some of
the" for "None of the"), but not as an answer ("No, the museum …": v70). An opposite the source sentence holds elsewhere
counts as swapped in once the sentence no longer holds the word it replaces ("Profits fell by 12%." for "Profits
rose by 12%, while revenue fell."; a reorder keeps both: v71). "large" and "small", "halved" and "doubled", "will"
and "may" are opposites (v72). Apart from any near copy, a number of the sentence that takes the direction of a
change (:func:`directions`: "fell 8%", "a 22% drop") where the context gives the same number only the other
direction ("up 8%") counts one ``edit_neg_flip``, however the sentence is worded, unless the near copy already
counted a flip (v84); a number that ends its sentence takes one too (v85).
"""

from __future__ import annotations

import bisect
import difflib
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from decimal import Decimal

from faithwatch.alignment.base import validate_inputs
from faithwatch.alignment.edit_words import (
    CONTRADICTORIES,
    DIRECTION_FILLERS,
    DIRECTIONS,
    LEADING_NEGATIONS,
    NEGATED_AUXILIARIES,
    NEGATING_PREFIXES,
    NEGATING_VERBS,
    NEGATIONS,
    OPPOSITES,
    PARTIAL,
    PREPOSITIONS,
    SCALE_WORDS,
    SCOPED,
    SYMMETRIC,
    UNIT_GROUPS,
    UNIVERSALS,
)
from faithwatch.text import (
    CURRENCY_WORDS,
    NUMBER_AFTER,
    NUMBER_WORDS,
    Measure,
    amounts,
    bound_before,
    drop_conversions,
    is_stop,
    join_thousands,
    measures,
    month_name,
    normalise_number,
    number_value,
    ordinals_in_digits,
    same_quantity,
    satisfies,
    scale_after,
    spaced_decimals,
    spelled_numbers,
    spelled_shares,
    split_sentences,
    stem,
    strip_preamble,
    year_range_ends,
)

#: what :meth:`EditScorer.evidence` returns (the ``edits`` signal's features)
EDIT_FEATURES = ("edit_match", "edit_swap_num", "edit_swap_word", "edit_neg_flip")
#: below this share of aligned content tokens the sentence has no source, and no edits are counted
MIN_MATCH = 0.5
#: longest replaced span (sentence side, tokens) counted as a word swap
MAX_SWAP_TOKENS = 3
#: at most this many separate changes inside the aligned part: more, and the sentence is a paraphrase
MAX_EDITS = 2
#: aligned tokens on both sides of a one-word swap, together, for it to count in a paraphrased copy (v27)
MIN_ANCHOR = 3
#: the shortest stem that a negating prefix is looked for on ("unabl": "abl")
MIN_PREFIXED = 3
#: the meaning of the features: bump when a rule changes (a detector records it; a monitor refuses another)
#: not kept: 7, 8, 13, 14 B, 15 A, 16 (kept as 51), 17, 19, 20, 24, 27, 29, 30 A, 33, 39, 40, 43, 45, 47, 55, 67,
#: 81 (kept as 82)
#: (docs/transfer.md, "A word swapped …", "Decimals …", "Year ranges …", "A count changed …", "A country and its
#: demonym", "Numbers written in words", "Unit rule 3")
EDITS_VERSION = "85"
#: a difflib opcode: (op, sentence start, sentence end, source start, source end)
_Op = tuple[str, int, int, int, int]

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
    text: str = ""  # as written (what a change shows; never compared)
    amount: Measure | None = None  # the amount of unit rule 2 C it is part of ("a day and a half"; v62)


def tokens(text: str) -> list[_Token]:
    """Comparable tokens of ``text``: numbers normalised (spelled-out ones too), words stemmed, n't as not; the tokens
    of an amount of unit rule 2 C marked with it (v62)."""
    out: list[_Token] = []
    text = _AM_PM_RE.sub(lambda m: m.group(1) + "m", join_thousands(text))  # "p.m.": pm, as "9pm" (v51)
    text = ordinals_in_digits(text)  # "twenty-first": 21 and "st", as "21st" (v58)
    ends = [m.start() for m in _CLAUSE_RE.finditer(text)]
    years = year_range_ends(text)  # "2007-08": the "08" is also 2008 (v41)
    spelled = {start: (end, digits) for start, end, digits in spelled_numbers(text)}  # "three hundred": 300 (v46)
    shares = {start: rest for start, *rest in spelled_shares(text)}  # "two-thirds of": 67 and "of" (v60)
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
            out.append(_Token(False, _key(low), not is_stop(low), entity, clause, caps=caps, text=word))
    starts += [start] * (len(out) - len(starts))
    return _in_amounts(out, starts, amounts(text))


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


def _coverage(sent: list[_Token], matcher: difflib.SequenceMatcher) -> float:
    """Share of the sentence's content tokens aligned by ``matcher`` (its first sequence set to the sentence)."""
    aligned: set[int] = set()
    for a, _, n in matcher.get_matching_blocks():
        aligned.update(range(a, a + n))
    content = [i for i, t in enumerate(sent) if t.content]
    return sum(1 for i in content if i in aligned) / len(content) if content else 0.0


@dataclass
class _Source:
    """A context sentence, its tokens' keys, and a matcher that has already indexed them (difflib indexes the
    second sequence once; each sentence only sets the first)."""

    tokens: list[_Token]
    keys: frozenset[str]
    matcher: difflib.SequenceMatcher
    text: str  # as written (an answer's "No," is read there: v70)


def _source(toks: list[_Token], text: str) -> _Source:
    keys = [t.key for t in toks]
    return _Source(toks, frozenset(keys), difflib.SequenceMatcher(None, (), keys, autojunk=False), text)


@dataclass(frozen=True)
class _Context:
    text: str
    sources: list[_Source]
    keys: frozenset[str]  # every token key of the context
    acronyms: frozenset[str]  # the keys of the acronyms its names spell (v30)
    measures: tuple[Measure, ...] = ()  # its quantities with a unit ("two weeks": 14 days; v61)
    directions: tuple[_Moved, ...] = ()  # its numbers with the direction of a change (v84)


class EditScorer:
    """Near-copy edit evidence of sentences against a context (see the module doc); caches the last context
    (per thread: the matchers it keeps are not shared)."""

    def __init__(self) -> None:
        self._local = threading.local()

    def _context(self, context: str) -> _Context:
        cached: _Context | None = getattr(self._local, "context", None)
        if cached is None or cached.text != context:
            sources = [_source(tokens(s), s) for s in split_sentences(context)]
            years = frozenset(t.year for source in sources for t in source.tokens if t.year)
            decimals = spaced_decimals(context)  # "31. 8" also holds 31.8 (v48)
            cached = _Context(context, sources, frozenset().union(*(source.keys for source in sources)) | years
                              | decimals, _acronyms(context), tuple(measures(context)),
                              tuple(d for source in sources for d in directions(source.tokens)))
            self._local.context = cached
        return cached

    def _best_source(self, sent: list[_Token], context: str) -> tuple[float, _Source | None]:
        """The first context sentence that covers most of the sentence's content tokens, and its coverage.
        A source cannot cover more than the share of those tokens found in it at all, so the sources are tried
        in order of that bound, and the search stops when no source left can do better."""
        content = [t.key for t in sent if t.content]
        if not content:
            return 0.0, None
        sources, keys = self._context(context).sources, [t.key for t in sent]
        bounds = sorted((-sum(k in source.keys for k in content) / len(content), i) for i, source in enumerate(sources))
        best, best_i = 0.0, -1
        for neg_bound, i in bounds:
            if -neg_bound < best or (-neg_bound == best and i > best_i):
                break  # the bound only falls from here: no later source can win (ties go to the first)
            matcher = sources[i].matcher
            matcher.set_seq1(keys)
            cov = _coverage(sent, matcher)
            if cov > best or (cov == best and cov > 0 and i < best_i):
                best, best_i = cov, i
        return best, (sources[best_i] if best_i >= 0 else None)

    def local_edits(self, sentence: str, context: str) -> tuple[float, list[tuple[str, list[_Token], list[_Token]]]]:
        """``edit_match`` and the local edits of a near copy: ``(op, sentence tokens, source tokens)`` per change,
        none when the sentence has no source, only "anchored" ones (one word swapped in place: :func:`_anchored`)
        when it paraphrases it (see the module doc). ``op`` is difflib's name
        ("replace"; "delete": words the sentence adds; "insert": words it leaves out), "widen" for a change
        that widens the source to all, "lead" for a short replacement leading the sentence, "end" for one ending it
        in place of a longer end of the source, paired with as many of its first tokens (for both, only an opposite or a
        swapped number counts there: a list number or "However," leads a restated sentence too), "reworded" for the
        last word of a longer reworded lead-in against the source's (judged as "lead", if the context lacks it;
        :func:`_lead_in`), "singled" for "one of" or "among" left out before "the" (:func:`_one_of_left_out`), or
        "reverse" for
        two sides of a relation exchanged (:func:`_exchanged`; looked for in every sentence with a source, however
        many changes)."""
        match, edits, _, _ = self._edits(sentence, context)
        return match, edits

    def _edits(self, sentence: str, context: str) -> tuple[float, list[tuple[str, list[_Token], list[_Token]]],
                                                              _Held, str]:
        """:meth:`local_edits`, the keys of the source sentence and of the sentence (:class:`_Held`; empty without a
        source) and the sentence as read (preamble and conversions dropped)."""
        validate_inputs([sentence], context)
        # "The answer is Japan." restates no sentence, "Japan." may; "165°F (74°C)" restates "165°F" (v49)
        text = strip_preamble(drop_conversions(sentence))
        sent = tokens(text)
        match, best = self._best_source(sent, context)
        if best is None:
            return match, [], _NOTHING_HELD, text
        source, matcher = best.tokens, best.matcher  # its first sequence is this sentence already (_best_source)
        opcodes = matcher.get_opcodes()
        reversal = _exchanged(sent, source, opcodes, match)  # two sides of a relation exchanged (v18)
        if match < MIN_MATCH:
            return match, reversal, _NOTHING_HELD, text
        scoped = _universal(sent) and _restriction_left_out(source, opcodes)
        held = _Held(best.keys, frozenset(t.key for t in sent))

        def widens(op: _Op) -> bool:  # a restriction put as "everyone", or cut with "always" inserted
            kind, a1, a2, b1, b2 = op
            if kind == "replace" and _quantifier_widened(sent[a1:a2], source[b1:b2]):  # "All" for "Some" (v68)
                return True
            if not _universal(sent[a1:a2]):
                return False
            if kind == "delete":  # difflib's name: words of the sentence that the source lacks (inserted)
                return scoped
            return kind == "replace" and not _universal(source[b1:b2]) and any(t.content for t in source[b1:b2])

        changes, extras = _inner(opcodes, lambda a1, a2: _width(sent[a1:a2]), lambda b1, b2: _width(source[b1:b2]))
        # an end that widens the source is a widening, read whole, and no change towards MAX_EDITS (v53)
        changes = [op for op in changes if op[0] != "end" or not any(widens(x) for x in extras if x[1] == op[1])]
        if len(changes) > MAX_EDITS:  # a paraphrase of its source: only its anchored one-word swaps count (v27)
            return match, reversal + [("anchored", sent[op[1]:op[2]], source[op[3]:op[4]])
                                      for op in _anchored(opcodes)], held, text

        # a longer change is a rewritten or cut clause, not a local edit (a negation inside it is not flipped),
        # unless it widens the source to all; a widening outside the aligned part does not count towards MAX_EDITS;
        # a replacement leading the sentence is read where it ends (:func:`_lead_in`; a short one that widens the
        # source is a widening)
        labelled = [("widen" if widens(op) else "singled" if _one_of_left_out(op, source) else op[0], op)
                    for op in changes]
        labelled = [(kind, op) for kind, op in labelled
                    if _width(sent[op[1]:op[2]]) <= MAX_SWAP_TOKENS
                    and (_width(source[op[3]:op[4]]) <= MAX_SWAP_TOKENS + 1 or kind == "widen")]
        lead = _lead_in(opcodes, sent, source)
        negated = _negation_led(opcodes, sent, source, lead, held)
        if negated and not (_ANSWER_RE.match(text) or _ANSWER_RE.match(best.text)):  # "No, the museum …" (v70)
            labelled.append(negated)
        elif lead and not (lead[0] == "lead" and widens(opcodes[0])):
            labelled.append(lead)
        labelled += [("widen", op) for op in extras if widens(op)]
        return (match, reversal + [(kind, sent[op[1]:op[2]], source[op[3]:op[4]]) for kind, op in labelled],
                held, text)

    def in_context(self, token: _Token) -> bool:
        """Whether ``token`` occurs anywhere in the context of the last call, or is the acronym of one of its names;
        a year range's short end also by its full year, on either side (v41)."""
        context: _Context = self._local.context
        return (token.key in context.keys or (token.caps and token.key in context.acronyms)
                or (bool(token.year) and token.year in context.keys))

    def evidence(self, sentence: str, context: str) -> dict[str, float]:
        """The :data:`EDIT_FEATURES` of ``sentence`` against ``context``: ``edit_match`` and how many changes
        :meth:`changes` counts in each of the other three."""
        match, changes = self.changes(sentence, context)
        return {"edit_match": match, **counts(changes)}

    def changes(self, sentence: str, context: str) -> tuple[float, list[EditChange]]:
        """``edit_match`` and the changes of ``sentence`` to its source sentence that the features count, each
        with the words it changed (what `faithwatch check` shows for a Contradiction)."""
        match, edits, held, text = self._edits(sentence, context)
        out: list[EditChange] = []
        widened = False
        quantities = measures(text) if edits else []
        found = self._context(context).measures  # cached by _edits
        for op, mine, theirs in edits:
            restated = _amount_restated(mine, theirs, found)  # "three-quarters of an hour" for "45 minutes" (v62)
            if restated or (restated is None and _restated_in_unit(mine, theirs, quantities, found)):  # "14 days" (v61)
                continue
            novel = [t for t in mine if t.content and not self.in_context(t)]  # found nowhere in the context
            feature = None
            if restated is False and op not in ("reverse", "widen"):  # an amount at another value (v62)
                feature = "edit_swap_num"
            elif op == "reworded" and any(self.in_context(t) for t in mine):
                feature = None  # the last word of a reworded lead-in: only one the context lacks is a swap (v66)
            elif op in ("lead", "end", "reworded"):  # an opposite, or a new number (v50, v53, v66; v54)
                if _opposed(mine, theirs, held) and _flips(mine, theirs, held):
                    feature = "edit_neg_flip"
                elif _number_swap(novel, mine, theirs) and (op == "end" or not any(t.listed for t in mine + theirs)):
                    feature = "edit_swap_num"
            elif op == "reverse":
                feature = "edit_neg_flip"
            elif op == "anchored":  # in a paraphrase: a typed swap only, no negation, name or unit (v27, v28)
                if _same_unit(mine[0], theirs[0]):
                    feature = None
                elif _inverts(mine, theirs, held):
                    feature = "edit_neg_flip"
                elif novel and novel[0].number and theirs[0].number:
                    feature = "edit_swap_num"
            elif op == "widen":  # the widenings of one sentence are one flip ("always free for everyone")
                feature = None if widened else "edit_neg_flip"
                widened = True
            elif op in ("singled", "negated", "unnegated", "negation added") or _flips(mine, theirs, held):
                # "the largest" for "one of the …" (v69); a negation leading the source changed (v70)
                feature = "edit_neg_flip"
            elif op != "replace" or not novel:
                feature = None
            elif _number_swap(novel, mine, theirs):
                feature = "edit_swap_num"
            elif any(t.entity for t in novel):
                feature = "edit_swap_word"
            if feature:
                out.append(EditChange(feature, _HOW.get(op, "replace"), _words(mine), _words(theirs)))
        if not any(change.feature == "edit_neg_flip" for change in out):  # a near copy's flip is counted once
            out += _reversed_changes(tokens(text), self._context(context).directions)
        return match, out


def _restated_in_unit(mine: list[_Token], theirs: list[_Token], quantities: list[Measure],
               context_quantities: tuple[Measure, ...]) -> bool:
    """Whether a change restates a quantity in another unit of its kind (unit rule 1, v61): every number of
    ``mine`` is a quantity of the sentence (``quantities``) that a quantity of the context with a number of
    ``theirs`` equals once converted ("180 minutes" for "three hours"; :func:`~faithwatch.text.same_quantity`);
    or an amount of unit rule 2 C of ``theirs`` ("36 hours" for "a day and a half"); with no number on a side,
    :func:`_article_restated` ("a week" for "7 days"; v62)."""
    numbers = [t.key for t in mine if t.number and not t.scale]
    source = {t.key for t in theirs if t.number and not t.scale}
    amounts = [t.amount for t in theirs if t.amount]  # the source's side holds an amount of unit rule 2 C (v62)
    return (bool(numbers) and bool(source or amounts) and all(
        any(q.number == key and (any(c.number in source and same_quantity(q, c) for c in context_quantities)
                                 or any(same_quantity(q, a) for a in amounts)) for q in quantities)
        for key in numbers)) or _article_restated(mine, theirs, numbers)


def _article_restated(mine: list[_Token], theirs: list[_Token], numbers: list[str]) -> bool:
    """Whether the two sides of a change are one quantity each, one at least with no number ("a week"), the same
    once converted, with no other number on the sentence side (unit rule 2, v62)."""
    ours, source = measures(" ".join(t.text for t in mine)), measures(" ".join(t.text for t in theirs))
    if len(ours) != 1 or len(source) != 1 or (ours[0].number and source[0].number):
        return False
    (q,) = ours
    return numbers == ([q.number] if q.number else []) and same_quantity(q, source[0])


def _lead_in(opcodes: list[_Op], sent: list[_Token], source: list[_Token]) -> tuple[str, _Op] | None:
    """How a replacement that starts the sentence, before its first aligned run, is read, as ``(op, change)``: one
    of at most :data:`MAX_SWAP_TOKENS` tokens as "lead", against as many of the source's last tokens when the
    source's side is longer than a change may be, the rest cut ("33%" for "The poll found that 67%"; v50, v65); a
    longer one followed by an aligned run of at least :data:`MIN_ANCHOR` tokens as "reworded", its last token
    against the source's ("open" for "close" of "plans to open" for "said it would close"), unless either token is
    part of an amount of unit rule 2 C (v66). ``None`` for none."""
    if len(opcodes) < 2 or opcodes[0][0] != "replace":  # difflib's first opcode starts both sequences
        return None
    (kind, a1, a2, b1, b2), after = opcodes[0], opcodes[1]
    if _width(sent[a1:a2]) <= MAX_SWAP_TOKENS:
        cut = _width(source[b1:b2]) > MAX_SWAP_TOKENS + 1
        return "lead", ((kind, a1, a2, max(b1, b2 - (a2 - a1)), b2) if cut else opcodes[0])
    if after[2] - after[1] < MIN_ANCHOR or sent[a2 - 1].amount or source[b2 - 1].amount:
        return None
    return "reworded", (kind, a2 - 1, a2, b2 - 1, b2)


#: an answer's "no" or "not really" before punctuation ("No, the museum …"): no negation of what follows (v70)
_ANSWER_RE = re.compile(r"^\W*(?:no|not(?: really)?|nope)\s*[,.!;:\u2013\u2014-]", re.I)


def _negation_led(opcodes: list[_Op], sent: list[_Token], source: list[_Token], lead: tuple[str, _Op] | None,
                  held: _Held) -> tuple[str, _Op] | None:
    """A change before the first aligned run (at least :data:`MIN_ANCHOR` tokens long) that changes a negation
    leading the sentence or its source, as ``(op, change)``: "unnegated" for negation words alone left out
    ("Passengers were hurt" for "No passengers were hurt"), "negation added" for such words alone added, "negated"
    for the short replacement leading the sentence (``lead``, :func:`_lead_in`) whose one side holds one of
    :data:`LEADING_NEGATIONS` and whose other side no negation, if it flips (:func:`_flips`: "Few" restates "Not
    many"); "Some of the" for "None of the" (v70). ``None`` for none."""
    if len(opcodes) < 2 or opcodes[1][0] != "equal" or opcodes[1][2] - opcodes[1][1] < MIN_ANCHOR:
        return None
    kind, a1, a2, b1, b2 = first = opcodes[0]
    if kind in ("insert", "delete"):
        words = source[b1:b2] if kind == "insert" else sent[a1:a2]
        if all(not t.number and t.key in NEGATIONS for t in words):
            return ("unnegated" if kind == "insert" else "negation added"), first
        return None
    if lead is None or lead[0] != "lead":
        return None
    _, (_, a1, a2, b1, b2) = lead
    mine, theirs = sent[a1:a2], source[b1:b2]
    led = any(not t.number and t.key in LEADING_NEGATIONS for t in mine + theirs)
    one_sided = not _negations(mine) or not _negations(theirs)
    return ("negated", lead[1]) if led and one_sided and _flips(mine, theirs, held) else None


def _width(toks: list[_Token]) -> int:
    """How many tokens a side of a change counts as: the tokens of one amount of unit rule 2 C as at most two, its
    value and unit ("an hour and 20 minutes" as "80 minutes"; v62), the others one each."""
    amount = _amount_of(toks)
    inside = sum(t.amount is not None for t in toks) if amount else 0
    return len(toks) - inside + min(inside, 2)


def _amount_of(toks: list[_Token]) -> Measure | None:
    """The amount of unit rule 2 C that ``toks`` are part of: one amount, with at most one token outside it."""
    inside = {t.amount for t in toks if t.amount}
    return inside.pop() if len(inside) == 1 and sum(t.amount is None for t in toks) <= 1 else None


def _amount_restated(mine: list[_Token], theirs: list[_Token], context_quantities: tuple[Measure, ...]) -> bool | None:
    """For a change whose sentence side is an amount of unit rule 2 C (:func:`_amount_of`) and whose source side has
    the number of a quantity of its kind in the context (or, with no number, its unit word): whether that quantity
    is the amount's (:func:`~faithwatch.text.same_quantity`); ``None`` for any other change (v62)."""
    amount = _amount_of(mine)
    if amount is None:
        return None
    numbers = {t.key for t in theirs if t.number and not t.scale}
    keys = {t.key for t in theirs}  # without a number, a unit word ("years": a number aligned already)
    candidates = [c for c in context_quantities if c.kind == amount.kind and c.number
                  and (c.number in numbers if numbers else _key(c.unit) in keys)]
    candidates += [t.amount for t in theirs if t.amount and t.amount.kind == amount.kind]  # one of the source's
    return any(same_quantity(amount, c) for c in candidates) if candidates else None


def _number_swap(novel: list[_Token], mine: list[_Token], theirs: list[_Token]) -> bool:
    """Whether a change puts a number the context lacks (among ``novel``) where its source had a number, with no value
    of the sentence's side one of the source's ("1.5 million" restates "1,500,000": v59) and no bound of it met by
    the source (:func:`_bound_met`; v56)."""
    return (any(t.number for t in novel) and any(t.number for t in theirs)
            and not _scaled_values(mine) & _scaled_values(theirs) and not _bound_met(mine, theirs))


def _scaled_values(tokens: list[_Token]) -> set[Decimal]:
    """The values of the numbers of ``tokens``, each times the scale word right after it ("1.5" "million":
    1,500,000; v59)."""
    out = set()
    for i, t in enumerate(tokens):
        if not t.number or t.scale or (value := number_value(t.key)) is None:
            continue
        after = tokens[i + 1] if i + 1 < len(tokens) else None
        scale = number_value(after.key) if after is not None and after.scale else None
        out.add(value * scale if scale is not None else value)
    return out


def _bound_met(mine: list[_Token], theirs: list[_Token]) -> bool:
    """Whether a number of ``mine`` after a bound word is satisfied by an exact number of ``theirs`` ("more than 300"
    for "340", not for "about 340"; magnitudes compared as their own tokens: v56)."""
    values = [number_value(t.key) for t in theirs if t.number and not t.scale and not t.bound]
    return any(satisfies(t.bound, bound, v) for t in mine if t.bound and (bound := number_value(t.key)) is not None
               for v in values if v is not None)


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


def _reversed_changes(sent: list[_Token], held: tuple[_Moved, ...]) -> list[EditChange]:
    """One flip per number of the sentence whose change goes the other way than wherever the context gives the same
    number a direction ("fell 8" for "up 8"; never the same direction there: v84)."""
    out = []
    for mine in directions(sent):
        theirs = [moved for moved in held if moved.number.key == mine.number.key]
        if theirs and all(moved.way != mine.way for moved in theirs):
            out.append(EditChange("edit_neg_flip", "replace", mine.words(), theirs[0].words()))
    return out


def counts(changes: list[EditChange]) -> dict[str, float]:
    """How many of ``changes`` each of the count features (:data:`EDIT_FEATURES` but ``edit_match``) counts."""
    out = dict.fromkeys(EDIT_FEATURES[1:], 0.0)
    for change in changes:
        out[change.feature] += 1.0
    return out


#: how a change reads, by the op of :meth:`EditScorer.local_edits` (the others, "widen", "lead", "end", "reworded",
#: "anchored" among them, replace words): difflib's "delete" is words the sentence adds
_HOW = {"delete": "add", "insert": "leave out", "singled": "leave out", "reverse": "reverse", "unnegated": "leave out",
        "negation added": "add"}


def _words(toks: list[_Token]) -> str:
    """Tokens as written, joined by spaces ("n't" joined to its verb)."""
    return " ".join(t.text for t in toks if t.text).replace(" n't", "n't").replace(" n’t", "n’t")


@dataclass(frozen=True)
class EditChange:
    """One change of a sentence to the context sentence it restates, as an ``edits`` feature counts it.

    ``how``: "replace" (``sentence`` words for ``source`` words), "add" (the sentence adds ``sentence``), "leave
    out" (it leaves ``source`` out) or "reverse" (two sides exchanged: ``sentence`` and ``source`` are the two
    sides as the sentence has them).
    """

    feature: str  # edit_swap_num, edit_swap_word or edit_neg_flip
    how: str
    sentence: str
    source: str

    @property
    def kind(self) -> str:
        """"number", "name" or "flip" (a negation, an opposite or contrast word, a widening, a reversal)."""
        return {"edit_swap_num": "number", "edit_swap_word": "name"}.get(self.feature, "flip")

    def describe(self) -> str:
        """One line for people: "'slower' for 'faster' (flip)"."""
        text = {"add": f"'{self.sentence}' added", "leave out": f"'{self.source}' left out",
                "reverse": f"'{self.sentence}' and '{self.source}' exchanged"}.get(
                    self.how, f"'{self.sentence}' for '{self.source}'")
        return f"{text} ({self.kind})"

    def to_dict(self) -> dict[str, str]:
        """JSON form: kind, how, the claim's words and the context's."""
        return {"kind": self.kind, "how": self.how, "claim": self.sentence, "context": self.source}


def _exchanged(sent: list[_Token], source: list[_Token], opcodes: list[_Op],
               match: float) -> list[tuple[str, list[_Token], list[_Token]]]:
    """A ``("reverse", one side, the other)`` edit when exchanging two spans of the sentence (at most
    :data:`MAX_SWAP_TOKENS` tokens each, each holding a content token, one of them touching a token outside the
    aligned runs) makes it a copy of its source with no change between its first and last aligned run, covering at
    least :data:`MIN_MATCH` of its content tokens and more than ``match``, the sentence's own coverage (a reversal
    restores the source, a moved phrase does not: "Brazil beat Germany" for "Germany beat Brazil"); else none. Not
    across nothing, a coordination or a symmetric relation (:data:`SYMMETRIC`: "Argentina and Brazil met"), nor
    between two phrases led by the same preposition (:data:`PREPOSITIONS`: "in 1860 in Vienna")."""
    if all(op[0] == "equal" for op in opcodes):
        return []
    loose = {i for op in opcodes if op[0] != "equal" for i in range(op[1], op[2])}
    keys = [t.key for t in sent]
    haystack = "\x1f" + "\x1f".join(t.key for t in source) + "\x1f"
    spans = [(i, i + n, not loose.isdisjoint(range(i, i + n))) for n in range(1, MAX_SWAP_TOKENS + 1)
             for i in range(len(sent) - n + 1)
             if any(t.content for t in sent[i:i + n]) and _found(keys[i:i + n], haystack)]
    for a1, a2, a_loose in spans:
        for b1, b2, b_loose in spans:
            if b1 <= a2 or not (a_loose or b_loose) or keys[a1:a2] == keys[b1:b2]:
                continue
            between = sent[a2:b1]
            if any(t.key in SYMMETRIC for t in between) or not _found(keys[b1:b2] + keys[a2:b1] + keys[a1:a2],
                                                                       haystack):
                continue
            if a1 and keys[a1 - 1] == keys[b1 - 1] and keys[a1 - 1] in PREPOSITIONS:
                continue  # "in Vienna in 1860" -> "in 1860 in Vienna": two phrases reordered (v25)
            swapped = sent[:a1] + sent[b1:b2] + between + sent[a1:a2] + sent[b2:]
            matcher = difflib.SequenceMatcher(None, [t.key for t in swapped], [t.key for t in source], autojunk=False)
            ops = matcher.get_opcodes()
            equal = [i for i, op in enumerate(ops) if op[0] == "equal"]
            if (equal and all(op[0] == "equal" for op in ops[equal[0]:equal[-1] + 1])
                    and _coverage(swapped, matcher) >= max(MIN_MATCH, match + 1e-9)):
                return [("reverse", sent[a1:a2], sent[b1:b2])]
    return []


def _anchored(opcodes: list[_Op]) -> list[_Op]:
    """The replacements of one source token by one token with aligned runs right before and after them, together
    at least :data:`MIN_ANCHOR` tokens long: a word swapped in place inside a paraphrased copy ("recovered 1.5
    days slower than" for "faster than"), read even when the copy changes more than :data:`MAX_EDITS` (v27)."""
    return [op for before, op, after in zip(opcodes, opcodes[1:], opcodes[2:], strict=False)
            if op[0] == "replace" and op[2] - op[1] == 1 and op[4] - op[3] == 1
            and before[0] == after[0] == "equal" and (before[2] - before[1]) + (after[2] - after[1]) >= MIN_ANCHOR]


def _same_unit(a: _Token, b: _Token) -> bool:
    """Whether two words are units of one group (:data:`UNIT_GROUPS`: "years" and "centuries")."""
    return any(a.key in group and b.key in group for group in UNIT_GROUPS)


def _found(keys: list[str], haystack: str) -> bool:
    """Whether the token keys ``keys`` occur one after another in the source (``haystack``: its keys joined)."""
    return "\x1f" + "\x1f".join(keys) + "\x1f" in haystack


@dataclass(frozen=True)
class _Held:
    """The token keys of the source sentence and of the sentence: an opposite swapped in may come from elsewhere in
    the source only while the sentence keeps the word it replaces (v71)."""

    source: frozenset[str]
    sentence: frozenset[str]

    def reordered(self, mine: str, theirs: str) -> bool:
        """Whether the sentence may hold ``mine`` for ``theirs`` by reordering its source: the source holds ``mine``
        too and the sentence ``theirs`` ("wet summers, and chilly winters" for "the summers are wet; the winters
        are chilly"); "Profits fell" for "Profits rose …, while revenue fell" swaps one (v71)."""
        return mine in self.source and theirs in self.sentence


_NOTHING_HELD = _Held(frozenset(), frozenset())


def _opposed(mine: list[_Token], theirs: list[_Token], held: _Held,
             pairs: frozenset[frozenset[str]] | None = None) -> bool:
    """Whether a word of ``mine`` is the opposite (a pair of ``pairs``; :data:`OPPOSITES` by default) of one of
    ``theirs`` that it replaces, not by reordering the source (:meth:`_Held.reordered`)."""
    pairs = OPPOSITES if pairs is None else pairs
    return any(frozenset((a, b)) in pairs and not held.reordered(a, b) for a in _bound_keys(mine)
               for b in _bound_keys(theirs))


def _bound_keys(toks: list[_Token]) -> list[str]:
    """The tokens' keys, "up to" read as "most" (at most: "up to 80 percent" for "at least 80 percent" is a flip;
    v32)."""
    keys = [t.key for t in toks]
    return [("most" if k == "up" and keys[i + 1:i + 2] == ["to"] else k) for i, k in enumerate(keys)
            if not (k == "to" and keys[i - 1:i] == ["up"])]


def _flips(mine: list[_Token], theirs: list[_Token], held: _Held) -> bool:
    """Whether a changed span inverts the statement: a negation added or dropped (unless a negating prefix of the
    word it negates takes its place, "dislikes" for "does not like", v34, or its contradictory, "is closed" for "is
    not open", v37), or, with the negations unchanged, :func:`_inverts`."""
    if _negations(mine) != _negations(theirs):  # cancelled by a prefix (v34) or a contradictory (v37)
        bare_mine, bare_theirs = _bare(mine), _bare(theirs)
        return not (_prefixed(bare_mine, bare_theirs) or _opposed(bare_mine, bare_theirs, held, CONTRADICTORIES))
    return _inverts(mine, theirs, held)


def _inverts(mine: list[_Token], theirs: list[_Token], held: _Held) -> bool:
    """Whether a word is swapped for its opposite, a negating prefix added or dropped, or a scale word changed."""
    return _opposed(mine, theirs, held) or _prefixed(mine, theirs) or _rescaled(mine, theirs)


def _bare(toks: list[_Token]) -> list[_Token]:
    """``toks`` without their negation words and the auxiliaries of a negation (:data:`NEGATED_AUXILIARIES`)."""
    return [t for t in toks if t.number or (t.key not in NEGATIONS and t.key not in NEGATED_AUXILIARIES)]


def _prefixed(mine: list[_Token], theirs: list[_Token]) -> bool:
    """Whether one word replaces another that is itself with a negating prefix added or dropped (likely/unlikely)."""
    if len(mine) != 1 or len(theirs) != 1 or mine[0].number or theirs[0].number:
        return False
    a, b = sorted((mine[0].key, theirs[0].key), key=len)
    return len(a) >= MIN_PREFIXED and any(b == prefix + a for prefix in NEGATING_PREFIXES)


def _rescaled(mine: list[_Token], theirs: list[_Token]) -> bool:
    """Whether one scale word of a number replaces another ("million" -> "billion": a factor of 1,000 or more)."""
    return (len(mine) == len(theirs) == 1 and mine[0].scale and theirs[0].scale
            and mine[0].key != theirs[0].key)


def _universal(toks: list[_Token], words: frozenset[str] = UNIVERSALS) -> bool:
    """Whether ``toks`` hold a universal word, or another of ``words`` (a capitalised one is a name: "Erase
    Everything")."""
    return any(not t.number and not t.entity and t.key in words for t in toks)


def _one_of_left_out(op: _Op, source: list[_Token]) -> bool:
    """Whether a change leaves out exactly "one of" or "among" of the source right before a "the" that the sentence
    keeps ("the largest lender" for "one of the largest lenders": one of several made the only one; v69)."""
    kind, a1, a2, b1, b2 = op
    return (kind == "insert" and [t.key for t in source[b1:b2]] in (["1", "of"], ["among"])
            and b2 < len(source) and source[b2].key == "the")


def _quantifier_widened(mine: list[_Token], theirs: list[_Token]) -> bool:
    """Whether a change puts "all", "every", "each" or a universal word where its source has a partial quantifier
    or frequency word (:data:`PARTIAL`) and none of those ("All residents" for "Some residents", "always" for
    "usually"; v68)."""
    return (_universal(mine, SCOPED) and any(t.key in PARTIAL for t in theirs)
            and not any(t.key in SCOPED for t in theirs))


def _restriction_left_out(source: list[_Token], opcodes: list[_Op]) -> bool:
    """Whether the copy leaves out content words of the source's clauses it restates, and those clauses speak of
    no "all", "every" or "each" ("free for Plus members" -> "free"; another clause left out restricts nothing)."""
    aligned = {j for op in opcodes if op[0] == "equal" for j in range(op[3], op[4])}
    restated = {source[j].clause for j in aligned}
    clauses = [(j, t) for j, t in enumerate(source) if t.clause in restated]
    return any(t.content and j not in aligned for j, t in clauses) and not any(t.key in SCOPED for _, t in clauses)


def _inner(opcodes: list[_Op], width: Callable[[int, int], int],
           source_width: Callable[[int, int], int]) -> tuple[list[_Op], list[_Op]]:
    """The changes that edit the source rather than cut it: every change between the first and the last aligned
    run, and a short replacement at the end ("designed by <another name>."; for a longer end of the source, of as
    many of its first tokens: v53); and, apart, the other short changes
    outside the aligned part, which count only if they widen the source to all (a long end replacement, a change
    leading the sentence, an added end) or, leading it, swap a word for its opposite. A clause dropped or added at
    either end is not an edit of the source, and neither is another change leading the sentence (a list number).
    ``width(a1, a2)`` is how many tokens the sentence's tokens ``a1:a2`` count as (:func:`_width`; v62),
    ``source_width(b1, b2)`` the source's (v63)."""
    equal = [i for i, op in enumerate(opcodes) if op[0] == "equal"]
    if not equal:
        return [], []
    inside = [op for op in opcodes[equal[0] + 1 : equal[-1]] if op[0] != "equal"]
    outside = [op for op in (*opcodes[: equal[0]], *opcodes[equal[-1] + 1 :])
               if 0 < width(op[1], op[2]) <= MAX_SWAP_TOKENS]
    short = [op for op in outside
             if op[0] == "replace" and op[1] > 0 and source_width(op[3], op[4]) <= MAX_SWAP_TOKENS + 1]
    # a longer end of the source: the sentence's end is read against as many of its tokens, the rest cut ("7 am" for
    # "7 pm and the concert starts at 8 pm"), as "end" (judged as "lead" is: v53); still read whole for a widening
    trimmed = [("end", a1, a2, b1, b1 + a2 - a1) for kind, a1, a2, b1, b2 in outside
               if kind == "replace" and a1 > 0 and source_width(b1, b2) > MAX_SWAP_TOKENS + 1]
    return inside + short + trimmed, [op for op in outside if op not in short]
