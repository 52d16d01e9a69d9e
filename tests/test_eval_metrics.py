"""Detection metrics with bootstrap CIs (faithwatch.eval.metrics) and report writing (faithwatch.eval.report)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import auc, average_precision_score, balanced_accuracy_score, roc_auc_score

from faithwatch.errors import InputError
from faithwatch.eval.metrics import (
    DetectionMetrics,
    MetricCI,
    _weighted_stats,
    auroc_by_column,
    auroc_difference,
    best_threshold,
    detection_metrics,
    roc_points,
    unfaithfulness_scores,
)
from faithwatch.eval.report import detection_table, format_ci, write_report

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _noisy(n: int, seed: int, shift: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Labels with a positive rate of ~0.3 and scores that separate them partially."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(int)
    return y, rng.normal(size=n) + shift * y


def _width(ci: MetricCI) -> float:
    return ci.high - ci.low


def test_perfect_scores_give_one_with_degenerate_ci() -> None:
    y = np.array([0, 0, 0, 1, 1, 0, 1, 0, 1, 0] * 5)
    m = detection_metrics(y, y * 0.8 + 0.1, threshold=0.5, n_boot=200)
    assert (m.auroc.value, m.auroc.low, m.auroc.high) == (1.0, 1.0, 1.0)
    assert (m.auprc.value, m.auprc.low, m.auprc.high) == (1.0, 1.0, 1.0)
    assert m.balanced_accuracy is not None and m.balanced_accuracy.value == 1.0
    assert m.n == 50 and m.n_positive == 20 and m.threshold == 0.5


def test_reversed_scores_give_zero() -> None:
    y = np.array([0, 1] * 30)
    m = detection_metrics(y, 1.0 - y, n_boot=200)
    assert (m.auroc.value, m.auroc.low, m.auroc.high) == (0.0, 0.0, 0.0)
    assert m.balanced_accuracy is None and m.threshold is None


def test_random_scores_are_near_chance() -> None:
    rng = np.random.default_rng(7)
    y = rng.integers(0, 2, 5000)
    m = detection_metrics(y, rng.random(5000), n_boot=500)
    assert abs(m.auroc.value - 0.5) < 0.05
    assert m.auroc.low <= 0.5 <= m.auroc.high
    assert m.auroc.low <= m.auroc.value <= m.auroc.high


def test_ci_width_shrinks_with_n() -> None:
    small = detection_metrics(*_noisy(200, seed=1), n_boot=500)
    large = detection_metrics(*_noisy(5000, seed=1), n_boot=500)
    assert _width(large.auroc) < _width(small.auroc) / 2
    assert _width(large.auprc) < _width(small.auprc)


def test_grouped_bootstrap_is_wider_under_within_group_correlation() -> None:
    # 60 responses x 20 sentences; label and most of the score are shared within a response
    rng = np.random.default_rng(3)
    n_groups, size = 60, 20
    group_label = rng.integers(0, 2, n_groups)
    group_effect = rng.normal(size=n_groups) + 0.8 * group_label
    groups = np.repeat(np.arange(n_groups), size)
    y = group_label[groups]
    s = group_effect[groups] + 0.1 * rng.normal(size=n_groups * size)
    flat = detection_metrics(y, s, n_boot=500, seed=0)
    grouped = detection_metrics(y, s, n_boot=500, seed=0, groups=groups)
    assert grouped.auroc.value == flat.auroc.value  # point estimates do not depend on groups
    assert grouped.n_groups == n_groups and flat.n_groups is None
    assert _width(grouped.auroc) >= _width(flat.auroc)
    assert _width(grouped.auroc) > 2 * _width(flat.auroc)  # effective sample size is ~60, not 1200


def test_grouped_bootstrap_accepts_string_ids() -> None:
    y, s = _noisy(300, seed=4)
    ids = np.array([f"ex{i // 3}" for i in range(300)])
    m = detection_metrics(y, s, n_boot=100, groups=ids)
    assert m.n_groups == 100


def test_auroc_difference_is_paired() -> None:
    # b is a plus noise: b loses AUROC, and the two are correlated across replicates
    y, a = _noisy(600, seed=5)
    noise = np.random.default_rng(6).normal(size=a.size)
    b = a + noise
    d = auroc_difference(y, a, b, n_boot=500, seed=0)
    assert d.value == pytest.approx(roc_auc_score(y, a) - roc_auc_score(y, b))
    assert 0 < d.low < d.value < d.high  # the noise costs AUROC on nearly every replicate
    close = auroc_difference(y, a, a + 0.3 * noise, n_boot=500, seed=0)
    unpaired = detection_metrics(y, a, n_boot=500).auroc
    assert _width(close) < _width(unpaired) / 2  # narrower than the unpaired interval of either score
    same = auroc_difference(y, a, a, n_boot=50)
    assert (same.value, same.low, same.high) == (0.0, 0.0, 0.0)
    grouped = auroc_difference(y, a, b, n_boot=500, seed=0, groups=np.arange(600) // 20)
    assert grouped.value == d.value and (grouped.low, grouped.high) != (d.low, d.high)
    with pytest.raises(InputError, match="differ in length"):
        auroc_difference(y, a, b[:-1])
    with pytest.raises(InputError, match="finite"):
        auroc_difference(y, a, np.where(np.arange(600) == 3, np.nan, b))


def test_balanced_accuracy_matches_sklearn() -> None:
    y, s = _noisy(800, seed=2)
    for t in (-0.5, 0.3, 1.2):
        m = detection_metrics(y, s, threshold=t, n_boot=50)
        assert m.balanced_accuracy is not None
        assert m.balanced_accuracy.value == pytest.approx(balanced_accuracy_score(y, (s >= t).astype(int)))
        assert m.balanced_accuracy.low <= m.balanced_accuracy.value <= m.balanced_accuracy.high


def test_best_balanced_accuracy_is_the_sets_own_best_threshold() -> None:
    """The given threshold's balanced accuracy next to the best any threshold reaches on the same set."""
    y, s = _noisy(800, seed=2)
    best = max(balanced_accuracy_score(y, (s >= t).astype(int)) for t in np.unique(s))
    for t in (-0.5, 0.3, 1.2):
        m = detection_metrics(y, s, threshold=t, n_boot=20)
        assert m.best_balanced_accuracy == pytest.approx(best)
        assert m.best_balanced_accuracy >= m.balanced_accuracy.value
    off = detection_metrics(y, s + 100.0, threshold=0.3, n_boot=20)  # every item flagged: chance at the threshold
    assert off.balanced_accuracy.value == pytest.approx(0.5) and off.best_balanced_accuracy == pytest.approx(best)
    assert detection_metrics(y, s, n_boot=20).best_balanced_accuracy is None
    assert "best_balanced_accuracy" in detection_table({"d": detection_metrics(y, s, threshold=0.3, n_boot=20)})


def test_point_estimates_match_sklearn() -> None:
    y, s = _noisy(500, seed=5)
    m = detection_metrics(y, s, n_boot=50)
    assert m.auroc.value == pytest.approx(roc_auc_score(y, s))
    assert m.auprc.value == pytest.approx(average_precision_score(y, s))


def test_vectorised_replicates_match_sklearn_on_resampled_arrays() -> None:
    # the count-weighted formulas equal sklearn on the explicitly resampled data, ties included
    rng = np.random.default_rng(6)
    n = 300
    y = rng.integers(0, 2, n)
    s = np.round(rng.normal(size=n) + 0.7 * y, 1)
    idx = rng.integers(0, n, (15, n))
    counts = np.stack([np.bincount(row, minlength=n) for row in idx]).astype(np.float64)
    auroc, ap, bacc, valid = _weighted_stats(counts, y, s, s >= 0.3)
    assert valid.all() and bacc is not None
    for r in range(len(idx)):
        yy, ss = y[idx[r]], s[idx[r]]
        assert auroc[r] == pytest.approx(roc_auc_score(yy, ss))
        assert ap[r] == pytest.approx(average_precision_score(yy, ss))
        assert bacc[r] == pytest.approx(balanced_accuracy_score(yy, (ss >= 0.3).astype(int)))


def test_auroc_by_column_matches_sklearn_column_by_column() -> None:
    # ties, a constant column, a perfectly reversed one and an exactly-chance one: the directions rest on "> 0.5"
    rng = np.random.default_rng(7)
    y = rng.integers(0, 2, 400)
    columns = [np.round(rng.normal(size=400) + 0.5 * y, 1), np.zeros(400), -y.astype(float), rng.integers(0, 3, 400)]
    chance = np.array([0.0, 1.0, 0.0, 1.0])
    aurocs = auroc_by_column(np.array([0, 0, 1, 1]), chance[:, None])
    assert aurocs.tolist() == [0.5]
    aurocs = auroc_by_column(y, np.column_stack(columns))
    assert aurocs.shape == (4,)
    for auroc, column in zip(aurocs, columns, strict=True):
        assert auroc == pytest.approx(roc_auc_score(y, column), abs=1e-12)
    assert aurocs[1] == 0.5 and aurocs[2] == 0.0


@pytest.mark.parametrize(("labels", "scores", "said"), [
    ([0, 1, 0], [[0.1], [np.nan], [0.3]], "finite: 1 are NaN or infinite (first in column 0, row 1)"),
    ([1, 1, 1], [[0.1], [0.2], [0.3]], "single class"),
    ([0, 1], [0.1, 0.2], "2-D"),
])
def test_auroc_by_column_refuses_bad_input(labels, scores, said) -> None:
    with pytest.raises(InputError, match=re.escape(said)):
        auroc_by_column(labels, scores)


def test_best_threshold_separable_data() -> None:
    rng = np.random.default_rng(8)
    y = rng.integers(0, 2, 200)
    s = np.where(y == 1, rng.uniform(0.6, 1.0, 200), rng.uniform(0.0, 0.4, 200))
    t = best_threshold(y, s)
    assert balanced_accuracy_score(y, (s >= t).astype(int)) == 1.0
    m = detection_metrics(y, s, threshold=t, n_boot=100)
    assert m.balanced_accuracy is not None and m.balanced_accuracy.value == 1.0


def test_best_threshold_is_optimal_on_noisy_data() -> None:
    y, s = _noisy(400, seed=9)
    t = best_threshold(y, s)
    best = balanced_accuracy_score(y, (s >= t).astype(int))
    assert all(balanced_accuracy_score(y, (s >= c).astype(int)) <= best + 1e-12 for c in np.unique(s))


def test_direction_is_explicit() -> None:
    faithful = np.array([0.9, 0.8, 0.2, 0.1])
    y = np.array([0, 0, 1, 1])
    assert detection_metrics(y, unfaithfulness_scores(faithful, higher_means="faithful"), n_boot=20).auroc.value == 1.0
    assert np.array_equal(unfaithfulness_scores(faithful, higher_means="unfaithful"), faithful)
    with pytest.raises(ValueError, match="higher_means"):
        unfaithfulness_scores(faithful, higher_means="up")  # type: ignore[arg-type]


@pytest.mark.parametrize("labels", [[0, 0, 0, 0], [1, 1, 1, 1]])
def test_single_class_raises(labels: list[int]) -> None:
    with pytest.raises(ValueError, match="single class"):
        detection_metrics(labels, [0.1, 0.2, 0.3, 0.4])
    with pytest.raises(ValueError, match="single class"):
        best_threshold(labels, [0.1, 0.2, 0.3, 0.4])


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_scores_raise(bad: float) -> None:
    with pytest.raises(ValueError, match="finite"):
        detection_metrics([0, 1, 0, 1], [0.1, bad, 0.3, 0.4])
    with pytest.raises(ValueError, match="finite"):
        roc_points([0, 1, 0, 1], [0.1, bad, 0.3, 0.4])


def test_other_bad_inputs_raise() -> None:
    with pytest.raises(ValueError, match="0/1"):
        detection_metrics([0, 2, 1], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="length"):
        detection_metrics([0, 1, 1], [0.1, 0.2])
    with pytest.raises(ValueError, match="threshold"):
        detection_metrics([0, 1], [0.1, 0.2], threshold=float("nan"))
    with pytest.raises(ValueError, match="groups"):
        detection_metrics([0, 1], [0.1, 0.2], groups=[1])
    with pytest.raises(ValueError, match="n_boot"):
        detection_metrics([0, 1], [0.1, 0.2], n_boot=0)


def test_single_class_replicates_are_skipped_and_counted() -> None:
    # one positive among 10 items: ~35% of replicates miss it
    y = np.array([1] + [0] * 9)
    s = np.linspace(1.0, 0.0, 10)
    m = detection_metrics(y, s, n_boot=400)
    assert m.n_boot == 400 and 0 < m.n_boot_used < 400
    assert all(np.isfinite(v) for v in (m.auroc.value, m.auroc.low, m.auroc.high, m.auprc.low, m.auprc.high))


def test_deterministic_under_seed() -> None:
    y, s = _noisy(600, seed=10)
    groups = np.arange(600) // 4
    a = detection_metrics(y, s, threshold=0.5, n_boot=300, seed=11, groups=groups)
    b = detection_metrics(y, s, threshold=0.5, n_boot=300, seed=11, groups=groups)
    c = detection_metrics(y, s, threshold=0.5, n_boot=300, seed=12, groups=groups)
    assert a == b
    assert a.auroc.low != c.auroc.low or a.auroc.high != c.auroc.high


def test_to_dict_is_strict_json() -> None:
    m = detection_metrics(*_noisy(200, seed=12), n_boot=50)
    d = m.to_dict()
    assert d["auroc"].keys() == {"value", "low", "high"} and d["balanced_accuracy"] is None
    json.dumps(d, allow_nan=False)
    flat = m.to_flat_dict()
    assert flat["auroc_low"] == m.auroc.low and flat["balanced_accuracy"] is None


def test_roc_points() -> None:
    y, s = _noisy(300, seed=13)
    fpr, tpr, thr = roc_points(y, s)
    assert fpr[0] == 0.0 and tpr[0] == 0.0 and fpr[-1] == 1.0 and tpr[-1] == 1.0
    assert np.all(np.diff(fpr) >= 0) and np.all(np.diff(tpr) >= 0)
    assert auc(fpr, tpr) == pytest.approx(roc_auc_score(y, s))
    assert len(thr) == len(fpr)


def test_format_ci() -> None:
    assert format_ci(MetricCI(0.7123, 0.68, 0.7411)) == "0.712 [0.680, 0.741]"
    assert format_ci(MetricCI(1.0, 1.0, 1.0), digits=2) == "1.00 [1.00, 1.00]"


def _strict_loads(text: str) -> object:
    def reject(token: str) -> None:
        raise ValueError(f"non-strict JSON constant {token}")

    return json.loads(text, parse_constant=reject)


def test_write_report(tmp_path: Path) -> None:
    y1, s1 = _noisy(300, seed=14)
    y2, s2 = _noisy(300, seed=15, shift=2.0)
    results: dict[str, DetectionMetrics] = {
        "lookback": detection_metrics(y1, s1, threshold=0.3, n_boot=100),
        "nli": detection_metrics(y2, s2, n_boot=100),
    }
    summary = detection_table(results)
    extra = pd.DataFrame(
        {"dataset": ["ragtruth", "halueval|qa"], "f1": [0.5125, np.nan], "count": [10, 20], "note": [None, "a\nb"]}
    ).set_index("dataset")
    out = tmp_path / "report"
    paths = write_report(
        out,
        "Detector comparison",
        {"summary": summary, "per dataset": extra},
        {"all": {"lookback": (y1, s1), "nli": (y2, s2)}, "nli / only": {"nli": (y2, s2)}},
        {"seed": np.int64(0), "model": "SmolLM2-135M", "ratio": float("nan"), "path": Path("/tmp/x")},
    )
    assert paths[:2] == [out / "results.json", out / "results.md"]
    assert [p.name for p in paths[2:]] == ["roc_all.png", "hist_all.png", "roc_nli_only.png", "hist_nli_only.png"]
    assert all(p.exists() for p in paths)

    doc = _strict_loads((out / "results.json").read_text())
    assert isinstance(doc, dict)
    assert doc["meta"] == {"seed": 0, "model": "SmolLM2-135M", "ratio": None, "path": "/tmp/x"}
    tables = {t["name"]: t for t in doc["tables"]}
    assert tables["summary"]["columns"][0] == "method"
    rec = tables["summary"]["records"][0]
    assert rec["method"] == "lookback" and rec["auroc"]["value"] == pytest.approx(results["lookback"].auroc.value)
    assert tables["summary"]["records"][1]["balanced_accuracy"] is None
    # the threshold as the detector states it: on the faithfulness score (the metrics use 1 - faithfulness)
    assert rec["flag_below"] == pytest.approx(0.7) and tables["summary"]["records"][1]["flag_below"] is None
    assert tables["per dataset"]["columns"] == ["dataset", "f1", "count", "note"]
    assert tables["per dataset"]["records"][1] == {"dataset": "halueval|qa", "f1": None, "count": 20, "note": "a\nb"}
    curve = doc["curves"][0]
    assert curve["image"] == "roc_all.png" and [m["method"] for m in curve["methods"]] == ["lookback", "nli"]
    assert curve["methods"][0]["auroc"] == pytest.approx(roc_auc_score(y1, s1))

    md = (out / "results.md").read_text()
    assert md.startswith("# Detector comparison")
    for header in ("method", "auroc", "auprc", "balanced_accuracy", "n_positive", "dataset", "f1", "count", "note"):
        assert header in md
    assert format_ci(results["lookback"].auroc) in md
    assert "ragtruth" in md and "halueval\\|qa" in md and "0.5125" in md and "n/a" in md
    for block in md.split("\n\n"):  # every row of a table has as many (unescaped) cell separators as its header
        rows = [ln for ln in block.splitlines() if ln.startswith("|")]
        assert len({len(re.findall(r"(?<!\\)\|", ln)) for ln in rows}) <= 1, block
    assert "![ROC all](roc_all.png)" in md and "![scores all](hist_all.png)" in md
    assert doc["files"]["images"] == [p.name for p in paths[2:]]

    for p in paths[2:]:
        assert p.read_bytes()[:8] == PNG_MAGIC


def test_write_report_rejects_bad_curves(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="single class"):
        write_report(tmp_path, "t", {}, {"c": {"m": ([0, 0], [0.1, 0.2])}}, {})
    with pytest.raises(ValueError, match="no methods"):
        write_report(tmp_path, "t", {}, {"c": {}}, {})
    assert not any(tmp_path.iterdir())  # nothing written when the input is bad


def test_bootstrap_in_blocks_equals_one_block(monkeypatch: pytest.MonkeyPatch) -> None:
    # the replicates are computed a block at a time to bound memory: the blocks must add up to the same draws
    import faithwatch.stats as stats_module

    y, s = _noisy(1000, seed=16)
    groups = np.arange(1000) // 5
    whole = [detection_metrics(y, s, threshold=0.5, n_boot=400, seed=3, groups=g) for g in (None, groups)]
    monkeypatch.setattr(stats_module, "BLOCK_ELEMENTS", 1000 * 150)  # blocks of 150, 150 and 100 replicates
    blocked = [detection_metrics(y, s, threshold=0.5, n_boot=400, seed=3, groups=g) for g in (None, groups)]
    assert blocked == whole
    for m in whole:
        assert m.n_boot == m.n_boot_used == 400  # ~300 positives: no replicate misses a class
        for ci in (m.auroc, m.auprc, m.balanced_accuracy):
            assert ci is not None and ci.low < ci.value < ci.high


def test_alignment_table_pairs_each_scorer_with_the_first_on_common_sentences():
    """eval-alignment's Δ vs the first scorer: a paired interval read on the sentences both scored."""
    import pandas as pd

    from faithwatch.eval.alignment import AlignmentEval
    from faithwatch.eval.metrics import auroc_difference

    rng = np.random.default_rng(3)
    n = 120
    frame = pd.DataFrame({"example_id": [f"r{i // 3}" for i in range(n)], "sentence_index": [i % 3 for i in range(n)],
                          "label": rng.integers(0, 2, n)})
    first = frame.assign(score=frame.label + rng.normal(0, 1.0, n))
    second = frame.assign(score=frame.label + rng.normal(0, 0.3, n)).iloc[5:]  # drops five sentences
    result = AlignmentEval(n_boot=200, seed=1)
    for name, scored in (("a", first), ("b", second)):
        result.metrics.setdefault("set", {})[name] = detection_metrics(scored.label, scored.score, n_boot=50)
        result.scored.setdefault("set", {})[name] = scored
    table = result.table().set_index("scorer")
    assert table.loc["a", "delta_auroc_vs_first"] is None and table.loc["a", "n_paired"] == n
    delta = table.loc["b", "delta_auroc_vs_first"]
    want = auroc_difference(second.label, second.score, first.score.iloc[5:], n_boot=200, seed=1,
                            groups=second.example_id)
    assert table.loc["b", "n_paired"] == n - 5 and delta == want
    assert delta.low <= delta.value <= delta.high and delta.low > 0  # the less noisy scorer is surely better


def test_eval_names_a_threshold_that_costs_more_than_the_target() -> None:
    """`faithwatch eval` points to `calibrate` when its threshold is more than 0.03 below the set's best."""
    from faithwatch.cli.evaluation import _threshold_hint

    y, s = _noisy(800, seed=2)
    good = detection_metrics(y, s, threshold=best_threshold(y, s), n_boot=20)
    bad = detection_metrics(y, s, threshold=float(np.max(s)) + 1.0, n_boot=20)  # flags nothing
    assert _threshold_hint("towns", good, Path("det"), None) is None
    hint = _threshold_hint("towns", bad, Path("det"), None)
    assert hint is not None and "faithwatch calibrate --detector det" in hint and "0.500 against" in hint
    assert "it gives" not in hint and "it gives 0.712" in _threshold_hint("towns", bad, Path("det"), 0.7121)
    assert _threshold_hint("towns", detection_metrics(y, s, n_boot=20), Path("det"), None) is None


def test_by_source_model_keeps_a_one_class_model_without_an_auroc() -> None:
    import pandas as pd

    from faithwatch.eval.harness import DatasetEval, by_source_model

    table = pd.DataFrame({"source_model": ["a", "a", "a", "b", "b"], "label": [0, 1, 1, 0, 0],
                          "example_id": ["1", "2", "3", "4", "5"]})
    ev = DatasetEval("x", table, {"det": np.array([0.9, 0.2, 0.3, 0.8, 0.7])})
    rows = by_source_model(ev, "det").set_index("source_model")
    assert rows.loc["a", "auroc"] == 1.0 and rows.loc["b", "auroc"] is None and rows.loc["b", "n"] == 2


@pytest.mark.parametrize(("scorers", "said"), [(["lexical", "none"], "'none' gives no align_score to evaluate"),
                                               (["lexical", "bogus"], "unknown alignment scorer 'bogus'")])
def test_eval_alignment_refuses_a_bad_scorer_before_any_features(monkeypatch, scorers, said):
    # the first scorer's features were computed (up to an hour) before a bad second one was found; 'none' was
    # computed, then failed with "no items: labels and scores are empty"
    import faithwatch.eval.alignment as alignment_eval
    from faithwatch.errors import InputError

    monkeypatch.setattr(alignment_eval, "load_labelled", lambda *a, **k: pytest.fail("features computed first"))
    with pytest.raises(InputError, match=said):
        alignment_eval.evaluate_alignment(["qags-cnndm"], scorers)


def test_every_data_set_is_read_before_the_first_ones_features(monkeypatch, tmp_path):
    # `eval --data qags-cnndm,bogus` computed qags-cnndm's features (minutes; faithbench's: hours), then said
    # "unknown dataset 'bogus'"
    import faithwatch.eval.pipeline as pipeline
    from faithwatch.errors import InputError

    for extract in ("extract_text_features", "extract_features"):
        monkeypatch.setattr(pipeline, extract, lambda *a, **k: pytest.fail("features computed first"))
    first = tmp_path / "first.jsonl"
    first.write_text('{"context": "The bridge opened in 1820.", "response": "It opened in 1820.", "label": 0}\n')
    for text_only in (True, False):
        with pytest.raises(InputError, match="unknown dataset 'bogus'"):
            pipeline.load_labelled([str(first), "bogus"], None, text_only=text_only)
        with pytest.raises(InputError, match="unknown dataset 'bogus'"):
            pipeline.load_labelled([str(first)], None, text_only=text_only, augment=["bogus"])
