"""End to end on the tiny model: train a detector from generic JSONL data, evaluate it, monitor with it."""

from __future__ import annotations

import dataclasses
import json
import random

import numpy as np
import pytest
from typer.testing import CliRunner

from faithwatch.cli import app
from faithwatch.errors import InputError
from faithwatch.text import MARKUP_RULE, SPELLED_RULE

runner = CliRunner()
PLACES = ["Lyon", "Porto", "Graz", "Turku", "Split", "Ghent", "Bergen", "Kassel"]
THINGS = ["bridge", "museum", "library", "tower", "market", "station"]


def _dataset(path, seed: int, n: int = 28) -> None:
    """Faithful sentences copy the context; unfaithful ones invent a year and a place (marked as spans)."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        place, thing = rng.choice(PLACES), rng.choice(THINGS)
        year = rng.randint(1700, 1950)
        facts = [f"The {thing} in {place} opened in {year}.", f"It was designed by local masons in {place}.",
                 f"Visitors reach the {thing} by tram."]
        context = " ".join(facts)
        good = facts[rng.randrange(3)]
        bad = f"The {thing} was moved to {rng.choice([p for p in PLACES if p != place])} in {year + 37}."
        response = f"{good} {bad}" if i % 2 else f"{good} {facts[(facts.index(good) + 1) % 3]}"
        spans = [{"start": len(good) + 1, "end": len(response)}] if i % 2 else []
        rows.append({"id": f"{seed}-{i}", "context": context, "question": f"What about the {thing}?",
                     "response": response, "spans": spans})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.fixture
def datasets(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    a, b = tmp_path / "towns_a.jsonl", tmp_path / "towns_b.jsonl"
    _dataset(a, 1)
    _dataset(b, 2)
    return a, b


def test_train_eval_monitor(datasets, tiny_model_dir, tmp_path, one_thread, lm):
    a, b = datasets
    model = ["--model", str(tiny_model_dir)]
    det = tmp_path / "det"
    trained = runner.invoke(app, ["train", "--data", f"{a},{b}", "--detector", "lr", "--out", str(det),
                                  "--features", "likelihood,lid,alignment,lexical", "--alignment", "lexical",
                                  *model])
    assert trained.exit_code == 0, trained.output
    said = " ".join(trained.output.split())  # the tiny sets: fewer than 50 sentences of a class
    assert "warning: only" in said and "unfaithful sentences: with fewer than 50 of either class" in said
    meta = json.loads((det / "detector.json").read_text())
    assert meta["kind"] == "lr" and meta["model_id"] == str(tiny_model_dir)
    assert meta["metrics"]["alignment"] == "lexical" and "align_score" in meta["feature_names"]
    assert any(f.startswith("lid_layer_") for f in meta["feature_names"])
    assert "novel_numbers" in meta["feature_names"]
    assert meta["params"]["recipe"]["families"] == ["likelihood", "lid", "alignment", "lexical"]
    assert (det / "lid_bank.safetensors").is_file() and (det / "lookback-lens" / "detector.json").is_file()
    cache = list((tmp_path / "cache" / "faithwatch" / "features").glob("*/examples-*.parquet"))
    assert cache, "features were not cached"

    chosen = tmp_path / "recipe.json"
    selected = runner.invoke(app, ["select", "--data", f"{a},{b}", "--out", str(chosen), "--alignment", "lexical",
                                   *model])
    assert selected.exit_code == 0, selected.output
    doc = json.loads(chosen.read_text())
    assert doc["data"] == ["towns_a", "towns_b"] and "worst gain" in doc["selection"]
    assert doc["recipe"]["families"] and "held-out AUROC" in selected.output
    hint = " ".join(selected.output.split())
    assert f"faithwatch train --data {a},{b} --alignment lexical --recipe {chosen} --out DETECTOR_DIR" in hint

    report = tmp_path / "report"
    result = runner.invoke(app, ["eval", "--detector", str(det), "--data", f"{a},{b}", "--report", str(report),
                                 "--transfer", "--n-boot", "50"])
    assert result.exit_code == 0, result.output
    assert sorted(cache) == sorted((tmp_path / "cache" / "faithwatch" / "features").glob("*/examples-*.parquet"))
    doc = json.loads((report / "results.json").read_text())
    tables = {t["name"]: t for t in doc["tables"]}
    [name] = [n for n in tables if n.startswith("towns_a · sentence level")]
    assert name.endswith("IN-SAMPLE (the detector was trained on this data set)")  # it was trained on towns_a
    assert tables[name]["in_sample"] and doc["in_sample"] == ["towns_a", "towns_b"]
    loo = [t for n, t in tables.items() if n.startswith(("leave one data set out", "transfer matrix", "feature-"))]
    assert len(loo) == 4 and not any(t["in_sample"] or "IN-SAMPLE" in t["name"] for t in loo)
    assert "(IN-SAMPLE:" not in (report / "results.md").read_text()  # the CLI's own tag is not doubled
    [calibration] = [t for n, t in tables.items() if n.startswith("the detector's threshold on each set")]
    rows = {r["data set"]: r for r in calibration["records"]}
    assert set(rows) == {"towns_a", "towns_b"} and rows["towns_a"]["in-sample"]
    assert all(0 <= r["flagged"] <= 1 and "after calibrate --unlabelled on the set" in r for r in rows.values())
    sentence = tables[name]["records"]
    methods = {r["method"]: r for r in sentence}
    assert {"syncheck-lr", "FLARE (min_prob)", "align_score", "Lookback Lens"} <= set(methods)
    assert methods["syncheck-lr"]["auroc"]["value"] > 0.8  # the label is a known function of align_score
    assert any(name.startswith("transfer matrix") for name in tables)
    assert any(name.startswith("feature-family ablation") for name in tables)
    assert list(report.glob("roc_*.png")) and (report / "results.md").read_text().count("|") > 10

    from faithwatch.monitor import Monitor

    monitor = Monitor(lm, detector=str(det))
    assert monitor.detector.name == "syncheck-lr" and monitor.alignment.name == "lexical"
    out = monitor.score("What about the bridge?", "The bridge in Lyon opened in 1820.",
                        "The bridge in Lyon opened in 1820. It was moved to Graz in 1901.")
    assert [s.detector for s in out.sentences] == ["syncheck-lr"] * len(out.sentences)
    assert all(s.features[f] is not None for s in out.sentences for f in meta["feature_names"])
    with pytest.raises(InputError, match="alignment"):
        Monitor(lm, detector=str(det), alignment="embedding")
    with pytest.raises(InputError, match="reads the language model .*use a detector trained with --text-only"):
        Monitor("none", detector=str(det))  # as `check --detector` builds it
    lens = Monitor(lm, detector=str(det / "lookback-lens"))
    assert 0.0 <= lens.score("q?", "The bridge opened in 1820.", "It opened in 1820.").sentences[0].score <= 1.0


def test_detector_for_another_model_is_refused(datasets, tiny_model_dir, tmp_path, one_thread, lm):
    a, _ = datasets
    det = tmp_path / "det"
    result = runner.invoke(app, ["train", "--data", str(a), "--out", str(det), "--alignment", "lexical",
                                 "--lens", "none", "--model", str(tiny_model_dir)])
    assert result.exit_code == 0, result.output
    meta = json.loads((det / "detector.json").read_text())
    meta["model_id"] = "someone/else"
    (det / "detector.json").write_text(json.dumps(meta))
    from faithwatch.monitor import Monitor

    with pytest.raises(InputError):
        Monitor(lm, detector=str(det))


def test_transfer_lens_to_another_model(datasets, tiny_model_dir, tmp_path, one_thread, lm):
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from faithwatch.models.loading import load_model
    from faithwatch.monitor import Monitor

    a, _ = datasets
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    torch.manual_seed(7)
    other = LlamaForCausalLM(LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=1, max_position_embeddings=512, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id, bos_token_id=None))
    other_dir = tmp_path / "other-model"
    other.save_pretrained(other_dir)
    tokenizer.save_pretrained(other_dir)

    det = tmp_path / "det"
    assert runner.invoke(app, ["train", "--data", str(a), "--out", str(det), "--alignment", "lexical",
                               "--model", str(tiny_model_dir)]).exit_code == 0
    mapped_dir = tmp_path / "mapped"
    bogus = runner.invoke(app, ["transfer-lens", "--lens", str(det / "lookback-lens"), "--target-model",
                                str(tmp_path / "no-model"), "--data", f"{a},bogus", "--out", str(mapped_dir)])
    assert bogus.exit_code == 2 and "unknown dataset 'bogus'" in bogus.output  # before both models: not 'no model'
    result = runner.invoke(app, ["transfer-lens", "--lens", str(det / "lookback-lens"), "--target-model",
                                 str(other_dir), "--data", str(a), "--out", str(mapped_dir)])
    assert result.exit_code == 0, result.output
    assert "R²" in result.output
    meta = json.loads((mapped_dir / "detector.json").read_text())
    assert meta["model_id"] == str(other_dir)
    assert meta["layers"]["lens_source"]["model_id"] == str(tiny_model_dir)
    assert (meta["layers"]["num_layers"], meta["layers"]["num_heads"]) == (2, 2)

    target = Monitor(load_model(str(other_dir), device="cpu"), detector=str(mapped_dir), alignment="none")
    report = target.score("q?", "The bridge opened in 1820.", "It opened in 1820. It was moved.")
    assert all(0.0 <= s.score <= 1.0 and s.detector.startswith("lookback-lens") for s in report.sentences)
    with pytest.raises(InputError):
        Monitor(lm, detector=str(mapped_dir))  # the mapped lens reads the target model's heads only


def test_cache_with_other_alignment_is_reused(datasets, tmp_path, one_thread, lm):
    """A new alignment scorer recomputes only align_score from a sibling cache; every other column is kept."""
    import numpy as np

    from faithwatch.alignment.base import AlignmentScorer
    from faithwatch.data.loaders import load_dataset
    from faithwatch.eval.features import extract_features
    from faithwatch.eval.pipeline import extraction_monitor

    class Half(AlignmentScorer):
        name = "half"

        def score_many(self, sentences, context):
            return [0.5] * len(sentences)

    a, _ = datasets
    examples = load_dataset(str(a))
    donor = extract_features(extraction_monitor(lm, "lexical"), "towns", examples)
    monitor = extraction_monitor(lm, "lexical")
    monitor.alignment = Half()
    calls = []
    monitor.lm = lm
    derived = extract_features(monitor, "towns", examples, on_progress=lambda n, t: calls.append(n))
    assert len(derived.sentences) == len(donor.sentences) and calls[-1] == len(examples)
    assert (derived.sentences.align_score == 0.5).all()
    assert not (donor.sentences.align_score == 0.5).all()
    d = derived.sentences.sort_values(["example_id", "sentence_index"]).reset_index(drop=True)
    s = donor.sentences.sort_values(["example_id", "sentence_index"]).reset_index(drop=True)
    assert np.allclose(d.min_prob, s.min_prob) and list(d.text) == list(s.text)
    assert len(derived.windows) == len(donor.windows)


def test_text_only_tables_match_teacher_forcing_and_are_cached(datasets, tmp_path, one_thread, lm):
    """Text-only tables hold the same sentences and align_score as teacher-forced ones, and are not recomputed."""
    from faithwatch.alignment.lexical import LexicalScorer
    from faithwatch.data.loaders import load_dataset
    from faithwatch.eval.features import extract_features, extract_text_features
    from faithwatch.eval.pipeline import extraction_monitor
    from faithwatch.eval.text_features import add_text_features

    class Counting(LexicalScorer):
        calls = 0

        def score_many(self, sentences, context, question=""):
            Counting.calls += 1
            return super().score_many(sentences, context, question)

    a, _ = datasets
    examples = load_dataset(str(a))
    forced = extract_features(extraction_monitor(lm, "lexical"), "towns", examples).sentences
    text = extract_text_features(Counting(), "towns", examples).sentences
    key = ["example_id", "sentence_index"]
    forced, text = (t.sort_values(key).reset_index(drop=True) for t in (forced, text))
    assert list(text.text) == list(forced.text) and list(text.start) == list(forced.start)
    assert text.align_score.tolist() == forced.align_score.tolist()
    calls = Counting.calls
    again = extract_text_features(Counting(), "towns", examples)
    assert Counting.calls == calls and len(again.sentences) == len(text) and again.windows.empty
    added = add_text_features(examples, text)
    assert {"novel_numbers", "edit_swap_num", "edit_match"} <= set(added.columns)
    assert added[["edit_match", "novel_numbers"]].notna().all().all()
    # the file is edited under the same ids: the changed example is recomputed, the others are not
    edited = [dataclasses.replace(e, response="Nothing of the sort. It is all invented.") if i == 3 else e
              for i, e in enumerate(examples)]
    fresh = extract_text_features(Counting(), "towns", edited)
    assert Counting.calls == calls + 1
    rows = fresh.sentences[fresh.sentences.example_id == examples[3].id]
    assert list(rows.text) == ["Nothing of the sort.", "It is all invented."]
    assert len(fresh.sentences) == len(text) - (text.example_id == examples[3].id).sum() + 2
    assert not fresh.sentences.duplicated(key).any()
    extract_text_features(Counting(), "towns", edited)
    assert Counting.calls == calls + 1  # and cached again


def test_train_select_eval_text_only(datasets, tiny_model_dir, tmp_path, one_thread, lm):
    a, b = datasets
    model = ["--model", str(tiny_model_dir), "--alignment", "lexical", "--text-only"]
    det = tmp_path / "det"
    refused = runner.invoke(app, ["train", "--data", f"{a},{b}", "--out", str(det), "--features",
                                  "likelihood,alignment", *model])
    assert refused.exit_code != 0 and "drop --text-only" in refused.output
    lens = runner.invoke(app, ["train", "--data", f"{a},{b}", "--out", str(det), "--lens", "window", *model])
    assert lens.exit_code != 0 and "leave --lens window out" in lens.output  # it was dropped with a note
    assert not list((tmp_path / "cache").rglob("*.parquet"))  # refused before any feature
    trained = runner.invoke(app, ["train", "--data", f"{a},{b}", "--detector", "xgb", "--out", str(det),
                                  "--features", "alignment,lexical,edits", *model])
    assert trained.exit_code == 0, trained.output
    meta = json.loads((det / "detector.json").read_text())
    assert {"edit_swap_num", "novel_numbers", "align_score"} <= set(meta["feature_names"])
    assert not (det / "lookback-lens").exists()
    assert not list((tmp_path / "cache" / "faithwatch" / "features").glob("towns_a-*/examples-*.parquet"))
    plain = runner.invoke(app, ["train", "--data", f"{a},{b}", "--out", str(tmp_path / "det2"), *model])
    assert plain.exit_code == 0 and "--text-only: the families alignment,lexical,edits,tagger" in plain.output
    assert "tag_min_content" in json.loads((tmp_path / "det2" / "detector.json").read_text())["feature_names"]
    chosen = tmp_path / "recipe.json"
    selected = runner.invoke(app, ["select", "--data", f"{a},{b}", "--out", str(chosen), *model])
    assert selected.exit_code == 0, selected.output
    assert set(json.loads(chosen.read_text())["recipe"]["families"]) <= {"alignment", "lexical", "edits", "tagger"}
    report = tmp_path / "report"
    result = runner.invoke(app, ["eval", "--detector", str(det), "--data", f"{a},{b}", "--report", str(report),
                                 "--transfer", "--n-boot", "20", "--text-only"])
    assert result.exit_code == 0, result.output
    tables = {t["name"]: t for t in json.loads((report / "results.json").read_text())["tables"]}
    loo = next(t for n, t in tables.items() if n.startswith("leave one data set out: AUROC"))
    assert {"edit_swap_num", "align_score"} <= {r["method"] for r in loo["records"]}
    blended = tmp_path / "blended"  # pooling and centring from the command line
    trained = runner.invoke(app, ["train", "--data", f"{a},{b}", "--out", str(blended), "--features",
                                  "alignment,lexical", "--pooling", "blended", "--centering", "dataset", "--lens",
                                  "none", *model])
    assert trained.exit_code == 0, trained.output
    meta = json.loads((blended / "detector.json").read_text())
    assert meta["params"]["recipe"]["pooling"] == "blended" and meta["params"]["members"] == 2
    assert meta["params"]["recipe"]["centering"] == "dataset"
    bad = runner.invoke(app, ["train", "--data", f"{a},{b}", "--out", str(blended), "--pooling", "mixed", *model])
    assert bad.exit_code != 0 and "pooling must be one of" in bad.output


def test_train_replaces_a_detector_only_when_told_and_whole(datasets, tiny_model_dir, tmp_path, one_thread, lm):
    # train --out wrote into any folder: a detector there was overwritten file by file, and its Lookback Lens (from
    # an earlier --lens span run) stayed beside a detector trained with --lens none
    a, b = datasets
    model = ["--model", str(tiny_model_dir), "--alignment", "lexical", "--text-only", "--features", "alignment"]
    det = tmp_path / "det"
    (det / "lookback-lens").mkdir(parents=True)
    (det / "lookback-lens" / "detector.json").write_text("{}")
    (det / "detector.json").write_text('{"kind": "old"}')
    kept = runner.invoke(app, ["train", "--data", f"{a},{b}", "--out", str(det), *model])
    assert kept.exit_code == 2 and "holds a detector" in kept.output and "--overwrite" in kept.output
    assert (det / "detector.json").read_text() == '{"kind": "old"}'
    replaced = runner.invoke(app, ["train", "--data", f"{a},{b}", "--out", str(det), "--overwrite", *model])
    assert replaced.exit_code == 0, replaced.output
    assert json.loads((det / "detector.json").read_text())["kind"] == "lr"
    assert not (det / "lookback-lens").exists()
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary folder left beside it
    other = tmp_path / "notes"
    other.mkdir()
    (other / "todo.txt").write_text("keep me")
    refused = runner.invoke(app, ["train", "--data", f"{a},{b}", "--out", str(other), "--overwrite", *model])
    assert refused.exit_code == 2 and "no detector" in refused.output and (other / "todo.txt").exists()
    calibrated = runner.invoke(app, ["calibrate", "--detector", str(det), "--data", str(b), "--out", str(other)])
    assert calibrated.exit_code == 2 and "no detector" in calibrated.output
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.MonkeyPatch.context() as mp:  # an empty current folder: it would be moved away under our feet
        mp.chdir(empty)
        here = runner.invoke(app, ["train", "--data", f"{a},{b}", "--out", ".", *model])
    assert here.exit_code == 2 and "is the current folder" in here.output and not any(empty.iterdir())


def test_train_with_the_tagger_records_its_version(datasets, tiny_model_dir, tmp_path, one_thread, monkeypatch):
    import faithwatch.signals.tagger as tagger_module
    from test_tagger_signal import OverlapTagger

    fake = OverlapTagger()
    monkeypatch.setattr(tagger_module, "shared_tagger", lambda device="cpu": fake)
    a, b = datasets
    det = tmp_path / "det"
    trained = runner.invoke(app, ["train", "--data", f"{a},{b}", "--out", str(det), "--features",
                                  "alignment,tagger", "--model", str(tiny_model_dir), "--alignment", "lexical",
                                  "--text-only"])
    assert trained.exit_code == 0, trained.output
    meta = json.loads((det / "detector.json").read_text())
    assert meta["feature_names"] == ["align_score", "tag_min_content"]
    assert meta["metrics"]["tagger_version"] == f"overlap-1+preamble1+{MARKUP_RULE}+{SPELLED_RULE}"
    assert fake.words_read > 0
    read = fake.words_read
    again = runner.invoke(app, ["train", "--data", f"{a},{b}", "--out", str(tmp_path / "det2"), "--features",
                                "alignment,tagger", "--model", str(tiny_model_dir), "--alignment", "lexical",
                                "--text-only"])
    assert again.exit_code == 0 and fake.words_read == read  # the tagger's features come from the cache


def test_eval_alignment_is_the_detectors_unless_it_does_not_read_it():
    from faithwatch.cli._labelled import detector_alignment
    from faithwatch.errors import InputError

    reads = {"metrics": {"alignment": "lexical"}, "feature_names": ["align_score", "min_prob"]}
    assert detector_alignment(reads, None) == "lexical" and detector_alignment(reads, "lexical") == "lexical"
    with pytest.raises(InputError, match="reads align_score from 'lexical'"):
        detector_alignment(reads, "embedding")
    assert detector_alignment({"metrics": {"alignment": "lexical"}, "feature_names": ["min_prob"]}, "embedding") == \
        "embedding"


def test_calibrate_refits_the_threshold_on_new_labelled_data(datasets, tiny_model_dir, tmp_path, one_thread, lm):
    from faithwatch.detectors.aggregator import SynCheckDetector

    a, b = datasets
    det, new = tmp_path / "det", tmp_path / "det-b"
    model = ["--model", str(tiny_model_dir), "--alignment", "lexical", "--text-only"]
    trained = runner.invoke(app, ["train", "--data", str(a), "--features", "alignment,lexical", "--out", str(det),
                                  *model])
    assert trained.exit_code == 0, trained.output
    same = runner.invoke(app, ["calibrate", "--detector", str(det), "--data", str(b), "--out", str(det)])
    assert same.exit_code == 2 and "another folder" in same.output
    result = runner.invoke(app, ["calibrate", "--detector", str(det), "--data", str(b), "--out", str(new)])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["n_responses"] == 28 and summary["n_unfaithful"] == 14
    assert summary["ba_after"] >= summary["ba_before"]  # the threshold is chosen on these very sentences
    message = " ".join(result.output.split())
    assert "IN-SAMPLE" in message and "labelled responses: a threshold" not in message  # 28 responses are enough
    assert "only 14 unfaithful sentences: the --max-false-accept thresholds" in message
    assert "the detector was trained or calibrated on" not in message
    seen = runner.invoke(app, ["calibrate", "--detector", str(det), "--data", str(a), "--out", str(tmp_path / "s")])
    assert seen.exit_code == 0 and "warning: towns_a: 28 of its 28 responses from towns_a; calibrate" in " ".join(
        seen.output.split())
    old, fitted = SynCheckDetector.load(det), SynCheckDetector.load(new)
    assert fitted.meta.params["threshold_from"] == f"re-calibrated on {b}"
    assert fitted.meta.metrics["recalibration"]["threshold_after"] == pytest.approx(fitted.threshold)
    assert old.meta.params["threshold_from"] == "out-of-fold predictions"  # the original is untouched
    for name in ("lr.coef", "lr.intercept"):  # the aggregator's weights are kept
        assert (old.weights[name] == fitted.weights[name]).all()
    assert not (old.weights["calib.platt"] == fitted.weights["calib.platt"]).all()
    evaluated = runner.invoke(app, ["eval", "--detector", str(new), "--data", str(b), "--text-only",
                                    "--alignment", "lexical", "--report", str(tmp_path / "r")])
    assert evaluated.exit_code == 0, evaluated.output
    assert "calibrated on it; its figures are in-sample" in " ".join(evaluated.output.split())


def test_calibrate_refuses_data_with_too_few_of_a_class(datasets, tiny_model_dir, tmp_path, one_thread, lm):
    a, b = datasets
    det = tmp_path / "det"
    assert runner.invoke(app, ["train", "--data", str(a), "--features", "alignment,lexical", "--out", str(det),
                               "--model", str(tiny_model_dir), "--alignment", "lexical", "--text-only"]).exit_code == 0
    faithful = tmp_path / "faithful.jsonl"
    rows = [json.loads(line) for line in b.read_text().splitlines()]
    faithful.write_text("".join(json.dumps({**r, "spans": []}) + "\n" for r in rows[:6]))
    result = runner.invoke(app, ["calibrate", "--detector", str(det), "--data", str(faithful), "--out",
                                 str(tmp_path / "x")])
    assert result.exit_code == 2
    assert "at least 5 faithful and 5 unfaithful" in result.output and not (tmp_path / "x").exists()


def test_calibrate_unlabelled_shifts_to_the_domain_median(datasets, tiny_model_dir, tmp_path, one_thread, lm):
    from faithwatch.detectors.aggregator import SynCheckDetector

    a, b = datasets
    det, new = tmp_path / "det", tmp_path / "det-u"
    assert runner.invoke(app, ["train", "--data", str(a), "--features", "alignment,lexical", "--out", str(det),
                               "--model", str(tiny_model_dir), "--alignment", "lexical", "--text-only"]).exit_code == 0
    logs = tmp_path / "logs.jsonl"  # faithwatch score's input: no spans, no labels
    rows = [json.loads(line) for line in b.read_text().splitlines()]
    logs.write_text("".join(json.dumps({k: r[k] for k in ("id", "question", "context", "response")}) + "\n"
                            for r in rows))
    labelled = runner.invoke(app, ["calibrate", "--detector", str(det), "--data", str(logs), "--out", str(new)])
    assert labelled.exit_code == 2 and "--unlabelled" in labelled.output  # without the flag, labels are needed
    result = runner.invoke(app, ["calibrate", "--detector", str(det), "--data", str(logs), "--out", str(new),
                                 "--unlabelled"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["n_responses"] == 28 and summary["n_sentences"] >= 28 and "noisy" in result.output
    assert "labels not read" in result.output and "labelled sentences" not in result.output
    # mostly flagged before the shift: warned that the shift may hide unfaithful sentences
    assert ("really are unfaithful" in " ".join(result.output.split())) == (summary["flagged_before"] >= 0.5)
    assert "(the median of the data the threshold was fitted on: out-of-fold predictions)" in " ".join(
        result.output.split())
    old, shifted = SynCheckDetector.load(det), SynCheckDetector.load(new)
    assert summary["reference_logit"] == pytest.approx(old.reference_logit)
    assert shifted.weights["calib.shift"][0] == pytest.approx(summary["shift"])
    assert shifted.threshold == old.threshold and (old.weights["lr.coef"] == shifted.weights["lr.coef"]).all()
    assert shifted.meta.metrics["domain_shift"]["domain_median_logit"] == pytest.approx(summary["domain_median_logit"])
    z = np.array([summary["domain_median_logit"]])
    assert shifted.probability(z)[0] == pytest.approx(old.probability(np.array([old.reference_logit]))[0])


def test_shift_caveat_warns_only_when_most_sentences_were_flagged() -> None:
    from faithwatch.detectors.calibration import MOSTLY_FLAGGED, shift_caveat

    assert shift_caveat(0.2) is None and shift_caveat(MOSTLY_FLAGGED - 0.01) is None
    warning = shift_caveat(0.71)
    assert warning is not None and "71%" in warning and "calibrate with labels" in warning


def test_extraction_groups_a_prompts_examples_and_returns_the_examples_order(datasets, tmp_path, one_thread):
    """Examples of one prompt are extracted one after another (their shared prefill), and the tables come back in
    the examples' order, also when an example is recomputed later."""
    from faithwatch.alignment.lexical import LexicalScorer
    from faithwatch.data.loaders import load_dataset
    from faithwatch.eval.features import extract_text_features

    seen: list[str] = []

    class Recording(LexicalScorer):
        def score_many(self, sentences, context, question=""):
            seen.append(context)
            return super().score_many(sentences, context, question)

    a, _ = datasets
    base = load_dataset(str(a))[:4]
    shared = base[0].context
    examples = [dataclasses.replace(e, context=shared, question=base[0].question) if i in (0, 2) else e
                for i, e in enumerate(base)]
    first = extract_text_features(Recording(), "grouped", examples).sentences
    assert seen[:2] == [shared, shared] and seen[2] == examples[1].context
    order = [examples.index(next(e for e in examples if e.id == i)) for i in first.example_id]
    assert order == sorted(order) and len(set(order)) == 4
    edited = [dataclasses.replace(e, response="Nothing of the sort.") if i == 1 else e for i, e in enumerate(examples)]
    again = extract_text_features(Recording(), "grouped", edited).sentences
    assert list(dict.fromkeys(again.example_id)) == [e.id for e in examples]


def test_a_data_file_has_one_cache_name_however_its_path_is_spelled(tmp_path, monkeypatch):
    """``x.jsonl``, ``./x.jsonl`` and its absolute path share a feature cache; a named set keeps its name."""
    from faithwatch.eval.features import safe_name

    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "x.jsonl").write_text("{}\n")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.jsonl"
    outside.write_text("{}\n")
    monkeypatch.chdir(tmp_path)
    names = {safe_name(p) for p in ("sub/x.jsonl", "./sub/x.jsonl", str(tmp_path / "sub" / "x.jsonl"))}
    assert names == {"sub_x.jsonl"}
    assert safe_name("faithbench") == "faithbench" and safe_name("missing/y.jsonl") == "missing_y.jsonl"
    assert safe_name(str(outside)) == safe_name(f"../{outside.name}") != safe_name(outside.name)
    outside.unlink()


def test_in_sample_goes_by_content_not_by_file_name(datasets, tiny_model_dir, tmp_path, one_thread):
    # a held-out file named like the training file is out of sample; a renamed copy of the training file is in-sample
    a, b = datasets
    for folder, src in (("train", a), ("test", b)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "data.jsonl").write_text(src.read_text())
    (tmp_path / "renamed.jsonl").write_text(a.read_text())
    det = tmp_path / "det"
    trained = runner.invoke(app, ["train", "--data", str(tmp_path / "train" / "data.jsonl"), "--out", str(det),
                                  "--features", "likelihood,alignment,lexical", "--alignment", "lexical", "--lens",
                                  "none", "--model", str(tiny_model_dir)])
    assert trained.exit_code == 0, trained.output
    prints = json.loads((det / "detector.json").read_text())["metrics"]["training_responses"]
    assert list(prints) == ["data"] and len(prints["data"]) == 28
    assert '"threshold"' in trained.output and "training_responses" not in trained.output  # in the file only
    report = tmp_path / "report"
    result = runner.invoke(app, ["eval", "--detector", str(det), "--data",
                                 f"{tmp_path / 'test' / 'data.jsonl'},{tmp_path / 'renamed.jsonl'}",
                                 "--report", str(report), "--n-boot", "20"])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "data: a training set of the detector had this name, but none of these responses: out of sample" in said
    assert "renamed: 28 of its 28 responses from data" in said
    doc = json.loads((report / "results.json").read_text())
    assert doc["in_sample"] == ["renamed"]
    marks = {t["name"].split(" · ")[0]: t["in_sample"] for t in doc["tables"] if " · sentence level" in t["name"]}
    assert marks == {"data": False, "renamed": True}
    for data, warned in (("test/data.jsonl", False), ("renamed.jsonl", True)):  # calibrate goes by content too
        done = runner.invoke(app, ["calibrate", "--detector", str(det), "--data", str(tmp_path / data), "--out",
                                   str(tmp_path / f"cal-{warned}")])
        assert done.exit_code == 0, done.output
        assert ("responses from data; calibrate on responses of your domain" in " ".join(done.output.split())) \
            == warned, done.output


def test_a_recipe_file_is_read_with_clear_errors(tmp_path):
    from faithwatch.cli.detectors import _recipe
    from faithwatch.eval.training import Recipe

    def read(path):
        return _recipe(path, None, None, None, None, None, None, None, None)

    good = tmp_path / "recipe.json"
    good.write_text(json.dumps({"recipe": Recipe().to_dict()}), encoding="utf-8")
    assert read(good) == Recipe()
    latin = tmp_path / "latin1.json"
    latin.write_bytes('{"recipe": {"kind": "Malm\u00f6"}}'.encode("latin-1"))  # was an internal UnicodeDecodeError
    for path, said in ((latin, "is not UTF-8 text"), (tmp_path, "is a folder"), (tmp_path / "no.json", "not found")):
        with pytest.raises(InputError, match=said):
            read(path)
    # options the recipe's aggregator does not read were ignored; the MLP's monotone default failed after the features
    for options, said in (({"kind": "xgb", "c_value": 3.0}, "kind xgb does not read it"),
                          ({"probe_c": 0.1}, "add --probe-layers"),
                          ({"kind": "mlp"}, "kind mlp cannot keep monotone constraints")):
        args = {"path": None, "kind": None, "features": None, "transform": None, "c_value": None, "monotone": None,
                "weighting": None, "probe_layers": None, "probe_c": None, **options}
        with pytest.raises(InputError, match=said):
            _recipe(**args)
    assert _recipe(None, "mlp", None, None, None, False, None, None, None).kind == "mlp"  # --free


def test_data_and_questionable_are_checked_before_the_model_loads(datasets, monkeypatch):
    import faithwatch.eval.pipeline as pipeline

    a, b = datasets
    monkeypatch.setattr(pipeline, "extraction_monitor", lambda *a, **k: pytest.fail("the model loaded"))
    for command in (["train", "--out", "unused"], ["select"]):
        for policy, said in (("faithful", "no data set is faithbench: leave it out, or add faithbench"),
                             ("maybe", "--questionable must be exclude, faithful or unfaithful, got 'maybe'")):
            result = runner.invoke(app, [*command, "--data", f"{a},{b}", "--questionable", policy])
            assert result.exit_code == 2 and said in result.output, result.output
        for data in ([f"{a},{b},bogus"], [f"{a},{b}", "--augment", "bogus"]):  # found once the model had loaded
            result = runner.invoke(app, [*command, "--data", *data])
            assert result.exit_code == 2 and "unknown dataset 'bogus'" in result.output, result.output
