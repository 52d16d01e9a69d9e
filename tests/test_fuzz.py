"""Property-based tests: arbitrary unicode, control characters, huge and empty strings and wrong types never give a
traceback or a NaN, and sentence offsets always slice back to the sentence text."""

from __future__ import annotations

import json
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from faithwatch.batch import BadRecord, Record, read_records
from faithwatch.claims.spans import sentence_spans as claim_spans
from faithwatch.records import CheckRecord, ScoreRecord, parse
from faithwatch.sentences import SentenceTracker
from faithwatch.server.schemas import CheckRequest, GenerateRequest, MonitorRequest, ScoreRequest
from faithwatch.text import sentence_spans

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# text with sentence punctuation, control characters, astral-plane and combining characters, and long runs
TEXT = st.text(alphabet=st.one_of(st.characters(codec="utf-8"), st.sampled_from(list(".!?…。\n\t \x00\x1b\u200b"))),
               max_size=300) | st.builds(lambda s, n: s * n, st.sampled_from(["Ab. ", "...", "x", " "]),
                                         st.integers(0, 800))
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=12)
FIELDS = ("id", "context", "question", "response", "instruction")
RECORDS = st.dictionaries(st.sampled_from(FIELDS), JSON | TEXT, max_size=5)


@FAST
@given(TEXT)
def test_sentence_offsets_slice_back_to_the_text(text: str) -> None:
    spans = sentence_spans(text)
    assert all(0 <= a < b <= len(text) for a, b in spans)
    assert all(b1 <= a2 for (_, b1), (a2, _) in zip(spans, spans[1:], strict=False))
    assert all(text[a:b] == text[a:b].strip() for a, b in spans)
    for s in SentenceTracker.split_text(text):
        assert text[s.start:s.end] == s.text and s.text.strip()
    for a, b in claim_spans(text):
        assert text[a:b].strip()


@FAST
@given(RECORDS)
def test_the_record_models_never_raise_anything_but_problems(data: dict) -> None:
    for model in (ScoreRecord, CheckRecord):
        record, problems = parse(model, data)
        assert all(isinstance(p, str) and p for p in problems)
        assert record is None or isinstance(record, model)


@FAST
@given(st.lists(st.one_of(st.binary(max_size=80), RECORDS.map(lambda d: json.dumps(d).encode())), max_size=8))
def test_the_jsonl_reader_turns_every_line_into_a_record_or_a_bad_record(tmp_path_factory, lines: list[bytes]) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "in.jsonl"
    path.write_bytes(b"\n".join(line.replace(b"\n", b" ") for line in lines))
    got = list(read_records(path))
    assert all(isinstance(r, (Record, BadRecord)) for r in got)
    assert all(r.error for r in got if isinstance(r, BadRecord))


@FAST
@given(st.dictionaries(st.sampled_from(["question", "context", "records", "strategy", "tau1", "seed", "temperature",
                                        "max_new_tokens", "response", "contexts", "alignment", "samples"]),
                       JSON | TEXT, max_size=6))
def test_request_bodies_validate_or_refuse(body: dict) -> None:
    for model in (MonitorRequest, ScoreRequest, GenerateRequest, CheckRequest):
        try:
            parsed = model.model_validate(body)
        except ValidationError:
            continue
        for value in parsed.model_dump().values():
            assert not (isinstance(value, float) and not math.isfinite(value))
