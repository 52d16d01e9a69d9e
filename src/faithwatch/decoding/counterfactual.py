"""Counterfactual-context QA: does an answer follow the context, or the model's memory?

In the spirit of F-100-anti (paper 000 §4.1), every item pairs a question with a short context that
*contradicts* a well-known fact ("The Eiffel Tower ... in Lyon"). A faithful answer follows the context
("Lyon"); an answer driven by parametric knowledge states the well-known fact ("Paris").

Items (one JSON object a line)::

    {"id": "eiffel-tower-city", "question": "...", "context": "...",
     "context_answers": ["Lyon"], "common_answers": ["Paris"], "topic": "geography"}

``context_answers`` are the answer according to the context with simple variants (every one must occur in
the context); ``common_answers`` the common-knowledge answer(s) (none may occur in the context). Both are
optional together: an item without them is a plain prompt (``{"id", "question", "context"}``), for which
only faithfulness, informativeness, abstention and length are measured. ``id`` defaults to ``line-<n>``.

A question may ask for several facts ("which city, and which year?"): ``context_answers`` is then a list of
alias groups, one per fact (``[["Lyon"], ["1921"]]``), and success needs every group. A flat list is one
group. Items with ``"kind": "agree"`` have a context that *agrees* with common knowledge (``common_answers``
is empty): they check that a strategy does no harm when context and memory agree, and are reported apart.
Items with ``"kind": "unanswerable"`` have a context that does not hold the asked fact at all (no
``context_answers``; ``common_answers``, optional, the fact as the model may remember it, must not occur in the
context): the faithful answer there is to decline, and they are reported apart too.

The packaged set (``load_items("counterfactual")``) has hand-written items over geography, history,
science, people, dates, numbers, sports, arts, literature, technology and culture: counterfactual items
(some asking for two or three facts) and agreeing items.

Matching (:func:`mentions`)
---------------------------
Answer and alias are normalised by :func:`normalize`: Unicode NFKD with accents removed, case folded,
curly quotes made straight, hyphens and dashes read as spaces, thousands separators dropped between digits
(``"9,312"`` -> ``"9312"``), number words read as digits (``zero`` to ``ninety-nine``: ``"seven"`` -> ``"7"``,
``"twenty-one"`` -> ``"21"``) and whitespace collapsed. An alias then matches only as whole words: it may
not be preceded or followed by a letter, digit or underscore (an English plural ``-s``/``-es`` after an
alias ending in a letter is accepted), and a number may not continue as a decimal (``"42"`` is not in
``"1.42"`` nor ``"42.5"``... but ``"42"`` is in ``"42."``). A unit written straight after a number counts as
a separate word (``"40.5"`` is in ``"40.5kilometers"``), an ordinal suffix does not (``"6"`` is not in
``"6th"``). So ``"Lyon"`` is found in ``"Lyon's tower"``,
``"Niger"`` is not found in ``"Nigeria"`` and ``"1925"`` is not found in ``"19250"``.

Outcome of an answer (:func:`judge`)
------------------------------------
* **abstained** - the strategy refused (``DecodingResult.refused``, or the answer is the standard
  :data:`~faithwatch.decoding.types.REFUSAL`); never a success, counted in the abstention rate;
* **success** - not abstained, mentions an alias of every context-answer group and no common answer
  (:func:`success`);
* **common** - mentions a common answer (the parametric fact overrode the context), with or without
  a context answer.

On an **unanswerable** item the outcome is **declined** when the strategy refused or the answer says that the
context does not give the fact (:func:`declines`: "The passage does not say ...", "... is not mentioned",
"There is no information about ..."), and a success is exactly that; any other answer fills the gap from memory
or from the context's other facts (``common`` says whether it stated the remembered fact).
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from faithwatch.decoding.types import REFUSAL
from faithwatch.errors import InputError
from faithwatch.store import read_lines
from faithwatch.text import ORDINAL_SUFFIX_RE, SMALL_NUMBER_WORDS, TENS, WORD_VALUES
from faithwatch.text.visible import is_blank, require_text_within

#: the name of the packaged counterfactual set (``--data counterfactual``)
PACKAGED = "counterfactual"
#: its file inside the ``faithwatch.data`` package
PACKAGED_FILE = "counterfactual_qa.jsonl"

_COMPOUND = re.compile(r"\b(" + "|".join(TENS) + r") (" + "|".join(SMALL_NUMBER_WORDS[1:10]) + r")\b")
_SINGLE = re.compile(r"\b(" + "|".join(sorted(WORD_VALUES, key=len, reverse=True)) + r")\b")
_DASHES = re.compile(r"[-\u2010\u2011\u2012\u2013\u2014\u2015\u2212]")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def normalize(text: str) -> str:
    """The form answers and aliases are compared in (see the module doc)."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).casefold().translate(_QUOTES)
    text = _DASHES.sub(" ", text)
    text = _THOUSANDS.sub("", text)
    text = re.sub(r"\s+", " ", text).strip()
    text = _COMPOUND.sub(lambda m: str(TENS[m.group(1)] + WORD_VALUES[m.group(2)]), text)
    return _SINGLE.sub(lambda m: str(WORD_VALUES[m.group(1)]), text)


def _pattern(alias: str) -> re.Pattern[str]:
    norm = normalize(alias)
    if not norm:
        raise InputError(f"answer alias {alias!r} is empty after normalisation")
    left = r"(?<!\w)" + (r"(?<!\d[.,])" if norm[0].isdigit() else "")
    plural = "(?:e?s)?" if norm[-1].isalpha() else ""
    # after a number, a unit may follow without a space ("40.5km"), an ordinal suffix may not ("6th")
    right = rf"(?!\d)(?!_)(?!(?:{ORDINAL_SUFFIX_RE})\b)(?![.,]\d)" if norm[-1].isdigit() else r"(?!\w)"
    return re.compile(left + re.escape(norm) + plural + right)


def mentions(text: str, alias: str) -> bool:
    """Whether ``text`` states ``alias`` (normalised, whole words; see the module doc)."""
    return _pattern(alias).search(normalize(text)) is not None


def mentions_any(text: str, aliases: Iterable[str]) -> bool:
    """Whether ``text`` states any of ``aliases``."""
    norm = normalize(text)
    return any(_pattern(a).search(norm) is not None for a in aliases)


def is_refusal(answer: str) -> bool:
    """Whether ``answer`` is the standard refusal of the abstaining strategies."""
    return normalize(answer) == normalize(REFUSAL)


_SOURCE = r"(?:context|passage|passages|text|article|document|documents|source|sources|information|it|this)"
_TELL = r"(?:say|state|mention|specify|give|provide|include|contain|tell|indicate|list|reveal|note)"
_DECLINE = re.compile(
    rf"\b{_SOURCE}\s+(?:\w+\s+)?(?:does|do|did)\s*(?:not|n't|nt)\s+(?:\w+\s+)?{_TELL}"
    r"|\b(?:is|are|was|were)\s*(?:not|n't|nt)\s+(?:\w+\s+)?(?:mentioned|stated|specified|given|provided|"
    r"included|listed|known|available|clear|said)\b"
    r"|\bno\s+(?:information|mention|details?|data|indication)\b"
    r"|\b(?:cannot|can't|cant|can not|unable to)\s+(?:be\s+)?(?:determined?|answered|answer|found|find|tell|say)\b"
    r"|\b(?:i|we)\s+(?:do\s*not|don't|dont)\s+know\b",
    re.IGNORECASE)


def declines(answer: str) -> bool:
    """Whether ``answer`` declines to give the fact: a refusal, or a statement that the context does not give it
    ("The passage does not mention ...", "There is no information about ...", "... cannot be determined ...")."""
    return is_refusal(answer) or _DECLINE.search(normalize(answer)) is not None


#: item kinds: the context contradicts common knowledge, agrees with it, or does not hold the asked fact
KINDS = ("counterfactual", "agree", "unanswerable")


@dataclass(frozen=True)
class QAItem:
    """A question with its context; with answers, a judged item (counterfactual or agreeing)."""

    id: str
    question: str
    context: str
    context_answers: tuple[tuple[str, ...], ...] = ()  # one group of aliases per asked fact
    common_answers: tuple[str, ...] = ()
    topic: str = ""
    line: int = 0  # line of the source file (0 when built in code)
    kind: str = "counterfactual"

    @property
    def is_counterfactual(self) -> bool:
        """Whether the item has answers (success can be judged)."""
        return bool(self.context_answers)

    @property
    def agrees(self) -> bool:
        """Whether the context agrees with common knowledge (a do-no-harm item)."""
        return self.kind == "agree"

    @property
    def unanswerable(self) -> bool:
        """Whether the context does not hold the asked fact (the faithful answer declines)."""
        return self.kind == "unanswerable"

    def _answers_json(self) -> list:
        groups = [list(g) for g in self.context_answers]
        return groups[0] if len(groups) == 1 else groups

    @property
    def fingerprint(self) -> str:
        """A short hash of the question, context and answers (a cached result is only reused for the same)."""
        blob = json.dumps([self.question, self.context, self._answers_json(), list(self.common_answers)]
                          + ([self.kind] if self.kind != "counterfactual" else []))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        """The item as a JSON line (answers only for a judged item)."""
        out: dict[str, Any] = {"id": self.id, "question": self.question, "context": self.context}
        if self.is_counterfactual:
            out["context_answers"] = self._answers_json()
        if self.is_counterfactual or self.common_answers:
            out["common_answers"] = list(self.common_answers)
        if self.topic:
            out["topic"] = self.topic
        if self.kind != "counterfactual":
            out["kind"] = self.kind
        return out


@dataclass(frozen=True)
class AnswerOutcome:
    """How an answer relates to a counterfactual item (see the module doc)."""

    abstained: bool
    context_hit: bool  # states a context answer
    common_hit: bool  # states a common-knowledge answer
    declined: bool = False  # refused or said that the context does not give the fact (:func:`declines`)
    unanswerable: bool = False  # the item's context does not hold the fact

    @property
    def success(self) -> bool:
        """Answered with the context's answer and without the common-knowledge one; on an unanswerable item,
        declined."""
        if self.unanswerable:
            return self.declined
        return not self.abstained and self.context_hit and not self.common_hit


def _need_answers(item: QAItem) -> None:
    if not item.is_counterfactual and not item.unanswerable:
        raise InputError(f"item {item.id!r} has no context_answers: success cannot be judged for a plain prompt")


def judge(answer: str, item: QAItem, *, refused: bool = False) -> AnswerOutcome:
    """The outcome of ``answer`` on a counterfactual ``item``; ``refused``: the strategy abstained."""
    _need_answers(item)
    abstained = refused or is_refusal(answer)
    if item.unanswerable:
        declined = abstained or declines(answer)
        return AnswerOutcome(abstained, False, not declined and mentions_any(answer, item.common_answers),
                             declined, True)
    if abstained:
        return AnswerOutcome(True, False, False)
    context_hit = all(mentions_any(answer, group) for group in item.context_answers)
    return AnswerOutcome(False, context_hit, mentions_any(answer, item.common_answers))


def success(answer: str, item: QAItem, *, refused: bool = False) -> bool:
    """The answer states every context fact and no common answer (a refusal is never a success)."""
    return judge(answer, item, refused=refused).success


# ---- loading ---------------------------------------------------------------------------------------------


def packaged_path() -> Path:
    """The path of the packaged counterfactual set."""
    path = Path(str(resources.files("faithwatch.data").joinpath(PACKAGED_FILE)))
    if not path.is_file():
        raise InputError(f"the packaged data set {PACKAGED_FILE} is missing from faithwatch.data "
                         "(is it listed in the package data?)")
    return path


def _strings(value: Any, field: str, *, allow_empty: bool = False) -> tuple[str, ...]:
    if not isinstance(value, list) or (not value and not allow_empty):
        raise ValueError(f"'{field}' must be a non-empty list of strings")
    out = []
    for v in value:
        if not isinstance(v, str) or not normalize(v):
            raise ValueError(f"'{field}' must hold non-empty strings, got {v!r}")
        out.append(v.strip())
    return tuple(out)


def _groups(value: Any) -> tuple[tuple[str, ...], ...]:
    """``context_answers``: a list of aliases (one fact) or a list of alias lists (one per fact)."""
    if isinstance(value, list) and value and all(isinstance(v, list) for v in value):
        return tuple(_strings(v, "context_answers") for v in value)
    if isinstance(value, list) and any(isinstance(v, list) for v in value):
        raise ValueError("'context_answers' must be a list of strings or a list of lists of strings, not a mix")
    return (_strings(value, "context_answers"),)


def parse_item(data: Any, line: int = 0) -> QAItem:
    """Validate one record; raises ``ValueError`` with the problem (without the line)."""
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    require_text_within(data, "the record")  # JSON's "\ud800": no model or report takes it
    rid = data.get("id")
    if rid is None:
        rid = f"line-{line}"
    elif isinstance(rid, bool) or not isinstance(rid, (str, int)) or not str(rid).strip():
        raise ValueError("'id' must be a non-empty string or an integer")
    for key in ("question", "context"):
        if not isinstance(data.get(key), str) or is_blank(data[key]):
            raise ValueError(f"'{key}' must be a non-empty string")
    topic = data.get("topic", "")
    if not isinstance(topic, str):
        raise ValueError("'topic' must be a string")
    kind = data.get("kind", "counterfactual")
    if kind not in KINDS:
        raise ValueError(f"'kind' must be one of {', '.join(KINDS)}, got {kind!r}")
    if kind == "unanswerable":
        return _unanswerable(data, str(rid).strip(), topic.strip(), line)
    has = [k for k in ("context_answers", "common_answers") if data.get(k) is not None]
    groups: tuple[tuple[str, ...], ...] = ()
    com_ans: tuple[str, ...] = ()
    if has:
        if len(has) == 1:
            raise ValueError("'context_answers' and 'common_answers' go together: give both or neither")
        groups = _groups(data["context_answers"])
        com_ans = _strings(data["common_answers"], "common_answers", allow_empty=kind == "agree")
        if kind == "agree" and com_ans:
            raise ValueError("an 'agree' item's context states the common answer: leave 'common_answers' empty")
        context = data["context"]
        missing = [a for g in groups for a in g if not mentions(context, a)]
        if missing:
            raise ValueError(f"context answer(s) {missing} do not occur in the context (every context answer "
                             "must be stated there)")
        present = [a for a in com_ans if mentions(context, a)]
        if present:
            raise ValueError(f"common answer(s) {present} occur in the context: the context must contradict them")
    elif kind == "agree":
        raise ValueError("an 'agree' item needs 'context_answers'")
    return QAItem(str(rid).strip(), data["question"].strip(), data["context"].strip(), groups, com_ans,
                  topic.strip(), line, kind)


def _unanswerable(data: dict, rid: str, topic: str, line: int) -> QAItem:
    if data.get("context_answers") is not None:
        raise ValueError("an 'unanswerable' item's context does not hold the answer: leave out 'context_answers'")
    com_ans = _strings(data.get("common_answers", []), "common_answers", allow_empty=True)
    present = [a for a in com_ans if mentions(data["context"], a)]
    if present:
        raise ValueError(f"common answer(s) {present} occur in the context: an unanswerable item's context must "
                         "not hold the answer")
    return QAItem(rid, data["question"].strip(), data["context"].strip(), (), com_ans, topic, line, "unanswerable")


def is_packaged(source: str | Path) -> bool:
    """Whether ``source`` is the packaged set: its name, or a file with the same content (a copy, a path to it)."""
    if str(source) == PACKAGED:
        return True
    path = Path(source)
    try:
        return path.is_file() and path.read_bytes() == packaged_path().read_bytes()
    except (OSError, InputError):
        return False


def load_items(source: str | Path, *, require_answers: bool = False) -> list[QAItem]:
    """Items from ``"counterfactual"`` (the packaged set) or a JSONL file.

    Raises :class:`InputError` naming the file and line of the first bad record, for duplicate ids, an
    empty file, or (``require_answers``) a plain prompt without answers.
    """
    path = packaged_path() if str(source) == PACKAGED else Path(source)
    if not path.is_file():
        raise InputError(f"data file not found: {path} (use '{PACKAGED}' for the packaged counterfactual set)")
    items: list[QAItem] = []
    seen: dict[str, int] = {}
    for line_no, line in enumerate(read_lines(path, "data file"), start=1):
        if not line.strip():
            continue
        try:
            item = parse_item(json.loads(line), line_no)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}, line {line_no}: invalid JSON: {exc.msg} at column {exc.colno}") from None
        except ValueError as exc:
            raise InputError(f"{path}, line {line_no}: {exc}") from None
        if require_answers and not item.is_counterfactual:
            raise InputError(f"{path}, line {line_no}: 'context_answers' and 'common_answers' are required")
        if item.id in seen:
            raise InputError(f"{path}, line {line_no}: id {item.id!r} is already used on line {seen[item.id]}")
        seen[item.id] = line_no
        items.append(item)
    if not items:
        raise InputError(f"{path} holds no items")
    return items


def load_counterfactual(path: str | Path | None = None) -> list[QAItem]:
    """The packaged counterfactual set (or a file in its format, every item with answers)."""
    return load_items(PACKAGED if path is None else path, require_answers=True)


def topics(items: Sequence[QAItem]) -> list[str]:
    """The distinct topics, in order of first appearance."""
    return list(dict.fromkeys(i.topic for i in items if i.topic))
