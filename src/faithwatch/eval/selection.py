"""Model selection by transfer: pick the recipe whose *worst* leave-one-data-set-out gain is best.

Each candidate :class:`~faithwatch.eval.training.Recipe` is trained on all labelled data sets but one and scored
(AUROC) on the one left out, for every data set in turn. Its gain on a held-out set is its AUROC there minus the
AUROC of ``align_score`` alone (the strongest single signal) on the same set. The chosen recipe maximises the
smallest gain over the held-out sets (ties: the larger mean gain); fit on training data never counts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

from faithwatch.errors import InputError
from faithwatch.eval.training import TEXT_FAMILIES, Recipe
from faithwatch.eval.transfer import held_out_aurocs, held_out_names

#: the reference single signal the gains are measured against
REFERENCE = "align_score"


def candidate_grid(probe_layers: Sequence[Sequence[int]] = (), text_only: bool = False) -> list[Recipe]:
    """The recipes ``faithwatch select`` compares (``probe_layers``: probe variants to add; ``text_only``: only
    recipes of :data:`~faithwatch.eval.training.TEXT_FAMILIES`)."""
    full = ("likelihood", "uncertainty", "influence", "alignment", "lexical")
    family_sets = [
        ("alignment",),
        ("alignment", "lexical"),
        ("likelihood", "alignment", "lexical"),
        ("uncertainty", "alignment", "lexical"),
        ("influence", "alignment", "lexical"),
        ("likelihood", "uncertainty", "alignment", "lexical"),
        full,
        ("likelihood", "uncertainty", "influence", "alignment"),
        full + ("contrastive",),
        ("likelihood-raw", "uncertainty", "contrastive", "alignment"),  # paper 000's families
    ]
    grid = [Recipe(families=f, C=c) for f in family_sets for c in (0.1, 1.0)]
    for families in (("alignment", "lexical"), full):
        grid += [Recipe(families=families, transform="quantile"), Recipe(families=families, monotone=False),
                 Recipe(families=families, weighting="pooled"), Recipe(kind="xgb", families=families)]
    text = ("alignment", "lexical", "edits")
    grid += [Recipe(families=text, C=c) for c in (0.1, 1.0)] + [Recipe(kind="xgb", families=text),
                                                                 Recipe(kind="xgb", families=("alignment", "edits"))]
    for families in (("alignment", "tagger"), ("alignment", "edits", "tagger"), text + ("tagger",)):
        grid += [Recipe(families=families, C=c) for c in (0.1, 1.0)]
    grid += [Recipe(families=text + ("tagger",), C=0.1, pooling=p) for p in ("averaged", "blended")]
    grid += [Recipe(families=text + ("tagger",), C=0.1, pooling=p, centering="dataset")
             for p in ("pooled", "averaged", "blended")]
    for layers in probe_layers:
        for c in (0.001, 0.01):
            grid.append(Recipe(families=full + ("probe",), probe_layers=tuple(layers), probe_C=c))
    if text_only:
        grid = [r for r in grid if set(r.families) <= set(TEXT_FAMILIES)]
    return grid


@dataclass
class Candidate:
    """One recipe's held-out AUROCs."""

    recipe: Recipe
    auroc: dict[str, float]

    def gains(self, reference: Mapping[str, float]) -> dict[str, float]:
        """AUROC gain over ``reference`` on each held-out set."""
        return {held: self.auroc[held] - reference[held] for held in self.auroc}


def reference_auroc(tables: Mapping[str, pd.DataFrame]) -> dict[str, float]:
    """AUROC of ``align_score`` alone per data set (its direction is known: higher is more faithful)."""
    return {name: float(roc_auc_score(tables[name].label, -tables[name][REFERENCE])) for name in held_out_names(tables)}


def select(tables: Mapping[str, pd.DataFrame], recipes: Sequence[Recipe], model_id: str, *, seed: int = 0,
           on_recipe: Callable[[int, int], None] | None = None) -> tuple[Recipe, pd.DataFrame]:
    """Evaluate every recipe by LOO; return the best by worst-case gain and the whole table (best first)."""
    if len(tables) < 2 or not held_out_names(tables):
        raise InputError("selection by transfer needs at least two labelled data sets, one of them not training-only")
    reference = reference_auroc(tables)
    rows = []
    for i, recipe in enumerate(recipes, start=1):
        cand = Candidate(recipe, held_out_aurocs(tables, recipe, model_id, seed))
        gains = cand.gains(reference)
        rows.append({"recipe": describe(recipe), **{f"auroc {h}": v for h, v in cand.auroc.items()},
                     "mean auroc": float(np.mean(list(cand.auroc.values()))),
                     "worst gain": min(gains.values()), "mean gain": float(np.mean(list(gains.values()))),
                     "_recipe": recipe})
        if on_recipe:
            on_recipe(i, len(recipes))
    table = pd.DataFrame(rows).sort_values(["worst gain", "mean gain"], ascending=False).reset_index(drop=True)
    ref_row = {"recipe": f"{REFERENCE} alone (reference)", **{f"auroc {h}": v for h, v in reference.items()},
               "mean auroc": float(np.mean(list(reference.values()))), "worst gain": 0.0, "mean gain": 0.0}
    best = table.loc[0, "_recipe"]
    table = pd.concat([table.drop(columns="_recipe"), pd.DataFrame([ref_row])], ignore_index=True)
    return best, table


def describe(recipe: Recipe) -> str:
    """A one-line summary of a recipe."""
    parts = [recipe.kind, "+".join(recipe.families), recipe.transform, f"C={recipe.C:g}",
             "monotone" if recipe.monotone else "free", f"weights={recipe.weighting}"]
    if recipe.probe_layers:
        parts.append(f"probe L{','.join(map(str, recipe.probe_layers))} C={recipe.probe_C:g}")
    if recipe.pooling != "pooled":
        parts.append(f"pooling={recipe.pooling}")
    if recipe.centering != "none":
        parts.append(f"centred by {recipe.centering}")
    return " ".join(parts)
