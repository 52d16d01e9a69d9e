"""transformers' weight-loading progress bars (and, if asked, its warnings), off while faithwatch loads a model
(the CLI turns them off for good; a library user otherwise saw one "Loading weights" bar per model faithwatch
loads)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def quiet_loading(errors_only: bool = False) -> Iterator[None]:
    """No transformers progress bars inside the block, and with ``errors_only`` no warnings either (e.g. a new
    head "newly initialised" on purpose); the caller's settings are restored after it."""
    from transformers.utils import logging as hf_logging

    bars, verbosity = hf_logging.is_progress_bar_enabled(), hf_logging.get_verbosity()
    hf_logging.disable_progress_bar()
    if errors_only:
        hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()
