"""The word lists of the ``edits`` rules (:mod:`faithwatch.alignment.edits`): negations, verbs that negate, the
auxiliaries of a negation, negating prefixes, pairs of opposites, closed groups of contrast words, universal words
and the scale words of numbers. Words are compared by stem (:func:`faithwatch.text.stem`), as the tokens are; a
change here changes the features, so bump ``edits.EDITS_VERSION`` with it."""

from __future__ import annotations

import gzip
from functools import cache
from importlib.resources import files

from faithwatch.text import MONTHS, WEEKDAYS, stem

#: negation words (compared unstemmed: tokens keep them as written)
NEGATIONS = frozenset({"not", "no", "never", "without", "none", "nor", "neither", "nobody", "nothing", "cannot"})
#: negation words that lead a sentence as its determiner or subject ("None of the", "Nobody was"): one of them
#: replaced by words with no negation flips the statement where it leads it (v70)
LEADING_NEGATIONS = frozenset({"no", "none", "nobody", "nothing", "neither", "never"})
#: verbs that negate what follows, as written (lower-cased): they count as negations (v36), so "failed to score"
#: restates "did not score" and "reached" for "failed to reach" is a flip; not "lack" or "stops" (mostly nouns)
NEGATING_VERBS = frozenset({"fail", "fails", "failed", "failing", "lacks", "lacked", "lacking", "refuse", "refuses",
                            "refused", "refusing", "cease", "ceases", "ceased", "ceasing", "stop", "stopped",
                            "stopping"})
#: the auxiliaries of a negation ("does not like"), left out where a negating prefix may replace it (v34)
NEGATED_AUXILIARIES = frozenset(stem(w) for w in ("do", "does", "did"))
#: prefixes that negate the word they lead (by stem: "unlikely" is "likely" negated); not "mis" ("misconduct")
NEGATING_PREFIXES = ("un", "in", "im", "il", "ir", "dis", "non")
#: pairs of opposite words, stemmed as tokens are: swapping one for the other flips the statement like a negation
#: (until v11 they were compared unstemmed, so rise/fall, rose/fell, more/less, before/after, above/below, gain/loss
#: and success/failure never matched)
OPPOSITE_PAIRS = ("rise fall", "rose fell", "risen fallen", "increase decrease", "more less", "most least",
                  "higher lower", "highest lowest", "larger smaller", "largest smallest", "before after", "above below",
                  "gain loss", "win lose", "won lost", "open close", "first last", "accept reject", "allow forbid",
                  "include exclude", "success failure", "north south", "east west", "earlier later", "maximum minimum",
                  "strong weak", "young old", "major minor", "up down", "grew shrank", "support oppose",
                  # v72: size, doubling, certainty
                  "large small", "big small", "huge tiny", "double halve", "may will", "might will", "could will")


_VOWELS = frozenset("aeiou")


def forms(word: str, doubled: bool = True) -> frozenset[str]:
    """The stems that ``word`` stands for: its own, and (``doubled``, v35) those of its forms with a final
    consonant doubled before "ed" and "ing" when it ends in consonant, vowel, consonant, not s, w, x or y (ban:
    banned, banning; win: winning), which the stemmer does not reduce to it ("princes" is no stem: "princesses")."""
    out = {stem(word)}
    if (doubled and len(word) >= 3 and word.isalpha() and word[-1] not in _VOWELS | {"s", "w", "x", "y"}
            and word[-2] in _VOWELS and word[-3] not in _VOWELS):
        out |= {stem(word + word[-1] + "ed"), stem(word + word[-1] + "ing")}
    return frozenset(out)


def classes(group: str, doubled: bool = True) -> tuple[frozenset[str], ...]:
    """A contrast group's classes of stems (with :func:`forms`): separated by "/" (words of a class name the same
    thing: "feet ft"), or, without "/", one word each."""
    return tuple(frozenset().union(*(forms(w, doubled) for w in part.split()))
                 for part in (group.split("/") if "/" in group else group.split()))


def parse_groups(text: str) -> tuple[str, ...]:
    """The groups of a contrast-groups file's ``text`` (the header of ``faithwatch/data/contrast_groups.txt`` says
    the format), in order; a malformed line (an empty class, an unknown "@" name) is a ``ValueError`` naming it."""
    named = {"@months": " / ".join(MONTHS), "@weekdays": " / ".join(WEEKDAYS)}
    groups = []
    for number, line in enumerate(text.splitlines(), 1):
        group = named.get(line.strip(), line.strip())
        if not group or group.startswith("#"):
            continue
        if group.startswith("@") or any(not part.split() for part in group.split("/")):
            raise ValueError(f"contrast_groups.txt line {number}: an empty class or an unknown name: {line!r}")
        groups.append(group)
    return tuple(groups)


#: closed groups of contrast words, as classes of synonyms: a word swapped for one of another class of its group
#: flips the statement too (edits v4); kept in ``faithwatch/data/contrast_groups.txt``, whose comments say which
#: version added which groups (read through the top package: importing faithwatch.data would load its loaders)
CONTRAST_GROUPS = parse_groups(
    files("faithwatch").joinpath("data").joinpath("contrast_groups.txt").read_text(encoding="utf-8"))
CONTRASTS = tuple(classes(group) for group in CONTRAST_GROUPS)


def opposites(pairs: tuple[str, ...], groups: tuple[tuple[frozenset[str], ...], ...],
              doubled: bool = True) -> frozenset[frozenset[str]]:
    """The stem pairs that flip a statement: each pair of words of ``pairs`` (with :func:`forms`), and every two
    stems of different classes of one contrast group of ``groups``."""
    pair_forms = (tuple(forms(w, doubled) for w in pair.split()) for pair in pairs)
    return frozenset(frozenset((a, b)) for one, other in pair_forms for a in one for b in other) | frozenset(
        frozenset((a, b)) for group in groups for i, one in enumerate(group) for other in group[i + 1:]
        for a in one for b in other if a != b)


#: the two directions of a change (up, down), by stem: the classes of the contrast group of verbs of change and a
#: few more words ("up 8%", "an 8% loss"; "slipped", "eased": v85); a number restated with the other direction flips
#: its source (v84)
_CHANGE = next(group for group in CONTRASTS if stem("increase") in frozenset().union(*group))
DIRECTIONS = (_CHANGE[0] | frozenset().union(*(forms(w) for w in ("up", "higher", "growth", "expand", "expanded"))),
              _CHANGE[1] | frozenset().union(*(forms(w) for w in ("down", "loss", "losses", "lose", "lost",
                                                                   "reduction", "lower", "slip", "slipped", "slipping",
                                                                   "ease", "eased", "easing"))))
#: words between a number and the direction of its change that neither count nor block ("12 per cent higher")
DIRECTION_FILLERS = frozenset(stem(w) for w in ("per", "cent", "percent", "percentage", "point", "points"))


#: contradictories: pairs of words where one says what the other's negation says ("is closed": "is not open"), so
#: a changed negation and a swap of one for the other restate (v37); other opposites are often contraries ("did not
#: increase" is not "cut")
CONTRADICTORIES = opposites(("open close", "accept reject", "include exclude"), tuple(
    next(group for group in CONTRASTS if stem(word) in frozenset().union(*group))  # the contrast group of the word
    for word in ("allow", "accept", "present", "alive", "true", "same", "many", "guilty")))
#: every pair of stems whose swap flips a statement (:data:`OPPOSITE_PAIRS` and :data:`CONTRASTS`)
OPPOSITES = opposites(OPPOSITE_PAIRS, CONTRASTS)
#: the contrast groups of units (lengths, weights, currencies, durations, temperatures, volumes, areas), each found
#: by a word of it: in a paraphrased copy a unit is where a restatement converts or bounds ("more than 100
#: centuries ago" -> "more than 100 years ago"), so a swap inside one of them counts only in a near copy (v28)
UNIT_GROUPS = tuple(frozenset().union(*g) for g in CONTRASTS
                    if frozenset().union(*g) & {stem(w) for w in ("metre", "tonne", "euro", "minute", "celsius",
                                                                  "litre", "acre")})
#: words that widen a statement to all (by stem); replacing source words with one flips it like a negation.
#: Not "all" or "every": "all 62 items", "all applications" restate a source's count or set as often as they widen it
UNIVERSALS = frozenset(stem(w) for w in ("everyone", "everybody", "everything", "everywhere", "always", "anyone",
                                         "anybody", "anything"))
#: a source clause holding one of these already speaks of all, so a universal word inserted into its copy restates it
SCOPED = UNIVERSALS | {stem(w) for w in ("all", "every", "each")}
#: partial quantifiers and frequency words (by stem): one of :data:`SCOPED` in their place widens the source (v68)
PARTIAL = frozenset(stem(w) for w in ("some", "most", "many", "several", "few", "certain", "only", "majority",
                                      "usually", "often", "sometimes", "occasionally", "mostly", "generally",
                                      "typically", "frequently"))
#: scale words of a number: one swapped for another ("6.3 million" -> "6.3 billion") is a flip (v12)
SCALE_WORDS = frozenset({"hundred", "thousand", "million", "billion"})
#: words that join the two sides of a relation both ways round: an exchange of the sides across one of these, or
#: across a coordination ("Italy, Germany and France"), reorders the statement without reversing it (v18)
SYMMETRIC = frozenset(stem(w) for w in (
    "and", "or", "nor", "with", "versus", "vs", "v", "against", "between", "meet", "meets", "met", "meeting", "play",
    "plays", "played", "playing", "face", "faces", "faced", "facing", "draw", "draws", "drew", "drawn", "tie", "ties",
    "tied", "marry", "marries", "married", "merge", "merges", "merged", "border", "borders", "bordered"))
#: prepositions: two phrases that each follow the same one ("in Vienna in 1860") are read in either order, so
#: their exchange is no reversal (v25)
PREPOSITIONS = frozenset(stem(w) for w in (
    "in", "on", "at", "by", "for", "with", "from", "to", "of", "into", "during", "after", "before", "since", "until",
    "over", "under", "near", "through", "across", "among", "within", "without", "about"))


@cache
def _lowercase() -> tuple[frozenset[str], frozenset[str]]:
    """The words English writes in lower case (built by ``training/lowercase_words.py``) and their stems."""
    data = files("faithwatch.data").joinpath("lowercase_words.txt.gz").read_bytes()
    words = frozenset(gzip.decompress(data).decode("utf-8").split())
    return words, frozenset(stem(w) for w in words)


def lowercase_word(low: str) -> bool:
    """Whether English writes ``low`` (lower-cased) in lower case: it or its stem is that of a word of the list; a
    capitalised content word that is not is read as a name (v89)."""
    words, stems = _lowercase()
    return low in words or stem(low) in stems
