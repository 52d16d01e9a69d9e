"""Visible text: whether a string says anything a reader could see."""

from __future__ import annotations

import unicodedata
from typing import Any

from faithwatch.errors import InputError

#: Unicode categories that show nothing: controls, format marks (zero-width space, byte-order mark, joiners) and
#: separators
INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp"})


def is_blank(text: str) -> bool:
    """Whether ``text`` has no visible character: empty, whitespace, or only controls and format marks such as a
    zero-width space or a byte-order mark (``str.strip`` keeps those, so such text would pass for non-empty)."""
    return all(ch.isspace() or unicodedata.category(ch) in INVISIBLE_CATEGORIES for ch in text)


def not_text(text: str) -> str | None:
    """Why ``text`` is no Unicode text, or None: a lone surrogate (U+D800 to U+DFFF) is no character, and no
    model, tokenizer or UTF-8 writer takes it. JSON's ``"\\ud800"`` escape without its pair decodes to one, and so
    do bytes that are not UTF-8 read with ``surrogateescape`` (a command-line argument)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (f"holds a lone surrogate U+{ord(text[exc.start]):04X} at character {exc.start}, which is no "
                "character (an unpaired JSON escape such as \\ud800, or bytes that are not UTF-8)")
    return None


def escaped(text: str) -> str:
    """``text`` with each lone surrogate written as its escape (``\\ud800``), so that it can be echoed as UTF-8."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8") if not_text(text) else text


def not_text_within(value: Any, where: str) -> str | None:
    """Why a JSON value (``where``: what it is, e.g. "the request") holds something that is no Unicode text (see
    :func:`not_text`), naming the top-level field, or None: for values that are echoed or forwarded whole."""
    if isinstance(value, str):
        return f"{where} {not_text(value)}" if not_text(value) else None
    items: list[tuple[str | None, Any]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and not_text(key):
                return f"a key of {where} {not_text(key)}"
            items.append((key, item))
    elif isinstance(value, list):
        items = [(None, item) for item in value]
    for key, item in items:
        inner = f"'{key}' of {where}" if key is not None and where.startswith("the ") else where
        wrong = not_text_within(item, inner)
        if wrong:
            return wrong
    return None


def require_text(text: Any, what: str) -> None:
    """Raise an :class:`InputError` ``"{what} holds a lone surrogate ..."`` when ``text`` is a string that is no
    Unicode text (see :func:`not_text`); other values pass (their type is checked where they are read)."""
    wrong = not_text(text) if isinstance(text, str) else None
    if wrong:
        raise InputError(f"{what} {wrong}")


def require_text_within(value: Any, where: str) -> None:
    """Raise an :class:`InputError` when a JSON value holds something that is no Unicode text (see
    :func:`not_text_within`)."""
    wrong = not_text_within(value, where)
    if wrong:
        raise InputError(wrong)
