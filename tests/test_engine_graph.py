"""The CUDA-graph decode step (GPU only): replayed graphs record what the eager dynamic-cache path records.

On a CPU the same static-shape step runs eagerly and is compared in ``test_engine_static.py``."""

from __future__ import annotations

import pytest
import torch

from faithwatch.models import engine as engine_mod
from faithwatch.models.engine import DecodingEngine
from faithwatch.models.prompts import build_prompts
from same import ALL_NEEDS as ALL
from same import assert_same_records
from test_engine_static import _script

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.fixture(scope="module")
def cuda_lm(tiny_model_dir):
    from faithwatch.models.loading import load_model

    return load_model(str(tiny_model_dir), device="cuda")


def test_graph_replays_equal_the_eager_dynamic_path(cuda_lm, monkeypatch):
    monkeypatch.setattr(engine_mod, "STATIC_BLOCK", 16)  # the cache grows (new width, new capture) several times
    prompts = build_prompts(cuda_lm.tokenizer, "When did it open?", "The bridge opened in 1820. The tower in 1889.")
    eager = _script(DecodingEngine(cuda_lm, ALL).start(prompts), 40)
    graph = _script(DecodingEngine(cuda_lm, ALL, cuda_graph=True).start(prompts), 40)
    steps = graph.engine.graphs
    assert steps.cuda and 2 <= steps.captures < 40  # captured per cache and batch shape, replayed per token
    for a, b in zip(eager.branch_records, graph.branch_records, strict=True):
        assert_same_records(a, b)


def test_monitor_with_cuda_graphs_scores_the_same_sentences(cuda_lm):
    """Token by token without graphs, against graphs and against running ahead (the GPU default), with and
    without graphs."""
    from faithwatch.monitor import Monitor

    question, context = "When did the tower open?", "The tower opened in 1889. It is 330 metres tall."
    signals = ["likelihood", "entropy", "contrastive", "influence", "lookback", "alignment", "lexical", "edits"]
    runs = [Monitor(cuda_lm, signals=signals, alignment="lexical", detector="heuristic", max_new_tokens=40,
                    cuda_graph=graph, run_ahead=ahead).generate(question, context)
            for graph, ahead in ((False, 1), (True, 1), (True, None), (False, None))]
    assert runs[0].sentences
    for run in runs[1:]:
        assert run.response == runs[0].response
        for a, b in zip(runs[0].sentences, run.sentences, strict=True):
            assert a.text == b.text and abs(a.score - b.score) < 1e-4


def test_sessions_of_other_prompt_lengths_replay_the_same_graphs(cuda_lm):
    """The second request captures nothing new: the pooled cache and its graph are reused, the prompt columns of
    the lookback ratios are an input of the graph."""
    engine = DecodingEngine(cuda_lm, ALL, cuda_graph=True)
    eager = DecodingEngine(cuda_lm, ALL)
    for n, context in enumerate(["The tower opened in 1889.", "The bridge, long and old, opened in 1820 or so."]):
        prompts = build_prompts(cuda_lm.tokenizer, "When?", context)
        runs = [e.start(prompts) for e in (eager, engine)]
        for run in runs:
            for t in range(6):
                run.feed([30 + t])
        assert_same_records(runs[0].records, runs[1].records)
        assert engine.graphs.captures == 1, n
        del runs, run  # the request ends: its cache goes back to the pool
