"""What the proxy needs from an OpenAI chat request: the question, the RAG context, and the body to forward.

The context comes from (first match wins):

1. a ``context`` field of the request body (``extra_body={"context": ...}`` in the OpenAI client; a string or a
   list of passages). It is removed before forwarding, and when no message already holds it, it is added to the
   system message (a new one first if there is none) so that the upstream model sees what it is judged against;
2. text between the markers (default ``<context>`` and ``</context>``) in the system message or the last user
   message. The markers are forwarded unchanged.

The question is the last user message, without a marked context block. A request with neither is forwarded
unmonitored, and the answer says so.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

from faithwatch.errors import InputError
from faithwatch.text.visible import is_blank, require_text_within

DEFAULT_MARKERS = ("<context>", "</context>")
CONTEXT_HEADER = "Context:\n"
#: the fields of a chat request that the proxy reads itself, and the JSON type each must have (as OpenAI's API asks)
READ_FIELDS: dict[str, type] = {"n": int, "stream": bool, "logprobs": bool}
_TYPE_WORDS = {int: "an integer", bool: "true or false"}


@dataclass
class RagRequest:
    """A chat request split for monitoring."""

    body: dict[str, Any]  # what goes to the upstream
    question: str
    context: str | None  # None: nothing to monitor against
    source: str  # "field", "system", "user" or "none"


def message_text(message: dict[str, Any]) -> str:
    """The text of a chat message (a string, or the text parts of a content list)."""
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    raise InputError(f"message content must be a string or a list of parts, not {type(content).__name__}")


def _marked(text: str, markers: tuple[str, str]) -> tuple[str | None, str]:
    """(the marked context, the text without the marked block), or (None, text)."""
    start, end = markers
    match = re.search(re.escape(start) + r"(.*?)" + re.escape(end), text, flags=re.S)
    if not match:
        return None, text
    return match.group(1).strip(), (text[: match.start()] + text[match.end() :]).strip()


def split_request(body: dict[str, Any], markers: tuple[str, str] = DEFAULT_MARKERS) -> RagRequest:
    """Split ``body`` (an OpenAI chat request) into what to forward, the question and the context."""
    _check_read_fields(body)
    require_text_within(body, "the request")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
        raise InputError("'messages' must be a non-empty list of message objects")
    body = copy.deepcopy(body)
    users = [m for m in body["messages"] if m.get("role") == "user"]
    question = message_text(users[-1]) if users else ""
    field = body.pop("context", None)
    if field is not None:
        if isinstance(field, list) and all(isinstance(p, str) for p in field):
            field = "\n\n".join(p.strip() for p in field)
        if not isinstance(field, str) or is_blank(field):
            raise InputError("'context' must be a non-empty string or a list of strings")
        context = field.strip()
        _, question = _marked(question, markers)
        if not any(context in message_text(m) for m in body["messages"]):
            _add_to_system(body["messages"], context)
        return RagRequest(body, question, context, "field")
    for role, pool in (("system", [m for m in body["messages"] if m.get("role") == "system"]), ("user", users[-1:])):
        for message in pool:
            found, rest = _marked(message_text(message), markers)
            if found:
                if role == "user":
                    question = rest
                return RagRequest(body, question, found, role)
    return RagRequest(body, question, None, "none")


def _check_read_fields(body: dict[str, Any]) -> None:
    """Refuse a :data:`READ_FIELDS` field of the wrong type (InputError), before the proxy acts on it."""
    for name, kind in READ_FIELDS.items():
        value = body.get(name)
        if value is None:
            continue
        if kind is int:  # JSON has one number type: 2.0 is an integer
            ok = isinstance(value, int | float) and not isinstance(value, bool) and float(value).is_integer()
        else:
            ok = isinstance(value, kind)
        if not ok:
            raise InputError(f"'{name}' must be {_TYPE_WORDS[kind]}, got {value!r}")


def _add_to_system(messages: list[dict[str, Any]], context: str) -> None:
    block = CONTEXT_HEADER + context
    for message in messages:
        if message.get("role") == "system" and isinstance(message.get("content"), str):
            message["content"] = message["content"].rstrip() + "\n\n" + block
            return
    messages.insert(0, {"role": "system", "content": block})
