"""Words: stop words and the crude suffix stemming every lexical signal shares."""

from __future__ import annotations

from functools import lru_cache

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
