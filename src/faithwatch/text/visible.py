"""Visible text: whether a string says anything a reader could see."""

from __future__ import annotations

import unicodedata

#: Unicode categories that show nothing: controls, format marks (zero-width space, byte-order mark, joiners) and
#: separators
INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp"})


def is_blank(text: str) -> bool:
    """Whether ``text`` has no visible character: empty, whitespace, or only controls and format marks such as a
    zero-width space or a byte-order mark (``str.strip`` keeps those, so such text would pass for non-empty)."""
    return all(ch.isspace() or unicodedata.category(ch) in INVISIBLE_CATEGORIES for ch in text)
