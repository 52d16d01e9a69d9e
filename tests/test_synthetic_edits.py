"""Synthetic near-copy responses (data/synthetic_edits.py) and training-only (augmentation) sets in LOO."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from faithwatch.data.loaders import load_jsonl, to_jsonl_row
from faithwatch.data.schema import LabelledExample
from faithwatch.data.synthetic_edits import edit_examples

DOCS = [
    "The Kellner Street Bridge opened in 1931 after four years of work. It was designed by Margaret Hollis of "
    "Glasgow. The steel arch spans 412 metres across the Aldwin estuary. Tolls were collected until 1958 in Port "
    "Aldwin. The bridge was repainted in 2019 at a cost of 6 million dollars.",
    "Hartwell Foods operates 46 bakeries across the Netherlands and Belgium. The company was founded in 1952 by "
    "Pieter Hartwell in Utrecht. Its revenue was 812 million euros in 2023. Operating profit fell to 54 million "
    "euros because flour prices rose. The company has not opened a shop in Germany.",
]


def _sources() -> list[LabelledExample]:
    return [LabelledExample(dataset="src", id=str(i), context=d, question="What happened?", response="x")
            for i, d in enumerate(DOCS)]


def test_edit_examples_are_labelled_near_copies():
    examples = edit_examples(_sources(), 40, seed=3)
    assert len(examples) == 40 and sum(e.response_label for e in examples) == 20
    for e in examples:
        assert e.context in DOCS
        if e.response_label:
            [span] = e.spans
            changed = e.response[span.start : span.end]
            assert changed and changed not in e.context
        else:
            assert not e.spans
    assert [e.response for e in edit_examples(_sources(), 40, seed=3)] == [e.response for e in examples]


def test_edit_examples_round_trip_through_jsonl(tmp_path):
    examples = edit_examples(_sources(), 10, seed=1)
    path = tmp_path / "edits.jsonl"
    path.write_text("".join(json.dumps(to_jsonl_row(e)) + "\n" for e in examples))
    back = load_jsonl(path)
    assert [(b.response, b.spans, b.response_label) for b in back] == [
        (e.response, e.spans, e.response_label) for e in examples]


def test_edit_examples_need_multi_sentence_contexts():
    short = [LabelledExample(dataset="s", id="0", context="One sentence only here.", question="q", response="r")]
    with pytest.raises(ValueError, match="two source contexts"):
        edit_examples(short, 4)


def test_cli_says_how_many_responses_repeat(tmp_path):
    # two sources hold few distinct edits: a large --n repeated pairs word for word, and nothing said so
    from typer.testing import CliRunner

    from faithwatch.cli import app

    src = tmp_path / "src.jsonl"
    src.write_text("".join(json.dumps({"context": d, "response": "x", "label": 0}) + "\n" for d in DOCS))
    for n, repeats in ((8, False), (400, True)):
        out = tmp_path / f"edits{n}.jsonl"
        result = CliRunner().invoke(app, ["synth-edits", "--data", str(src), "--out", str(out), "--n", str(n)])
        assert result.exit_code == 0, result.output
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        twice = len(rows) - len({(r["context"], r["response"]) for r in rows})
        said = " ".join(result.output.split())
        assert (twice > 0) == repeats and (f"{twice} of the responses repeat an earlier one" in said) == repeats


def _table(name: str, n: int, rng, train_only: bool = False) -> pd.DataFrame:
    label = rng.integers(0, 2, n)
    return pd.DataFrame({"example_id": [f"{name}{i}" for i in range(n)], "dataset": name, "label": label,
                         "align_score": 1 - 0.5 * label + rng.normal(0, 0.4, n), "train_only": train_only})


def test_training_only_sets_are_never_held_out_nor_calibrated_on():
    from faithwatch.eval.training import Recipe, fit_syncheck
    from faithwatch.eval.transfer import held_out_aurocs, held_out_names

    rng = np.random.default_rng(0)
    tables = {"a": _table("a", 120, rng), "b": _table("b", 120, rng), "aug": _table("aug", 200, rng, True)}
    assert held_out_names(tables) == ["a", "b"]
    assert set(held_out_aurocs(tables, Recipe(families=("alignment",)), "m")) == {"a", "b"}
    det = fit_syncheck(pd.concat(tables.values(), ignore_index=True), Recipe(families=("alignment",)), model_id="m")
    assert det.meta.metrics["training_only"] == ["aug"]
    assert set(det.meta.metrics["out_of_fold_auroc"]) == {"a", "b"}
    assert len(det.weights["calib.unfaithful_scores"]) == int(tables["a"].label.sum() + tables["b"].label.sum())
