"""The command line: JSON streaming, batch scoring and meaningful exit codes."""

from __future__ import annotations

import contextlib
import json
import os

import pytest
from typer.testing import CliRunner

from faithwatch.cli import app

runner = CliRunner()
CONTEXT = "The river Avon flows through the old town. The bridge was built in 1820 by local masons."


def _ctx(tmp_path, text=CONTEXT):
    path = tmp_path / "ctx.txt"
    path.write_text(text)
    return str(path)


def test_monitor_json_lines(tiny_model_dir, tmp_path, one_thread):
    result = runner.invoke(app, ["monitor", "-c", _ctx(tmp_path), "-q", "When was the bridge built?",
                                 "--model", str(tiny_model_dir), "--alignment", "lexical", "--json",
                                 "--max-new-tokens", "12"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert rows[-1]["type"] == "summary" and rows[-1]["num_tokens"] <= 12
    sentences = [r for r in rows if r["type"] == "sentence"]
    assert sentences and all(0.0 <= s["score"] <= 1.0 for s in sentences)
    assert "vectors" not in sentences[0]  # only with --vectors
    assert sentences[0]["detector"] == "heuristic-v1"
    # --vectors without --json printed the coloured text, the option ignored
    plain = runner.invoke(app, ["monitor", "-c", _ctx(tmp_path), "-q", "When?", "--model", str(tiny_model_dir),
                                "--vectors"])
    assert plain.exit_code == 2 and "--vectors adds the lookback ratios to the JSON lines: add --json" in plain.output
    # signals that give no vector: the option was ignored (score's is on by default, refused only when asked for)
    said = "this run's signals give none: add lookback to --signals, or leave --vectors out"
    some = runner.invoke(app, ["monitor", "-c", _ctx(tmp_path), "-q", "When?", "--model", str(tiny_model_dir),
                               "--alignment", "lexical", "--json", "--vectors", "--max-new-tokens", "6",
                               "--signals", "likelihood,lookback"])
    assert some.exit_code == 0 and '"vectors": {"lookback_ratio"' in some.stdout, some.output
    records = tmp_path / "in.jsonl"
    records.write_text(json.dumps({"context": CONTEXT, "question": "When?", "response": "It opened in 1820."}) + "\n")
    for command in (["monitor", "-c", _ctx(tmp_path), "-q", "When?", "--json", "--signals", "likelihood"],
                    ["score", "-i", str(records), "-o", str(tmp_path / "out.jsonl"), "--signals", "likelihood"]):
        result = runner.invoke(app, [*command, "--vectors", "--model", str(tmp_path / "no-model"), "--alignment",
                                     "lexical"])  # refused before the model: loading it would fail
        assert result.exit_code == 2 and said in result.output, result.output
    result = runner.invoke(app, ["score", "-i", str(records), "-o", str(tmp_path / "out.jsonl"), "--vectors",
                                 "--model", "none", "--detector", "heuristic", "--alignment", "lexical"])
    assert result.exit_code == 2 and said in result.output, result.output  # the text signals give none
    scored = runner.invoke(app, ["score", "-i", str(records), "-o", str(tmp_path / "out.jsonl"), "--signals",
                                 "likelihood", "--model", str(tiny_model_dir), "--alignment", "lexical"])
    assert scored.exit_code == 0, scored.output  # the default --vectors: nothing was asked


def test_monitor_notes_a_chat_context_after_the_answer(tiny_model_dir, tmp_path, one_thread):
    chat = "Ana: I'll bring the cake.\nBen: Great, thanks!\nAna: See you at six."
    base = ["-q", "Who brings the cake?", "--model", str(tiny_model_dir), "--alignment", "lexical",
            "--max-new-tokens", "8"]
    noted = runner.invoke(app, ["monitor", "-c", _ctx(tmp_path, chat), *base], terminal_width=300)
    assert noted.exit_code == 0, noted.output
    assert noted.output.index("response score:") < noted.output.index("reads as a chat or meeting transcript")
    plain = runner.invoke(app, ["monitor", "-c", _ctx(tmp_path), *base, "--json"])
    assert plain.exit_code == 0 and "transcript" not in plain.output
    summary = json.loads(runner.invoke(app, ["monitor", "-c", _ctx(tmp_path, chat), *base, "--json"]).stdout
                         .splitlines()[-1])
    assert summary["type"] == "summary" and "chat or meeting transcript" in summary["notes"][0]
    generated = runner.invoke(app, ["generate", "-c", _ctx(tmp_path, chat), "-q", "Who brings the cake?", "--model",
                                    str(tiny_model_dir), "-s", "greedy", "--max-new-tokens", "8"],
                              terminal_width=300)
    assert generated.exit_code == 0, generated.output
    assert generated.output.index("mean sentence score") < generated.output.index("reads as a chat or meeting")
    as_json = runner.invoke(app, ["generate", "-c", _ctx(tmp_path, chat), "-q", "Who brings the cake?", "--model",
                                  str(tiny_model_dir), "-s", "greedy", "--max-new-tokens", "8", "--json"])
    assert as_json.exit_code == 0, as_json.output
    notes = json.loads(as_json.stdout.strip().splitlines()[-1])["notes"]  # as /v1/generate's
    assert len(notes) == 1 and "chat or meeting transcript" in notes[0]


def test_monitor_static_cache_and_run_ahead_print_the_same_scores(tiny_model_dir, tmp_path, one_thread):
    args = ["monitor", "-c", _ctx(tmp_path), "-q", "When was the bridge built?", "--model", str(tiny_model_dir),
            "--alignment", "lexical", "--json", "--max-new-tokens", "24"]
    runs = [runner.invoke(app, args + extra)
            for extra in ([], ["--static-cache"], ["--cuda-graph"], ["--cuda-graph", "--run-ahead", "5"])]
    assert all(r.exit_code == 0 for r in runs), [r.output for r in runs]
    assert "--cuda-graph: the model is on cpu, where there are no CUDA graphs" in runs[2].stderr  # it said nothing
    assert "CUDA graphs" not in runs[1].stderr
    rows = [[json.loads(line) for line in r.stdout.splitlines() if line.startswith('{"type": "sentence"')]
            for r in runs]
    for other in rows[1:]:
        assert rows[0] and [r["text"] for r in rows[0]] == [r["text"] for r in other]
        assert all(abs(a["score"] - b["score"]) < 1e-4 for a, b in zip(rows[0], other, strict=True))


def test_serve_refuses_an_unknown_signal_before_listening():
    result = runner.invoke(app, ["serve", "--model", "none", "--signals", "likelihood,bogus", "--port", "0"])
    assert result.exit_code == 2 and "unknown signals ['bogus']" in result.output
    for command in (["serve"], ["monitor", "-c", "README.md", "-q", "q"]):  # before the model, not once it loaded
        result = runner.invoke(app, [*command, "--model", "/no/model", "--signals", "likelihood,bogus"])
        assert result.exit_code == 2 and "unknown signals ['bogus']" in result.output, result.output
    checker = runner.invoke(app, ["serve", "--model", "none", "--check-checker", "nli", "--port", "0"])
    assert checker.exit_code == 2 and "--check-checker must be one of detector, alignment" in checker.output
    for spec in ("none", "bogus"):  # said after the model had loaded, as "check_alignment must be one of"
        aligned = runner.invoke(app, ["serve", "--model", "none", "--check-alignment", spec, "--port", "0"])
        said = " ".join(aligned.output.split())
        assert aligned.exit_code == 2 and "--check-alignment must be one of" in said and repr(spec) in said, said
    none = runner.invoke(app, ["serve", "--model", "none", "--port", "0"])  # an AttributeError on model_id before
    assert none.exit_code == 2 and "faithwatch serve needs a language model" in none.output


@pytest.mark.parametrize("signals", ["", " , "])
def test_signals_that_name_no_family_are_refused(tmp_path, signals):
    # --signals '' was read as "the default signals", silently
    out = tmp_path / "o.jsonl"
    result = runner.invoke(app, ["score", "-i", _ctx(tmp_path), "-o", str(out), "--model", "none",
                                 "--signals", signals])
    assert result.exit_code == 2 and "names no signal family" in result.output and not out.exists()


@pytest.mark.parametrize("command", ["score", "serve", "proxy"])
def test_a_dtype_without_a_model_is_refused(tmp_path, monkeypatch, command):
    # --model none --dtype bf16 ran as if --dtype had not been given (its default was fp32, so it could not be told)
    import uvicorn

    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: None)  # never serve, should the check be gone
    args = {"score": ["-i", _ctx(tmp_path), "-o", str(tmp_path / "o.jsonl")], "serve": ["--port", "0"],
            "proxy": ["--upstream", "http://127.0.0.1:9/v1", "--port", "0"]}[command]
    result = runner.invoke(app, [command, *args, "--model", "none", "--dtype", "bf16", "--detector", "heuristic",
                                 "--alignment", "lexical"])
    # it said "dtype sets …", the library's word: only names with an underscore were written as flags
    assert result.exit_code == 2 and "--dtype sets how the language model runs" in result.output, result.output
    if command != "proxy":  # it has no model window to cut the context to: the option was ignored
        result = runner.invoke(app, [command, *args, "--model", "none", "--truncate-context", "--detector",
                                     "heuristic", "--alignment", "lexical"])
        said = "--truncate-context sets how the language model runs: with model 'none' there is no model"
        assert result.exit_code == 2 and said in result.output, result.output


@pytest.mark.parametrize("option", [["--workers", "4"], ["--address", "auto"], ["--gpus-per-worker", "1"],
                                    ["--shard-rows", "10"], ["--format", "parquet"]])
def test_ray_options_without_ray_are_refused(tmp_path, monkeypatch, option):
    # they were ignored: `score --workers 4` ran in one process, as if the option had not been given
    import faithwatch.cli.evaluation as evaluation

    monkeypatch.setattr(evaluation, "load_tables", lambda *a, **k: pytest.fail("features computed first"))
    commands = [["score", "-i", _ctx(tmp_path), "-o", str(tmp_path / "o.jsonl"), "--model", "none",
                 "--detector", "heuristic", "--alignment", "lexical"]]
    if option[0] not in ("--shard-rows", "--format"):  # score's only; --format was told 'o.jsonl is a folder'
        commands.append(["eval", "--data", "begin-dev", "--report", str(tmp_path / "r")])
    for command in commands:
        result = runner.invoke(app, [*command, *option])
        said = " ".join(result.output.split())
        assert result.exit_code == 2 and f"{option[0]} acts only with --ray" in said, said
    assert not (tmp_path / "o.jsonl").exists()


@pytest.mark.parametrize("command", [["eval", "--data", "begin-dev"], ["calibrate", "--data", "begin-dev",
                                                                      "--out", "x"]])
def test_eval_and_calibrate_say_the_heuristic_has_no_folder(command):
    # "detector folder not found: heuristic; give heuristic, default (the shipped one), or …": refused, then advised
    result = runner.invoke(app, [*command, "--detector", "heuristic"])
    said = " ".join(result.output.split())
    assert result.exit_code == 2 and "the heuristic detector is a fixed rule with no folder" in said, said
    missing = runner.invoke(app, [*command, "--detector", "no-such-folder"])
    said = " ".join(missing.output.split())
    assert "detector folder not found: no-such-folder; give default" in said and "heuristic" not in said, said


@pytest.mark.parametrize("option", [["--batch-size", "4"], ["--host-workers", "2"]])
def test_forward_pass_options_without_a_forward_pass_are_refused(tmp_path, option):
    # --model none --batch-size 4 scored one record at a time, as if the option had not been given
    result = runner.invoke(app, ["score", "-i", _ctx(tmp_path), "-o", str(tmp_path / "o.jsonl"), "--model", "none",
                                 "--detector", "heuristic", "--alignment", "lexical", *option])
    said = " ".join(result.output.split())
    assert result.exit_code == 2 and f"{option[0]} shapes the language model's forward passes" in said, said
    assert "with --model none there are none" in said and not (tmp_path / "o.jsonl").exists()


def test_shard_rows_need_a_folder_of_shards(tmp_path):
    result = runner.invoke(app, ["score", "-i", _ctx(tmp_path), "-o", str(tmp_path / "o.jsonl"), "--model", "none",
                                 "--ray", "--shard-rows", "10"])
    assert result.exit_code == 2 and "give --output a folder" in " ".join(result.output.split())


@pytest.mark.parametrize("device", ["bogus", "cuda:7"])
def test_every_device_option_is_checked_before_work(tmp_path, device):
    # lss, check, eval-nli and train-nli passed it on: torch's RuntimeError ("Expected one of cpu, cuda, ...") or,
    # for cuda on a CPU-only torch, an AssertionError, both reported as internal errors
    ctx = _ctx(tmp_path)
    commands = [["lss", "-r", ctx, "--claim", "It is old.", "--scorer", "lexical"], ["check", "-c", ctx, "-r", ctx],
                ["eval-nli", "--limit", "1"], ["score", "-i", ctx, "-o", str(tmp_path / "o.jsonl"), "--model", "none"]]
    for command in commands:
        result = runner.invoke(app, [*command, "--device", device])
        lines = [x for x in result.output.splitlines() if x.strip()]
        assert result.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: "), (command, result.output)
        assert f"device '{device}'" in lines[0]


def test_monitor_and_generate_refuse_what_cannot_write_an_answer(tmp_path):
    """--model none, an empty question and a threshold outside [0, 1] are usage errors before any model loads."""
    ctx = _ctx(tmp_path)
    for cmd in ("monitor", "generate"):
        none = runner.invoke(app, [cmd, "-c", ctx, "-q", "When?", "--model", "none"])
        assert none.exit_code == 2 and "cannot write an answer" in none.output
        empty = runner.invoke(app, [cmd, "-c", ctx, "-q", "  "])
        assert empty.exit_code == 2 and "question is empty" in empty.output
    for flag in ("--tau1", "--tau2", "--abstain-threshold"):
        out_of_range = runner.invoke(app, ["generate", "-c", ctx, "-q", "When?", flag, "1.5"])
        assert out_of_range.exit_code == 2 and flag in out_of_range.output


def test_instruction_reaches_the_monitor_and_an_empty_one_is_refused(tmp_path, monkeypatch):
    """--instruction (monitor, generate, eval-decoding, serve) is the Monitor's prompt instruction; a blank one is
    a usage error before any model loads."""
    import faithwatch.monitor
    from faithwatch.errors import InputError

    seen = []

    def recording(*args, **kwargs):
        seen.append(kwargs.get("instruction"))
        raise InputError("stopped after the Monitor's arguments")

    monkeypatch.setattr(faithwatch.monitor, "Monitor", recording)
    ctx = _ctx(tmp_path)
    for command in (["monitor", "-c", ctx, "-q", "When?"], ["generate", "-c", ctx, "-q", "When?"],
                    ["eval-decoding", "--limit", "1", "--report", str(tmp_path / "r")], ["serve", "--port", "0"]):
        told = runner.invoke(app, [*command, "--instruction", "Answer as the context says."])
        assert told.exit_code == 2 and "stopped after" in told.output, told.output
        assert seen.pop() == "Answer as the context says."
        plain = runner.invoke(app, command)
        assert plain.exit_code == 2 and seen.pop() is None  # the Monitor's default
        for empty in ("  ", "\u200b"):  # a zero-width space shows nothing either
            blank = runner.invoke(app, [*command, "--instruction", empty])
            assert blank.exit_code == 2 and "--instruction is empty" in blank.output and not seen


def test_output_folders_and_files_are_checked_before_any_work(tmp_path):
    """A report folder that is a file (or an output file that is a folder) is a usage error at once, not an
    internal error after the work."""
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    for command in (["eval", "--text-only", "--data", "begin-dev", "--report", str(a_file)],
                    ["eval-decoding", "--limit", "1", "--report", str(a_file)],
                    ["eval-nli", "--report", str(a_file)],
                    ["eval-lss", "--report", str(a_file)],
                    ["calibrate", "--detector", "default", "--data", "begin-dev", "--out", str(a_file)],
                    ["synth-edits", "--data", "begin-dev", "--out", str(tmp_path)],
                    # these were internal errors (IsADirectoryError) after the work
                    ["monitor", "-c", _ctx(tmp_path), "-q", "When?", "--html", str(tmp_path)],
                    ["generate", "-c", _ctx(tmp_path), "-q", "When?", "--html", str(tmp_path)],
                    ["check", "-c", _ctx(tmp_path), "-r", _ctx(tmp_path), "--html", str(tmp_path)],
                    ["check", "-i", _ctx(tmp_path), "-o", str(tmp_path)],
                    ["eval-decoding", "--limit", "1", "--report", str(tmp_path / "r"), "--cache", str(tmp_path)],
                    ["select", "--data", "begin-dev,qags-cnndm", "--table", str(tmp_path)],
                    # a path under a file: FileExistsError or NotADirectoryError once the work was done
                    ["check", "-i", _ctx(tmp_path), "-o", str(a_file / "x.jsonl")],
                    ["score", "-i", _ctx(tmp_path), "-o", str(a_file / "x.jsonl"), "--model", "none"],
                    ["train", "--data", "begin-dev", "--text-only", "--out", str(a_file / "sub" / "det")],
                    ["eval-lss", "--report", str(a_file / "r")]):
        result = runner.invoke(app, command)
        said = " ".join(result.output.split())
        assert result.exit_code == 2 and ("is a file" in said or "is a folder" in said
                                          or "is a directory" in said), (command, said)
    assert runner.invoke(app, ["eval-nli", "--limit", "0"]).exit_code == 2


def test_an_output_file_named_with_a_trailing_slash_is_refused(tmp_path):
    """``--out build/`` names a folder; Path drops the slash, so each file output wrote a file ``build``."""
    ctx, folder = _ctx(tmp_path), f"{tmp_path / 'new'}/"
    for command in (["synth-edits", "--data", "begin-dev", "--out", folder],
                    ["select", "--data", "begin-dev,qags-cnndm", "--out", folder],
                    ["select", "--data", "begin-dev,qags-cnndm", "--table", folder],
                    ["monitor", "-c", ctx, "-q", "When?", "--html", folder],
                    ["generate", "-c", ctx, "-q", "When?", "--html", folder],
                    ["check", "-c", ctx, "-r", ctx, "--html", folder],
                    ["check", "-i", ctx, "-o", folder],
                    ["eval-decoding", "--limit", "1", "--report", str(tmp_path / "r"), "--cache", folder]):
        result = runner.invoke(app, command)
        said = " ".join(result.output.split())
        assert result.exit_code == 2 and f"{folder} is a folder; give a file name" in said, (command, said)
        assert not (tmp_path / "new").exists(), command
    from pathlib import Path

    from faithwatch.cli._common import file_to_write

    assert file_to_write("recipe.json") == file_to_write(Path("recipe.json")) == Path("recipe.json")  # a default

def test_monitor_text_output(tiny_model_dir, tmp_path, one_thread):
    result = runner.invoke(app, ["monitor", "-c", _ctx(tmp_path), "-q", "When?", "--model", str(tiny_model_dir),
                                 "--alignment", "lexical", "--max-new-tokens", "8"])
    assert result.exit_code == 0, result.output
    assert "response score" in result.stdout and "heuristic" in result.stdout


def test_a_pipe_is_read_as_a_file(tmp_path):
    """bash's ``-c <(…)`` gives a /dev/fd path: a pipe, not a regular file; it is read, not reported missing."""
    import os
    import threading

    from faithwatch.cli._common import read_text

    fifo = tmp_path / "context.pipe"
    os.mkfifo(fifo)
    writer = threading.Thread(target=fifo.write_text, args=("The tower is in Paris.\n",))
    writer.start()
    assert read_text(fifo, "context") == "The tower is in Paris.\n"
    writer.join()


def test_unreadable_paths_get_a_clear_error(tmp_path):
    """A socket, or a file the user may not read, is an input error naming the path, not an OS traceback."""
    import os
    import socket

    from faithwatch.cli._common import read_text
    from faithwatch.errors import InputError

    sock_path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(sock_path))
        with pytest.raises(InputError, match="is a socket"):
            read_text(sock_path, "context")
    locked = tmp_path / "locked.txt"
    locked.write_text("The tower is in Paris.")
    locked.chmod(0)
    try:
        if not os.access(locked, os.R_OK):  # root reads anything
            with pytest.raises(InputError, match="cannot be read"):
                read_text(locked, "context")
    finally:
        locked.chmod(0o600)


def test_exit_codes(tiny_model_dir, tmp_path, one_thread):
    model = ["--model", str(tiny_model_dir), "--alignment", "lexical"]
    missing = runner.invoke(app, ["monitor", "-c", str(tmp_path / "nope.txt"), "-q", "q?", *model])
    assert missing.exit_code == 2 and "not found" in missing.output
    assert "reads as text" not in missing.output
    inline = runner.invoke(app, ["check", "-c", _ctx(tmp_path), "-r", "The tower is in Rome."])
    assert inline.exit_code == 2 and "'The tower is in Rome.' reads as text, not a path" in " ".join(
        inline.output.split())
    into_folder = runner.invoke(app, ["score", "-i", "examples/responses.jsonl", "-o", str(tmp_path), *model])
    assert into_folder.exit_code == 2 and "is a folder (of shards): give a .jsonl file" in " ".join(
        into_folder.output.split())
    folder = runner.invoke(app, ["monitor", "-c", str(tmp_path), "-q", "q?", *model])
    assert folder.exit_code == 2 and "is a folder" in folder.output
    empty = runner.invoke(app, ["monitor", "-c", "", "-q", "q?", *model])  # typer reads "" as the path "."
    assert empty.exit_code == 2 and "not an empty string" in " ".join(empty.output.split())
    blank = runner.invoke(app, ["monitor", "-c", _ctx(tmp_path, "  \n"), "-q", "q?", *model])
    assert blank.exit_code == 2 and "context is empty" in blank.output and "model " not in blank.stdout
    for bad, words in ((["--detector", "nope"], "detector folder not found: nope"), (["--strategy", "bogus"],
                                                                                 "unknown strategy 'bogus'")):
        command = ["generate", "-c", _ctx(tmp_path), "-q", "q?", "--model", str(tiny_model_dir), *bad]
        refused = runner.invoke(app, command)
        assert refused.exit_code == 2 and words in refused.output
    empty_q = runner.invoke(app, ["monitor", "-c", _ctx(tmp_path), "-q", "  ", *model])
    assert empty_q.exit_code == 2 and "question is empty" in empty_q.output
    too_long = runner.invoke(app, ["monitor", "-c", _ctx(tmp_path, "word " * 2000), "-q", "q?", *model])
    assert too_long.exit_code == 2 and "--truncate-context" in too_long.output
    truncated = runner.invoke(app, ["monitor", "-c", _ctx(tmp_path, "word " * 2000), "-q", "q?", *model,
                                    "--truncate-context", "--max-new-tokens", "4", "--json"])
    assert truncated.exit_code == 0, truncated.output
    summary = json.loads(truncated.stdout.strip().splitlines()[-1])
    assert summary["context_tokens_cut"] > 0
    long_gen = ["generate", "-c", _ctx(tmp_path, "word " * 2000), "-q", "q?", "--model", str(tiny_model_dir),
                "-s", "greedy", "--max-new-tokens", "4"]
    too_long = runner.invoke(app, long_gen)
    assert too_long.exit_code == 2 and "--truncate-context" in too_long.output  # generate offers what it suggests
    cut = runner.invoke(app, [*long_gen, "--truncate-context", "--json"])
    assert cut.exit_code == 0, cut.output
    assert json.loads(cut.stdout.strip().splitlines()[-1])["num_tokens"] <= 4
    bad_model = runner.invoke(app, ["monitor", "-c", _ctx(tmp_path), "-q", "q?", "--model", str(tmp_path / "none")])
    assert bad_model.exit_code == 3 and "model folder not found" in bad_model.output
    bad_signal = runner.invoke(app, ["monitor", "-c", _ctx(tmp_path), "-q", "q?", *model, "--signals", "magic"])
    assert bad_signal.exit_code == 2 and "unknown signals" in bad_signal.output


def test_score_command_partial_failure_exit_code(tiny_model_dir, tmp_path, one_thread):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    good = {"id": 1, "context": CONTEXT, "question": "When?", "response": "It was built in 1820."}
    src.write_text(json.dumps(good) + "\nnot json\n")
    args = ["score", "-i", str(src), "-o", str(out), "--model", str(tiny_model_dir), "--alignment", "lexical"]
    result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output
    assert "line 2" in result.output and "1 scored" in result.output
    assert [json.loads(x)["id"] for x in out.read_text().splitlines()] == ["1"]
    src.write_text(json.dumps(good) + "\n")
    again = runner.invoke(app, args)
    assert again.exit_code == 0 and "1 already done" in again.output


def test_python_dash_m_runs_the_cli() -> None:
    import subprocess
    import sys

    from faithwatch._version import __version__

    res = subprocess.run([sys.executable, "-m", "faithwatch", "--version"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert __version__ in res.stdout


@pytest.mark.parametrize("case", ["not-utf8", "no-detector", "bad-device", "bad-alignment"])
def test_bad_input_exits_2_with_one_line(case, tiny_model_dir, tmp_path, one_thread):
    ctx = tmp_path / "ctx.txt"
    ctx.write_bytes(b"caf\xe9 au lait\n" if case == "not-utf8" else b"Paris is in France.\n")
    extra = {"not-utf8": [], "no-detector": ["--detector", str(tmp_path / "nonexistent")],
             "bad-device": ["--device", "tpu9"], "bad-alignment": ["--alignment", "bogus"]}[case]
    result = runner.invoke(app, ["monitor", "-c", str(ctx), "-q", "Where?", "-m", str(tiny_model_dir),
                                 "--max-new-tokens", "4", *extra])
    assert result.exit_code == 2, result.output
    lines = [x for x in result.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ")
    expected = {"not-utf8": "not UTF-8", "no-detector": "detector folder not found",
                "bad-device": "unknown device 'tpu9'", "bad-alignment": "unknown alignment scorer 'bogus'"}[case]
    assert expected in lines[0]


def test_every_command_renders_its_help_as_written():
    import typer

    commands = typer.main.get_command(app).commands
    assert len(commands) >= 15
    for name in commands:
        result = runner.invoke(app, [name, "--help"], terminal_width=200)
        assert result.exit_code == 0, (name, result.output)
        assert "<bool>" not in result.output and "Usage: " in result.output, name
    check = runner.invoke(app, ["check", "--help"], terminal_width=200).output
    assert "context: str | [str]" in " ".join(check.split())


def test_every_float_option_refuses_nan_and_inf_in_words():
    # typer's bounds called nan "less than or equal to 1" (--tau1 nan); --C, --lr, --threshold took it
    import typing

    import typer

    commands = typer.main.get_command(app).commands
    checked = 0
    for name, command in commands.items():
        hints = typing.get_type_hints(getattr(command.callback, "__wrapped__", command.callback))
        for param in command.params:
            if hints.get(param.name) not in (float, float | None):
                continue
            flag = max(param.opts, key=len)
            for value in ("nan", "inf", "-inf"):
                result = runner.invoke(app, [name, flag, value])
                said = " ".join(result.output.split())
                assert result.exit_code == 2 and f"{value} is not a finite number" in said, (name, flag, said)
            checked += 1
    assert checked >= 25
    for name, command in commands.items():  # every count is bounded below (train-nli --synthetic -1 was taken)
        hints = typing.get_type_hints(getattr(command.callback, "__wrapped__", command.callback))
        for param in command.params:
            if hints.get(param.name) in (int, int | None):
                result = runner.invoke(app, [name, max(param.opts, key=len), "-1"])
                assert result.exit_code == 2 and "'" + max(param.opts, key=len) + "'" in result.output, (name, param)
    bounded = runner.invoke(app, ["generate", "--tau2", "1.5"])
    assert "1.5 is not in the range 0<=x<=1" in " ".join(bounded.output.split())
    help_text = " ".join(runner.invoke(app, ["eval-decoding", "--help"], terminal_width=200).output.split())
    assert "[x>=0]" in help_text and "[0<=x<=1]" in help_text


def test_train_names_the_strength_flags():
    for flag, value in (("--C", "-1"), ("--probe-C", "0")):  # "C and probe_C must be positive and finite"
        result = runner.invoke(app, ["train", "--data", "faithbench", "--out", "unused", flag, value])
        said = " ".join(result.output.split())
        assert result.exit_code == 2 and f"{flag} must be positive and finite, got {value}" in said, said
    for flag in ("--pooling", "--transform", "--weighting", "--centering"):  # "pooling must be one of …"
        result = runner.invoke(app, ["train", "--data", "faithbench", "--out", "unused", flag, "bogus"])
        assert result.exit_code == 2 and f"{flag} must be one of" in result.output, result.output


def test_a_recipe_files_field_stays_a_field(tmp_path):
    recipe = tmp_path / "recipe.json"  # the error is the file's: it names the field, not a flag never given
    recipe.write_text(json.dumps({"recipe": {"pooling": "bogus"}}), encoding="utf-8")
    result = runner.invoke(app, ["train", "--data", "faithbench", "--out", "unused", "--recipe", str(recipe)])
    said = " ".join(result.output.split())
    assert result.exit_code == 2 and "pooling must be one of" in said and "--pooling" not in said, said


def test_score_and_check_read_their_input_before_any_model_loads(tmp_path, monkeypatch):
    # a CSV not in UTF-8, or without a context column, was found once the model (minutes, for a large one) had loaded
    import faithwatch.cli.claims
    import faithwatch.cli.monitor

    def no_model(*args, **kwargs):
        raise AssertionError("a model was loaded")

    monkeypatch.setattr(faithwatch.cli.monitor, "_build_monitor", no_model)
    monkeypatch.setattr(faithwatch.cli.claims, "_extractor_and_checker", no_model)
    latin = tmp_path / "latin.csv"
    latin.write_bytes(b'id,context,response\n1,"Caf\xe9 is open.","It is closed."\n')
    columns = tmp_path / "columns.csv"
    columns.write_text("id,ctx,response\n1,a,b\n", encoding="utf-8")
    for source, said in ((latin, "is not UTF-8 text (byte 27)"), (columns, "no column 'context'")):
        for command in ("score", "check"):
            result = runner.invoke(app, [command, "-i", str(source), "-o", str(tmp_path / "out.jsonl")])
            assert result.exit_code == 2 and said in " ".join(result.output.split()), (command, result.output)
    assert not (tmp_path / "out.jsonl").exists()
    same = tmp_path / "same.jsonl"
    same.write_text(json.dumps({"context": CONTEXT, "response": "It flows."}) + "\n", encoding="utf-8")
    for command in ("score", "check"):  # the output that is the input itself, too
        result = runner.invoke(app, [command, "-i", str(same), "-o", str(same)])
        assert result.exit_code == 2 and "is the input file itself" in result.output, (command, result.output)


def test_a_missing_scorer_folder_is_said_and_exits_3(tmp_path):
    # score: an internal error (exit 4) with transformers' hub-id message; lss: "unknown scorer 'nli-minilm:…'"
    missing = str(tmp_path / "nowhere")
    reference = tmp_path / "ref.txt"
    reference.write_text(CONTEXT, encoding="utf-8")
    # before --model (a missing one here) loads: it was found once the language model had loaded
    runs = [(["score", "-i", "examples/responses.jsonl", "-o", str(tmp_path / "o.jsonl"), "--model", missing + "-lm",
              "--alignment", f"nli:{missing}"], f"--alignment nli:{missing}: folder not found: {missing}"),
            (["lss", "--claim", "It is tall.", "--reference", str(reference), "--scorer", f"nli-minilm:{missing}"],
             f"folder not found: {missing} (give an NLI artifact")]
    for command in (["serve", "--model", missing + "-lm"], ["proxy", "--upstream", "http://127.0.0.1:9/v1"],
                    ["train", "--data", "examples/responses.jsonl", "--out", str(tmp_path / "d"), "--model",
                     missing + "-lm"]):
        # serve and proxy caught only bad input here: an internal error (exit 4); train loaded --model first
        runs.append(([*command, "--alignment", f"nli-minilm:{missing}"], f"--alignment nli-minilm:{missing}: folder"))
    for args, said in runs:
        result = runner.invoke(app, args)
        assert result.exit_code == 3 and said in " ".join(result.output.split()), result.output


def test_eval_alignment_checks_every_scorer_first_and_runs_each_once(tmp_path, monkeypatch):
    # nli:/no/dir was found once the scorers before it had run; "--scorers lexical,lexical" ran lexical twice
    import faithwatch.eval.alignment as alignment_eval

    missing = str(tmp_path / "nowhere")
    monkeypatch.setattr(alignment_eval, "load_labelled", lambda *a, **k: pytest.fail("features computed first"))
    result = runner.invoke(app, ["eval-alignment", "--scorers", f"lexical,nli:{missing}"])
    assert result.exit_code == 3 and f"--scorers nli:{missing}: folder not found" in result.output, result.output
    asked = []
    monkeypatch.setattr(alignment_eval, "evaluate_alignment", lambda names, specs, **k: asked.append((names, specs)))
    runner.invoke(app, ["eval-alignment", "--scorers", "lexical,lexical", "--data", "qags-cnndm,qags-cnndm"])
    assert asked == [(["qags-cnndm"], ["lexical"])]


def test_transfer_lens_names_a_missing_lens_folder_before_torch_is_imported(tmp_path):
    # "… is not a detector artifact: detector.json not found" for a folder that is not there at all; then it was
    # said once the detector stack had been imported (seconds), as were a missing --target-model and a full --out
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("mine", encoding="utf-8")
    ask = ["transfer-lens", "--data", "qags-cnndm"]
    runs = [[*ask, "--lens", str(tmp_path / "nowhere"), "--target-model", "x", "--out", str(tmp_path / "out")],
            [*ask, "--lens", str(tmp_path), "--target-model", "x", "--out", str(tmp_path / "out")],
            [*ask, "--lens", str(tmp_path / "nowhere"), "--target-model", str(tmp_path / "no-model"),
             "--out", str(tmp_path / "full")]]
    (missing, empty, full), said = _fresh_runs(runs), []
    for args, code_, imported, output in (missing, empty, full):
        said.append(" ".join(output.split()))
        assert code_ == 2 and not imported, (args, code_, output)
    assert f"--lens {tmp_path / 'nowhere'} not found: give a Lookback Lens folder" in said[0]
    assert f"--lens {tmp_path} holds no lens (detector.json)" in said[1]
    assert "--out" in said[2] and "full" in said[2]  # the output folder first: it is checked before the inputs


def test_threads_option_is_everywhere_and_sets_torch(tiny_model_dir, tmp_path, monkeypatch):
    import torch
    import typer

    from faithwatch.cli._common import default_threads

    model_commands = ["monitor", "score", "check", "generate", "eval-decoding", "train", "select", "eval", "lss",
                      "eval-lss", "eval-alignment", "serve", "transfer-lens", "train-nli", "eval-nli", "proxy",
                      "train-lss-tagger"]
    commands = typer.main.get_command(app).commands
    for name in model_commands:
        assert "--threads" in [o for p in commands[name].params for o in p.opts], name
    before = torch.get_num_threads()
    try:
        ctx = tmp_path / "ctx.txt"
        ctx.write_text("Paris is in France.")
        args = ["monitor", "-c", str(ctx), "-q", "Where?", "-m", str(tiny_model_dir), "--max-new-tokens", "2"]
        assert runner.invoke(app, [*args, "--threads", "1"]).exit_code == 0
        assert torch.get_num_threads() == 1
        monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
        torch.set_num_threads(before)
        expected = default_threads()
        torch.set_num_threads(1)
        assert runner.invoke(app, args).exit_code == 0
        assert torch.get_num_threads() == expected
    finally:
        torch.set_num_threads(before)


def test_a_data_folder_stands_for_its_data_files(tmp_path) -> None:
    """--data DIR: its .jsonl/.json/.tsv files, sorted, each once; an empty folder is a clear error."""
    from faithwatch.cli._labelled import data_sets
    from faithwatch.errors import InputError

    for name in ("summedits_news.json", "summedits_podcast.json", "begin_test.tsv", "notes.txt"):
        (tmp_path / name).write_text("[]")
    (tmp_path / "sub").mkdir()
    got = data_sets(f"faithbench, {tmp_path}, {tmp_path / 'summedits_news.json'}")
    assert got == ["faithbench", *(str(tmp_path / n) for n in ("begin_test.tsv", "summedits_news.json",
                                                                  "summedits_podcast.json"))]
    with pytest.raises(InputError, match="holds no .jsonl, .json, .tsv file"):
        data_sets(str(tmp_path / "sub"))
    (tmp_path / "sub" / "begin_test.tsv").write_text("[]")  # one name for two files: the second overwrote the first
    with pytest.raises(InputError, match="would both be the data set 'begin_test'"):
        data_sets(f"{tmp_path / 'begin_test.tsv'},{tmp_path / 'sub'}")
    (tmp_path / "sub" / "begin_test.tsv").unlink()
    result = CliRunner().invoke(app, ["eval", "--data", str(tmp_path / "sub"), "--report", str(tmp_path / "r")])
    assert result.exit_code != 0 and "holds no" in result.output


def test_a_batch_says_how_to_resume_after_ctrl_c_and_warns_about_an_empty_input(tmp_path, capsys):
    import typer

    from faithwatch.cli._common import resumable

    with pytest.raises(typer.Exit) as stopped, resumable(tmp_path / "out.jsonl"):
        raise KeyboardInterrupt
    assert stopped.value.exit_code == 130
    said = " ".join(capsys.readouterr().err.split())
    assert "interrupted:" in said and "out.jsonl; run the same command again to resume" in said
    (tmp_path / "empty.jsonl").write_text("\n")
    result = runner.invoke(app, ["check", "-i", str(tmp_path / "empty.jsonl"), "-o", str(tmp_path / "o.jsonl"),
                                 "--checker", "alignment", "--alignment", "lexical"])
    assert result.exit_code == 0 and "empty.jsonl holds no records" in " ".join(result.output.split())


def test_refusal_hint_names_the_closest_sentence_and_the_last_resort():
    from faithwatch.cli.decoding import refusal_hint
    from faithwatch.decoding.types import REFUSAL, DecodingResult, TraceEvent

    trace = [TraceEvent("backtrack", 0, "It was built in 1920.", 0.31), TraceEvent("candidate", 0, "Built in 1889.",
                                                                                  0.58),
             TraceEvent("prune", 0, "Built in 1889.", 0.58, reason="score below tau2=0.6"), TraceEvent("refuse", 0)]
    params = {"tau2": 0.6, "last_resort": False}
    result = DecodingResult("fod-fallback", REFUSAL, True, [], trace, params=params)
    assert result.closest() is trace[1]
    assert result.to_dict()["closest"] == trace[1].to_dict()  # what /v1/generate and --json carry for the page
    hint = refusal_hint(result, threshold=0.5)
    assert hint.startswith('Closest to passing: 0.58 "Built in 1889." (tau2 = 0.6).') and "--last-resort" in hint
    assert "--last-resort" not in refusal_hint(result, threshold=0.65)  # the last resort would lower nothing
    fod = DecodingResult("fod", REFUSAL, True, [], trace, params={"tau2": 0.6})  # fod has no last resort
    assert "--last-resort" not in refusal_hint(fod, threshold=0.5)
    assert refusal_hint(DecodingResult("fod", REFUSAL, True, [], [TraceEvent("refuse", 0)]), 0.5) is None


def test_generate_prints_what_came_closest_when_it_refuses(tiny_model_dir, tmp_path, one_thread):
    command = ["generate", "-c", _ctx(tmp_path), "-q", "When was it built?", "--model", str(tiny_model_dir),
               "-s", "fod", "--tau1", "1", "--tau2", "1", "--samples", "2", "--max-new-tokens", "8"]
    refused = runner.invoke(app, command)
    assert refused.exit_code == 0, refused.output
    assert "REFUSED" in refused.output and "Closest to passing: " in refused.output


@pytest.mark.parametrize("command", [["eval"], ["train", "--out", "d"], ["select"], ["eval-lss"],
                                     ["train-lss-tagger"], ["train-nli"], ["eval-decoding"]])
def test_a_negative_seed_is_a_usage_error(command):
    # it reached numpy and came back as an internal error (eval, after the features were computed)
    result = runner.invoke(app, [*command, "--seed", "-5"])
    assert result.exit_code == 2 and "Invalid value for '--seed'" in result.output, result.output


@pytest.mark.parametrize("command", [["serve"], ["proxy", "--upstream", "http://127.0.0.1:9"]])
def test_serve_and_proxy_refuse_a_bad_log_level_or_a_blank_key_before_loading(command, monkeypatch):
    # an unknown --log-level was a KeyError inside uvicorn once the model had loaded; proxy took a blank key
    import faithwatch.monitor

    def no_model(*args, **kwargs):
        raise AssertionError("the model loaded")

    monkeypatch.setattr(faithwatch.monitor, "Monitor", no_model)
    loud = runner.invoke(app, [*command, "--log-level", "loud"])
    assert loud.exit_code == 2 and "Invalid value for '--log-level'" in loud.output, loud.output
    blank = runner.invoke(app, [*command, "--api-key", "\u200b"])
    assert blank.exit_code == 2 and "the API key is empty" in blank.output, blank.output


def test_check_groups_by_any_input_field_and_notes_one_that_no_record_has(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"context": CONTEXT, "response": "The bridge was built in 1820.", "team": "a"}) + "\n")
    args = ["check", "-i", str(src), "-o", str(tmp_path / "o.jsonl"), "--checker", "alignment", "--alignment",
            "lexical", "--extractor", "sentence"]
    typo = runner.invoke(app, [*args, "--group-by", "teem"])  # a typo gave no summary by it, and no word why
    assert typo.exit_code == 0 and "no record has the field 'teem'" in typo.output
    right = runner.invoke(app, [*args, "--group-by", "team", "--overwrite"])  # only model and dataset were carried
    assert right.exit_code == 0 and "no record has the field" not in right.output
    summaries = json.loads((tmp_path / "o.jsonl.summary.json").read_text())
    assert list(summaries["team"]) == ["a"] and summaries["team"]["a"]["responses"] == 1


def test_generate_and_eval_decoding_refuse_bad_parameters_before_the_model_loads(tmp_path, monkeypatch):
    # eval-decoding loaded the model and then failed every run ("4 runs failed ... alpha: Input should be a finite
    # number"), writing an empty report
    import faithwatch.monitor

    def no_model(*args, **kwargs):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(faithwatch.monitor, "Monitor", no_model)
    for command in (["eval-decoding", "--report", str(tmp_path / "r"), "--no-cache"],
                    ["generate", "-c", _ctx(tmp_path), "-q", "When?"]):
        for alpha in ("nan", "-1"):  # a negative alpha (steering away from the context) was taken; serve refused it
            result = runner.invoke(app, [*command, "--alpha", alpha])
            said = " ".join(result.output.split())
            assert result.exit_code == 2, result.output
            assert "bad decoding parameters: alpha" in said or "Invalid value for '--alpha'" in said, said


def test_generate_refuses_options_its_strategy_does_not_read(tmp_path, monkeypatch):
    # `--strategy greedy --tau1 0.3 --last-resort` and `--strategy fod --lens x` ran, the options ignored
    import faithwatch.monitor

    monkeypatch.setattr(faithwatch.monitor, "Monitor", lambda *a, **k: pytest.fail("the model was loaded"))
    ask = ["generate", "-c", _ctx(tmp_path), "-q", "When?"]
    greedy = runner.invoke(app, [*ask, "--strategy", "greedy", "--tau1", "0.3", "--last-resort"])
    said = " ".join(greedy.output.split())
    assert greedy.exit_code == 2, said
    assert "--strategy greedy does not read --tau1, --last-resort/--no-last-resort (it reads --max-new-tokens)" in said
    fod = runner.invoke(app, [*ask, "--strategy", "fod", "--lens", str(tmp_path)])
    assert fod.exit_code == 2 and "does not read --lens" in fod.output


@pytest.mark.parametrize(("options", "said"), [
    (["--strategies", "greedy,cad", "--tau1", "0.3"],  # no strategy of the run reads it: it was ignored
     "--strategies greedy,cad does not read --tau1 (it reads --alpha, --max-new-tokens, --seed): leave it out, or "
     "add a strategy to --strategies that reads it"),
    (["--strategies", "greedy,fod", "--lens", "x"], "--strategies greedy,fod does not read --lens"),
    (["--tau-grid", "0.5:0.5"], "--tau-grid is the grid of --cv-tau"),  # ignored without --cv-tau
    (["--cache", "c.jsonl", "--no-cache"], "--no-cache turns it off"),
    (["--strategies", "greedy,cad", "--cv-tau"], "--cv-tau needs a strategy that reads"),  # refused after the runs
    # these too were found only after every strategy had run
    (["--strategies", "fod", "--cv-tau", "--tau-grid", "0.5:1.5"], "--tau-grid point 0.5:1.5: bad decoding"),
    (["--strategies", "fod", "--cv-tau", "--limit", "3"], "cross-validation needs at least 4 counterfactual items"),
])
def test_eval_decoding_refuses_options_no_strategy_reads(tmp_path, monkeypatch, options, said):
    import faithwatch.monitor

    monkeypatch.setattr(faithwatch.monitor, "Monitor", lambda *a, **k: pytest.fail("the model was loaded"))
    result = runner.invoke(app, ["eval-decoding", "--report", str(tmp_path / "r"), *options])
    told = " ".join(result.output.split())
    assert result.exit_code == 2 and said in told, told
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(("options", "said"), [
    (["--data", "qags-cnndm,begin-dev", "--augment", "x.jsonl"], "without --transfer nothing is trained"),
    (["--data", "qags-cnndm", "--transfer"], "--transfer holds each data set out in turn"),  # a warning, at the end
])
def test_eval_refuses_what_it_would_not_use_before_computing_features(tmp_path, monkeypatch, options, said):
    # the augmentation set's features were computed, then never read; one set for --transfer was only warned about
    import faithwatch.cli.evaluation as evaluation

    monkeypatch.setattr(evaluation, "load_tables", lambda *a, **k: pytest.fail("features computed first"))
    result = runner.invoke(app, ["eval", "--text-only", "--report", str(tmp_path / "r"), *options])
    assert result.exit_code == 2 and said in " ".join(result.output.split()), result.output


def test_calibrate_unlabelled_refuses_questionable(tmp_path, monkeypatch):
    # --questionable labels FaithBench's Questionable spans; --unlabelled reads no label, so it was ignored
    import faithwatch.cli.calibration as calibration

    monkeypatch.setattr(calibration, "load_tables", lambda *a, **k: pytest.fail("features computed first"))
    result = runner.invoke(app, ["calibrate", "--data", "faithbench", "--out", str(tmp_path / "d"), "--unlabelled",
                                 "--questionable", "unfaithful"])
    assert result.exit_code == 2 and "--unlabelled reads no label" in " ".join(result.output.split())


def test_select_refuses_one_data_set_before_computing_features(tmp_path, monkeypatch):
    # one set was read (features: up to hours) before the selection found it could hold none out
    import faithwatch.cli.detectors as detectors_cli

    monkeypatch.setattr(detectors_cli, "load_tables", lambda *a, **k: pytest.fail("features computed first"))
    result = runner.invoke(app, ["select", "--data", "qags-cnndm", "--augment", "begin-dev", "--text-only",
                                 "--out", str(tmp_path / "r.json")])
    assert result.exit_code == 2 and "at least two labelled data sets in --data" in result.output


def test_serve_says_cuda_graph_captures_no_graph_on_a_cpu(tiny_model_dir, monkeypatch, one_thread):
    import uvicorn

    served = []
    monkeypatch.setattr(uvicorn, "run", lambda app_, **kw: served.append(kw))
    result = runner.invoke(app, ["serve", "--model", str(tiny_model_dir), "--alignment", "lexical", "--cuda-graph",
                                 "--host", "127.0.0.1", "--port", "0", "--threads", "1"])
    assert result.exit_code == 0 and served, result.output
    assert "--cuda-graph: the model is on cpu, where there are no CUDA graphs" in result.stderr  # it said nothing


@pytest.mark.parametrize("command", [["serve"], ["proxy", "--upstream", "http://127.0.0.1:9"]])
def test_serve_and_proxy_check_the_detector_and_scorer_before_the_model(command, tmp_path):
    missing = ["--model", str(tmp_path / "no-model")]  # loading it would fail: the names are checked first
    for option, said in ((["--detector", "bogus"], "detector folder not found: bogus"),
                         (["--alignment", "bogus"], "unknown alignment scorer 'bogus'")):
        result = runner.invoke(app, [*command, *missing, *option, "--port", "0"])
        assert result.exit_code == 2 and said in result.output, result.output


def test_lens_lid_bank_and_guiding_detector_are_checked_before_the_model(tmp_path):
    missing = ["--model", str(tmp_path / "no-model")]  # loading it would fail: the options are checked first
    context = _ctx(tmp_path)
    cases = [
        (["generate", "-c", context, "-q", "q", "-s", "lookback", "--lens", str(tmp_path / "nolens")],
         "not found: give a Lookback Lens folder"),
        (["generate", "-c", context, "-q", "q", "-s", "lookback", "--lens", str(tmp_path)], "holds no lens"),
        (["eval-decoding", "--data", "counterfactual", "--report", str(tmp_path / "r"), "--strategies", "lookback",
          "--lens", str(tmp_path / "nolens")], "not found: give a Lookback Lens folder"),
        (["eval-decoding", "--data", "counterfactual", "--report", str(tmp_path / "r"), "--detector",
          str(tmp_path / "nodet")], "detector folder not found"),
        (["eval-decoding", "--data", "counterfactual", "--report", str(tmp_path / "r"), "--alignment", "bogus"],
         "unknown alignment scorer 'bogus'"),
        (["monitor", "-c", context, "-q", "q", "--lid-bank", str(tmp_path / "bank.safetensors")], "does not exist"),
    ]
    for args, said in cases:
        result = runner.invoke(app, [*args, *missing])
        assert result.exit_code == 2 and said in result.output, (args, result.output)
    assert not (tmp_path / "r").exists()


def test_an_error_names_the_flag_not_the_library_setting(tmp_path):
    # "the probe family needs probe_layers": the user typed --probe-layers, and never saw the field name
    result = runner.invoke(app, ["train", "--data", "qags-cnndm,begin-dev", "--features", "alignment,probe",
                                 "--out", str(tmp_path / "d")])
    assert result.exit_code == 2 and "the probe family needs --probe-layers" in result.output, result.output
    contexts, response = tmp_path / "c.txt", tmp_path / "r.txt"
    contexts.write_text(CONTEXT)
    response.write_text("The bridge opened in 1820.")
    result = runner.invoke(app, ["check", "-c", str(contexts), "-r", str(response), "--checker", "alignment",
                                 "--alignment", "lexical", "--entail-threshold", "0.1",
                                 "--contradict-threshold", "0.5"])
    said = "0 <= --contradict-threshold < --entail-threshold <= 1"
    assert result.exit_code == 2 and said in result.output and "_" not in result.output, result.output


def test_line_progress_says_where_a_task_stopped_but_not_a_task_never_begun():
    # a refused input printed "scoring: 0/? (0 s)" above its error
    import io

    from rich.console import Console

    from faithwatch.cli._common import LineProgress

    for failed in (False, True):
        text = io.StringIO()
        with contextlib.suppress(RuntimeError), LineProgress(Console(file=text, width=200)) as bar:
            bar.add_task("untouched")
            bar.update(bar.add_task("begun", total=10), completed=4)
            if failed:
                raise RuntimeError("stopped")
        lines = text.getvalue().splitlines()
        assert [line.split(":")[0] for line in lines] == (["begun"] if failed else ["untouched", "begun"])
        assert "4/10" in lines[-1]


def test_serve_and_proxy_refuse_a_port_in_use_or_a_bad_host_before_the_model(monkeypatch):
    # uvicorn found both once the model had loaded ("[Errno 98] … address already in use")
    import socket

    import faithwatch.monitor

    monkeypatch.setattr(faithwatch.monitor, "Monitor", lambda *a, **k: pytest.fail("the model was loaded"))
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = str(held.getsockname()[1])
        for command in (["serve"], ["proxy", "--upstream", "http://127.0.0.1:9/v1"]):
            taken = runner.invoke(app, [*command, "--port", port])
            said = " ".join(taken.output.split())
            assert taken.exit_code == 2 and f"cannot listen on 127.0.0.1:{port}" in said, said
            assert "give another --port" in said
            nowhere = runner.invoke(app, [*command, "--host", "no-such-host.invalid", "--port", "0"])
            assert nowhere.exit_code == 2 and "--host no-such-host.invalid is no address" in nowhere.output


def test_device_map_and_precision_are_named_as_flags(tmp_path):
    result = runner.invoke(app, ["monitor", "-c", _ctx(tmp_path), "-q", "q", "--device-map", "bogus"])  # before
    # the embedded model is unpacked or loaded
    assert result.exit_code == 2 and "--device-map must be one of auto" in result.output, result.output
    result = runner.invoke(app, ["eval-nli", "--precision", "bogus", "--limit", "2"])  # "precision must be …"
    assert result.exit_code == 2 and "--precision must be one of auto, fp32, bf16" in result.output, result.output


def test_check_names_its_nli_or_scorer_folder_before_the_llm_loads(tmp_path, monkeypatch):
    # --extractor triplet loads the LLM first; a missing --nli-model was found after it (51 s on the embedded one)
    import faithwatch.claims.llm

    def no_llm(*args, **kwargs):
        raise AssertionError("the LLM was loaded")

    monkeypatch.setattr(faithwatch.claims.llm, "get_backend", no_llm)
    missing = str(tmp_path / "nowhere")
    response = tmp_path / "r.txt"
    response.write_text("It was built in 1821.", encoding="utf-8")
    base = ["check", "--context", _ctx(tmp_path), "--response", str(response), "--extractor", "triplet"]
    for options, said in ((["--checker", "nli", "--nli-model", missing], f"NLI model folder not found: {missing}"),
                          (["--checker", "nli", "--nli-model", f"nli-minilm:{missing}"],
                           f"--nli-model nli-minilm:{missing}: folder not found: {missing}"),
                          (["--checker", "nli", "--nli-model", str(tmp_path)], "holds no NLI model (no config.json)"),
                          (["--checker", "alignment", "--alignment", f"nli:{missing}"],
                           f"--alignment nli:{missing}: folder not found: {missing}")):
        result = runner.invoke(app, base + options)
        assert result.exit_code == 3 and said in " ".join(result.output.split()), (options, result.output)


def _fresh_runs(runs: list[list[str]], module: str = "torch") -> list[list]:
    """Each command of ``runs`` in turn in one fresh interpreter, as most users run it (no OMP_NUM_THREADS):
    [args, exit code, whether ``module`` was imported by then, output]."""
    import subprocess
    import sys

    code = ("import json, sys\nfrom typer.testing import CliRunner\nfrom faithwatch.cli import app\n"
            "for args in json.loads(sys.argv[1]):\n    r = CliRunner().invoke(app, args)\n"
            f"    print(json.dumps([args, r.exit_code, {module!r} in sys.modules, r.output]))")
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    done = subprocess.run([sys.executable, "-c", code, json.dumps(runs)], capture_output=True, text=True,
                          timeout=300, env=env)
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [args for args, *_ in rows] == runs, (done.stdout, done.stderr)
    return rows


def test_a_usage_error_is_said_without_importing_the_model_stack(tmp_path):
    # the detectors, batch, monitor and server modules imported transformers: ten seconds before "file not found"
    missing, data = str(tmp_path / "nowhere.txt"), str(tmp_path / "nowhere.jsonl")
    runs = [["check", "--context", missing, "--response", missing],
            ["check", "--context", missing, "--response", missing, "--checker", "nli", "--nli-model", missing],
            ["score", "-i", data, "-o", str(tmp_path / "o.jsonl")],
            ["eval", "--data", data, "--report", str(tmp_path / "r")],
            ["train", "--data", data, "--out", str(tmp_path / "d")], ["eval-alignment", "--data", data],
            ["serve", "--detector", missing], ["proxy", "--upstream", "http://127.0.0.1:9/v1", "--detector", missing],
            ["monitor", "-c", missing, "-q", "When?"]]
    # one fresh interpreter runs them in turn: transformers, once imported, stays in sys.modules for the rest
    for args, code_, imported, said in _fresh_runs(runs, "transformers"):
        assert code_ in (2, 3) and "not found" in said and not imported, (args, code_, imported, said)


def test_a_missing_data_file_is_said_before_torch_is_imported(tmp_path):
    # the detector commands imported the detector stack (torch, scikit-learn) and --threads imported torch to set
    # its threads, all before --data was read: 6 to 11 s before "data file not found"
    missing, data = str(tmp_path / "nowhere"), str(tmp_path / "nowhere.jsonl")
    runs = [["eval", "--data", data, "--report", str(tmp_path / "r")],
            ["eval", "--data", "faithbench,qags-cnndm", "--augment", data, "--transfer"],
            ["train", "--data", f"faithbench,{data}", "--out", str(tmp_path / "d"), "--threads", "1"],
            ["select", "--data", f"{data},faithbench", "--out", str(tmp_path / "s.json")],
            ["calibrate", "--data", data, "--out", str(tmp_path / "c")], ["eval-alignment", "--data", data],
            ["transfer-lens", "--lens", missing, "--target-model", "x", "--data", data, "--out", missing],
            ["synth-edits", "--data", data, "--out", str(tmp_path / "e.jsonl")],
            ["eval", "--data", "faithbench,nosuch-set"]]
    rows = _fresh_runs(runs)
    for args, code_, imported, said in rows[:-1]:
        flat = " ".join(said.split())
        assert code_ == 2 and f"data file not found: {data}" in flat and not imported, (args, code_, imported, said)
    assert "unknown dataset 'nosuch-set'" in " ".join(rows[-1][3].split()) and not rows[-1][2], rows[-1]


def test_a_missing_detector_folder_is_said_before_torch_is_imported(tmp_path):
    # the commands that load a model imported the monitor (torch, the detectors) before checking --detector
    ctx, response = tmp_path / "ctx.txt", tmp_path / "r.txt"
    ctx.write_text("Paris is the capital of France.", encoding="utf-8")
    response.write_text("Paris is in France.", encoding="utf-8")
    records = tmp_path / "in.jsonl"
    records.write_text(json.dumps({"context": "Paris is in France.", "response": "It is."}) + "\n", encoding="utf-8")
    missing = str(tmp_path / "nowhere")
    given = ["--detector", missing]
    runs = [["monitor", "-c", str(ctx), "-q", "Where?", *given],
            ["score", "-i", str(records), "-o", str(tmp_path / "o.jsonl"), *given],
            ["generate", "-c", str(ctx), "-q", "Where?", *given],
            ["check", "--context", str(ctx), "--response", str(response), *given],
            ["serve", *given], ["proxy", "--upstream", "http://127.0.0.1:9/v1", *given],
            ["eval-decoding", "--report", str(tmp_path / "r"), "--limit", "2", *given],
            ["eval", "--data", "qags-cnndm", "--report", str(tmp_path / "r"), *given],
            ["calibrate", "--data", "qags-cnndm", "--out", str(tmp_path / "c"), *given]]
    for args, code_, imported, said in _fresh_runs(runs):
        flat = " ".join(said.split())
        assert code_ == 2 and f"detector folder not found: {missing}" in flat and not imported, (args, code_, said)
    # a mistyped --model path (10 s, the loader's folder check came after transformers was imported)
    runs = [["monitor", "-c", str(ctx), "-q", "Where?", "--model", missing],
            ["score", "-i", str(records), "-o", str(tmp_path / "o.jsonl"), "--model", missing],
            ["generate", "-c", str(ctx), "-q", "Where?", "--model", missing], ["serve", "--model", missing],
            ["proxy", "--upstream", "http://127.0.0.1:9/v1", "--model", missing],
            ["monitor", "-c", str(ctx), "-q", "Where?", "--model", missing, "--device", "cpu", "--dtype", "fp32"],
            ["monitor", "-c", str(ctx), "-q", "Where?", "--model", str(tmp_path)]]
    rows = _fresh_runs(runs)
    for args, code_, imported, said in rows[:-1]:
        assert code_ == 3 and f"model folder not found: {missing}" in said and not imported, (args, code_, said)
    assert rows[-1][1] == 3 and "holds no model (no config.json)" in " ".join(rows[-1][3].split()), rows[-1]


def test_the_early_model_check_passes_every_name_the_loader_takes_for_the_embedded_model(tmp_path, monkeypatch):
    # the check and the loader read one list of names; a name the check refused would never reach the loader
    from faithwatch.cli._common import check_model_path
    from faithwatch.errors import ModelNotAvailableError
    from faithwatch.models.folders import EMBEDDED_NAMES, NO_MODEL

    monkeypatch.chdir(tmp_path)
    (tmp_path / "embedded").mkdir()  # a folder of that name, with no config.json, is not what the name means
    for name in (*EMBEDDED_NAMES, NO_MODEL):
        check_model_path(name)
    with pytest.raises(ModelNotAvailableError, match="no config.json"):
        check_model_path(str(tmp_path / "embedded"))


def test_every_spelling_of_no_model_means_no_model_to_the_cli_and_the_monitor():
    # `generate --model None` was refused as "no model" while Monitor("None") loaded a hub id "None"
    from faithwatch.cli._common import check_generation
    from faithwatch.errors import InputError
    from faithwatch.models.folders import NO_MODEL, is_no_model
    from faithwatch.monitor import Monitor

    for name in ("None", " none ", "NONE"):
        assert is_no_model(name)
        with pytest.raises(InputError, match="cannot write an answer"):
            check_generation(name, "Where?")
        monitor = Monitor(name, alignment="lexical", detector="heuristic", signals=["alignment"])
        assert monitor.lm is None and monitor.model_id == NO_MODEL
    assert not any(is_no_model(name) for name in (None, "", "nonexistent", "./none"))


def test_threads_reach_torch_when_it_is_imported_later():
    # the --threads callback imported torch to set them (2.5 s on every command, error or not); it now leaves
    # OMP_NUM_THREADS for torch to read at import, and sets torch's threads directly once torch is loaded
    import subprocess
    import sys

    code = ("import sys\nfrom faithwatch.cli._common import _apply_threads\n_apply_threads(1)\n"
            "assert 'torch' not in sys.modules\nimport torch\nprint(torch.get_num_threads())")
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0 and done.stdout.strip() == "1", (done.stdout, done.stderr)


def test_a_batch_prints_the_first_skipped_records_and_counts_the_rest(tmp_path):
    # a file of bad lines printed every one of them above the summary
    from faithwatch.cli._common import SHOWN_BAD_RECORDS

    source = tmp_path / "bad.jsonl"
    bad = SHOWN_BAD_RECORDS + 7
    source.write_text("".join(json.dumps({"id": i, "ctx": "x", "response": "y"}) + "\n" for i in range(bad)),
                      encoding="utf-8")
    for command, extra in (("score", ["--model", "none"]), ("check", ["--checker", "alignment", "--alignment",
                                                                      "lexical"])):
        out = tmp_path / f"{command}.jsonl"
        result = runner.invoke(app, [command, "-i", str(source), "-o", str(out), *extra])
        said = result.output
        assert said.count("skipped line") == SHOWN_BAD_RECORDS and said.count("more records skipped") == 1, said
        flat = " ".join(said.split())
        assert f"{bad} bad" in flat and f"of {bad} records" in flat, said
        errors = out.with_name(out.name + ".errors.jsonl").read_text(encoding="utf-8").splitlines()
        assert len(errors) == bad
