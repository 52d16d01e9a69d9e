"""Plug-ins: a new scorer or strategy is one object plus one registry line, and shows up everywhere."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from faithwatch import registry
from faithwatch.alignment import get_scorer, parse_spec, plain_specs, spec_help
from faithwatch.alignment.lexical import LexicalScorer
from faithwatch.errors import InputError
from faithwatch.registry import Registry


class ShoutScorer(LexicalScorer):
    """A toy scorer: lexical, under another name."""

    name = "shout"


def test_registry_basics() -> None:
    reg: Registry[int] = Registry("widget", "faithwatch.registry")
    reg.add("a", 1, "the first", default=True)
    reg.add("b", 2, "the second", arg_hint=":<x>")
    assert reg.names() == ("a", "b") and reg.names(default=True) == ("a",)
    assert reg.choices() == "a | b:<x>" and "b" in reg and "c" not in reg
    with pytest.raises(ValueError, match="already registered"):
        reg.add("a", 3)
    with pytest.raises(ValueError, match="bad widget name"):
        reg.add("x+y", 3)
    with pytest.raises(InputError, match="unknown widget 'c'; choose one of a, b"):
        reg.get("c")


def test_a_new_scorer_is_one_registry_line() -> None:
    registry.scorers.add("shout", lambda arg, device: ShoutScorer(), "a toy scorer")
    try:
        assert "shout" in spec_help() and "shout" in plain_specs()
        assert parse_spec("shout+lexical") == [("shout", None), ("lexical", None)]
        scorer = get_scorer("shout+lexical")
        ctx = "The tower is 330 metres tall."
        assert scorer.score_many(["The tower is 330 metres tall."], ctx)[0] == pytest.approx(
            get_scorer("lexical").score_many(["The tower is 330 metres tall."], ctx)[0])
    finally:
        registry.scorers.remove("shout")
    with pytest.raises(ValueError, match="unknown alignment scorer 'shout'"):
        get_scorer("shout")


def test_a_new_strategy_is_one_registry_line(monitor) -> None:
    from faithwatch.decoding import generate
    from faithwatch.decoding.loop import greedy_chooser

    def first_sentence(run):
        (cand,) = run.loop.sample(1, greedy_chooser())
        run.loop.keep([cand])
        return run.loop.beams[0], False

    registry.strategies.add("first-sentence", first_sentence, "greedy, one sentence")
    try:
        one = generate(monitor, "Where is it?", "It is in Paris. It is tall.", "first-sentence",
                       max_new_tokens=24)
        full = generate(monitor, "Where is it?", "It is in Paris. It is tall.", "greedy", max_new_tokens=24)
    finally:
        registry.strategies.remove("first-sentence")
    assert one.strategy == "first-sentence" and one.params["max_new_tokens"] == 24
    assert len(one.sentences) <= 1 and full.answer.startswith(one.answer)


def test_bad_parameters_are_input_errors(monitor) -> None:
    from faithwatch.decoding import generate

    with pytest.raises(InputError, match="beams"):
        generate(monitor, "q", "c", "fod", beams=0)
    with pytest.raises(InputError, match="unknown strategy 'magic'"):
        generate(monitor, "q", "c", "magic")


_PLUGIN_PROBE = textwrap.dedent('''
    import json
    from faithwatch import registry
    from faithwatch.alignment.lexical import LexicalScorer
    registry.scorers.add("toy-scorer", lambda arg, device: LexicalScorer(), "a toy scorer")
    registry.strategies.add("toy-strategy", lambda run: (run.loop.beams[0], False), "a toy strategy")
    from typer.testing import CliRunner
    from faithwatch.cli import app
    from faithwatch.server.schemas import CheckRequest, GenerateRequest
    runner = CliRunner()
    helps = {cmd: runner.invoke(app, [cmd, "--help"], terminal_width=400).output
             for cmd in ("monitor", "generate", "check", "serve", "lss")}
    print(json.dumps({"helps": helps, "generate": GenerateRequest.model_json_schema(),
                      "check": CheckRequest.model_json_schema(),
                      "valid": GenerateRequest(question="q", context="c", strategy="toy-strategy").strategy}))
''')


def test_plugins_reach_cli_choices_and_server_schemas() -> None:
    """Registered before the CLI and the server are imported (as a plug-in package would be), a toy scorer and a
    toy strategy appear in the CLI's help and in the server's request schemas."""
    done = subprocess.run([sys.executable, "-c", _PLUGIN_PROBE], capture_output=True, text=True, timeout=300,
                          env={"COLUMNS": "400", "PATH": "", "OMP_NUM_THREADS": "1", "NO_COLOR": "1"})
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    squash = {k: " ".join(v.split()) for k, v in got["helps"].items()}
    for cmd in ("monitor", "check", "serve", "lss"):
        assert "toy-scorer" in squash[cmd], cmd
    assert "toy-strategy" in squash["generate"]
    assert "toy-strategy" in got["generate"]["properties"]["strategy"]["enum"]
    assert "toy-scorer" in got["check"]["properties"]["alignment"]["examples"]
    assert got["valid"] == "toy-strategy"
