"""Batch scoring: resumable after a crash, bad records reported by line, the rest kept."""

from __future__ import annotations

import json

import pytest

from faithwatch.batch import finished_ids, score_file
from faithwatch.text import MARKUP_RULE

CONTEXT = "The river Avon flows through the old town. The bridge was built in 1820 by local masons."
GOOD = [
    {"id": "a", "context": CONTEXT, "question": "When was the bridge built?", "response": "It was built in 1820."},
    {"id": "b", "context": CONTEXT, "question": "What flows there?", "response": "The river Avon. It is old."},
    {"id": "c", "context": CONTEXT, "question": "Who built it?", "response": "Local masons built the bridge."},
]


def _write(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))


def _ids(path):
    return [json.loads(line)["id"] for line in path.read_text().splitlines()]


def test_scores_every_record_and_resumes_without_duplicates(monitor, tmp_path):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    _write(src, GOOD)
    summary = score_file(monitor, src, out)
    assert (summary.scored, summary.skipped_done, summary.bad) == (3, 0, [])
    assert _ids(out) == ["a", "b", "c"]
    row = json.loads(out.read_text().splitlines()[1])
    assert row["sentences"] and all("score" in s and "features" in s for s in row["sentences"])
    assert "lookback_ratio" in row["sentences"][0]["vectors"]

    again = score_file(monitor, src, out)
    assert (again.scored, again.skipped_done) == (0, 3)
    assert _ids(out) == ["a", "b", "c"]


def test_crash_mid_write_loses_only_the_torn_record(monitor, tmp_path):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    _write(src, GOOD)
    score_file(monitor, src, out)
    lines = out.read_text().splitlines(keepends=True)
    out.write_text(lines[0] + lines[1][: len(lines[1]) // 2])  # crash while writing record b
    assert finished_ids(out) == {"a"}
    assert out.read_text() == lines[0]  # the torn line was cut off
    summary = score_file(monitor, src, out)
    assert (summary.scored, summary.skipped_done) == (2, 1)
    assert _ids(out) == ["a", "b", "c"]
    assert out.read_text().splitlines(keepends=True)[0] == lines[0]  # finished work untouched


def test_bad_records_are_reported_by_line_and_the_rest_scored(monitor, tmp_path):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    rows = [
        GOOD[0],
        '{"context": "broken',  # line 2: invalid JSON
        {"id": "x", "context": CONTEXT, "question": "q?"},  # line 3: no response
        {"id": "a", **{k: v for k, v in GOOD[1].items() if k != "id"}},  # line 4: duplicate id
        {"id": "long", "context": "word " * 2000, "question": "q?", "response": "An answer."},  # line 5: too long
        "[1, 2]",  # line 6: not an object
        GOOD[2],
    ]
    _write(src, rows)
    seen = []
    summary = score_file(monitor, src, out, on_bad=seen.append)
    assert summary.scored == 2 and _ids(out) == ["a", "c"]
    by_line = {b.line: b.error for b in summary.bad}
    assert sorted(by_line) == [2, 3, 4, 5, 6]
    assert by_line[2] == "invalid JSON: Unterminated string starting at column 13"
    assert "'response' is missing" in by_line[3]
    assert "duplicate id" in by_line[4]
    assert "model window" in by_line[5]
    assert "JSON object" in by_line[6]
    assert len(seen) == 5
    errors = [json.loads(x) for x in (tmp_path / "out.jsonl.errors.jsonl").read_text().splitlines()]
    assert [e["line"] for e in errors] == [2, 3, 4, 5, 6]


def test_overwrite_starts_afresh(monitor, tmp_path):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    _write(src, GOOD[:1])
    out.write_text(json.dumps({"id": "stale"}) + "\n")
    score_file(monitor, src, out, overwrite=True)
    assert _ids(out) == ["a"]


@pytest.mark.parametrize("vectors", [True, False])
def test_output_is_strict_json(monitor, tmp_path, vectors):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    _write(src, GOOD[:1])
    score_file(monitor, src, out, vectors=vectors)
    row = json.loads(out.read_text(), parse_constant=lambda c: pytest.fail(f"non-finite {c} in output"))
    assert ("vectors" in row["sentences"][0]) is vectors
    assert "context" not in row


def test_the_input_is_never_its_own_output_and_a_new_folder_is_made(monitor, tmp_path):
    from faithwatch.errors import InputError

    src = tmp_path / "in.jsonl"
    _write(src, [*GOOD, '{"id": "d", "context": 1 2}', '{"id": "e", "context": '])
    before = src.read_bytes()
    for overwrite in (False, True):
        with pytest.raises(InputError, match="is the input file itself"):
            score_file(monitor, src, src, overwrite=overwrite)
        assert src.read_bytes() == before  # untouched, even with --overwrite
    out = tmp_path / "new" / "deeper" / "out.jsonl"
    summary = score_file(monitor, src, out)
    assert summary.scored == 3 and _ids(out) == ["a", "b", "c"]
    assert [b.error for b in summary.bad] == [
        "invalid JSON: Expecting ',' delimiter at column 26",
        "invalid JSON: Expecting value at column 24 (the line ends early: cut off?)"]


def test_a_resumed_output_refuses_rows_of_another_detector(monitor, tmp_path):
    from faithwatch.errors import InputError
    from faithwatch.monitor import Monitor

    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    _write(src, GOOD[:2])
    score_file(monitor, src, out)
    _write(src, GOOD)  # one more record: a resume would score it
    other = Monitor(monitor.lm, alignment="embedding", detector="heuristic")
    with pytest.raises(InputError, match=r"scored under another configuration \(.*alignment 'lexical' → 'embedding'"):
        score_file(other, src, out)
    assert _ids(out) == ["a", "b"]  # nothing appended
    assert score_file(monitor, src, out).scored == 1  # the same configuration resumes
    assert score_file(other, src, out, overwrite=True).scored == 3


def test_a_resumed_output_refuses_rows_made_under_other_rules_of_a_signal(tmp_path, monkeypatch):
    """A signal's rules changed (the edits' version, say, after an upgrade) change its scores: no mixing."""
    from faithwatch.alignment.edits import EDITS_VERSION
    from faithwatch.errors import InputError
    from faithwatch.monitor import Monitor

    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    _write(src, GOOD[:2])
    before = Monitor("none", signals=["alignment", "edits"], alignment="lexical", detector="heuristic")
    edits = before.signals[-1].version
    assert before.scoring_config()["versions"]["edits"] == edits == f"{EDITS_VERSION}+{MARKUP_RULE}"
    score_file(before, src, out)
    _write(src, GOOD)
    monkeypatch.setattr("faithwatch.signals.edits.EDITS_VERSION", "0")
    after = Monitor("none", signals=["alignment", "edits"], alignment="lexical", detector="heuristic")
    with pytest.raises(InputError, match=rf"another configuration \(versions .*'edits': '0\+{MARKUP_RULE}'"):
        score_file(after, src, out)
    assert _ids(out) == ["a", "b"]  # nothing appended


def test_a_record_edited_after_it_was_scored_is_named_on_resume(tmp_path, caplog):
    from faithwatch.batch import check_record, run_batch

    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"

    def run(rows):
        _write(src, rows)
        items = [check_record(r, n) for n, r in enumerate(rows, start=1)]
        return run_batch(items, out, lambda rec: {"n": len(rec.data["response"])}, source=src)

    assert run(GOOD[:2]).scored == 2
    with caplog.at_level("WARNING"):
        assert run(GOOD).scored == 1  # a record added: resumed, no warning
    assert "changed after" not in caplog.text
    edited = [GOOD[0], {**GOOD[1], "response": "The river Avon."}, GOOD[2]]
    for _ in range(2):  # warned on every resume, not only the first
        caplog.clear()
        with caplog.at_level("WARNING"):
            summary = run(edited)
        assert (summary.scored, summary.skipped_done) == (0, 3)
        assert "1 record of" in caplog.text and "(ids b)" in caplog.text and "--overwrite" in caplog.text
    assert _ids(out) == ["a", "b", "c"]  # the old row stays, no duplicate


def test_a_csv_input_is_read_by_its_header_and_scored_as_the_same_jsonl(monitor, tmp_path):
    """A .csv input: one record per row (a quoted cell may span lines), an empty question cell means a summary, a
    row with a missing or an extra field is a bad record named by the line it starts on; the scores equal those of
    the same records as JSON Lines."""
    import csv

    src = tmp_path / "in.csv"
    with src.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "question", "context", "response"])
        w.writerow(["a", GOOD[0]["question"], CONTEXT.replace(". ", ".\n"), GOOD[0]["response"]])  # lines 2-3
        w.writerow(["b", "", CONTEXT, "The bridge dates from 1820."])  # line 4: a summary
        w.writerow(["c", "Who?", CONTEXT])  # line 5: no response
        w.writerow(["d", "Who?", CONTEXT, "Masons.", "extra"])  # line 6
    summary = score_file(monitor, src, tmp_path / "out.jsonl")
    assert summary.scored == 2 and [(b.line, b.id) for b in summary.bad] == [(5, "c"), (6, None)]
    assert "'response' is missing" in summary.bad[0].error and "5 fields" in summary.bad[1].error
    rows = {r["id"]: r for r in map(json.loads, (tmp_path / "out.jsonl").read_text().splitlines())}
    assert rows["a"]["line"] == 2 and rows["b"]["line"] == 4

    same = tmp_path / "same.jsonl"
    _write(same, [{"id": "a", "question": GOOD[0]["question"], "context": CONTEXT.replace(". ", ".\n"),
                   "response": GOOD[0]["response"]}, {"id": "b", "context": CONTEXT,
                                                      "response": "The bridge dates from 1820."}])
    score_file(monitor, same, tmp_path / "same-out.jsonl")
    again = {r["id"]: r for r in map(json.loads, (tmp_path / "same-out.jsonl").read_text().splitlines())}
    assert [s["score"] for s in again["a"]["sentences"]] == [s["score"] for s in rows["a"]["sentences"]]
    assert rows["b"]["question"] == again["b"]["question"] == "Write a short summary of the context."


def test_a_tsv_input_and_a_header_without_the_needed_columns(tmp_path):
    from faithwatch.batch import Record, read_records
    from faithwatch.errors import InputError
    from faithwatch.records import CheckRecord

    tsv = tmp_path / "in.tsv"
    tsv.write_text("context\tresponse\tid\nThe bridge was built in 1820.\tBuilt in 1820.\t\n", encoding="utf-8")
    (item,) = read_records(tsv, CheckRecord)
    assert isinstance(item, Record) and item.id == "line-2" and item.data["response"] == "Built in 1820."
    bad = tmp_path / "bad.csv"
    bad.write_text("question,text,answer\nq,c,r\n", encoding="utf-8")
    with pytest.raises(InputError, match="header row naming the columns context and response"):
        list(read_records(bad))
    blank = tmp_path / "blank.csv"  # a blank line before a bad row: the row was named by the blank line's number
    blank.write_text("context,response\nc,r\n\n,\n", encoding="utf-8")
    assert [(type(i).__name__, i.line) for i in read_records(blank)] == [("Record", 2), ("BadRecord", 4)]
    twice = tmp_path / "twice.csv"  # one of two 'response' columns was read, silently
    twice.write_text("context,response,response\nc,r,s\n", encoding="utf-8")
    with pytest.raises(InputError, match="names the column 'response' twice"):
        list(read_records(twice))
    latin = tmp_path / "latin.csv"
    latin.write_bytes("context,response\ncaf\xe9,r\n".encode("latin-1"))
    with pytest.raises(InputError, match="not UTF-8"):
        list(read_records(latin))


def test_records_with_a_lone_surrogate_are_bad_records_and_the_rest_go_on(monitor, tmp_path):
    # json.loads reads "\ud800" as a lone surrogate: a TypeError in the tokenizer, and an id of one could not be
    # written to the errors file (UnicodeEncodeError), which stopped the batch
    src = tmp_path / "in.jsonl"
    good = '"context": "Paris is in France.", "question": "Where?"'
    src.write_text(f'{{"id": "a", {good}, "response": "Paris \\ud800."}}\n'
                   f'{{"id": "b\\ud800", {good}, "response": "Paris."}}\n'
                   f'{{"id": "c", {good}, "response": "Paris."}}\n', encoding="utf-8")
    out = tmp_path / "out.jsonl"
    summary = score_file(monitor, src, out)
    assert summary.scored == 1 and finished_ids(out) == {"c"}
    assert [(b.line, b.id) for b in summary.bad] == [(1, "a"), (2, "b\\ud800")]
    assert "'response' holds a lone surrogate" in summary.bad[0].error and "'id' holds" in summary.bad[1].error
    errors = [json.loads(line) for line in summary.errors.read_text(encoding="utf-8").splitlines()]
    assert [e["id"] for e in errors] == ["a", "b\\ud800"]

