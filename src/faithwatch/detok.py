"""Incremental detokenisation: the text of a growing list of token ids, at constant work per token."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class IncrementalText:
    """The decoded text of a growing token list, as TGI and vLLM stream text: each new token is decoded after a
    short window of the complete tokens before it, which gives the decoder its spacing context, instead of
    decoding every token again. While a character is incomplete the text ends in U+FFFD, as a full decode does.
    A decoder that rewrites the window's earlier text (Unicode composition, say) makes it decode everything once
    and start over. The text equals a full decode for byte-level, SentencePiece-style and composing tokenizers
    (tests/test_sentences.py) and on every labelled response (bench/tracker_check.py); :meth:`full` checks.

    ``ids``: tokens to start from (decoded at once). ``incremental=False`` decodes every token again: the
    reference the checks compare with.
    """

    def __init__(self, tokenizer: Any, ids: Sequence[int] = (), incremental: bool = True) -> None:
        self.tokenizer = tokenizer
        self.incremental = incremental
        self.ids: list[int] = [int(t) for t in ids]
        self.text = ""
        # the text of ids[_read:] is decoded after ids[_prefix:_read]; text[:_read_end] is that of ids[:_read]
        self._prefix = self._read = self._read_end = 0
        if self.ids:
            self.full()

    def add(self, token: int) -> str:
        """Append ``token``; return the text of all the tokens."""
        self.ids.append(int(token))
        self.text = self._decoded() if self.incremental else self._decode(self.ids)
        return self.text

    def full(self) -> str:
        """Decode all the tokens at once and take that as the text (a check: it should not change it)."""
        self.text = self._decode(self.ids)
        self._prefix = self._read = self._read_end = 0
        return self.text

    def _decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=True)

    def _decoded(self) -> str:
        before = self._decode(self.ids[self._prefix : self._read])
        after = self._decode(self.ids[self._prefix :])
        if not after.startswith(before):  # the decoder rewrote the window's earlier text: start over
            return self.full()
        text = self.text[: self._read_end] + after[len(before) :]
        if len(after) > len(before) and not after.endswith("\ufffd"):  # complete: the next window starts here
            self._prefix, self._read, self._read_end = self._read, len(self.ids), len(text)
        return text
