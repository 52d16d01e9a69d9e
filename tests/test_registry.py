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
    assert "tau1" in one.params  # a plug-in that does not say what it reads lists every parameter
    assert "tau1" not in full.params and set(full.params) == {"strategy", "max_new_tokens", "max_sentence_tokens"}
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


def test_the_command_imports_plugins_named_in_the_environment(tmp_path) -> None:
    (tmp_path / "envplug.py").write_text(textwrap.dedent('''
        from faithwatch import registry
        from faithwatch.alignment.lexical import LexicalScorer
        registry.scorers.add("env-scorer", lambda arg, device: LexicalScorer(), "a scorer from $FAITHWATCH_PLUGINS")

        class Crash(LexicalScorer):
            name = "crash"

            def score_many(self, sentences, context, question=""):
                raise RuntimeError("a bug in the plug-in")

        registry.scorers.add("crash", lambda arg, device: Crash(), "a scorer that fails")
    '''))
    env = {"COLUMNS": "400", "PATH": "", "OMP_NUM_THREADS": "1", "NO_COLOR": "1", "PYTHONPATH": str(tmp_path)}

    def cli(plugins: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "faithwatch", "monitor", "--help"], capture_output=True,
                              text=True, timeout=300, env={**env, "FAITHWATCH_PLUGINS": plugins})

    found = cli("envplug")
    assert found.returncode == 0 and "env-scorer" in found.stdout, found.stderr
    broken = cli("envplug, no_such_plugin")
    assert broken.returncode == 2 and "'no_such_plugin' ($FAITHWATCH_PLUGINS) failed to load" in broken.stderr
    (tmp_path / "ctx.txt").write_text("The tower is in Paris.")
    (tmp_path / "answer.txt").write_text("The tower is in Rome.")
    crash = subprocess.run([sys.executable, "-m", "faithwatch", "check", "-c", str(tmp_path / "ctx.txt"), "-r",
                            str(tmp_path / "answer.txt"), "--extractor", "sentence", "--checker", "alignment",
                            "--alignment", "crash"],
                           capture_output=True, text=True, timeout=300, env={**env, "FAITHWATCH_PLUGINS": "envplug"})
    message = " ".join(crash.stderr.split())
    assert crash.returncode == 4 and "RuntimeError: a bug in the plug-in" in message
    assert f"(in {tmp_path / 'envplug.py'}:" in message and "not faithwatch's code: a plug-in?" in message


class _Length:
    """The signal of docs/plugins.md (a text-only, model-free signal)."""

    @staticmethod
    def make(features: tuple[str, ...]):
        from faithwatch.signals.base import Signal

        class LengthSignal(Signal):
            name = "length"
            text_only = True

            @property
            def feature_names(self):
                return ["n_words"]

            def compute(self, trace):
                return self.from_text([trace.sentence.text], trace.context, trace.question)[0]

            def from_text(self, texts, context, question=""):
                return [{f: float(len(t.split())) for f in features} for t in texts]

        return LengthSignal()


def test_plugins_that_break_their_contract_are_named() -> None:
    """A scorer outside [0, 1], a signal with undeclared features and a checker with too few verdicts are errors
    that name the plug-in (a batch reports them as bad records), not silent values."""
    from faithwatch.claims.checking import CheckError
    from faithwatch.claims.extraction import get_extractor
    from faithwatch.claims.pipeline import check_response
    from faithwatch.errors import FaithwatchError
    from faithwatch.monitor import Monitor

    class Big(LexicalScorer):
        name = "big"

        def score_many(self, sentences, context, question=""):
            return [1.5 for _ in sentences]

    context, answer = "The tower is in Paris. It is 330 metres tall.", "The tower is in Paris. It is tall."
    with pytest.raises(FaithwatchError, match="alignment scorer 'big' gave 1.5, outside"):
        Monitor("none", alignment=Big(), detector="heuristic", signals=["alignment"]).score("Where?", context, answer)
    from faithwatch.claims.checking import AlignmentChecker

    with pytest.raises(FaithwatchError, match="alignment scorer 'big' gave 1.5, outside"):  # check, as score
        check_response(answer, context, get_extractor("sentence"), AlignmentChecker(Big()))
    registry.signals.add("length", lambda ctx: _Length.make(("n_words",)), "words", default=False, text=True,
                         model_free=True)
    try:
        good = Monitor("none", alignment="lexical", detector="heuristic", signals=["alignment", "length"])
        assert [s.features["n_words"] for s in good.score("Where?", context, answer).sentences] == [5.0, 3.0]
    finally:
        registry.signals.remove("length")
    registry.signals.add("length", lambda ctx: _Length.make(("n_words", "other")), "words", default=False,
                         text=True, model_free=True)
    try:
        bad = Monitor("none", alignment="lexical", detector="heuristic", signals=["alignment", "length"])
        with pytest.raises(FaithwatchError, match=r"signal 'length' gave features it does not declare.*'other'"):
            bad.score("Where?", context, answer)
    finally:
        registry.signals.remove("length")

    class Short:
        name = "short"

        def check(self, claims, references, question=None):
            return []

    with pytest.raises(CheckError, match="checker 'short' gave 0 verdicts for 2 claims"):
        check_response(answer, context, get_extractor("sentence"), Short())


def test_a_strategy_s_own_defaults_apply_on_the_command_line(tiny_model_dir, tmp_path, one_thread) -> None:
    from typer.testing import CliRunner

    from faithwatch.cli import app

    (tmp_path / "ctx.txt").write_text("It is in Paris. It is tall.")
    registry.strategies.add("short-greedy", registry.strategies.get("greedy").obj, "greedy, briefly",
                            defaults={"max_new_tokens": 5})
    try:
        def params(*extra: str) -> dict:
            done = CliRunner().invoke(app, ["generate", "-c", str(tmp_path / "ctx.txt"), "-q", "Where?", "--model",
                                            str(tiny_model_dir), "--detector", "heuristic", "--strategy",
                                            "short-greedy", "--json", *extra])
            assert done.exit_code == 0, done.output
            return json.loads(done.stdout)["params"]

        assert params()["max_new_tokens"] == 5  # the strategy's default, not DecodingParams'
        assert params("--max-new-tokens", "7")["max_new_tokens"] == 7  # the caller's value wins
    finally:
        registry.strategies.remove("short-greedy")


def test_every_builtin_strategy_says_which_parameters_it_reads() -> None:
    from faithwatch.params import DecodingParams

    for name in registry.strategies.names():
        reads = registry.strategies.get(name).options.get("reads")
        assert reads is not None and set(reads) <= set(DecodingParams.model_fields), name
    assert "alpha" in registry.strategies.get("cad").options["reads"]
    assert "tau1" not in registry.strategies.get("cad").options["reads"]


def test_an_error_inside_a_compiled_library_is_not_blamed_on_a_plug_in(tmp_path, monkeypatch):
    # numpy's Cython frames are named by relative paths ("numpy/random/....pyx"): they resolved against the working
    # folder, so the message said the error was in a plug-in there
    from faithwatch.cli import _outside
    from faithwatch.stats import resample_counts

    monkeypatch.chdir(tmp_path)
    try:
        next(resample_counts(4, 2, seed=-1))  # a generator: it draws when asked
    except ValueError as exc:
        assert _outside(exc) == ""
    else:
        raise AssertionError("numpy took a negative seed")
