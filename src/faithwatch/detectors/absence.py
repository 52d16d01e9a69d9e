"""Absence notes ("The passages do not say how much it costs.") that the context bears out, and refusals ("I cannot
answer this based on the given passages."), are set aside as framing lines are (absence rules 1 to 3;
docs/transfer.md "Absence notes").

Such a sentence is true when the context lacks the thing it names, yet the text signals read that thing's words as
claims the context lacks. When no sentence of the context holds most of the thing's content words, the note is
*borne out*: raised to the threshold, never flagged by itself, left out of a response's score. A note the context
does not bear out ("The passage does not mention its height." over "It is 330 metres tall.") keeps its score. A
refusal claims nothing about the world, whatever the context holds (whether it held the answer is a matter of
helpfulness): it is set aside unchecked.
"""

from __future__ import annotations

import re
from functools import lru_cache

from faithwatch.alignment.lexical import content_stems
from faithwatch.text import preamble_end, split_sentences, strip_markup

#: the rule of :func:`borne_out`: part of the monitor's scoring config
ABSENCE_RULE = "absence3"
#: a context sentence holding this share of the thing's content words means the context may well hold it
MIN_SHARE = 0.6

_LEAD = re.compile(r"(?:(?:however|unfortunately|additionally|also|but|note(?:\s+that)?|i['’]m\s+sorry,?\s+but"
                   r"|sorry,?\s+but)\s*[,:]?\s+)?", re.IGNORECASE)
_SOURCE = (r"(?:(?:the|this|these|that|those)\s+)?(?:(?:provided|given|above|retrieved|supplied|available)\s+)?"
           r"(?:passages?|context|texts?|articles?|documents?|sources?|excerpts?|information|search\s+results?)"
           r"(?:\s+\[?\d{1,2}\]?)?(?:\s+(?:provided|given|above|supplied))?")
_ADVERB = r"(?:(?:explicitly|specifically|directly|clearly)\s+)?"
_VERB = (r"(?:mention|say|provide|state|specify|include|contain|give|discuss|address|indicate|describe|list|detail"
         r"|offer)")
_FORMS = (
    # (a) "The passages do not mention THING"
    _SOURCE + r"\s+(?:does|do|did)(?:\s+not|n['’]t)\s+" + _ADVERB + _VERB + r"\s+(?P<a>.+?)",
    # (b) "There is no mention of THING in the passages"
    r"there\s+(?:is|are)\s+no\s+(?:(?:specific|explicit|further)\s+)?(?:mention|information|data|details?)"
    r"(?:\s+(?:of|about|on|regarding|related\s+to|concerning))?\s+(?P<b>.+?)"
    r"(?:\s+(?:in|within|from)\s+" + _SOURCE + r")?",
    # (c) "THING is not mentioned in the passages"
    r"(?P<c>.+?)\s+(?:is|are)\s+not\s+" + _ADVERB
    + r"(?:mentioned|specified|provided|stated|given|discussed|listed)\s+(?:in|within|by)\s+" + _SOURCE,
)
_NOTE = re.compile("(?:" + "|".join(_FORMS) + r")\s*[.!]?\s*", re.IGNORECASE)
#: a second clause: the sentence claims more than an absence
_SECOND_CLAUSE = re.compile(r";|,\s+(?:but|so|although|though|while|which|yet|and\s+so|therefore|however|as)\b",
                            re.IGNORECASE)
_ACT = r"(?:answer|determine|provide|say|tell|find|give|confirm|know|identify|specify|state)"
#: one introductory phrase and its comma ("Without further information, ")
_INTRO = r"(?:[^,;:.!?]{1,80},\s+)?"
#: a whole-sentence refusal (rule 2), after its lead and one introductory phrase
_REFUSAL = re.compile(
    _INTRO + r"(?:"
    r"(?:i|we)\s+(?:cannot|can['’]t|can\s+not|could\s+not|couldn['’]t|am\s+unable\s+to|are\s+unable\s+to"
    r"|am\s+not\s+able\s+to|was\s+unable\s+to)\s+" + _ACT
    + r"|(?:i|we)\s+(?:do\s+not|don['’]t)\s+(?:have\s+(?:enough|sufficient)\s+information|know)"
    r"|(?:it\s+is|it['’]s)\s+(?:not\s+possible|impossible|unable)\s+(?:for\s+me\s+)?to\s+" + _ACT
    + r"|unable\s+to\s+" + _ACT
    + r"|there\s+is\s+(?:not\s+enough|insufficient)\s+information\s+to\s+" + _ACT
    + r")\b[^;]*", re.IGNORECASE)
#: a passive refusal (rule 3): "the answer cannot be determined ..."
_PASSIVE = re.compile(_INTRO + r"[^,;:.!?]{1,120}?\s+"
                      r"(?:cannot|can['’]t|can\s+not|could\s+not)\s+be\s+"
                      r"(?:answered|determined|confirmed|known|said|found|specified)\b[^;]*", re.IGNORECASE)
#: a refusal names the answer, the question or a source (rule 2 amended): "I don't know much about X." is a turn
#: of a dialogue, not a refusal to answer from a context
_TASK_WORD = re.compile(r"\b(?:answers?|answered|question|passages?|context|information|texts?|documents?|articles?"
                        r"|sources?|data)\b", re.IGNORECASE)
#: a reason or a second claim: the sentence says more than a refusal
_REASON = re.compile(r";|\b(?:but|because|since|although|though|while|whereas|except)\b", re.IGNORECASE)
#: words that say what kind of thing is missing, not which
_GENERIC = content_stems("information details specific data explicit exact precise particular further additional")


def _body(sentence: str) -> str:
    """``sentence`` as the text signals read it, without its lead ("However,", "I'm sorry, but")."""
    text = strip_markup(sentence).strip()
    return text[_LEAD.match(text).end():]


def absent_thing(sentence: str) -> str | None:
    """What ``sentence`` says the context lacks, when it is one whole absence note ("However, the passages do not
    provide the average hourly rate." -> "the average hourly rate"); None for any other sentence."""
    return _absent_thing(_body(sentence))


def _absent_thing(text: str) -> str | None:
    if _SECOND_CLAUSE.search(text):
        return None
    match = _NOTE.fullmatch(text)
    if match is None:
        return None
    return next(g for g in (match.group("a"), match.group("b"), match.group("c")) if g is not None)


def is_refusal(sentence: str) -> bool:
    """Whether ``sentence`` is one whole refusal ("I am unable to answer the question based on the given passages.",
    "Based on the context, I cannot determine the ticket price."; rule 2), also in the passive ("The answer cannot be
    determined from the passages."; rule 3), without a reason or another claim, that names the answer, the question
    or a source ("I don't know much about politics." is none)."""
    return _is_refusal(_body(sentence))


def _is_refusal(text: str) -> bool:
    if not _TASK_WORD.search(text):  # looked for before the preamble ("Based on the passages, ") goes
        return False
    text = text[preamble_end(text):]
    return not _REASON.search(text) and (_REFUSAL.fullmatch(text) is not None or _PASSIVE.fullmatch(text) is not None)


@lru_cache(maxsize=64)
def _context_stems(context: str) -> tuple[frozenset[str], ...]:
    return tuple(content_stems(s) for s in (split_sentences(context) if context.strip() else []))


def borne_out(sentence: str, context: str) -> bool:
    """Whether ``sentence`` is an absence note that ``context`` bears out: the thing it names has content words and
    no sentence of the context holds :data:`MIN_SHARE` of them; or a refusal (:func:`is_refusal`), whatever
    ``context`` holds."""
    body = _body(sentence)  # read once for both rules
    if _is_refusal(body):
        return True
    thing = _absent_thing(body)
    if thing is None:
        return False
    words = content_stems(thing) - _GENERIC
    if not words:
        return False
    return all(len(words & s) < MIN_SHARE * len(words) for s in _context_stems(context))
