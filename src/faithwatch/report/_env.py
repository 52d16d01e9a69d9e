"""The shared jinja2 environment (templates from package data, autoescape on)."""

from __future__ import annotations

from functools import lru_cache

import jinja2


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """A jinja2 environment loading ``faithwatch/report/templates``; every template is autoescaped."""
    return jinja2.Environment(
        loader=jinja2.PackageLoader("faithwatch.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
