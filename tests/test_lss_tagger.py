"""The LSS tagger: training on lss-dev-format data, artifact round trip and refusals, reference windows,
resumable cross-validation, the LSS it gives, the in-sample mark and the CLI (tiny random encoder)."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from faithwatch.claims.lss import TAGGER_ALGORITHM, lss_tagged, split_words
from faithwatch.errors import InputError
from faithwatch.eval.lss import LSSConfig, in_sample_mark, load_lss_dev, run_lss_eval
from faithwatch.eval.lss_tagger import cross_validate, examples_from_lss_dev
from faithwatch.nli.artifact import ArtifactError
from faithwatch.nli.tagger import claim_parts, encode, load_tagger, read_meta, word_probabilities
from faithwatch.nli.tagger_train import TaggerConfig, TaggerExample, edited_examples, fit, save
from test_claims_lss import REFERENCE, _write_lss_dev
from test_nli import tiny_artifact, tiny_base  # noqa: F401  (module fixtures: a tiny encoder and NLI adapter)


def _cfg(out: Path, base: Path, nli: Path, **kw) -> TaggerConfig:
    settings = dict(out_dir=str(out), epochs=2, batch_size=2, lr=5e-3, max_length=96, lora_r=2, lora_alpha=4,
                    bf16=False, base_dir=str(base), nli_dir=str(nli), data={"source": "lss-dev (test)"})
    settings.update(kw)
    return TaggerConfig(**settings)


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory):
    root = _write_lss_dev(tmp_path_factory.mktemp("lss"))
    df = load_lss_dev(root)
    return root, df, examples_from_lss_dev(df)


@pytest.fixture(scope="module")
def tagger_dir(tmp_path_factory: pytest.TempPathFactory, tiny_base: Path, tiny_artifact: Path, data) -> Path:  # noqa: F811
    cfg = _cfg(tmp_path_factory.mktemp("tagger"), tiny_base, tiny_artifact)
    model, _ = fit(cfg, data[2][:4])  # 4 of the 5 pairs
    return save(cfg, model, data[2][:4], 1.0)


def e_index(example, word: str) -> int:
    return example.words.index(word)


def test_examples_carry_the_share_of_annotators(data) -> None:
    _, df, examples = data
    assert len(examples) == df.pair_id.nunique() == 5
    twice = next(e for e in examples if "1889" in e.words)  # "1889" kept by one of its two annotators
    assert twice.labels[e_index(twice, "1889")] == 0.5 and twice.labels[0] == 1.0
    empty = next(e for e in examples if e.words[0] == "Bananas")
    assert set(empty.labels) == {0.0}


def test_artifact_round_trip_and_recorded_predictions(tagger_dir: Path, tiny_base: Path,  # noqa: F811
                                                      tiny_artifact: Path, data) -> None:  # noqa: F811
    meta = read_meta(tagger_dir)
    assert meta.reference_predictions and meta.training["examples"] == 4
    assert meta.training["pair_ids"] == sorted(e.pair_id for e in data[2][:4])
    tagger = load_tagger(tagger_dir, base_dir=tiny_base, nli_dir=tiny_artifact, precision="fp32")
    claims = [split_words(p["claim"]) for p in meta.reference_predictions]
    probs = tagger.word_probabilities(claims, [p["reference"] for p in meta.reference_predictions])
    for got, want in zip(probs, meta.reference_predictions, strict=True):
        assert len(got) == len(want["probs"]) and np.allclose(got, want["probs"], atol=1e-5)
    res = lss_tagged(["The Eiffel Tower was built in 1925 in Rome."], [REFERENCE], tagger, threshold=0.5)[0]
    probs = np.array(res.word_support)
    assert res.kept_indices == tuple(np.flatnonzero(probs >= 0.5)) and res.algorithm == TAGGER_ALGORITHM
    assert res.support_of_claim == pytest.approx(float(probs.mean()), abs=1e-6)
    assert res.to_dict()["word_support"] == list(res.word_support)


def test_refuses_changed_files_and_other_models(tmp_path: Path, tagger_dir: Path, tiny_base: Path,  # noqa: F811
                                                 tiny_artifact: Path) -> None:  # noqa: F811
    bad = tmp_path / "bad"
    shutil.copytree(tagger_dir, bad)
    (bad / "adapter_config.json").write_text((bad / "adapter_config.json").read_text() + " ")
    with pytest.raises(ArtifactError, match="corrupted or was changed"):
        load_tagger(bad, base_dir=tiny_base, nli_dir=tiny_artifact)
    with pytest.raises(ArtifactError, match="NLI adapter"):
        load_tagger(tagger_dir, base_dir=tiny_base)  # the shipped nli-minilm, not the one it was trained on
    with pytest.raises(ArtifactError, match="base weights"):
        load_tagger(tagger_dir, nli_dir=tiny_artifact)  # the packaged MiniLM, not the tiny base
    meta = json.loads((tagger_dir / "faithwatch_lss_tagger.json").read_text())
    (bad / "faithwatch_lss_tagger.json").write_text(json.dumps({**meta, "format": "faithwatch-lss-tagger/0"}))
    with pytest.raises(ArtifactError, match="format"):
        read_meta(bad)


def test_long_reference_is_read_in_windows(tagger_dir: Path, tiny_base: Path, tiny_artifact: Path) -> None:  # noqa: F811
    tagger = load_tagger(tagger_dir, base_dir=tiny_base, nli_dir=tiny_artifact, precision="fp32")
    words = split_words("The tower was painted green in 1925.")
    reference = " ".join(f"Sentence {i} says the tower stood in Paris in {1800 + i}." for i in range(40))
    windows = encode(tagger.tokenizer, words, reference, 96)
    assert len(windows) > 2 and all(len(w.input_ids) <= 96 for w in windows)
    seen = set()
    for w in windows:  # every reference token is read in some window
        sep = w.input_ids.index(tagger.tokenizer.sep_token_id)
        seen.update(tagger.tokenizer.decode(w.input_ids[sep + 1 : -1]).split())
    assert seen >= set(tagger.tokenizer.decode(tagger.tokenizer(reference)["input_ids"][1:-1]).split())
    per_window = [word_probabilities(tagger.model, tagger.tokenizer, [words], [reference], 96)[0]]
    logits = []
    with torch.inference_mode():
        for w in windows:
            out = tagger.model(input_ids=torch.tensor([w.input_ids]), token_type_ids=torch.tensor([w.token_type_ids]))
            logits.append(out.logits[0, w.word_starts, 0].numpy())
    assert np.allclose(per_window[0], 1 / (1 + np.exp(-np.max(logits, 0))), atol=1e-5)
    with pytest.raises(InputError, match="split it into sentences"):
        encode(tagger.tokenizer, ["word"] * 80, reference, 96)
    with pytest.raises(InputError, match="reference is empty"):
        lss_tagged(["The tower."], [" "], tagger)


def test_long_claim_is_read_in_parts_when_asked(tagger_dir: Path, tiny_base: Path,  # noqa: F811
                                                tiny_artifact: Path) -> None:  # noqa: F811
    tagger = load_tagger(tagger_dir, base_dir=tiny_base, nli_dir=tiny_artifact, precision="fp32")
    reference = "The Eiffel Tower was completed in 1889. It stands in Paris and is 330 metres tall."
    words = split_words(" ".join(f"The tower stood in Paris in {1800 + i}." for i in range(20)))
    with pytest.raises(InputError, match="split it into sentences"):
        word_probabilities(tagger.model, tagger.tokenizer, [words], [reference], 96)
    parts = claim_parts(tagger.tokenizer, words, 96)
    assert len(parts) > 2 and parts[0][0] == 0 and parts[-1][1] == len(words)
    assert all(a[1] == b[0] for a, b in zip(parts, parts[1:], strict=False))  # every word in exactly one part
    short = split_words("The tower stood in Paris.")
    assert claim_parts(tagger.tokenizer, short, 96) == [(0, len(short))]
    got = word_probabilities(tagger.model, tagger.tokenizer, [short, words], [reference, reference], 96,
                             split_long=True)
    assert len(got[1]) == len(words) and np.isfinite(got[1]).all()
    for start, stop in parts:  # each part reads as it would alone
        alone = word_probabilities(tagger.model, tagger.tokenizer, [words[start:stop]], [reference], 96)[0]
        assert np.allclose(got[1][start:stop], alone, atol=1e-5)
    assert np.allclose(got[0], word_probabilities(tagger.model, tagger.tokenizer, [short], [reference], 96)[0],
                       atol=1e-5)


def test_a_word_the_tokenizer_reads_as_nothing_is_read_as_a_stop(tagger_dir: Path, tiny_base: Path,  # noqa: F811
                                                                 tiny_artifact: Path) -> None:  # noqa: F811
    # a sentence of zero-width or control characters only (a word of no token) used to raise KeyError
    tagger = load_tagger(tagger_dir, base_dir=tiny_base, nli_dir=tiny_artifact, precision="fp32")
    reference = "The Eiffel Tower was completed in 1889. It stands in Paris."
    stop = word_probabilities(tagger.model, tagger.tokenizer, [["."]], [reference], 96)[0]
    for invisible in ("\u200b", "\x00\x01", "\ufeff"):
        assert tagger.tokenizer(invisible, add_special_tokens=False)["input_ids"] == []
        assert split_words(invisible) == [invisible]
        got = word_probabilities(tagger.model, tagger.tokenizer, [[invisible]], [reference], 96)[0]
        assert np.allclose(got, stop, atol=1e-6)
    words = ["The", "tower", "\u200b", "stands."]  # inside a claim too; the other words read as before
    got = word_probabilities(tagger.model, tagger.tokenizer, [words], [reference], 96)[0]
    dotted = word_probabilities(tagger.model, tagger.tokenizer, [["The", "tower", ".", "stands."]], [reference], 96)[0]
    assert len(got) == 4 and np.allclose(got, dotted, atol=1e-6)


def test_cross_validation_is_out_of_fold_and_resumable(tmp_path: Path, tiny_base: Path,  # noqa: F811
                                                        tiny_artifact: Path, data) -> None:  # noqa: F811
    cfg = _cfg(tmp_path / "out", tiny_base, tiny_artifact, epochs=1)
    seen: list[int] = []
    rows = cross_validate(cfg, data[2], 2, tmp_path / "cv", progress=lambda k, *_: seen.append(k))
    assert sorted(rows.pair_id) == sorted(e.pair_id for e in data[2])  # every pair once
    assert set(seen) == {0, 1} and len(list((tmp_path / "cv").glob("fold-*.jsonl"))) == 2

    def no_training(*_):
        raise AssertionError("a finished fold was trained again")

    again = cross_validate(cfg, data[2], 2, tmp_path / "cv", progress=no_training)
    assert again.sort_values("pair_id").reset_index(drop=True).equals(rows.sort_values("pair_id")
                                                                        .reset_index(drop=True))
    with pytest.raises(ValueError, match="at least 2 folds"):
        cross_validate(cfg, data[2], 1, tmp_path / "cv")


def test_eval_marks_a_tagger_trained_on_lss_dev_as_in_sample(tagger_dir: Path, tiny_base: Path,  # noqa: F811
                                                             tiny_artifact: Path, data) -> None:  # noqa: F811
    tagger = load_tagger(tagger_dir, base_dir=tiny_base, nli_dir=tiny_artifact, precision="fp32")
    result = run_lss_eval(data[0], {"lss-tagger": tagger}, LSSConfig(), n_boot=20, refchecker=False)
    name = "lss-tagger [in-sample: 4 of 5 pairs trained on]"
    assert in_sample_mark(tagger, ["other"]) == "" and in_sample_mark(object(), data[1].pair_id) == ""
    assert list(result.pairs) == [name]
    corr = result.tables["correlation with the human 1-5 rating"]
    assert corr[corr.scorer == name].method.tolist() == ["LSS score |LSS|/|claim|", "ROUGE-L F1(claim, LSS)",
                                                         "mean word support of the claim"]
    assert set(corr[corr.scorer == name].kind) == {"LSS (ours)"}
    assert result.in_sample_tables["correlation with the human 1-5 rating"]  # the report marks it in its JSON
    pairs = result.pairs[name]
    assert (pairs.evaluations == 1).all() and not pairs.truncated_search.any()


def test_cli_trains_with_cross_validation(tmp_path: Path, tiny_base: Path, tiny_artifact: Path, data) -> None:  # noqa: F811
    from faithwatch.cli import app

    res = CliRunner().invoke(app, ["train-lss-tagger", "--out", str(tmp_path / "t"), "--data-root", str(data[0]),
                                   "--cv", "2", "--epochs", "1", "--batch-size", "2", "--lora-r", "2",
                                   "--base", str(tiny_base), "--nli", str(tiny_artifact), "--no-bf16",
                                   "--n-boot", "10", "--threads", "1", "--report", str(tmp_path / "r")])
    assert res.exit_code == 0, res.output
    assert "2-fold out-of-fold" in res.output and (tmp_path / "r" / "results.md").is_file()
    meta = read_meta(tmp_path / "t")
    assert meta.evaluation["folds"] == 2 and "word_f1" in meta.evaluation
    assert set(meta.evaluation["correlation"]) == {"LSS score |LSS|/|claim|", "ROUGE-L F1(claim, LSS)",
                                                   "mean word support of the claim"}
    res = CliRunner().invoke(app, ["train-lss-tagger", "--out", str(tmp_path / "t1"), "--data-root", str(data[0]),
                                   "--cv", "1"])
    assert res.exit_code != 0 and "at least 2 folds" in res.output
    res = CliRunner().invoke(app, ["train-lss-tagger", "--out", str(tmp_path / "t2"), "--data-root", str(data[0]),
                                   "--cv", "0", "--report", str(tmp_path / "r0")])  # no out-of-fold tables to write
    assert res.exit_code == 2 and "--report is for the out-of-fold evaluation, and --cv 0 skips it" in res.output
    assert not (tmp_path / "t2").exists() and not (tmp_path / "r0").exists()
    res = CliRunner().invoke(app, ["train-lss-tagger", "--out", str(tmp_path / "t3"), "--data-root", str(data[0]),
                                   "--lr", "-1"])  # torch refused it with a traceback, after the data had loaded
    assert res.exit_code == 2 and "--lr (the learning rate) must be positive and finite, got -1.0" in res.output
    with pytest.raises(InputError, match="synthetic is a share of the training pairs"):
        TaggerConfig(out_dir="x", synthetic=math.nan)


def test_shipped_tagger_reproduces_its_recorded_predictions() -> None:
    """The tagger inside the package loads on the packaged base and NLI adapter and gives its recorded output."""
    from faithwatch.nli.tagger import SHIPPED_DIR

    meta = read_meta(SHIPPED_DIR)
    assert meta.training["config"]["data"]["source"].startswith("lss-dev") and meta.evaluation["folds"] == 5
    size = sum(f.stat().st_size for f in SHIPPED_DIR.iterdir())
    assert size < 5 * 2**20, f"the shipped tagger is {size / 2**20:.1f} MiB"
    tagger = load_tagger(precision="fp32")
    pairs = meta.reference_predictions
    probs = tagger.word_probabilities([split_words(p["claim"]) for p in pairs], [p["reference"] for p in pairs])
    for got, want in zip(probs, pairs, strict=True):
        assert np.allclose(got, want["probs"], atol=1e-4)
    assert probs[0].min() >= 0.5  # a claim the reference states word for word is kept whole
    assert split_words(pairs[1]["claim"])[int(probs[1].argmin())] == "9"  # the changed number is the weakest word


def test_edited_examples_change_one_word_of_a_reference_sentence() -> None:
    refs = ["The bridge opened in 1932 and carried 4000 cars a day. Engineers from Sydney and Melbourne built it "
            "over six years.", "The museum in Paris holds paintings by Monet and Renoir. It opened to visitors in "
            "1897 after a long delay."]
    examples = [TaggerExample(f"p{i}", ("claim",), refs[i % 2], (1.0,)) for i in range(40)]
    made = edited_examples(examples, 1.0, seed=3)
    assert made == edited_examples(examples, 1.0, seed=3) and made != edited_examples(examples, 1.0, seed=4)
    assert edited_examples(examples, 0.0, seed=3) == []
    edits = [e for e in made if 0.0 in e.labels]
    assert edits and len(edits) < len(made)  # edited and copied sentences
    for e in made:
        diffs = [[i for i, (a, b) in enumerate(zip(e.words, s.rstrip(".").split(" "), strict=True))
                  if a.rstrip(".") != b] for s in e.reference.split(". ") if len(s.split()) == len(e.words)]
        changed = min(diffs, key=len)  # its reference sentence, word for word apart from the edit
        assert [i for i, y in enumerate(e.labels) if y == 0.0] == changed and len(changed) <= 1
    with pytest.raises(InputError, match="synthetic share"):
        edited_examples(examples, 1.5, seed=3)
    cfg = TaggerConfig(out_dir="x")
    assert cfg.fingerprint(examples) == TaggerConfig(out_dir="x", synthetic=0.0).fingerprint(examples)
    assert cfg.fingerprint(examples) != TaggerConfig(out_dir="x", synthetic=0.5).fingerprint(examples)
