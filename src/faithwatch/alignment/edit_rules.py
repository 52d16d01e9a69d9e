"""The rules that judge one change of a near copy to its source sentence: which changes are local
(:func:`_inner`), how a lead-in or an end is read, whether a change restates a quantity, swaps a number, flips
a negation or an opposite, widens the source or exchanges two sides of a relation (see
:mod:`faithwatch.alignment.edits`, which reads the thresholds defined here)."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

from faithwatch.alignment.edit_tokens import _key, _negations, _Token
from faithwatch.alignment.edit_words import (
    CONTRADICTORIES,
    LEADING_NEGATIONS,
    NEGATED_AUXILIARIES,
    NEGATING_PREFIXES,
    NEGATIONS,
    OPPOSITES,
    PARTIAL,
    PREPOSITIONS,
    SCOPED,
    SYMMETRIC,
    UNIT_GROUPS,
    UNIVERSALS,
)
from faithwatch.text import Measure, measures, number_value, same_quantity, satisfies

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
#: a difflib opcode: (op, sentence start, sentence end, source start, source end)
_Op = tuple[str, int, int, int, int]


def _coverage(sent: list[_Token], matcher: difflib.SequenceMatcher) -> float:
    """Share of the sentence's content tokens aligned by ``matcher`` (its first sequence set to the sentence)."""
    aligned: set[int] = set()
    for a, _, n in matcher.get_matching_blocks():
        aligned.update(range(a, a + n))
    content = [i for i, t in enumerate(sent) if t.content]
    return sum(1 for i in content if i in aligned) / len(content) if content else 0.0


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


def _exchanged(sent: list[_Token], source: list[_Token], opcodes: list[_Op],
               match: float) -> list[tuple[str, list[_Token], list[_Token]]]:
    """A ``("reverse", one side, the other)`` edit when exchanging two spans of the sentence (at most
    :data:`MAX_SWAP_TOKENS` tokens each, each holding a content token, one of them touching a token outside the
    aligned runs) makes it a copy of its source with no change between its first and last aligned run, covering at
    least :data:`MIN_MATCH` of its content tokens and more than ``match``, the sentence's own coverage (a reversal
    restores the source, a moved phrase does not: "Brazil beat Germany" for "Germany beat Brazil"); else none. Not
    across nothing, a coordination or a symmetric relation (:data:`SYMMETRIC`: "Argentina and Brazil met"), nor
    between two phrases led by the same preposition (:data:`PREPOSITIONS`: "in 1860 in Vienna"), unless the spans
    are numbers traded across clauses (:func:`_numbers_traded`: "starts on 9 May and ends on 3 May"; v106)."""
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
            if not _found(keys[b1:b2] + keys[a2:b1] + keys[a1:a2], haystack):
                continue
            traded = _numbers_traded(sent, (a1, a2), (b1, b2))  # across clauses, no list reordered (v106)
            if not traded and any(t.key in SYMMETRIC for t in between):
                continue
            if not traded and a1 and keys[a1 - 1] == keys[b1 - 1] and keys[a1 - 1] in PREPOSITIONS:
                continue  # "in Vienna in 1860" -> "in 1860 in Vienna": two phrases reordered (v25)
            swapped = sent[:a1] + sent[b1:b2] + between + sent[a1:a2] + sent[b2:]
            matcher = difflib.SequenceMatcher(None, [t.key for t in swapped], [t.key for t in source], autojunk=False)
            ops = matcher.get_opcodes()
            equal = [i for i, op in enumerate(ops) if op[0] == "equal"]
            if (equal and all(op[0] == "equal" for op in ops[equal[0]:equal[-1] + 1])
                    and _coverage(swapped, matcher) >= max(MIN_MATCH, match + 1e-9)):
                return [("reverse", sent[a1:a2], sent[b1:b2])]
    return []


def _numbers_traded(sent: list[_Token], a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether two spans of the sentence are numbers traded across its clauses (v106): every token of each a
    number, and a content token between them other than one that follows both ("May" of "3 May and 9 May"): "starts
    on 9 May and ends on 3 May", "Smith scored 8 points and Jones scored 12 points"; not "on 9 May and 3 May"."""
    if not all(t.number for t in sent[a[0]:a[1]] + sent[b[0]:b[1]]):
        return False
    after = {sent[i].key for i in (a[1], b[1]) if i < len(sent)}
    shared = after if len(after) == 1 and a[1] < len(sent) and b[1] < len(sent) else set()
    return any(t.content and t.key not in shared for t in sent[a[1]:b[0]])


def _anchored(opcodes: list[_Op], sent: list[_Token], source: list[_Token]) -> list[_Op]:
    """The replacements of one source token by one token with aligned runs right before and after them, together
    at least :data:`MIN_ANCHOR` tokens long: a word swapped in place inside a paraphrased copy ("recovered 1.5
    days slower than" for "faster than"), read even when the copy changes more than :data:`MAX_EDITS` (v27). A
    function word that moved across the swap is left out of it (:func:`_unmoved`, v86)."""
    out = []
    for before, op, after in zip(opcodes, opcodes[1:], opcodes[2:], strict=False):
        if op[0] != "replace" or not before[0] == after[0] == "equal":
            continue
        if (before[2] - before[1]) + (after[2] - after[1]) < MIN_ANCHOR:
            continue
        op = _unmoved(op, opcodes, sent, source)
        if op[2] - op[1] == 1 and op[4] - op[3] == 1:
            out.append(op)
    return out


def _unmoved(op: _Op, opcodes: list[_Op], sent: list[_Token], source: list[_Token]) -> _Op:
    """A two-for-one replacement without the function word at either end of its longer side that the other text
    holds where it lacks a word of this one (a difflib insert or delete): "Monday to Saturday, from 8 am" for "from
    Monday to Friday, 8 am" swaps "Saturday" for "Friday", the "from" moved (v86); ``op`` as it is otherwise.
    A negation is never read as moved."""
    kind, a1, a2, b1, b2 = op
    if (a2 - a1, b2 - b1) == (2, 1) and (rest := _trimmed(sent, a1, a2, _unmatched(opcodes, "insert", source))):
        return (kind, *rest, b1, b2)
    if (a2 - a1, b2 - b1) == (1, 2) and (rest := _trimmed(source, b1, b2, _unmatched(opcodes, "delete", sent))):
        return (kind, a1, a2, *rest)
    return op


def _unmatched(opcodes: list[_Op], kind: str, toks: list[_Token]) -> set[str]:
    """The keys of the tokens of one side that the other lacks: the source's in difflib's inserts (``kind``
    "insert", ``toks`` the source), the sentence's in its deletes ("delete", the sentence)."""
    side = 3 if kind == "insert" else 1
    return {toks[i].key for o in opcodes if o[0] == kind for i in range(o[side], o[side + 1])}


def _trimmed(toks: list[_Token], start: int, end: int, elsewhere: set[str]) -> tuple[int, int] | None:
    """``start:end`` without a function word at either end that moved (:func:`_moved`), or None."""
    for i, rest in ((start, (start + 1, end)), (end - 1, (start, end - 1))):
        if _moved(toks[i], elsewhere):
            return rest
    return None


def _moved(token: _Token, elsewhere: set[str]) -> bool:
    """Whether ``token`` is a function word (no negation) that the other text holds ``elsewhere``."""
    return not token.content and token.key not in NEGATIONS and token.key in elsewhere


def _moved_phrases(opcodes: list[_Op], sent: list[_Token], source: list[_Token], held: _Held) -> list[_Op]:
    """The words swapped inside a phrase moved: a phrase the sentence adds in one place (a difflib delete) and one its
    source has and it leaves out in another (an insert), of as many tokens (1 to :data:`MAX_SWAP_TOKENS`), with the
    same keys at every position but one, where the two words may be a swap (:func:`_inverts`, or two numbers); as a
    one-for-one op ("moved") at that position ("stops on Tuesdays at the green" for "stops at the green on
    Thursdays": "Tuesdays" for "Thursdays"; v87). Each added phrase pairs with the first left-out one that fits,
    each left-out one with at most one."""
    left_out = [op for op in opcodes if op[0] == "insert" and op[4] - op[3] <= MAX_SWAP_TOKENS]
    out = []
    for _, a1, a2, _, _ in (op for op in opcodes if op[0] == "delete" and op[2] - op[1] <= MAX_SWAP_TOKENS):
        for other in left_out:
            b1, b2 = other[3], other[4]
            differ = [i for i, (a, b) in enumerate(zip(sent[a1:a2], source[b1:b2], strict=False)) if a.key != b.key]
            if b2 - b1 != a2 - a1 or len(differ) != 1:
                continue
            a, b = a1 + differ[0], b1 + differ[0]
            if (sent[a].number and source[b].number) or _inverts(sent[a:a + 1], source[b:b + 1], held):
                out.append(("moved", a, a + 1, b, b + 1))
                left_out.remove(other)
                break
    return out


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
