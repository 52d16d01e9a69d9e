"""Arguments of the Python API that must be True or False: a string was taken as true ("no" turned a thing on)."""

from __future__ import annotations

import pytest

from faithwatch.errors import InputError


@pytest.mark.parametrize("name", ["truncate_context", "static_cache", "cuda_graph"])
def test_monitor_refuses_a_string_for_a_switch(name):
    from faithwatch.monitor import Monitor

    with pytest.raises(InputError, match=f"{name} must be True or False, got 'no'"):
        Monitor("none", detector="heuristic", alignment="lexical", **{name: "no"})


def test_lss_loaders_and_runners_refuse_a_string_for_a_switch(tmp_path):
    from faithwatch.alignment import get_scorer
    from faithwatch.claims.lss import lss
    from faithwatch.eval.decoding import evaluate_strategies
    from faithwatch.eval.pipeline import load_labelled
    from faithwatch.scale import score_with_ray

    lexical = get_scorer("lexical")
    for name in ("prefilter", "reinsert"):
        with pytest.raises(InputError, match=f"{name} must be True or False, got 'false'"):
            lss("The tower is tall.", "The tower is tall.", lexical, **{name: "false"})
    with pytest.raises(InputError, match="text_only must be True or False, got 'yes'"):
        load_labelled(["faithbench"], None, text_only="yes")
    with pytest.raises(InputError, match="keep_trace must be True or False, got 'yes'"):
        evaluate_strategies(None, [], ["greedy"], keep_trace="yes")
    for name in ("vectors", "overwrite"):
        with pytest.raises(InputError, match=f"{name} must be True or False, got None"):
            score_with_ray({}, tmp_path / "in.jsonl", tmp_path / "out.jsonl", **{name: None})
    assert lss("The tower is tall.", "The tower is tall.", lexical, prefilter=False).score == 1.0  # a bool still runs
