"""The one bootstrap and the one threshold chooser (faithwatch.stats)."""

from __future__ import annotations

import numpy as np
import pytest

from faithwatch import stats
from faithwatch.errors import InputError


def test_best_threshold_takes_the_middle_midpoint_of_tied_optima() -> None:
    # cuts at 0.3 and 0.7 both reach balanced accuracy 5/6 (0.5 only 2/3): of two, the upper middle is taken
    t = stats.best_threshold([0.1, 0.2, 0.4, 0.6, 0.8, 0.9], [0, 0, 1, 0, 1, 1])
    assert t == pytest.approx(0.7)
    # accuracy: the one cut that separates the classes
    assert stats.best_threshold([0.1, 0.2, 0.5, 0.6, 0.9], [0, 0, 1, 1, 1], objective="accuracy") == \
        pytest.approx(0.35)
    exact = stats.best_threshold([0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1])
    assert exact == pytest.approx(0.5)


def test_best_threshold_weights_and_objectives_differ_where_they_should() -> None:
    scores = [0.1, 0.2, 0.3, 0.4, 0.5]
    positive = [0, 1, 1, 1, 1]
    # accuracy: cut between 0.1 and 0.2 gets everything right; so does balanced accuracy
    assert stats.best_threshold(scores, positive, objective="accuracy") == pytest.approx(0.15)
    # a heavy negative at 0.5 moves the balanced-accuracy cut above it
    t = stats.best_threshold([0.1, 0.2, 0.5, 0.9], [0, 1, 0, 1], sample_weight=[1, 1, 10, 1])
    assert t == pytest.approx(0.7)
    with pytest.raises(InputError, match="single class"):
        stats.best_threshold([0.1, 0.2], [1, 1])
    with pytest.raises(InputError, match="NaN"):
        stats.best_threshold([0.1, float("nan")], [0, 1])
    assert stats.best_threshold([0.4, 0.4], [0, 1], single_value=0.5) == 0.5


def test_indices_and_counts_are_the_same_replicates() -> None:
    counts = np.concatenate(list(stats.resample_counts(7, 20, seed=4)))
    idx = list(stats.resample_indices(7, 20, seed=4))
    assert [np.bincount(i, minlength=7).tolist() for i in idx] == counts.astype(int).tolist()


def test_cluster_bootstrap_draws_whole_clusters() -> None:
    groups = ["a", "a", "a", "b", "c", "c"]
    for counts in np.concatenate(list(stats.resample_counts(6, 50, seed=1, groups=groups))):
        assert counts[0] == counts[1] == counts[2] and counts[4] == counts[5]
        assert counts[[0, 3, 4]].sum() == 3  # three clusters drawn per replicate


def test_mean_ci_contains_the_mean_and_narrows_with_n() -> None:
    rng = np.random.default_rng(0)
    small, large = rng.normal(size=30), rng.normal(size=3000)
    lo_s, hi_s = stats.mean_ci(small, n_boot=500, seed=2)
    lo_l, hi_l = stats.mean_ci(large, n_boot=500, seed=2)
    assert lo_s < small.mean() < hi_s and lo_l < large.mean() < hi_l
    assert hi_l - lo_l < (hi_s - lo_s) / 3
    assert stats.mean_ci([]) is None
    assert stats.mean_ci(small, n_boot=100, seed=9) == stats.mean_ci(small, n_boot=100, seed=9)


def test_n_boot_is_checked_once_for_every_bootstrap() -> None:
    # one check for the resamplers and the metrics: 2.5 was taken as 2 by auroc_difference, "x" raised ValueError
    from faithwatch.eval.metrics import auroc_difference, detection_metrics

    y, a, b = [0, 1, 0, 1], [0.1, 0.9, 0.2, 0.8], [0.3, 0.6, 0.4, 0.5]
    for bad in (0, -1, 2.5, float("nan"), True, "x", None):
        with pytest.raises(InputError, match="n_boot must be a positive integer"):
            stats.check_n_boot(bad)
        with pytest.raises(InputError, match="n_boot must be a positive integer"):
            auroc_difference(y, a, b, n_boot=bad)
        with pytest.raises(InputError, match="n_boot must be a positive integer"):
            detection_metrics(y, a, n_boot=bad)
    assert stats.check_n_boot(3.0) == 3 and stats.check_n_boot(np.int64(5)) == 5
