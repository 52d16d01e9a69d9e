"""transformers' weight-loading progress bars, off while faithwatch loads a model (the CLI turns them off for
good; a library user otherwise saw one "Loading weights" bar per model faithwatch loads)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def quiet_loading() -> Iterator[None]:
    """No transformers progress bars inside the block; the caller's setting is restored after it."""
    from transformers.utils import logging as hf_logging

    was = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was:
            hf_logging.enable_progress_bar()
