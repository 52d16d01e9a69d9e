"""Chat and meeting transcripts: contexts of "Name: message" turns."""

from __future__ import annotations

import re
from collections.abc import Sequence

#: a turn of a chat or meeting transcript: maybe a time ("[00:01:02]"), a speaker of one to three words (the first
#: a letter's: "Speaker 1"), a colon, the message
_TURN = re.compile(r"^\s*(?:[\[(]?\d{1,2}:\d{2}(?::\d{2})?[\])]?\s+)?"
                   r"([^\W\d_][\w.'’-]*(?: [\w.'’-]+){0,2})\s*:\s+\S")


#: what the CLI and ``/healthz`` say after "N contexts read" when contexts read as transcripts
TRANSCRIPT_NOTE = ('as a chat or meeting transcript ("Name: message" lines). On summaries of chats the detector was '
                   'measured at chance (FacEval, DialSummEval; never trained on; docs/transfer.md, "Chat summaries"): '
                   "do not rely on its verdicts there.")


def is_transcript(text: str | Sequence[str]) -> bool:
    """Whether ``text`` (or passages, read together) reads as a chat or meeting transcript: three or more lines,
    at least 80% of them turns ("Amanda: I baked cookies"), by two or more speakers, one of them speaking twice or
    more (so a record of fields, "Name: Ada / Born: 1815", is none, and neither is a list of two or more such
    records, three or more fields in the same order each time). faithwatch's detector was measured at chance on
    summaries of chats (docs/transfer.md, "Chat summaries"), so the CLI notes such contexts."""
    lines = [line for part in ([text] if isinstance(text, str) else text) for line in part.splitlines()
             if line.strip()]
    speakers = [m.group(1).casefold() for line in lines if (m := _TURN.match(line))]
    n = len(set(speakers))
    # a list of records: three or more fields, the same order each time, at least twice ("Title: … / Author: …")
    cyclic = n >= 3 and len(speakers) >= 2 * n and speakers[:-n] == speakers[n:]
    return (len(lines) >= 3 and len(speakers) >= 0.8 * len(lines) and n >= 2 and len(speakers) > n
            and not cyclic)
