"""Markup and framing: answer preambles, list markers, citations, emphasis, framing lines, and the words of what a user
asked."""

from __future__ import annotations

import re
from functools import lru_cache

from faithwatch.text.sentences import WORDISH, split_sentences

_SOURCE_NOUN = (r"(?:passages?|context|texts?|information|documents?|articles?|sources?|search\s+results?"
                r"|references?|excerpts?)")
#: one answer preamble at the start of a sentence: words about the task, not the world
_PREAMBLE_RE = re.compile(
    r"\s*(?:"
    r"(?:sure|certainly|of\s+course|okay)\s*[!,.]\s*"  # "Sure! ..."
    r"|(?:based\s+(?:on|upon)|according\s+to|as\s+(?:stated|mentioned|described)\s+in|from|in)\s+"
    r"(?:(?:the|this|these|my)\s+)?(?:(?:given|provided|above|retrieved|available)\s+)?" + _SOURCE_NOUN
    + r"(?:\s+\d+(?:\s*(?:,|and|&)\s*\d+)*)?(?:\s+(?:provided|given|above))?"  # "Based on passage 3, ..."
    r"(?:\s+(?:provided|given|found|presented)\s+in\s+(?:the\s+)?" + _SOURCE_NOUN + r")?\s*[,:]\s*"
    r"|(?:the\s+)?(?:short\s+|final\s+|correct\s+)?answer(?:\s+to\s+(?:the|your|this)\s+question)?\s+is\s*:?\s+"
    r"|(?:the\s+)?(?:short\s+|final\s+)?answer\s*:\s*"  # "Answer: 42"
    r"|(?:the\s+)?(?:passage|context|text|article|document)s?\s+(?:says?|states?|mentions?|indicates?)\s+that\s+"
    r")",
    re.IGNORECASE,
)


def preamble_end(sentence: str) -> int:
    """Where ``sentence``'s claim starts: the end of the answer preambles it opens with ("The answer is Japan." -> 14,
    "Based on the given passages, X" -> the start of X); 0 when it has none or is nothing but a preamble."""
    end = 0
    while (m := _PREAMBLE_RE.match(sentence, end)) and WORDISH.search(sentence, m.end()):
        end = m.end()
    return end


#: the rule of :func:`strip_markup`: part of the text signals' versions and of the text-feature cache keys
MARKUP_RULE = "markup7"
#: a list marker or heading mark opening a sentence ("1. ", "2) ", "(3) ", "- ", "* ", "• ", "## ")
_LEAD_MARK = re.compile(r"\s*(?:(?:[-*•]|\d{1,3}[.)]|\(\d{1,3}\))\s+|#{1,6}\s+)")
_SOURCE = r"(?:sources?|docs?|documents?|passages?|refs?|references?|contexts?)"
_NUMBERS = r"#?\d{1,3}(?:\s*(?:[,&–-]|and)\s*#?\d{1,3})*"
#: a citation marker and the space before it ("[1]", "[1, 2]", "[1-3]", "[^1]", "[Doc 2]", "【1】"; rule 3: "(Passage
#: 1)", "(Source: Doc 3)", "(see passage 2)"; superscript footnote digits are not read: docs/transfer.md, rule 2)
_CITATION = re.compile(
    r"\s*(?:\[(?:\^?\d{1,3}(?:\s*[,–-]\s*\d{1,3})*|(?:doc(?:ument)?|source|passage|ref(?:erence)?|context)\s*#?\d{1,3})\]"
    r"|【\d{1,3}(?:†[^】]*)?】"
    r"|\((?:see\s+)?" + _SOURCE + r"\s*:?\s*(?:" + _SOURCE + r"\s*)?" + _NUMBERS + r"\))", re.IGNORECASE)
#: a Markdown link: its text stays, its target goes (rule 3)
_LINK = re.compile(r"\[([^\[\]]+)\]\((?:https?://|www\.)[^)\s]*\)")
#: emphasis marks around a phrase ("**x**", "__x__", "`x`"); a single "*" is left alone ("s***")
_EMPHASIS = re.compile(r"\*\*(?=[^\s*])(.+?)(?<=[^\s*])\*\*|(?<![\w_])__(?=[^\s_])(.+?)(?<=[^\s_])__(?![\w_])"
                       r"|`(?=[^\s`])([^`]+?)(?<=[^\s`])`")


#: a connective opening a sentence, and its comma ("In summary, ", "Overall, "): markup rule 4
_CONNECTIVE = re.compile(r"\s*(?:in\s+summary|in\s+conclusion|to\s+summari[sz]e|to\s+sum\s+up|in\s+short|overall"
                         r"|additionally|furthermore|moreover|also|however|finally|in\s+addition|besides|therefore"
                         r"|thus)\s*,\s+", re.IGNORECASE)


def _unemphasise(text: str) -> str:
    """``text`` with its emphasis marks ("**x**", "__x__") removed."""
    return _EMPHASIS.sub(lambda m: next(g for g in m.groups() if g is not None), text)


def strip_markup(sentence: str) -> str:
    """``sentence`` as the text signals read it (markup rules 1, 3, 4 and 7): without a leading list marker or
    heading mark, citation markers ("[1]", "(Passage 2)"), emphasis marks ("**x**") and link targets, which are
    formatting, and without a leading presentation ("Here is the answer: ") or connective ("In summary, ",
    "Overall, "), which relate the sentence to the answer or to others: none are words of the claim ("1. In
    summary, built in 1889 [2]." -> "Built in 1889."). A sentence that is nothing but these is kept as it is."""
    out = strip_marks(sentence)
    shown = _PRESENTED.match(out)  # "Here is the answer: " before the claim (rule 7)
    if shown and WORDISH.search(out, shown.end()):
        rest = out[shown.end():]
        out = rest[:1].upper() + rest[1:]
    lead = _CONNECTIVE.match(out)
    if lead and WORDISH.search(out, lead.end()):
        rest = out[lead.end():]
        out = rest[:1].upper() + rest[1:]
    return out


def strip_marks(sentence: str) -> str:
    """``sentence`` without its formatting (markup rules 1 and 3; :func:`strip_markup` without rule 4)."""
    out = _LINK.sub(r"\1", sentence)
    out = _CITATION.sub("", out)
    out = _unemphasise(out)
    lead = _LEAD_MARK.match(out)
    if lead and WORDISH.search(out, lead.end()):
        out = out[lead.end():]
    return out if out.strip() else sentence


#: the rule of :func:`is_framing`: part of the monitor's scoring config (detectors.framing)
FRAMING_RULE = "framing9"
#: how a framing line presents what follows ("Here is a summary of the article:"), after at most one introductory
#: phrase and its comma ("Based on the provided structured data, here is ..."; rule 4)
_PRESENTATION = re.compile(r"(?:[^,;:.!?]{1,80},\s+)?(?:(?:so|therefore|in\s+summary)\s*,?\s+)?"
                           r"(?:here\s+(?:is|are)|here['’]s|below\s+(?:is|are)|the\s+following\s+(?:is|are))\b",
                           re.IGNORECASE)
#: a presentation, what it presents and its ":", before a claim on the same sentence ("Here is the answer: "; rule 7)
_PRESENTED = re.compile(_PRESENTATION.pattern + r"[^:.!?]{0,80}:\s+", re.IGNORECASE)
#: a framing line's end: "as follows:", "these steps:", "the following:" and up to four words without a digit
#: ("... in the following ways:"; rule 4)
_FOLLOWS = re.compile(r"(?:as\s+follows|the\s+following(?:\s+[^\s\d:]+){0,4}|these\s+steps)\s*:$", re.IGNORECASE)
#: a closing line addressed to the user ("I hope this helps!", "Let me know if ..."); framing rule 2
_CLOSER = re.compile(r"(?:i\s+)?hope\s+(?:this|that|it)\s+helps|let\s+me\s+know\s+if|feel\s+free\s+to"
                     r"|if\s+you\s+have\s+any\s+(?:(?:other|more|further|additional)\s+)?questions"
                     r"|is\s+there\s+anything\s+else|(?:happy|glad)\s+to\s+help", re.IGNORECASE)
#: a pleasantry alone ("Sure!", "Great question!"), or two joined by a comma; framing rule 8
_PLEASANTRY_WORD = (r"(?:(?:that['’]?s\s+a\s+|what\s+a\s+)?(?:great|good|excellent|interesting)\s+question"
                    r"|sure(?:\s+thing)?|certainly|of\s+course|absolutely|definitely|okay|ok|alright|all\s+right|got\s+it|great"
                    r"|no\s+problem|thanks|thank\s+you(?:\s+(?:so|very)\s+much)?|you['’]re\s+welcome|hello"
                    r"|hi(?:\s+there)?)")
_PLEASANTRY = re.compile(_PLEASANTRY_WORD + r"(?:\s*,\s*" + _PLEASANTRY_WORD + r")?\s*[!.]*", re.IGNORECASE)
#: a Markdown heading ("## Key facts"): a title, not a claim; framing rule 3
_HEADING = re.compile(r"\s*#{1,6}\s+\S")
#: a Markdown table's separator row ("|---|:---:|") and any row ("| a | b |"); framing rule 5
_TABLE_SEPARATOR = re.compile(r"\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)+\|?\s*")
_TABLE_ROW = re.compile(r"\s*\|.*\|\s*")
#: a sentence of footnote digits only ("¹" after the stop, split off by the splitter); framing rule 6
_FOOTNOTE = re.compile(r"\s*[\u00b9\u00b2\u00b3\u2070\u2074-\u2079][\s\u00b9\u00b2\u00b3\u2070\u2074-\u2079]*")

#: a list of sources (framing rule 7): its heading ("Sources:"), a line of citations ("Source: Passage 1") and a
#: bracketed entry ("[1] Eiffel Tower - Wikipedia")
_SOURCES_WORD = r"(?:sources?|references?|citations?|bibliography|works\s+cited)(?:\s+used)?"
_SOURCES_HEAD = re.compile(_SOURCES_WORD + r"\s*:?", re.IGNORECASE)
_REF = r"\[?\s*(?:(?:passages?|documents?|docs?|sources?|refs?|references?)\s+)?#?\d{1,3}\s*\]?"
_SOURCES_LINE = re.compile(_SOURCES_WORD + r"\s*:\s*" + _REF + r"(?:\s*(?:,\s*and|,|;|&|and)\s*" + _REF + r")*\s*\.?",
                           re.IGNORECASE)
_ENTRY = re.compile(r"\[\d{1,3}\]\s+\S")
_URL = re.compile(r"https?://|www\.", re.IGNORECASE)


def _sources(sentence: str) -> bool:
    """A sources heading, a line of citations or a bracketed reference entry (framing rule 7)."""
    text = _unemphasise(sentence).strip()
    if _SOURCES_HEAD.fullmatch(text) or _SOURCES_LINE.fullmatch(text):
        return True
    return bool(_ENTRY.match(text)) and (bool(_URL.search(text)) or not text.endswith((".", "!", "?")))


def _table_header(sentence: str) -> bool:
    """A table's header: rows ending in a separator row, or a separator row alone (framing rule 5)."""
    lines = [x for x in sentence.strip().splitlines() if x.strip()]
    return bool(lines) and bool(_TABLE_SEPARATOR.fullmatch(lines[-1])) and all(
        _TABLE_ROW.fullmatch(x) for x in lines[:-1])


@lru_cache(maxsize=1 << 15)  # an evaluation asks again for every sentence of its table at every fit
def is_framing(sentence: str) -> bool:
    """Whether ``sentence`` is a framing line (docs/transfer.md, "Framing lines"), which makes no claim about the
    world: a line about the answer itself that ends in ":" and presents what follows ("Here is a concise summary
    of the passage:", "Based on the given passages, here are the steps:", "To cook brats, follow these steps:";
    rule 1; also after an introductory phrase, "Based on the structured data, here is an overview:", and ending
    "… the following methods:": rule 4), or a closing line addressed to the user ("I hope this helps!", "Let me know
    if you have any other questions."; rule 2), a Markdown heading ("## Key facts"; rule 3), a table's header row
    over its separator row ("|---|---|"; rule 5), footnote digits alone ("¹"; rule 6), or part of a list of sources
    ("Sources:", "Source: Passage 1", "[1] Eiffel Tower - Wikipedia"; rule 7), or a pleasantry alone ("Sure!",
    "Great question!"; rule 8), or a line without a word ("...", "—", "!!!"; rule 9). Other headings
    ("Ingredients:") and lines about a passage ("The passage describes three groups:") are none."""
    if sentence.strip() and not WORDISH.search(sentence):  # a leading "..." (later ones join the sentence before)
        return True
    if _HEADING.match(sentence) or _table_header(sentence) or _FOOTNOTE.fullmatch(sentence) or _sources(sentence):
        return True
    text = strip_markup(sentence).strip()
    if _CLOSER.match(text) or _PLEASANTRY.fullmatch(text):
        return True
    if not text.endswith(":"):
        return False
    text = text[preamble_end(text):]
    return bool(_PRESENTATION.match(text) or _FOLLOWS.search(text))


def strip_preamble(sentence: str) -> str:
    """``sentence`` from :func:`preamble_end` on ("The answer is Japan." -> "Japan."): the claim that the surface
    checks read."""
    return sentence[preamble_end(sentence):]


def asked(text: str) -> str:
    """What ``text`` asks: its sentences that end in "?"; without one, the text if it is one sentence (a search
    query: "how to fold a quilt"), else nothing (a dialogue history or an instruction that asks no question)."""
    sentences = split_sentences(text) if text and text.strip() else []
    questions = [x for x in sentences if x.rstrip().endswith("?")]
    return " ".join(questions) if questions else (sentences[0] if len(sentences) == 1 else "")


#: how an instruction to summarise starts ("Write a short summary of ...", "Summarize the article."): its words
#: ("write", "short", "news") are the task's, so they lend the answer no support
_SUMMARY_INSTRUCTION = re.compile(r"\s*(?:write|summari[sz]e)\b", re.IGNORECASE)


@lru_cache(maxsize=256)
def question_support(question: str) -> str:
    """The words of ``question`` that an answer may reuse as given (lexical scorer version 6): what it
    :func:`asked` ("What is the main ingredient of tofu?": "main ingredient" is the user's, not a claim the context
    must hold); nothing for an instruction to summarise."""
    if not question or _SUMMARY_INSTRUCTION.match(question):
        return ""
    return asked(question)
