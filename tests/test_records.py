"""One record model per input shape, shared by `score`, `check` and the server."""

from __future__ import annotations

import json

import pytest

from faithwatch.batch import BadRecord, Record, read_records
from faithwatch.errors import InputError
from faithwatch.records import CheckRecord, ScoreRecord, parse
from faithwatch.server.schemas import ScoreRecord as ServerScoreRecord

GOOD = {"context": "Paris is in France.", "question": "Where?", "response": "In France."}


def test_types_are_checked_and_blank_text_is_a_problem() -> None:
    assert parse(ScoreRecord, {**GOOD, "id": 7})[1] == []
    assert parse(ScoreRecord, {**GOOD, "id": {"a": 1}})[1] == ["'id' must be a string or an integer"]
    assert parse(ScoreRecord, {**GOOD, "id": True})[1] == ["'id' must be a string or an integer"]
    assert parse(ScoreRecord, {**GOOD, "instruction": 5})[1] == ["'instruction' must be a string"]
    assert parse(ScoreRecord, {**GOOD, "response": "  "})[1] == ["'response' must be a non-empty string"]
    assert parse(ScoreRecord, {**GOOD, "response": "\u200b"})[1] == ["'response' must be a non-empty string"]
    assert parse(ScoreRecord, {"context": "c", "question": "q"})[1] == ["'response' is missing"]
    assert parse(CheckRecord, {"response": "r", "context": ["a", " "]})[1] == [
        "'context' has 1 blank passage (list index 1): give each passage some text, or leave it out"]
    many = parse(CheckRecord, {"response": "r", "context": ["a", *[" "] * 7]})[1]  # the count was left out past 5
    assert many[0].startswith("'context' has 7 blank passages (list index 1, 2, 3, 4, 5 and 2 more)")
    assert parse(CheckRecord, {"response": "r", "context": 3})[1] == ["'context' must be a string or a list of "
                                                                      "strings"]
    listed = parse(ScoreRecord, {**GOOD, "context": ["a", "b"]})[1]  # score reads one context, check several
    assert listed == ["'context' must be a string (one context: join several passages into one string)"]
    blank = parse(CheckRecord, {"response": "r", "context": "c", "question": " "})[1]  # as score refuses it
    assert blank == ["'question' must be a non-empty string (leave it out if there is none)"]


def test_the_server_record_is_the_batch_record() -> None:
    assert issubclass(ServerScoreRecord, ScoreRecord)
    assert set(ServerScoreRecord.model_fields) == set(ScoreRecord.model_fields)


def test_a_non_utf8_line_is_one_bad_record(tmp_path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(json.dumps({**GOOD, "id": "a"}).encode() + b"\n" + b'{"id": "b", "context": "\xff"}\n'
                     + json.dumps({**GOOD, "id": 1}).encode() + b"\n" + json.dumps({**GOOD, "id": [1]}).encode())
    got = list(read_records(path))
    assert [type(r) for r in got] == [Record, BadRecord, Record, BadRecord]
    assert "not UTF-8" in got[1].error and got[1].line == 2
    assert got[2].id == "1" and got[3].id is None and "'id' must be a string or an integer" in got[3].error
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({**GOOD, "id": "bom"}).encode() + b"\n")  # a byte-order mark
    assert [r.id for r in read_records(path)] == ["bom"]


def test_a_record_without_a_question_is_a_summary(tmp_path) -> None:
    """No question (left out or null): the summarization sets' question and instruction; a blank one is an error."""
    from faithwatch.data.loaders import load_jsonl
    from faithwatch.tasks import SUMMARY_INSTRUCTION, SUMMARY_QUESTION

    doc = {"context": "Paris is in France.", "response": "Paris is a French city."}
    for data in (doc, {**doc, "question": None}):
        record, problems = parse(ScoreRecord, data)
        assert problems == [] and record.question == SUMMARY_QUESTION and record.instruction == SUMMARY_INSTRUCTION
    record, _ = parse(ScoreRecord, {**doc, "instruction": "Be brief."})
    assert record.instruction == "Be brief."
    assert parse(ScoreRecord, {**doc, "question": " "})[1] == [
        "'question' must be a non-empty string (leave it out to score a summary of the context)"]
    for data in ({**doc, "instruction": " "}, {**GOOD, "instruction": ""}):  # never the default in its place
        assert parse(ScoreRecord, data)[1] == ["'instruction' must be a non-empty string (leave it out for the "
                                               "default)"]
    assert parse(ScoreRecord, GOOD)[0].instruction is None  # a question given: the default QA instruction
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps({**doc, "id": "s"}) + "\n" + json.dumps({**GOOD, "id": "q"}) + "\n")
    got = list(read_records(path))
    assert [r.data["question"] for r in got] == [SUMMARY_QUESTION, "Where?"]
    assert got[0].data["instruction"] == SUMMARY_INSTRUCTION
    examples = load_jsonl(path)
    assert [(e.question, e.instruction) for e in examples][0] == (SUMMARY_QUESTION, SUMMARY_INSTRUCTION)
    assert examples[1].question == "Where?"
    path.write_text(json.dumps({**GOOD, "id": "q"}) + "\n" + json.dumps({**doc, "instruction": " "}) + "\n")
    with pytest.raises(InputError, match=r"in.jsonl:2: 'instruction' must be a non-empty string \(leave it out"):
        load_jsonl(path)
