"""The context limits of the HTTP API (see :func:`faithwatch.server.app.create_app`): a context above
``max_context_tokens`` gets 413; the passages of ``/v1/check`` together get 413 above it or above the model window,
or their tail is cut to the window when the monitor truncates contexts; ``max_new_tokens`` above the server's limit
gets 422."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from faithwatch.server.domain import RecentScores
from faithwatch.server.problems import HTTPProblem
from faithwatch.text import cut_passages

log = logging.getLogger(__name__)

#: a context longer than this many characters per allowed token is refused (or cut) without tokenising it; no
#: ordinary text comes near it (English runs at about 4 characters per token)
CHARS_PER_TOKEN = 16


def too_many_chars(n: int, limit: int, what: str = "the context") -> HTTPProblem:
    """413 for a text of ``n`` characters, too long to tokenise against a limit of ``limit`` tokens."""
    return HTTPProblem(413, "context_too_long", f"{what} has {n} characters, more than {CHARS_PER_TOKEN} per "
                       f"token of the limit of {limit} tokens", context_chars=n,
                       max_context_chars=limit * CHARS_PER_TOKEN, max_context_tokens=limit)


def too_many_tokens(n: int, limit: int, what: str = "the context", why: str = "this server accepts") -> HTTPProblem:
    """413 for a text of ``n`` tokens above ``limit``."""
    return HTTPProblem(413, "context_too_long", f"{what} has {n} tokens; {why} at most {limit}",
                       context_tokens=n, max_context_tokens=limit)


def _first_tokens(passages: list[str], ids: list[list[int]], window: int, tokenizer: Any) -> list[str]:
    """The passages' first ``window`` tokens: later passages dropped, the one that crosses the window shortened."""
    kept, left = [], window
    for passage, pids in zip(passages, ids, strict=True):
        if left <= 0:
            break
        if len(pids) <= left:
            kept.append(passage)
        else:
            cut = tokenizer.decode(pids[:left], skip_special_tokens=True)
            if cut.strip():
                kept.append(cut)
        left -= len(pids)
    return kept


@dataclass
class ContextLimits:
    """The server's limits on a request's context and new tokens, checked against the served monitor's tokenizer
    and model window; an accepted context is noted in ``recent`` (``/healthz``'s ``domain``)."""

    monitor: Any
    recent: RecentScores
    max_context_tokens: int | None
    max_new_tokens: int
    #: the model window, in tokens (None: no window)
    window: int | None = field(init=False)
    #: whether the monitor cuts a context's tail to the window rather than refusing it
    truncate_context: bool = field(init=False)

    def __post_init__(self) -> None:
        self.window = getattr(self.monitor.lm, "max_length", None)
        self.truncate_context = bool(getattr(self.monitor, "truncate_context", False))

    def n_tokens(self, text: str) -> int:
        """Tokens of ``text`` under the served model's tokenizer."""
        return len(self.monitor.lm.tokenizer(text, add_special_tokens=False)["input_ids"])

    def check_context(self, context: str) -> None:
        """Refuse a context above ``max_context_tokens``; keep whether an accepted one reads as a transcript
        (``/healthz``'s ``domain``)."""
        limit = self.max_context_tokens
        if limit is not None:
            if len(context) > limit * CHARS_PER_TOKEN:  # too long to be worth tokenising
                raise too_many_chars(len(context), limit)
            n = self.n_tokens(context)
            if n > limit:
                raise too_many_tokens(n, limit)
        self.recent.add_context(context)

    def fit_passages(self, passages: list[str]) -> tuple[list[str], int]:
        """The passages of /v1/check under the monitor's context limits, and the characters cut from them.

        The passages together count as one context (the monitor's context holds them all): above
        ``max_context_tokens`` they get 413; above the model window they get 413 too, unless the monitor
        truncates contexts, in which case the tail is cut (later passages dropped, the crossing one shortened).
        """
        what = "the context" if len(passages) == 1 else f"the {len(passages)} passages together"
        chars = sum(len(p) for p in passages)
        tokenizer, window, limit = self.monitor.lm.tokenizer, self.window, self.max_context_tokens

        def tokenise(texts: list[str]) -> list[list[int]]:
            return [tokenizer(t, add_special_tokens=False)["input_ids"] for t in texts]

        ids: list[list[int]] | None = None
        if limit is not None:  # the server's limit: 413, never cut (as for /v1/monitor)
            if chars > limit * CHARS_PER_TOKEN:
                raise too_many_chars(chars, limit, what)
            ids = tokenise(passages)
            total = sum(len(i) for i in ids)
            if total > limit:
                raise too_many_tokens(total, limit, what)
        if not window:
            return passages, 0
        truncated = False
        if ids is None:
            if chars > window * CHARS_PER_TOKEN:  # cut by characters first, so that no huge text gets tokenised
                if not self.truncate_context:
                    raise too_many_chars(chars, window, what)
                passages, truncated = cut_passages(passages, window * CHARS_PER_TOKEN)[0], True
            ids = tokenise(passages)
        total = sum(len(i) for i in ids)
        if total > window:  # the model window: 413, or the tail is cut with truncate_context
            if not self.truncate_context:
                raise too_many_tokens(total, window, what, "the model window holds")
            passages, truncated = _first_tokens(passages, ids, window, tokenizer), True
        if not truncated:
            return passages, 0
        cut_chars = max(1, chars - sum(len(p) for p in passages))
        log.warning("check: about %d context characters cut to fit the model window of %d tokens.", cut_chars,
                    window)
        return passages, cut_chars

    def check_new_tokens(self, n: int | None) -> None:
        """Refuse (422) a request for more new tokens than the server allows."""
        if n is not None and n > self.max_new_tokens:
            raise HTTPProblem(422, "invalid_input", f"max_new_tokens={n} is above this server's limit "
                              f"{self.max_new_tokens}")
