"""Recipe selection by leave-one-data-set-out transfer (eval.selection) on synthetic feature tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from faithwatch.errors import InputError
from faithwatch.eval.selection import REFERENCE, candidate_grid, describe, select
from faithwatch.eval.training import FAMILIES, Recipe

LEXICAL = FAMILIES["lexical"]


def _table(name: str, rng: np.random.Generator, n: int = 160, noise_shift: float = 0.0) -> pd.DataFrame:
    """Unfaithful rows carry a novel number; align_score is a noisy signal; likelihood is domain noise."""
    label = (rng.random(n) < 0.4).astype(int)
    df = pd.DataFrame({
        "dataset": name, "label": label, "example_id": [f"{name}-{i // 2}" for i in range(n)],
        "align_score": np.clip(0.6 - 0.25 * label + rng.normal(0, 0.25, n), 0, 1),
        "min_logprob": rng.normal(-3 + noise_shift, 1, n), "mean_logprob": rng.normal(-1 + noise_shift, 0.3, n),
    })
    for f in LEXICAL:
        df[f] = rng.random(n)
    df["novel_numbers"] = label * (rng.random(n) < 0.8)
    return df


def test_select_prefers_the_recipe_that_transfers():
    rng = np.random.default_rng(0)
    tables = {name: _table(name, rng, noise_shift=shift) for name, shift in (("a", 0.0), ("b", 2.0), ("c", -2.0))}
    recipes = [Recipe(families=("alignment",)), Recipe(families=("alignment", "lexical")),
               Recipe(families=("likelihood",), monotone=False)]
    best, table = select(tables, recipes, model_id="m")
    assert best.families == ("alignment", "lexical")  # novel_numbers carries the label on every set
    assert table.iloc[-1]["recipe"].startswith(f"{REFERENCE} alone")
    gains = table["worst gain"].iloc[:-1].tolist()
    assert gains == sorted(gains, reverse=True) and gains[0] > 0.05
    assert {"auroc a", "auroc b", "auroc c", "mean auroc"} <= set(table.columns)


def test_select_needs_two_data_sets_and_the_grid_is_valid():
    with pytest.raises(InputError, match="two"):
        select({"a": _table("a", np.random.default_rng(1))}, [Recipe()], model_id="m")
    grid = candidate_grid()
    assert len({describe(r) for r in grid}) == len(grid)  # no duplicates
    assert any(r.families == ("alignment",) for r in grid) and any(r.kind == "xgb" for r in grid)
    assert {r.pooling for r in grid} == {"pooled", "averaged", "blended"}  # the shipped pooling is a candidate


def test_a_recipe_needs_a_finite_positive_c():
    # C = inf passed "C > 0", and the detector's metadata then failed to save (an internal ValueError from JSON)
    for c in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(InputError, match="positive and finite"):
            Recipe(C=c)
        with pytest.raises(InputError, match="positive and finite"):
            Recipe(probe_C=c)
