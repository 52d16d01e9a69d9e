"""Text in a language other than English: faithwatch's models read English only, so such text gets a note.

Measured: 0 of 212,670 English texts (the contexts and responses of the twelve sets, the NLI pairs' premises and
hypotheses) read as another language (``training/experiments/language_scan.py``).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

from faithwatch.text.words import STOP_WORDS

#: frequent function words of the Latin-script languages named, none of them an English word (so "a", "in", "die",
#: "son", "per", "met" or "van" are left out)
_FUNCTION_WORDS = {
    "French": "le la les des du une est et que qui dans pour pas sur au aux avec ce cette sont il elle ils nous vous "
              "mais ou leur leurs été être ses très",
    "Spanish": "el los las del y es que por con para una se su sus al lo como pero más está fue muy también entre "
               "sobre",
    "German": "der das und ist nicht mit von zu dem ein eine auf für sich des ich sie wir wird werden oder auch noch "
              "nach bei aus wie",
    "Italian": "il di che è una del della gli le sono non si con ma anche più nel alla dei questo",
    "Portuguese": "o os da dos das uma em é que não mas para por se mais foi são ao pelo pela também muito ele ela seu "
                  "sua nas nos",
    "Dutch": "de het een en niet voor zijn dat wordt ook bij aan naar uit maar worden",
}
_WORDS = {language: frozenset(words.split()) for language, words in _FUNCTION_WORDS.items()}
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")

#: a Latin-script text needs this many words before its language is judged, and this share of them another
#: language's function words
MIN_WORDS = 8
MIN_SHARE = 0.15
#: letters of scripts other than Latin at or above this share of a text's letters: it reads as that script
SCRIPT_SHARE = 0.5


@lru_cache(maxsize=4096)
def _script(char: str) -> str:
    """The script of a letter as its Unicode name begins ("LATIN", "CJK", "CYRILLIC", "HIRAGANA", ...)."""
    name = unicodedata.name(char, "")
    return name.split(" ", 1)[0] if name else "UNKNOWN"


def other_language(text: str | Sequence[str]) -> str | None:
    """What ``text`` (or passages, read together) is written in when that is not English, else None: a script
    other than Latin ("Cyrillic script"; the most frequent one) when such scripts hold at least
    :data:`SCRIPT_SHARE` of the letters, or a
    Latin-script language whose function words (two or more different ones) are at least :data:`MIN_SHARE` of
    :data:`MIN_WORDS` or more words and over twice the English stop words. Tables, code, lists of names and an
    English sentence quoting a foreign name ("Kim Il Sung", "City des Sciences et de l'Industrie") read as
    English."""
    joined = text if isinstance(text, str) else "\n".join(text)
    scripts = Counter(_script(c) for c in joined if c.isalpha())
    letters = sum(scripts.values())
    if not letters:
        return None
    others = {s: n for s, n in scripts.items() if s != "LATIN"}
    if sum(others.values()) >= SCRIPT_SHARE * letters:  # Japanese: CJK and kana together
        script = max(others, key=others.__getitem__)
        return f"{script if script == 'CJK' else script.title()} script"
    words = [w.lower().replace("’", "'") for w in _WORD.findall(joined)]
    if len(words) < MIN_WORDS:
        return None
    english = sum(w in STOP_WORDS for w in words)
    language, found = max(((lang, [w for w in words if w in vocab]) for lang, vocab in _WORDS.items()),
                          key=lambda x: len(x[1]))
    hits = len(found)
    return language if hits >= MIN_SHARE * len(words) and hits > 2 * english and len(set(found)) >= 2 else None


def language_note(what: str, language: str, *, plural: bool = False) -> str:
    """The caution for ``what`` ("the context", "the answer"; ``plural``: "3 of 10 contexts") read as
    ``language``."""
    return (f"{what} {'read' if plural else 'reads'} as {language}: faithwatch's models (the NLI model, the encoder, "
            "the detector) were trained and measured on English only, so do not rely on its verdicts there.")
