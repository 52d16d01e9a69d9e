"""A sentence whose edits rules count a swapped number is never passed (detectors/ceiling.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from faithwatch.alignment.edits import EDIT_FEATURES
from faithwatch.alignment.lexical import EVIDENCE_FEATURES
from faithwatch.detectors.ceiling import CAPPED_BY, CEILING, cap_marked, cap_table, caps, ceiling
from faithwatch.eval.training import Recipe, fit_syncheck, syncheck_scores
from faithwatch.monitor import Monitor

CONTEXT = "25 people were injured in the crash on the motorway. The road reopened at noon."


def test_the_ceiling_stays_below_the_threshold() -> None:
    assert ceiling(0.49) == CEILING
    assert ceiling(0.3) == pytest.approx(0.25)
    np.testing.assert_allclose(cap_marked([0.9, 0.9, 0.1], [True, False, True], 0.5), [CEILING, 0.9, 0.1])
    with pytest.raises(ValueError, match="2 scores for 3 sentences"):
        cap_marked([0.9, 0.9], [True, False, True], 0.5)


def test_only_a_detector_reading_the_swap_count_is_capped() -> None:
    table = pd.DataFrame({CAPPED_BY: [1.0, 0.0, 2.0]})
    np.testing.assert_allclose(cap_table([0.8, 0.8, 0.8], table, 0.5, ["align_score", CAPPED_BY]),
                               [CEILING, 0.8, CEILING])
    np.testing.assert_allclose(cap_table([0.8, 0.8, 0.8], table, 0.5, ["align_score"]), [0.8, 0.8, 0.8])
    assert caps([CAPPED_BY]) and not caps(["align_score"])
    with pytest.raises(ValueError, match="no edit_swap_num column"):
        cap_table([0.8], pd.DataFrame({"x": [1.0]}), 0.5, [CAPPED_BY])


def _tiny_detector():
    """Alignment, lexical and edits features; only lex_bigrams tells the classes apart (a near copy scores well)."""
    rng = np.random.default_rng(0)
    rows = []
    for dataset in ("a", "b"):
        y = rng.random(120) < 0.4
        table = pd.DataFrame({name: rng.random(120) for name in (*EVIDENCE_FEATURES, *EDIT_FEATURES)})
        table[list(EDIT_FEATURES[1:])] = 0.0
        table["align_score"] = rng.random(120)
        table["lex_bigrams"] = np.clip(0.7 - 0.4 * y + 0.2 * rng.normal(size=120), 0, 1)
        rows.append(table.assign(dataset=dataset, label=y.astype(int), text="x.",
                                 example_id=[f"{dataset}{i // 3}" for i in range(120)]))
    return fit_syncheck(pd.concat(rows, ignore_index=True), Recipe(families=("alignment", "lexical", "edits")),
                        model_id="none")


def test_the_monitor_and_the_evaluation_cap_a_swapped_number_alike() -> None:
    det = _tiny_detector()
    monitor = Monitor("none", alignment="lexical", detector=det, signals=["alignment", "lexical", "edits"])
    response = "24 people were injured in the crash on the motorway. The road reopened at noon."
    swap, kept = monitor.score(None, CONTEXT, response).sentences
    table = pd.DataFrame([r.features for r in (swap, kept)]).assign(text=[swap.text, kept.text])
    raw = det.predict_proba_faithful(table[det.meta.feature_names].to_numpy(dtype=np.float64))
    assert swap.features[CAPPED_BY] == 1.0 and kept.features[CAPPED_BY] == 0.0
    assert raw[0] > ceiling(det.threshold)  # the regression alone would give it more
    assert swap.score == pytest.approx(ceiling(det.threshold)) and swap.flagged
    assert kept.score == pytest.approx(raw[1]) and not kept.flagged
    np.testing.assert_allclose(syncheck_scores(det, table), [swap.score, kept.score])


def test_a_framing_line_keeps_its_floor() -> None:
    det = _tiny_detector()
    table = pd.DataFrame({name: [0.5] for name in det.meta.feature_names}).assign(
        text="Here is a summary of the article in 78 words:", **{CAPPED_BY: 1.0})
    assert syncheck_scores(det, table)[0] >= det.threshold
