"""In-sample marking of evaluation reports: data sets the detector was trained on are labelled IN-SAMPLE; the
leave-one-data-set-out (transfer) figures never are."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from faithwatch.eval.metrics import MetricCI
from faithwatch.eval.report import IN_SAMPLE_NOTE, trained_on, write_report

LOO = "leave one data set out: AUROC on the held-out set (every model fitted without it)"
TRANSFER = "transfer matrix (AUROC, train row → test column; diagonal: out of fold by example)"


def _curve(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    labels = np.array([0, 1] * 15)
    return labels, labels + rng.normal(0, 0.8, len(labels))


def _report(out: Path, *, in_sample=None, meta=None, tag: str = "") -> tuple[dict, str]:
    sentence = pd.DataFrame({"method": ["syncheck-lr"], "auroc": [MetricCI(0.81, 0.75, 0.86)], "n": [30]})
    tables = {
        f"seen · sentence level{tag}": sentence,
        f"seen · by source model{tag}": pd.DataFrame({"source_model": ["m1"], "auroc": [0.7]}),
        "seen · response level vs stored detectors": pd.DataFrame({"method": ["syncheck-lr"], "auroc": [0.6]}),
        "unseen · sentence level": sentence,
        LOO: pd.DataFrame({"method": ["syncheck-lr"], "seen": [0.71], "unseen": [0.64]}),
        TRANSFER: pd.DataFrame({"train": ["seen", "unseen"], "seen": [0.8, 0.7], "unseen": [0.6, 0.75]}),
    }
    curves = {"seen": {"syncheck-lr": _curve(1)}, "unseen": {"syncheck-lr": _curve(2)}}
    write_report(out, "faithwatch eval: syncheck-lr", tables, curves, meta or {"seed": 0}, in_sample=in_sample)
    return json.loads((out / "results.json").read_text()), (out / "results.md").read_text()


def _headings(md: str) -> dict[str, str]:
    """Markdown heading text by the data set / table it is about (the text before any mark)."""
    out = {}
    for line in md.splitlines():
        if line.startswith("#"):
            text = line.lstrip("#").strip()
            out[text.split(" — ")[0]] = text
    return out


def _check_marked(doc: dict, md: str) -> None:
    heads = _headings(md)
    for name in ("seen · sentence level", "seen · by source model", "seen · response level vs stored detectors",
                 "seen"):  # the last: its ROC curve
        assert heads[name] == f"{name} — {IN_SAMPLE_NOTE}", heads
    for name in ("unseen · sentence level", LOO, TRANSFER, "unseen"):
        assert heads[name] == name, heads
        assert "IN-SAMPLE" not in heads[name]
    assert md.count(IN_SAMPLE_NOTE) == 5  # four headings and the note that explains them
    assert "## In-sample figures" in md and "trained on seen:" in md

    tables = {t["name"]: t for t in doc["tables"]}
    assert tables[f"seen · sentence level — {IN_SAMPLE_NOTE}"]["in_sample"] is True
    assert tables["seen · response level vs stored detectors — " + IN_SAMPLE_NOTE]["in_sample"] is True
    for name in ("unseen · sentence level", LOO, TRANSFER):
        assert tables[name]["in_sample"] is False
    assert {c["name"]: c["in_sample"] for c in doc["curves"]} == {"seen": True, "unseen": False}
    assert doc["in_sample"] == ["seen"]


def test_in_sample_tables_and_curves_are_marked(tmp_path):
    doc, md = _report(tmp_path, in_sample={"seen", "synthetic-edits"})  # a training-only set is not reported
    _check_marked(doc, md)


def test_nothing_marked_without_training_overlap(tmp_path):
    doc, md = _report(tmp_path, in_sample=[])
    assert "IN-SAMPLE" not in md and "In-sample" not in md
    assert doc["in_sample"] == [] and not any(t["in_sample"] for t in doc["tables"])
    assert not any(c["in_sample"] for c in doc["curves"])


def test_training_data_read_from_the_detector_folder(tmp_path):
    """``faithwatch eval`` passes the detector folder in ``meta``; its ``training_data`` decides."""
    det = tmp_path / "det"
    det.mkdir()
    (det / "detector.json").write_text(json.dumps({"training_data": [
        "seen: 30 sentences (15 unfaithful)", "synthetic-edits: 12 sentences (6 unfaithful)"]}))
    doc, md = _report(tmp_path / "report", meta={"detector": str(det), "seed": 0})
    _check_marked(doc, md)


def test_an_older_tag_is_replaced_not_doubled(tmp_path):
    doc, md = _report(tmp_path, in_sample={"seen"}, tag=" (IN-SAMPLE: the detector was trained on this set)")
    assert "trained on this set)" not in md
    _check_marked(doc, md)


def test_trained_on_parses_training_data_lines():
    assert trained_on(["ragtruth-qa: 5528 sentences (454 unfaithful)", "towns_a: 3 sentences (1 unfaithful)",
                       "head-mapping: 40 paired texts"]) == {"ragtruth-qa", "towns_a", "head-mapping"}


def test_committed_results_mark_the_shipped_detectors_training_sets():
    """docs/results/detectors/results.md (an eval of the shipped detector) marks every table of a data set the
    detector was trained on, and no leave-one-out or transfer table."""
    root = Path(__file__).parents[1]
    meta = json.loads((root / "src/faithwatch/detectors/default/detector.json").read_text())
    trained = trained_on(meta["training_data"])
    md = root / "docs/results/detectors/results.md"
    if not md.is_file():
        pytest.skip("no committed results")
    heads = [line.lstrip("#").strip() for line in md.read_text().splitlines() if line.startswith("## ")]
    per_set = [h for h in heads if " · " in h]
    assert per_set, heads
    for head in per_set:
        assert (h := head.split(" · ")[0]) not in trained or head.endswith(f" — {IN_SAMPLE_NOTE}"), (h, head)
    curves = [line[4:].strip() for line in md.read_text().splitlines() if line.startswith("### ")]
    assert curves and all(c == f"{c.split(' — ')[0]} — {IN_SAMPLE_NOTE}" for c in curves
                          if c.split(" — ")[0] in trained), curves
    for head in heads:
        if head.startswith(("leave one data set out", "feature-family ablation", "transfer matrix")):
            assert "IN-SAMPLE" not in head, head


def test_tables_in_sample_for_the_callers_own_reason_keep_their_names(tmp_path):
    """eval-decoding and eval-lss mark tables themselves (defaults chosen on the set, a tagger trained on part of
    it): the names say why and are kept; the JSON says in_sample and lists the data set."""
    name = "strategies — IN-SAMPLE for fod: the default tau1 was chosen on this packaged set"
    tables = {name: pd.DataFrame({"strategy": ["fod"], "success": [0.8]}),
              "τ cross-validated (out of fold)": pd.DataFrame({"strategy": ["fod"], "success": [0.7]})}
    write_report(tmp_path, "faithwatch eval-decoding", tables, {}, {}, in_sample_tables={name: "counterfactual"})
    doc = json.loads((tmp_path / "results.json").read_text())
    assert [(t["name"], t["in_sample"]) for t in doc["tables"]] == [(name, True),
                                                                     ("τ cross-validated (out of fold)", False)]
    assert doc["in_sample"] == ["counterfactual"] and IN_SAMPLE_NOTE not in (tmp_path / "results.md").read_text()
    with pytest.raises(ValueError, match="not in the report"):
        write_report(tmp_path, "t", tables, {}, {}, in_sample_tables={"nope": "x"})


def test_a_training_set_under_another_name_is_found_by_its_responses(tmp_path):
    from faithwatch.data.loaders import load_dataset
    from faithwatch.eval.report import seen_in_training

    rows = [{"id": str(i), "context": f"Town {i} has {i} bridges.", "response": f"It has {i} bridges.",
             "label": i % 2} for i in range(6)]
    trained = tmp_path / "towns.jsonl"
    trained.write_text("".join(json.dumps(r) + "\n" for r in rows))
    renamed = tmp_path / "other_name.jsonl"  # three of the same responses, one new
    renamed.write_text("".join(json.dumps(r) + "\n" for r in [*rows[:3], {**rows[3], "response": "None."}]))
    assert seen_in_training(load_dataset(str(renamed)), {str(trained)}) == {str(trained): 3}
    assert seen_in_training(load_dataset(str(renamed)), {"no-such-set"}) == {}
