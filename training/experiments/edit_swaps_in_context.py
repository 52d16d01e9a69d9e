"""Issue 12, transfer: does a near copy that swaps in a number or name found *elsewhere in the context* count? (scratch)

The ``edits`` family (``faithwatch.alignment.edits``) counts a number or name-like word that a near copy puts in
place of its source's only when the new one is found nowhere in the context. A swap with another value of the same
context passes: "He had two wives." against "He had six wives. Two of them ... were beheaded." has no edit (the
detector passed "King Henry VIII had two wives." at 0.67 on fresh9; that one aligns to another source sentence and
is not caught by this feature either). Benchmarks of small factual edits often swap in an entity of the same
document. This script adds one feature, ``edit_swap_ctx`` (``aggregator_variants.ctx_swaps``, first measured with
the detector of 2026-11-25): replaced spans of a near copy whose number (or name) differs from the source's but
occurs in the context (sign-constrained: more swaps, less faithful). It prints LOO AUROC of the shipped recipe with
and without it (the same folds and caches as ``faithwatch eval --text-only --transfer``), how often it fires per
set, and the unfaithful share where it does.

**The rule, fixed before the first run:** the feature joins the shipped ``edits`` family only if, with it, the mean
LOO AUROC over the six sets does not fall, no set falls by more than 0.005, and (checked afterwards, on the
retrained detector) the blatant suite still flags ≥ 90% and passes ≥ 85%.

    python training/experiments/edit_swaps_in_context.py
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

# sibling scripts, on sys.path when this one runs
from aggregator_variants import ctx_swaps, print_loo, shipped_recipe, with_extra_family
from faith_tune_loo import tables_and_data

import faithwatch.eval.training as training
from faithwatch.alignment.edits import EditScorer

ROOT = Path(__file__).resolve().parents[2]


def with_feature(recipe: training.Recipe) -> training.Recipe:
    """``recipe`` plus a family ``edits-ctx`` (the column ``edit_swap_ctx``, higher = less faithful)."""
    return with_extra_family(recipe, "edits-ctx", "edit_swap_ctx", -1)


def main() -> None:
    tables, data, _ = tables_and_data()
    scorer = EditScorer()
    extra: dict[str, pd.DataFrame] = {}
    for name, t in tables.items():
        contexts = {e.id: e.context for e in data[name].examples}
        col = [ctx_swaps(scorer, text, contexts[ex]) for text, ex in zip(t.text, t.example_id, strict=True)]
        extra[name] = t.assign(edit_swap_ctx=col)
        fired = extra[name][extra[name].edit_swap_ctx > 0]
        print(f"{Path(name).stem:<20} sentences {len(t):>6}  fires {len(fired):>4}  unfaithful where it fires "
              f"{fired.label.mean() if len(fired) else float('nan'):.3f}  (all {t.label.mean():.3f})")
    shipped = shipped_recipe()
    print_loo(tables, {"shipped recipe": shipped})
    print_loo(extra, {"shipped recipe + edit_swap_ctx": with_feature(shipped)})


if __name__ == "__main__":
    main()
