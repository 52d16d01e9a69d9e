"""The input records of ``faithwatch score`` / ``check`` and the server (pydantic): one shape each, shared.

Types are checked by the model (an id is a string or an integer, text fields are strings); :meth:`problems` adds
the content checks (no blank text), so a batch reports each bad record and goes on, and the server answers a bad
record with its own error instead of failing the whole request.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, StrictInt, StrictStr, ValidationError, model_validator

from faithwatch.tasks import summary_defaults
from faithwatch.text.visible import is_blank, not_text_within, require_text


def _text_id(value: str) -> str:
    require_text(value, "'id'")
    return value


#: an id as given: a string (of text: it is echoed) or an integer (never a float, bool or object)
RecordId = Annotated[StrictStr, AfterValidator(_text_id)] | StrictInt


def _blank(value: Any) -> bool:
    return isinstance(value, str) and is_blank(value)


def _not_text(record: BaseModel, fields: tuple[str, ...]) -> list[str]:
    """Why a record's text fields (a string or a list of them) are no Unicode text, one entry per field."""
    return [wrong for k in fields if (wrong := not_text_within(getattr(record, k), f"'{k}'"))]


class ScoreRecord(BaseModel):
    """One (question, context, response) to score by teacher forcing; other keys are ignored. Without a question
    (left out or null), the response is scored as a summary of the context: the question and the default
    instruction are those of the summarization sets (:func:`~faithwatch.tasks.summary_defaults`)."""

    model_config = ConfigDict(extra="ignore")

    id: RecordId | None = None
    question: StrictStr | None = None
    context: StrictStr
    response: StrictStr
    instruction: StrictStr | None = None

    @model_validator(mode="after")
    def _summary_without_question(self) -> ScoreRecord:
        self.question, self.instruction = summary_defaults(self.question, self.instruction)
        return self

    def problems(self) -> list[str]:
        """What makes this record unscorable (blank text), in words."""
        hint = {"question": " (leave it out to score a summary of the context)",
                "instruction": " (leave it out for the default)"}
        fields = ("context", "question", "response", "instruction")
        return [f"'{k}' must be a non-empty string{hint.get(k, '')}" for k in fields if _blank(getattr(self, k))] + \
            _not_text(self, fields)

    def fields(self) -> dict[str, Any]:
        """The record's question, context, response and instruction, the summary defaults filled in."""
        return {"question": self.question, "context": self.context, "response": self.response,
                "instruction": self.instruction}


class CheckRecord(BaseModel):
    """One response to check claim by claim against one passage or several; other keys are ignored."""

    model_config = ConfigDict(extra="ignore")

    id: RecordId | None = None
    response: StrictStr
    context: StrictStr | list[StrictStr]
    question: StrictStr | None = None

    def problems(self) -> list[str]:
        """What makes this record uncheckable (blank response or passages), in words."""
        out = ["'response' must be a non-empty string"] if _blank(self.response) else []
        if _blank(self.question):
            out.append("'question' must be a non-empty string (leave it out if there is none)")
        if isinstance(self.context, str):
            if _blank(self.context):
                out.append("'context' must be a non-empty string or a list of them")
        elif not self.context:
            out.append("'context' must be a non-empty string or a non-empty list of strings")
        else:
            bad = [i for i, c in enumerate(self.context) if _blank(c)]
            if bad:
                where = ", ".join(map(str, bad[:5])) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
                out.append(f"'context' has {len(bad)} blank passage{'s' if len(bad) > 1 else ''} (list index "
                           f"{where}): give each passage some text, or leave it out")
        return out + _not_text(self, ("response", "question", "context"))


#: what a record's ``context`` must be, by record type
_CONTEXT_TYPE = {"ScoreRecord": "a string (one context: join several passages into one string)",
                 "CheckRecord": "a string or a list of strings"}


def explain(exc: ValidationError) -> list[str]:
    """Short messages for a record's validation errors (``'response' is missing``, ``'id' must be ...``)."""
    context_type = _CONTEXT_TYPE.get(exc.title, "a string")
    out = []
    for error in exc.errors():
        field = ".".join(str(p) for p in error["loc"][:1]) or "record"
        if error["type"] == "missing":
            out.append(f"'{field}' is missing")
        elif field == "id" and error["type"] == "value_error":  # a string that is no text (_text_id)
            out.append(str(error["ctx"]["error"]))
        elif field == "id":
            if not any(e["loc"][:1] == ("id",) and e["type"] == "value_error" for e in exc.errors()):
                out.append("'id' must be a string or an integer")
        elif error["type"] in ("string_type", "list_type"):
            out.append(f"'{field}' must be {'a string' if field != 'context' else context_type}")
        else:
            out.append(f"'{field}': {error['msg']}")
    return list(dict.fromkeys(out))


def parse(model: type[ScoreRecord] | type[CheckRecord], data: Any) -> tuple[Any, list[str]]:
    """``(record, [])`` for a good record, ``(None or the record, problems)`` otherwise."""
    try:
        record = model.model_validate(data)
    except ValidationError as exc:
        return None, explain(exc)
    return record, record.problems()
