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
  :data:`NEGATING_VERBS`, v36; or a prefix: likely/unlikely, :data:`NEGATING_PREFIXES`, or "non-" written with a
  hyphen, which the tokens split off, v122), swap a word for its opposite (rose/fell, before/after, ...:
  :data:`OPPOSITES`) or for another of its closed group (am/pm, exports/imports, mother/father, metres/feet,
  dollars/euros, tallest/shortest, increased/reduced, may/must, ...:
  :data:`~faithwatch.alignment.edit_words.CONTRASTS`; "up to" reads as "at most" there: v32), swap a scale word of a
  number for another ("6.3 million" -> "6.3 billion": :data:`SCALE_WORDS`), exchange the two sides of a relation
  ("Brazil beat Germany" for "Germany beat Brazil": :func:`_exchanged`), or widen the source to all with a universal
  word (:data:`UNIVERSALS`): in place of content words of the source ("free for Plus members" -> "free for
  everyone"; "Plus members get" -> "Everyone gets"), or inserted where the copy leaves a restriction out ("is always
  free", when the source speaks of no "all", "every" or "each"); or "all", "every" or "each" in place of a partial
  quantifier or frequency word ("All residents" for "Some residents", "always" for "usually": :data:`PARTIAL`, v68).
  A widening counts at either end of the sentence, however long the source's end is. So does a copy that makes one
  of several the only one, leaving out "one of" or "among" before "the" ("the largest lender" for "one of the
  largest lenders": v69).

Only local changes of a near copy count (:func:`_inner`): changes between the first and last aligned run, or a short
replacement at the end, or a widening; at most :data:`MAX_EDITS` of them (a widening outside the aligned part is not
counted towards it), each of at most :data:`MAX_SWAP_TOKENS` tokens of the sentence for at most one more of the
source. A summary sentence that keeps half of its source cuts clauses, and a list number leading it differs, without
changing a fact; a negation inside a cut clause is not flipped. Nothing is counted when ``edit_match`` <
:data:`MIN_MATCH`: a loose paraphrase has no single source. A copy with more changes is a paraphrase of its source;
in it, only a word swapped in place (:func:`_anchored`) for its opposite, another scale word or a number found
nowhere in the context counts (v27), not one unit for another (v28). The word lists are in
:mod:`faithwatch.alignment.edit_words`, the tokens in :mod:`~faithwatch.alignment.edit_tokens`, the rules that judge
one change in :mod:`~faithwatch.alignment.edit_rules` and the directions of changes in
:mod:`~faithwatch.alignment.edit_directions`; this module finds the source and counts. Words that only look like
negations are none (v38): "note" (which stems to "not"), "No. 1" (the abbreviation of "number"), "no-fly" (one word
with the next). The short end of a year range is found in the context by its full year too ("2007-08" restates
"2007-2008"), while difflib aligns the keys as written, so "1997-98" against "1998-99" is a swapped number (v41). A
month's abbreviation next to a number is keyed as the month ("Feb. 14"), and months and weekdays are contrast groups
(v42). A magnitude abbreviation after a number ("3bn"; "£3m" after a currency symbol) is a scale word (v44). A
number written in two or more words is one number token, its value ("three hundred" restates "300": v46). A decimal
the context writes with a space after the point ("31. 8") is found as the number joined ("31.8": v48). A sentence's
correct unit conversion in parentheses ("165°F (74°C)") is left out of what is compared (v49). A number swapped in a
change leading the sentence ("24 people were injured" for "25 people …") counts as ``edit_swap_num``, unless either
number reads as a list number, followed by ".", ")", ":" or a capitalised word ("Step 6: Serve" for "4 Serve": v50).
"a.m." and "p.m." are read as "am" and "pm", as "9am" is (v51). A currency symbol (€, $, £, ¥) is read as its
currency's word, not a content token ("$15" for "€15" swaps dollars for euros: v52). A short replacement ending the
sentence for a longer end of its source is read as a swap of as many source tokens, the rest being cut ("Doors open
at 7 a.m." for "… at 7 p.m. and the concert starts at 8 p.m.": v53); a number ending it is no list number ("… used
by 1,430." for "… used by 1,340 patients in …": v54). A number after a bound word that its source's exact number
satisfies is no swapped number ("more than 300" for "340": v56; "no more than 450" for "438": v57). An ordinal from
11th to 99th written in words is the number and suffix it is in digits ("twenty-first" restates "21st"; "20th" swaps
it: v58). A number written with a magnitude and the same value in full digits are no swap ("1.5 million" for
"1,500,000": v59). A share written as a fraction in words is its percentage ("two-thirds of" restates "67% of"; "a
third of" swaps "50% of": v60). A quantity restated in another unit of its kind is no change ("180 minutes" for
"three hours", "8 km" for "five miles"; within 5%: unit rule 1, v61), one written with an article too ("a week" for
"7 days": unit rule 2). A change whose sentence side is an amount written as a share or compound of a unit, and
whose source side a quantity of its kind, is no change at its value and a swapped number at another ("three-quarters
of an hour" restates "45 minutes", "a day and a half" swaps "24 hours"; unit rule 2 C, v62); so is a source side
that is an amount ("twelve hours" for "a day and a half" swaps it; unit rule 2 E, v63; "half an hour-long" is half
an hour: v64). A short replacement starting the sentence for a longer lead-in of its source is read against as many
of the lead-in's last tokens, the rest being cut, and judged as a change leading the sentence ("33% of voters …" for
"The poll found that 67% of voters …": v65); so is the last token of a longer reworded lead-in before an aligned
run, against the source's, if the context lacks it ("plans to open two of its factories" for "said it would close
two of its factories": v66). A negation leading the source or the sentence, before an aligned run of at least
:data:`MIN_ANCHOR` tokens, counts when it is left out or added alone ("Passengers were hurt" for "No passengers were
hurt") or replaced by words with no negation ("Some of the" for "None of the"), but not as an answer ("No, the
museum …": v70). An opposite the source sentence holds elsewhere counts as swapped in once the sentence no longer
holds the word it replaces ("Profits fell by 12%." for "Profits rose by 12%, while revenue fell."; a reorder keeps
both: v71). "large" and "small", "halved" and "doubled", "will" and "may" are opposites (v72). Apart from any near
copy, a number of the sentence that takes the direction of a change (:func:`directions`: "fell 8%", "a 22% drop")
where the context gives the same number only the other direction ("up 8%") counts one ``edit_neg_flip``, however the
sentence is worded, unless the near copy already counted a flip (v84); a number that ends its sentence takes one too
(v85). A function word moved across a swap is left out of it ("Monday to Saturday, from 8 am" for "from Monday to
Friday, 8 am": :func:`_anchored`, v86), and a phrase moved with a word swapped inside it counts as that swap,
however many changes ("stops on Tuesdays at the green" for "stops at the green on Thursdays": :func:`_moved_phrases`;
op "moved", judged as "anchored"; v87). A name the context lacks, for a name, in the change leading a near copy counts
one ``edit_swap_word`` ("Jones scored …" for "Smith scored …"); a name there is a capitalised content word, the first
too, that English does not write in lower case (:func:`~faithwatch.alignment.edit_words.lowercase_word`; v89). A
Roman numeral in capitals after a capitalised word, keyed and aligned as written, is judged by its value where it
replaces a numeral or a number, or is replaced by one ("Type 2" restates "Type II", "Louis XV" swaps the number of
"Louis XIV"; "I" alone only after a numbering noun, "War" or a titled name: :func:`~faithwatch.text.roman_numerals`,
v101). A ruler's number written as an ordinal after "the" is such a numeral, "the" and a digit ordinal's suffix left
out of the change ("Henry the Eighth" restates "Henry VIII", "the Seventh" for "VIII" is a changed number:
:func:`~faithwatch.text.regnal_ordinals`, v105). Two numbers traded across the clauses of a near copy are two sides
exchanged, across a coordination or two phrases led by one preposition too ("starts on 9 May and ends on 3 May" for
"starts on 3 May and ends on 9 May"), unless nothing but their shared unit or month and the coordination stands
between them ("on 9 May and 3 May"; v106).
"""

from __future__ import annotations

import difflib
import re
import threading
from dataclasses import dataclass

from faithwatch.alignment.base import validate_inputs
from faithwatch.alignment.edit_directions import _Moved, directions
from faithwatch.alignment.edit_rules import (
    _NOTHING_HELD,
    MAX_EDITS,
    MAX_SWAP_TOKENS,
    MIN_MATCH,
    _amount_restated,
    _anchored,
    _coverage,
    _exchanged,
    _flips,
    _Held,
    _inner,
    _inverts,
    _lead_in,
    _moved_phrases,
    _negation_led,
    _number_swap,
    _one_of_left_out,
    _Op,
    _opposed,
    _quantifier_widened,
    _restated_in_unit,
    _restriction_left_out,
    _same_unit,
    _universal,
    _width,
)
from faithwatch.alignment.edit_tokens import _acronyms, _Token, tokens
from faithwatch.text import (
    ORDINAL_SUFFIX_RE,
    ORDINAL_SUFFIXES,
    Measure,
    drop_conversions,
    measures,
    spaced_decimals,
    split_sentences,
    strip_preamble,
)

#: what :meth:`EditScorer.evidence` returns (the ``edits`` signal's features)
EDIT_FEATURES = ("edit_match", "edit_swap_num", "edit_swap_word", "edit_neg_flip")
#: the meaning of the features: bump when a rule changes (a detector records it; a monitor refuses another)
#: not kept: 7, 8, 13, 14 B, 15 A, 16 (kept as 51), 17, 19, 20, 24, 27, 29, 30 A, 33, 39, 40, 43, 45, 47, 55, 67,
#: 81 (kept as 82), 86 (kept in 87), 88 (kept as 89), 95 (kept as 96), 99 and 100 (kept as 101), 111 and 112
#: (narrowed as 113); 94 and 107 not landed (docs/transfer.md, "A word swapped …", "Decimals …", "Year ranges …",
#: "A count changed …", "A country and its demonym", "Numbers written in words", "Unit rule 3", "A Roman numeral …",
#: "A pronoun's gender …", "Quantities, rounds and roles …")
EDITS_VERSION = "148"


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
    romans: frozenset[str] = frozenset()  # the values of its Roman numerals (v101)


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
                              tuple(d for source in sources for d in directions(source.tokens)),
                              frozenset(t.roman for source in sources for t in source.tokens if t.roman))
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
        """``edit_match`` and the local edits of a near copy: ``(op, sentence tokens, source tokens)`` per change, none
        when the sentence has no source, only "anchored" ones (one word swapped in place: :func:`_anchored`) when it
        paraphrases it (see the module doc). ``op`` is difflib's name ("replace"; "delete": words the sentence adds;
        "insert": words it leaves out), "widen" for a change that widens the source to all, "lead" for a short
        replacement leading the sentence, "end" for one ending it in place of a longer end of the source, paired
        with as many of its first tokens (for both, only an opposite or a swapped number counts there: a list number
        or "However," leads a restated sentence too; in "lead", also a name the context lacks for a name, v89),
        "reworded" for the last word of a longer reworded lead-in against the source's (judged as "lead", if the
        context lacks it; :func:`_lead_in`), "singled" for "one of" or "among" left out before "the"
        (:func:`_one_of_left_out`), or "reverse" for two sides of a relation exchanged (:func:`_exchanged`; looked
        for in every sentence with a source, however many changes), or "moved" for a word swapped inside a phrase
        moved (:func:`_moved_phrases`; v87: in every sentence with a source, however many changes)."""
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
        # a phrase moved with a word swapped inside it (v87), however many changes
        anywhere = reversal + [("moved", sent[op[1]:op[2]], source[op[3]:op[4]])
                               for op in _moved_phrases(opcodes, sent, source, held)]

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
            return match, anywhere + [("anchored", sent[op[1]:op[2]], source[op[3]:op[4]])
                                      for op in _anchored(opcodes, sent, source)], held, text

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
        return (match, anywhere + [(kind, sent[op[1]:op[2]], source[op[3]:op[4]]) for kind, op in labelled],
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

    def _feature(self, op: str, mine: list[_Token], theirs: list[_Token], held: _Held,
                 other_amount: bool) -> str | None:
        """The feature that counts one local edit (``op``: its kind, ``mine`` for ``theirs``), or None;
        ``other_amount``: an amount restated at another value (v62)."""
        feature = self._judged(op, mine, theirs, held, other_amount)
        if feature == "edit_neg_flip" and mine and theirs and _joined(mine) == _joined(theirs):
            return None  # no contrast inside one word written split: "semi-final" for "semifinal" (v113)
        return feature

    def _judged(self, op: str, mine: list[_Token], theirs: list[_Token], held: _Held,
                other_amount: bool) -> str | None:
        """:meth:`_feature`, before a word written split is read as one."""
        novel = [t for t in mine if t.content and not self.in_context(t)]  # found nowhere in the context
        if other_amount and op != "reverse":
            return "edit_swap_num"
        if op in ("replace", "anchored", "moved"):  # a Roman numeral for a numeral or a number, by value (v101)
            by_value = self._numeral_change(mine, theirs)
            if by_value is not None:
                return by_value or None
        if op == "reworded" and any(self.in_context(t) for t in mine):
            return None  # the last word of a reworded lead-in: only one the context lacks is a swap (v66)
        if op in ("lead", "end", "reworded"):  # an opposite, or a new number (v50, v53, v66; v54)
            if _opposed(mine, theirs, held) and _flips(mine, theirs, held):
                return "edit_neg_flip"
            if _number_swap(novel, mine, theirs) and (op == "end" or not any(t.listed for t in mine + theirs)):
                return "edit_swap_num"
            # a name the context lacks for a name, leading a near copy ("Jones scored" for "Smith scored": v89)
            named = op == "lead" and any(t.name for t in novel) and any(t.name for t in theirs)
            return "edit_swap_word" if named else None
        if op == "reverse":
            return "edit_neg_flip"
        if op in ("anchored", "moved"):  # in a paraphrase or a moved phrase: a typed swap only, no negation, name
            # or unit (v27, v28; v87)
            if _same_unit(mine[0], theirs[0]):
                return None
            if _inverts(mine, theirs, held):
                return "edit_neg_flip"
            return "edit_swap_num" if novel and novel[0].number and theirs[0].number else None
        if op in ("insert", "delete") and [t.key for t in mine + theirs] == ["non"]:
            return "edit_neg_flip"  # "non-refundable" for "refundable": a prefix the tokens split off (v122)
        if op in ("singled", "negated", "unnegated", "negation added") or _flips(mine, theirs, held):
            # "the largest" for "one of the …" (v69); a negation leading the source changed (v70)
            return "edit_neg_flip"
        if op != "replace" or not novel:
            return None
        if _number_swap(novel, mine, theirs):
            return "edit_swap_num"
        return "edit_swap_word" if any(t.entity for t in novel) else None

    def _numeral_change(self, mine: list[_Token], theirs: list[_Token]) -> str | None:
        """How a change of one token for one, a Roman numeral on either side and a numeral or number on the other,
        counts (v101): "" at the same value ("II" for "2"), ``edit_swap_num`` at another the context lacks (as a
        number or a numeral), "" at one it holds; None for any other change (judged as before)."""
        mine, theirs = _numeral_core(mine), _numeral_core(theirs)  # "the Eighth", "the 14th": v105
        if len(mine) != 1 or len(theirs) != 1 or not (mine[0].roman or theirs[0].roman):
            return None
        mine_value, their_value = (t.roman or (t.key if t.number and not t.scale else "") for t in (*mine, *theirs))
        if not mine_value or not their_value:
            return None
        context: _Context = self._local.context
        if mine_value == their_value or mine_value in context.keys or mine_value in context.romans:
            return ""
        return "edit_swap_num"

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
            if op == "widen":  # the widenings of one sentence are one flip ("always free for everyone")
                feature = None if widened else "edit_neg_flip"
                widened = True
            else:
                feature = self._feature(op, mine, theirs, held, restated is False)
            if feature:
                out.append(EditChange(feature, _HOW.get(op, "replace"), _words(mine), _words(theirs)))
        if not any(change.feature == "edit_neg_flip" for change in out):  # a near copy's flip is counted once
            out += _reversed_changes(tokens(text), self._context(context).directions)
        return match, out


#: an answer's "no" or "not really" before punctuation ("No, the museum …"): no negation of what follows (v70)
_ANSWER_RE = re.compile(r"^\W*(?:no|not(?: really)?|nope)\s*[,.!;:\u2013\u2014-]", re.I)


def _numeral_core(toks: list[_Token]) -> list[_Token]:
    """``toks`` without "the" and a digit ordinal's suffix: the numeral a ruler's number in words leaves ("the
    Eighth": "Eighth", "the 14th": 14; v105)."""
    return [t for i, t in enumerate(toks) if t.key != "the" and not (
        t.key in ORDINAL_SUFFIXES and i and toks[i - 1].number)]


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


def _joined(toks: list[_Token]) -> str:
    """Tokens as written, lower case, with no space between them: one word joined, split or hyphenated (v113)."""
    return "".join(t.text for t in toks).lower()


def _words(toks: list[_Token]) -> str:
    """Tokens as written, joined by spaces ("n't" joined to its verb, an ordinal's suffix to its number)."""
    words = " ".join(t.text for t in toks if t.text).replace(" n't", "n't").replace(" n’t", "n’t")
    return re.sub(rf"(\d) ({ORDINAL_SUFFIX_RE})\b", r"\1\2", words)


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
