"""One home for the suite's "these two runs give the same result" checks (engine records and monitor results)."""

from __future__ import annotations

import numpy as np
import pytest

from faithwatch.models.engine import Needs

TOL = 1e-4
#: every need on (twin row, two hidden layers, lookback ratios): what the engine equality tests record
ALL_NEEDS = Needs(twin=True, hidden_layers=(1, 3), lookback=True)
#: every per-token statistic an engine records
RECORD_FIELDS = ("logprob", "entropy", "kl", "twin_logprob", "hidden", "lookback")


def _close(got, want, tol: float) -> bool:
    """Equal within ``tol`` (exactly equal when ``tol`` is 0); ``None`` only equals ``None``."""
    if want is None or got is None:
        return got is want
    return got == want if tol == 0 else got == pytest.approx(want, abs=tol)


def assert_same_records(got, want, tol: float = TOL, fields: tuple[str, ...] = RECORD_FIELDS) -> None:
    """Two engines' token records: the same tokens, and every statistic in ``fields`` within ``tol``."""
    assert list(got.token_ids) == list(want.token_ids)
    for name in fields:
        np.testing.assert_allclose(np.asarray(getattr(got, name)), np.asarray(getattr(want, name)), atol=tol,
                                   rtol=0, err_msg=name)


def assert_same_sentences(got, want, tol: float = TOL) -> None:
    """Two monitor results: the same sentences at the same places, the same features (``None`` where the other
    has ``None``), vectors and scores within ``tol``."""
    assert [s.text for s in got.sentences] == [s.text for s in want.sentences] and want.sentences
    for a, b in zip(got.sentences, want.sentences, strict=True):
        assert (a.index, a.start, a.end, a.token_start, a.token_end) == \
            (b.index, b.start, b.end, b.token_start, b.token_end), b.text
        assert a.features.keys() == b.features.keys()
        for name, value in b.features.items():
            assert _close(a.features[name], value, tol), (name, a.features[name], value)
        assert a.vectors.keys() == b.vectors.keys()
        for name, vector in b.vectors.items():
            np.testing.assert_allclose(a.vectors[name], vector, atol=tol, rtol=0, err_msg=name)
        assert _close(a.score, b.score, tol), (a.score, b.score)


def assert_same_results(got, want, tol: float = TOL, fields: tuple[str, ...] = RECORD_FIELDS) -> None:
    """Two monitor results of one response: :func:`assert_same_sentences` and :func:`assert_same_records`."""
    assert_same_sentences(got, want, tol)
    assert_same_records(got.records, want.records, tol, fields)
