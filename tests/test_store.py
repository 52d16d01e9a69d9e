"""The one resumable JSONL store: what a crash or a bad line leaves behind is repaired, and nothing else."""

from __future__ import annotations

import json

import pytest

from faithwatch.batch import finished_ids
from faithwatch.store import JsonlStore


def _store(tmp_path):
    return JsonlStore(tmp_path / "rows.jsonl", key=lambda row: str(row["id"]))


def test_rows_round_trip_and_the_last_row_of_a_key_wins(tmp_path) -> None:
    store = _store(tmp_path)
    with store.appending() as put:
        put({"id": 1, "v": "a"})
        put({"id": 2, "v": "b"})
        put({"id": 1, "v": "c"})
    assert {k: r["v"] for k, r in store.load().items()} == {"1": "c", "2": "b"}
    with pytest.raises(ValueError):
        store.append({"id": 3, "v": float("nan")})  # never a silent NaN


def test_a_torn_last_line_is_cut_off(tmp_path) -> None:
    store = _store(tmp_path)
    store.path.write_text('{"id": 1}\n{"id": 2, "v": "hal', encoding="utf-8")
    assert list(store.load()) == ["1"] and store.corrupt == []
    assert store.path.read_text(encoding="utf-8") == '{"id": 1}\n'


def test_a_reader_never_writes(tmp_path) -> None:
    """``repair=False`` (batch outputs read back after a run): a torn or unterminated last line is left as it is, so
    that a writer still appending to the file is never cut short."""
    from faithwatch.scale import read_output_rows

    store = _store(tmp_path)
    for text, ids in (('{"id": 1}\n{"id": 2, "v": "hal', ["1"]), ('{"id": 1}\n{"id": 2}', ["1", "2"])):
        store.path.write_text(text, encoding="utf-8")
        assert list(store.load(repair=False)) == ids
        assert [str(r["id"]) for r in read_output_rows(store.path)] == ids
        assert store.path.read_text(encoding="utf-8") == text


def test_a_complete_unterminated_last_line_is_kept_and_terminated(tmp_path) -> None:
    store = _store(tmp_path)
    store.path.write_text('{"id": 1}\n{"id": 2}', encoding="utf-8")
    assert list(store.load()) == ["1", "2"]
    store.append({"id": 3})
    lines = store.path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(x)["id"] for x in lines] == [1, 2, 3]


def test_a_corrupt_middle_line_is_reported_and_the_lines_after_it_are_kept(tmp_path) -> None:
    store = _store(tmp_path)
    store.path.write_bytes(b'{"id": 1}\nnot json\n{"no_id": true}\n\xff\xfe\n{"id": 4}\n')
    assert list(store.load()) == ["1", "4"]
    assert [c.line for c in store.corrupt] == [2, 3, 4]
    assert store.path.read_bytes().endswith(b'{"id": 4}\n')  # nothing deleted


def test_batch_resume_counts_an_unterminated_record_once(tmp_path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text('{"id": "a"}\n{"id": "b"}', encoding="utf-8")
    assert finished_ids(out) == {"a", "b"}
    assert out.read_text(encoding="utf-8").count("\n") == 2


def test_score_reports_a_corrupt_output_line_and_keeps_the_rest(tmp_path, tiny_model_dir) -> None:
    from typer.testing import CliRunner

    from faithwatch.cli import app

    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text("".join(json.dumps({"id": i, "context": "Paris is in France.", "question": "Where?",
                                       "response": "It is in France."}) + "\n" for i in ("a", "b")))
    args = ["score", "-i", str(src), "-o", str(out), "-m", str(tiny_model_dir), "--alignment", "lexical",
            "--detector", "heuristic"]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    good = out.read_text(encoding="utf-8").splitlines()
    out.write_text(good[0] + "\n{broken\n" + good[1] + "\n", encoding="utf-8")
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0 and "1 unreadable line(s)" in again.output and "2 already done" in again.output
    assert out.read_text(encoding="utf-8").splitlines() == [good[0], "{broken", good[1]]


def test_score_refuses_to_write_into_a_file_that_is_not_its_output(tmp_path, tiny_model_dir) -> None:
    from typer.testing import CliRunner

    from faithwatch.cli import app

    src, other, notes = tmp_path / "in.jsonl", tmp_path / "other.jsonl", tmp_path / "notes.md"
    rec = {"context": "Paris is in France.", "question": "Where?", "response": "It is in France."}
    src.write_text(json.dumps({"id": "a", **rec}) + "\n")
    other.write_text(json.dumps({"id": "z", **rec}) + "\n")
    notes.write_text("# my notes\n\nnot to be lost\n")
    base = ["-m", str(tiny_model_dir), "--alignment", "lexical", "--detector", "heuristic"]
    refused = CliRunner().invoke(app, ["score", "-i", str(src), "-o", str(notes), *base])
    assert refused.exit_code == 2 and "is not a faithwatch output" in " ".join(refused.output.split())
    assert notes.read_text() == "# my notes\n\nnot to be lost\n"
    out = tmp_path / "out.jsonl"
    assert CliRunner().invoke(app, ["score", "-i", str(src), "-o", str(out), *base]).exit_code == 0
    assert json.loads((tmp_path / "out.jsonl.meta.json").read_text())["input_sha256"]
    foreign = CliRunner().invoke(app, ["score", "-i", str(other), "-o", str(out), *base])
    assert foreign.exit_code == 2 and "holds records of another input" in " ".join(foreign.output.split())
    # the same input with a record added resumes; --overwrite starts afresh
    src.write_text(src.read_text() + json.dumps({"id": "b", **rec}) + "\n")
    grown = CliRunner().invoke(app, ["score", "-i", str(src), "-o", str(out), *base])
    assert grown.exit_code == 0 and "1 already done" in grown.output
    fresh = CliRunner().invoke(app, ["score", "-i", str(other), "-o", str(out), "--overwrite", *base])
    assert fresh.exit_code == 0 and [json.loads(x)["id"] for x in out.read_text().splitlines()] == ["z"]


def test_a_folder_written_whole_replaces_the_old_one_only_on_success(tmp_path):
    from faithwatch.store import write_folder_atomic

    folder = tmp_path / "det"
    folder.mkdir()
    (folder / "old.txt").write_text("old")

    def broken(tmp):
        (tmp / "new.txt").write_text("half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_folder_atomic(folder, broken)
    assert [p.name for p in folder.iterdir()] == ["old.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["det"]  # the half-written folder is gone
    (tmp_path / ".det.tmp").mkdir()  # what a killed writer leaves
    write_folder_atomic(folder, lambda tmp: (tmp / "new.txt").write_text("new"))
    assert [p.name for p in folder.iterdir()] == ["new.txt"] and [p.name for p in tmp_path.iterdir()] == ["det"]
