"""Data loaders and sentence labels: miniature raw files of each shared data set, the generic JSONL, the labels.

Offline and fast: everything is hand-written into tmp_path; one smoke test reads the real ../shared/data when present.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from faithwatch.data.loaders import data_root, load_begin, load_dataset, load_faithbench, load_jsonl, load_qags
from faithwatch.data.schema import LabelledExample, LabelledSpan, sentence_label
from faithwatch.errors import InputError
from faithwatch.eval.labels import label_sentences, label_windows
from faithwatch.tasks import DIALOGUE_INSTRUCTION, QA_INSTRUCTION, SUMMARY_INSTRUCTION, SUMMARY_QUESTION

REAL_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"

# ---------------------------------------------------------------------------------------------------------------
# FaithBench
# ---------------------------------------------------------------------------------------------------------------

#: sentences [0, 23) [24, 35) [36, 58)
SUMMARY = "The cat sat on the mat. It was red. The dog barked loudly."
SENTENCES = [(0, 23), (24, 35), (36, 58)]


def _ann(annot_id, annotator, label, span, start, end):
    return {
        "annot_id": annot_id, "annotator_id": annotator, "annotator_name": f"name-{annotator}", "label": label,
        "note": "", "summary_span": span, "summary_start": start, "summary_end": end,
        "source_span": None, "source_start": None, "source_end": None,
    }


def _sample(sample_id, summary, annotations, summarizer):
    return {
        "sample_id": sample_id, "source": f"source text {sample_id}", "summary": summary, "annotations": annotations,
        "metadata": {"summarizer": summarizer, "hhem-2.1": 0.5, "gpt_4o": 1, "raw_sample_id": 100 + sample_id},
    }


def _write_faithbench(root: Path, batches: dict[str, list[dict]]) -> Path:
    folder = root / "faithbench"
    folder.mkdir(parents=True, exist_ok=True)
    for name, samples in batches.items():
        (folder / f"{name}.json").write_text(json.dumps({"samples": samples}), encoding="utf-8")
    return root


@pytest.fixture
def faithbench_root(tmp_path: Path) -> Path:
    main = [
        _ann(1, "ann-A", ["Unwanted", "Unwanted.Intrinsic"], "red", 31, 34),
        _ann(2, "ann-B", ["Unwanted", "Unwanted.Extrinsic"], "It was red", None, None),  # null offsets, findable
        _ann(3, "ann-A", ["Questionable"], "dog barked loudly", 40, 57),
        _ann(4, "ann-B", ["Benign"], "The cat sat", 0, 11),
        _ann(5, "ann-C", ["Unwanted"], "purple elephant", None, None),  # not in the summary: skipped
        _ann(6, "ann-C", ["Benign"], "on the mat", 0, 10),  # wrong offsets: found again by its text
    ]
    batch_1 = [
        _sample(0, SUMMARY, main, "org/model-a"),
        _sample(1, "Paris is in France.", [_ann(7, "ann-A", ["Questionable"], "Paris", 0, 5)], "org/model-b"),
        _sample(2, "Nothing to see here.", [], "org/model-c"),
        _sample(3, "All fine here.", [_ann(8, "ann-B", ["Benign"], "fine", 4, 8)], "org/model-a"),
    ]
    batch_2 = [_sample(0, "Another batch.", [], "org/model-d")]
    return _write_faithbench(tmp_path, {"batch_1": batch_1, "batch_2": batch_2})


def test_faithbench_spans_labels_and_meta(faithbench_root: Path) -> None:
    examples = load_faithbench(faithbench_root)
    by_id = {e.id: e for e in examples}
    assert sorted(by_id) == ["batch_1-0", "batch_1-1", "batch_1-2", "batch_1-3", "batch_2-0"]

    ex = by_id["batch_1-0"]
    assert ex.dataset == "faithbench"
    assert ex.response == SUMMARY
    assert ex.context == "source text 0"
    assert ex.question == SUMMARY_QUESTION
    assert ex.instruction == SUMMARY_INSTRUCTION
    assert ex.default_label == 0
    assert ex.spans == [
        LabelledSpan(31, 34, "unfaithful", "ann-A"),
        LabelledSpan(24, 34, "unfaithful", "ann-B"),
        LabelledSpan(40, 57, "excluded", "ann-A"),
        LabelledSpan(0, 11, "faithful", "ann-B"),
        LabelledSpan(12, 22, "faithful", "ann-C"),
    ]
    assert all(ex.response[s.start : s.end] for s in ex.spans)
    assert ex.response_label == 1
    assert ex.source_model == "org/model-a"
    assert ex.meta["hhem-2.1"] == 0.5 and ex.meta["raw_sample_id"] == 100

    assert by_id["batch_1-1"].spans == [LabelledSpan(0, 5, "excluded", "ann-A")]
    assert by_id["batch_1-1"].response_label is None  # only Questionable, excluded by default
    assert by_id["batch_1-2"].spans == [] and by_id["batch_1-2"].response_label == 0
    assert by_id["batch_1-3"].spans == [LabelledSpan(4, 8, "faithful", "ann-B")]
    assert by_id["batch_1-3"].response_label == 0
    assert by_id["batch_2-0"].source_model == "org/model-d"


@pytest.mark.parametrize(
    ("policy", "span_label", "only_questionable_label"),
    [("exclude", "excluded", None), ("faithful", "faithful", 0), ("unfaithful", "unfaithful", 1)],
)
def test_faithbench_questionable_policy(faithbench_root: Path, policy, span_label, only_questionable_label) -> None:
    by_id = {e.id: e for e in load_faithbench(faithbench_root, questionable=policy)}
    assert by_id["batch_1-0"].spans[2] == LabelledSpan(40, 57, span_label, "ann-A")
    assert by_id["batch_1-0"].response_label == 1  # Unwanted spans decide whatever the policy
    assert by_id["batch_1-1"].spans == [LabelledSpan(0, 5, span_label, "ann-A")]
    assert by_id["batch_1-1"].response_label == only_questionable_label
    assert by_id["batch_1-3"].response_label == 0  # Benign stays faithful


def test_faithbench_sentences_through_sentence_label(faithbench_root: Path) -> None:
    ex = {e.id: e for e in load_faithbench(faithbench_root)}["batch_1-0"]
    assert [sentence_label(ex, a, b) for a, b in SENTENCES] == [0, 1, None]
    # "It was red." is marked by ann-A and ann-B: two distinct annotators
    assert [sentence_label(ex, a, b, min_unfaithful=2) for a, b in SENTENCES] == [0, 1, None]
    assert sentence_label(ex, 24, 35, min_unfaithful=3) is None


def test_faithbench_no_batches_gives_no_examples(tmp_path: Path) -> None:
    (tmp_path / "faithbench").mkdir()
    assert load_faithbench(tmp_path) == []


def test_faithbench_unlocatable_unwanted_still_marks_response(tmp_path: Path) -> None:
    _write_faithbench(tmp_path, {"batch_1": [
        _sample(0, "The sky is green.", [_ann(1, "ann-A", ["Unwanted"], "sky is blue", None, None)], "m"),
    ]})
    (ex,) = load_faithbench(tmp_path)
    assert ex.spans == []
    assert ex.response_label == 1


def test_faithbench_unlabelled_annotation_is_not_questionable(tmp_path: Path) -> None:
    _write_faithbench(tmp_path, {"batch_1": [
        _sample(0, "All is right.", [_ann(1, "ann-A", [], "All is right.", 0, 13)], "m"),
    ]})
    (ex,) = load_faithbench(tmp_path, questionable="unfaithful")
    assert all(s.label != "unfaithful" for s in ex.spans)
    assert ex.response_label != 1


# ---------------------------------------------------------------------------------------------------------------
# QAGS
# ---------------------------------------------------------------------------------------------------------------


def _votes(*answers: str) -> list[dict]:
    return [{"worker_id": i, "response": a} for i, a in enumerate(answers)]


def test_qags_majority_vote(tmp_path: Path) -> None:
    rows = [
        {"article": "Article one.", "summary_sentences": [
            {"sentence": " The cat sat. ", "responses": _votes("yes", "YES ", "no")},
            {"sentence": "It was red.", "responses": _votes("no", " No", "yes")},
        ]},
        {"article": "Article two.", "summary_sentences": [
            {"sentence": "All good.", "responses": _votes("yes", "yes", "yes")},
        ]},
        {"article": "Article three.", "summary_sentences": [
            {"sentence": "A tie.", "responses": _votes("yes", "no")},  # only possible with an even count
        ]},
    ]
    (tmp_path / "qags-cnndm").mkdir()
    (tmp_path / "qags-cnndm" / "mturk_cnndm.jsonl").write_text(
        "\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")

    first, second, third = load_qags(tmp_path)
    assert first.id == "qags-0" and first.dataset == "qags-cnndm"
    assert first.context == "Article one."
    assert first.question == SUMMARY_QUESTION and first.instruction == SUMMARY_INSTRUCTION
    assert first.response == "The cat sat. It was red."
    assert first.spans == [LabelledSpan(0, 12, "faithful"), LabelledSpan(13, 24, "unfaithful")]
    assert [first.response[s.start : s.end] for s in first.spans] == ["The cat sat.", "It was red."]
    assert first.default_label is None
    assert first.response_label == 1
    assert first.source_model is None

    assert second.spans == [LabelledSpan(0, 9, "faithful")]
    assert second.response_label == 0
    assert third.spans == [LabelledSpan(0, 6, "excluded")]
    assert [sentence_label(first, 0, 12), sentence_label(first, 13, 24)] == [0, 1]


def test_a_qags_file_as_released_loads_by_path(tmp_path: Path) -> None:
    rows = [{"article": "Article one.", "summary_sentences": [
        {"sentence": "The cat sat.", "responses": _votes("yes", "yes", "no")},
        {"sentence": "It was red.", "responses": _votes("no", "no", "yes")}]}]
    path = tmp_path / "mturk_other.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    (example,) = load_dataset(str(path))
    assert example.dataset == "mturk_other" and example.response == "The cat sat. It was red."
    assert [s.label for s in example.spans] == ["faithful", "unfaithful"] and example.response_label == 1
    path.write_text(path.read_text(encoding="utf-8") + json.dumps({"article": "No summary."}) + "\n",
                    encoding="utf-8")
    with pytest.raises(InputError, match=r"mturk_other.jsonl:3: not a QAGS record"):  # line 2 is blank
        load_dataset(str(path))
    generic = tmp_path / "mine.jsonl"  # a generic file is still read as one
    generic.write_text(json.dumps({"context": "C.", "question": "Q?", "response": "R.", "label": 0}) + "\n",
                       encoding="utf-8")
    assert load_dataset(str(generic))[0].dataset == "mine"


@pytest.mark.parametrize(("sentence", "why"), [
    ({"responses": _votes("yes")}, "no sentence"),
    ({"sentence": "The cat sat.", "responses": []}, "no votes"),
    ({"sentence": "The cat sat.", "responses": _votes("maybe")}, "a vote that is neither yes nor no"),
    ({"sentence": "The cat sat.", "responses": [{"worker": 1}]}, "a vote without a response"),
    ("The cat sat.", "a bare string"),
])
def test_a_malformed_qags_sentence_is_named(tmp_path: Path, sentence, why) -> None:
    """A QAGS sentence that is not one is an InputError naming the line and the sentence, not a KeyError."""
    good = {"sentence": "It was red.", "responses": _votes("no", "no", "yes")}
    path = tmp_path / "mturk_bad.jsonl"
    path.write_text(json.dumps({"article": "A.", "summary_sentences": [good, sentence]}) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"mturk_bad.jsonl:1: summary sentence 1 is not a QAGS sentence"):
        load_dataset(str(path))


@pytest.mark.parametrize(("row", "message"), [
    (["t5", "wow", "K.", "M.", "R.", "fully attributable"], r"begin_label 'fully attributable' is none of"),
    (["t5", "wow", "K.", "M.", "R.", ""], r"begin_label '' is none of"),
    (["t5", "wow", " ", "M.", "R.", "Generic"], r"empty knowledge"),
    (["t5", "wow", "K.", "M.", "", "Generic"], r"empty response"),
])
def test_a_bad_begin_row_is_named(begin_root: Path, tmp_path: Path, row, message) -> None:
    """An unknown label is not read as Generic, and an empty text is not a record: both name the line."""
    path = tmp_path / "begin_bad.tsv"
    lines = (begin_root / "begin-dev" / "begin_dev_wow.tsv").read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([*lines, "\t".join(row)]) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"begin_bad.tsv:5: " + message):
        load_dataset(str(path))


def test_a_begin_response_that_opens_the_conversation_gets_a_stand_in_question(begin_root: Path,
                                                                                 tmp_path: Path) -> None:
    from faithwatch.data.loaders import BEGIN_FIRST_TURN

    lines = (begin_root / "begin-dev" / "begin_dev_wow.tsv").read_text(encoding="utf-8").splitlines()
    path = tmp_path / "begin_first.tsv"
    path.write_text("\n".join([*lines, "\t".join(["t5", "cmu", "K.", "", "R.", "Fully attributable"])]) + "\n",
                    encoding="utf-8")
    assert load_dataset(str(path))[-1].question == BEGIN_FIRST_TURN


def test_a_quote_in_a_begin_file_is_text_and_a_broken_row_is_named(begin_root: Path, tmp_path: Path) -> None:
    """BEGIN's TSV has no quoting: a response that opens with '"' keeps it and does not swallow the next rows."""
    lines = (begin_root / "begin-dev" / "begin_dev_wow.tsv").read_text(encoding="utf-8").splitlines()
    quoted = ["t5", "wow", "K.", "M.", '"Penguin" employs him, she said.', "Fully attributable"]
    after = ["t5", "wow", "K2.", "M2.", "R2.", "Not fully attributable"]
    path = tmp_path / "begin_quote.tsv"
    path.write_text("\n".join([*lines, "\t".join(quoted), "\t".join(after)]) + "\n", encoding="utf-8")
    examples = load_dataset(str(path), generic="unfaithful")
    assert len(examples) == len(lines) - 1 + 2
    assert examples[-2].response == '"Penguin" employs him, she said.' and examples[-1].response_label == 1
    path.write_text("\n".join([*lines, "\t".join([*after, "extra"])]) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"begin_quote.tsv:5: more tab-separated fields than the header's"):
        load_dataset(str(path))


def test_a_summedits_file_as_released_loads_by_path(tmp_path: Path) -> None:
    rows = [{"id": "news_1_0", "doc": "The council met on Monday.", "summary": "The council met on Monday.",
             "label": 1, "original_summary": "x", "edit_types": []},
            {"doc": "The council met on Monday.", "summary": "The council met on Friday.", "label": 0}]
    path = tmp_path / "summedits_news.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    first, second = load_dataset(str(path))
    assert first.dataset == "summedits_news" and first.id == "news_1_0" and second.id == "summedits-1"
    assert (first.response_label, second.response_label) == (0, 1)  # SummEdits' 1 is consistent
    assert second.context == "The council met on Monday." and second.response == "The council met on Friday."
    assert second.question == SUMMARY_QUESTION and second.default_label is None and second.spans == []
    lines = tmp_path / "summedits_news.jsonl"  # the same records one per line
    lines.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    assert [e.response_label for e in load_dataset(str(lines))] == [0, 1]
    for bad, message in (([{**rows[1], "label": 2}], r"record 0: 'label' must be 1"),
                         ([rows[0], {"doc": "D."}], r"record 1: not a SummEdits record"),
                         ([{**rows[1], "summary": " "}], r"missing or empty \['summary'\]"),
                         ({"doc": "D."}, "expected a JSON list")):
        path.write_text(json.dumps(bad), encoding="utf-8")
        with pytest.raises(InputError, match=message):
            load_dataset(str(path))
    path.write_text("[{", encoding="utf-8")
    with pytest.raises(InputError, match="invalid JSON"):
        load_dataset(str(path))


# ---------------------------------------------------------------------------------------------------------------
# BEGIN
# ---------------------------------------------------------------------------------------------------------------


@pytest.fixture
def begin_root(tmp_path: Path) -> Path:
    (tmp_path / "begin-dev").mkdir()
    header = ["model_name", "data_source", "knowledge", "message", "response", "begin_label"]
    rows = [
        ["t5", "wow", "Crayola began with chalk.", "Odd name.", "Crayola started with chalk.", "Fully attributable"],
        ["gpt2", "wow", "The tower is 330 m tall.", "How tall?", "It is 500 m tall. Wow.", "Not fully attributable"],
        ["ctrl", "wow", "Cats purr.", "I like cats", "That is nice!", "Generic"],
    ]
    with (tmp_path / "begin-dev" / "begin_dev_wow.tsv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t")
        writer.writerow(header)
        writer.writerows(rows)
    return tmp_path


def test_begin_labels(begin_root: Path) -> None:
    full, partial, generic = load_begin(begin_root)
    assert [e.id for e in (full, partial, generic)] == ["begin-0", "begin-1", "begin-2"]
    assert full.dataset == "begin-dev"
    assert full.context == "Crayola began with chalk."
    assert full.question == "Odd name."
    assert full.response == "Crayola started with chalk."
    assert full.instruction == DIALOGUE_INSTRUCTION
    assert full.spans == [] and full.default_label is None
    assert [e.response_label for e in (full, partial, generic)] == [0, 1, None]
    assert [e.source_model for e in (full, partial, generic)] == ["t5", "gpt2", "ctrl"]


def test_jsonl_rows_read_back_as_the_same_examples(begin_root: Path, tmp_path: Path) -> None:
    """to_jsonl_row then load_jsonl keeps a response-level example response-level (no "spans", no default label)
    and a span-labelled one span-labelled."""
    from faithwatch.data.loaders import to_jsonl_row

    begin = load_begin(begin_root, generic="unfaithful")
    spanned = LabelledExample(dataset="x", id="s1", context="C.", question="Q?", response="A. B.",
                              spans=[LabelledSpan(3, 5, "unfaithful")], default_label=0)
    path = tmp_path / "round.jsonl"
    path.write_text("".join(json.dumps(to_jsonl_row(e)) + "\n" for e in [*begin, spanned]), encoding="utf-8")
    back = load_jsonl(path)
    assert [(e.id, e.response_label, e.default_label, e.spans) for e in back] == \
        [(e.id, e.response_label, e.default_label, e.spans) for e in [*begin, spanned]]


def test_a_begin_file_as_released_loads_by_path(begin_root: Path, tmp_path: Path) -> None:
    path = begin_root / "begin-dev" / "begin_dev_wow.tsv"
    other = tmp_path / "begin_other_split.tsv"
    other.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    examples = load_dataset(str(other), generic="unfaithful")
    assert [e.dataset for e in examples] == ["begin_other_split"] * 3
    assert [e.response_label for e in examples] == [0, 1, 1]
    assert [(e.context, e.response) for e in examples] == [(e.context, e.response) for e in load_begin(begin_root)]
    bad = tmp_path / "other.tsv"
    bad.write_text("a\tb\n1\t2\n", encoding="utf-8")
    with pytest.raises(InputError, match="not a BEGIN file: no column knowledge"):
        load_dataset(str(bad))


@pytest.mark.parametrize(("policy", "expected"), [("exclude", None), ("faithful", 0), ("unfaithful", 1)])
def test_begin_generic_policy(begin_root: Path, policy, expected) -> None:
    full, partial, generic = load_begin(begin_root, generic=policy)
    assert (full.response_label, partial.response_label, generic.response_label) == (0, 1, expected)


# ---------------------------------------------------------------------------------------------------------------
# sentence_label
# ---------------------------------------------------------------------------------------------------------------


def _ex(spans=(), default_label=0, response_label=None, id_="x", response="x" * 100, **kw) -> LabelledExample:
    return LabelledExample(dataset=kw.pop("dataset", "toy"), id=id_, context="c", question="q", response=response,
                           spans=list(spans), default_label=default_label, response_label=response_label, **kw)


def test_sentence_containing_an_unfaithful_span_is_unfaithful() -> None:
    ex = _ex([LabelledSpan(12, 15, "unfaithful", "a")])
    assert sentence_label(ex, 10, 20) == 1


def test_sentence_inside_an_unfaithful_span_is_unfaithful() -> None:
    ex = _ex([LabelledSpan(0, 50, "unfaithful", "a")])
    assert sentence_label(ex, 10, 20) == 1
    assert sentence_label(ex, 45, 60) == 1  # partial overlap


def test_spans_are_half_open() -> None:
    ex = _ex([LabelledSpan(10, 20, "unfaithful", "a")])
    assert sentence_label(ex, 0, 10) == 0  # touches the span's start only
    assert sentence_label(ex, 20, 30) == 0  # starts at the span's end


def test_only_excluded_is_none_and_benign_only_is_faithful() -> None:
    assert sentence_label(_ex([LabelledSpan(10, 20, "excluded", "a")]), 5, 25) is None
    assert sentence_label(_ex([LabelledSpan(10, 20, "faithful", "a")]), 5, 25) == 0
    # excluded wins over faithful when both overlap
    mixed = _ex([LabelledSpan(10, 20, "faithful", "a"), LabelledSpan(12, 14, "excluded", "b")])
    assert sentence_label(mixed, 5, 25) is None
    # unfaithful wins over everything
    bad = _ex([LabelledSpan(10, 20, "faithful", "a"), LabelledSpan(12, 14, "excluded", "b"),
               LabelledSpan(15, 16, "unfaithful", "c")])
    assert sentence_label(bad, 5, 25) == 1


@pytest.mark.parametrize("default", [0, 1, None])
def test_no_span_gives_default_label(default) -> None:
    ex = _ex([LabelledSpan(50, 60, "unfaithful", "a")], default_label=default)
    assert sentence_label(ex, 0, 10) == default


def test_min_unfaithful_counts_distinct_annotators() -> None:
    one = _ex([LabelledSpan(10, 12, "unfaithful", "a"), LabelledSpan(14, 16, "unfaithful", "a")])
    assert sentence_label(one, 5, 25, min_unfaithful=1) == 1
    assert sentence_label(one, 5, 25, min_unfaithful=2) is None  # one annotator, two spans: a minority
    two = _ex([LabelledSpan(10, 12, "unfaithful", "a"), LabelledSpan(14, 16, "unfaithful", "b")])
    assert sentence_label(two, 5, 25, min_unfaithful=2) == 1
    # a minority vote is left out, not counted as faithful, even next to a Benign span
    minority = _ex([LabelledSpan(10, 12, "unfaithful", "a"), LabelledSpan(5, 25, "faithful", "b")])
    assert sentence_label(minority, 5, 25, min_unfaithful=2) is None
    # spans without an annotator count as one voter each
    anonymous = _ex([LabelledSpan(10, 12, "unfaithful"), LabelledSpan(14, 16, "unfaithful")])
    assert sentence_label(anonymous, 5, 25, min_unfaithful=2) == 1


# ---------------------------------------------------------------------------------------------------------------
# label_sentences / label_windows
# ---------------------------------------------------------------------------------------------------------------


def _table(rows: list[tuple[str, int, int]]) -> pd.DataFrame:
    return pd.DataFrame(
        [{"example_id": e, "sentence_index": i, "start": s, "end": t, "feat": float(i)} for i, (e, s, t) in
         enumerate(rows)])


@pytest.fixture
def mixed_examples() -> list[LabelledExample]:
    return [
        # span-labelled: "Aaa. Bbb. Ccc." -> sentences 0 / 1 / excluded
        _ex([LabelledSpan(5, 8, "unfaithful", "a"), LabelledSpan(10, 13, "excluded", "a")], id_="spans",
            response="Aaa. Bbb. Ccc.", response_label=1, source_model="m1", dataset="fb"),
        # response-level only (default_label None, no spans)
        _ex(id_="ok", default_label=None, response_label=0, source_model="m2", dataset="begin"),
        _ex(id_="bad1", default_label=None, response_label=1, dataset="begin"),
        _ex(id_="bad2", default_label=None, response_label=1, dataset="begin"),
        _ex(id_="unknown", default_label=None, response_label=None, dataset="begin"),
    ]


def test_label_sentences(mixed_examples) -> None:
    table = _table([
        ("spans", 0, 4), ("spans", 5, 9), ("spans", 10, 14),
        ("ok", 0, 10), ("ok", 11, 20),
        ("bad1", 0, 10),
        ("bad2", 0, 10), ("bad2", 11, 20),
        ("unknown", 0, 10),
    ])
    out = label_sentences(mixed_examples, table)
    got = list(zip(out.example_id, out.start, out.label, strict=True))
    assert got == [("spans", 0, 0), ("spans", 5, 1), ("ok", 0, 0), ("ok", 11, 0), ("bad1", 0, 1)]
    assert out.attrs["dropped"] == 4  # excluded sentence, two of the unfaithful multi-sentence response, unknown
    assert out.label.dtype.kind == "i"
    assert list(out.dataset) == ["fb", "fb", "begin", "begin", "begin"]
    assert list(out.source_model) == ["m1", "m1", "m2", "m2", "unknown"]
    assert list(out.response_label) == [1, 1, 0, 0, 1]
    assert list(out.feat) == [0.0, 1.0, 3.0, 4.0, 5.0]  # the other columns are kept
    assert list(out.index) == list(range(5))


def test_label_sentences_min_unfaithful(faithbench_root: Path) -> None:
    examples = load_faithbench(faithbench_root)
    table = _table([("batch_1-0", a, b) for a, b in SENTENCES] + [("batch_1-1", 0, 19)])
    out = label_sentences(examples, table, min_unfaithful=2)
    assert list(out.label) == [0, 1]
    assert out.attrs["dropped"] == 2  # the Questionable-only sentences
    ex = next(e for e in examples if e.id == "batch_1-0")
    ex.spans = [s for s in ex.spans if s.annotator != "ann-B"]  # "It was red." now has one annotator
    out = label_sentences(examples, table, min_unfaithful=2)
    assert list(out.label) == [0] and out.attrs["dropped"] == 3


def test_label_windows(mixed_examples) -> None:
    windows = pd.DataFrame([
        {"example_id": "spans", "window_index": 0, "start": 0, "end": 6},  # overlaps the unfaithful span at 5
        {"example_id": "spans", "window_index": 1, "start": 8, "end": 10},  # between the spans
        {"example_id": "spans", "window_index": 2, "start": 11, "end": 14},  # only excluded
        {"example_id": "ok", "window_index": 0, "start": 0, "end": 10},  # response-level only: no window label
    ])
    out = label_windows(mixed_examples, windows)
    assert list(zip(out.example_id, out.window_index, out.label, strict=True)) == [("spans", 0, 1), ("spans", 1, 0)]
    assert list(out.dataset) == ["fb", "fb"]
    assert out.label.dtype.kind == "i"


# ---------------------------------------------------------------------------------------------------------------
# generic JSONL
# ---------------------------------------------------------------------------------------------------------------


def test_load_jsonl_valid(tmp_path: Path) -> None:
    path = tmp_path / "mine.jsonl"
    lines = [
        {"id": "a", "context": "Paris is in France.", "question": "Where is Paris?",
         "response": "Paris is in Spain. It is big.",
         "spans": [{"start": 12, "end": 17}, {"start": 19, "end": 29, "label": "excluded"}], "label": 1},
        {"context": "c", "question": "q", "response": "r", "instruction": "Be brief.", "label": 0},
        {"id": 7, "context": "c", "question": "q", "response": "r"},
    ]
    path.write_text("\n".join([json.dumps(lines[0]), "", json.dumps(lines[1]), json.dumps(lines[2])]) + "\n",
                    encoding="utf-8")
    first, second, third = load_jsonl(path)
    assert first.id == "a" and first.dataset == "mine"
    assert first.instruction == QA_INSTRUCTION
    assert first.spans == [LabelledSpan(12, 17, "unfaithful"), LabelledSpan(19, 29, "excluded")]
    assert first.response[12:17] == "Spain"
    assert first.default_label == 0 and first.response_label == 1
    assert second.id == "line-3"  # numbered by file line, blank lines included
    assert second.instruction == "Be brief."
    assert second.spans == [] and second.default_label is None and second.response_label == 0
    assert third.id == "7" and third.response_label is None
    # the same file through load_dataset
    assert [e.id for e in load_dataset(str(path))] == ["a", "line-3", "7"]


GOOD = {"context": "c", "question": "q", "response": "hello"}


@pytest.mark.parametrize("bad", [
    "{not json",
    json.dumps({**GOOD, "response": "   "}),
    json.dumps({**GOOD, "question": "  "}),  # left out, a question means a summary; blank is a mistake
    json.dumps({"question": "q", "response": "hello"}),
    json.dumps({**GOOD, "spans": [{"start": 2, "end": 9}]}),
    json.dumps({**GOOD, "spans": [{"start": 3, "end": 3}]}),
    json.dumps({**GOOD, "spans": [{"start": 0, "end": 2, "label": "wrong"}]}),
    json.dumps({**GOOD, "spans": [{"end": 2}]}),
    json.dumps({**GOOD, "spans": [{"start": "x", "end": 2}]}),
    json.dumps({**GOOD, "context": 5}),  # read as "5" before, then an internal TypeError in eval
    json.dumps({**GOOD, "response": ["hello"]}),
    json.dumps({**GOOD, "instruction": 3}),
    json.dumps({**GOOD, "response": "\u200b\ufeff"}),  # invisible characters only
], ids=["json", "empty-response", "blank-question", "missing-context", "span-out-of-range", "empty-span", "span-label",
        "span-no-start", "span-start-not-int", "context-not-text", "response-a-list", "instruction-not-text",
        "invisible-response"])
def test_load_jsonl_bad_line_names_the_line(tmp_path: Path, bad: str) -> None:
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + bad + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"mine\.jsonl:2\b"):
        load_jsonl(path)


@pytest.mark.parametrize("spans", [[{"begin": 0, "end": 2}], [[0, 2]], {"start": 0, "end": 2},
                                   [{"start": True, "end": 2}]])
def test_load_jsonl_a_malformed_span_says_the_form(tmp_path: Path, spans) -> None:
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps({**GOOD, "spans": spans}) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"mine\.jsonl:1: .*'spans' must be a list|mine\.jsonl:1: span 1 must be "
                       r"\{\"start\": int, \"end\": int"):
        load_jsonl(path)


@pytest.mark.parametrize("name, text", [
    ("mine.jsonl", json.dumps({**GOOD, "context": "Malm\u00f6 is in Sweden."}, ensure_ascii=False)),
    ("dev.tsv", "knowledge\tmessage\tresponse\tbegin_label\tmodel_name\nMalm\u00f6\tq\tr\tGeneric\tx"),
    ("summedits_x.json", json.dumps([{"doc": "Malm\u00f6", "summary": "s", "label": 1}], ensure_ascii=False)),
    ("mturk_x.jsonl", json.dumps({"article": "Malm\u00f6", "summary_sentences": []}, ensure_ascii=False)),
])
def test_a_data_file_that_is_not_utf8_is_named(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name  # Latin-1 bytes: an internal UnicodeDecodeError before, whichever loader read it
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(InputError, match=f"{name} is not UTF-8 text"):
        load_dataset(str(path))


def test_a_line_separator_inside_a_json_string_is_no_new_line(tmp_path: Path) -> None:
    # json.dumps(..., ensure_ascii=False) writes U+2028 and U+0085 as they are; splitlines cut the record there
    row = {**GOOD, "context": "Paris is big.\u2028It is in France.\x85Yes.", "label": 0}
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    (example,) = load_dataset(str(path))
    assert example.context == row["context"]


def test_an_empty_data_file_and_unknown_fields_are_named(tmp_path: Path, caplog) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(InputError, match="empty.jsonl holds no records"):
        load_dataset(str(empty))
    misspelt = tmp_path / "mine.jsonl"
    misspelt.write_text(json.dumps({**GOOD, "labels": 1}) + "\n" + json.dumps(GOOD) + "\n", encoding="utf-8")
    with caplog.at_level("WARNING"):
        assert len(load_jsonl(misspelt)) == 2
    assert "field 'labels' ignored" in caplog.text and "label" in caplog.text.split("fields read are")[1]
    caplog.clear()
    with caplog.at_level("WARNING"):
        load_jsonl(_write(tmp_path, [GOOD]))
    assert "ignored" not in caplog.text
    # every response failed, so no sentence: labelled as an empty table, not a KeyError
    assert label_sentences([], pd.DataFrame()).empty


def _write(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("label", [2, "yes"])
def test_load_jsonl_bad_response_label(tmp_path: Path, label) -> None:
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps({**GOOD, "label": label}) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"mine\.jsonl:1\b"):
        load_jsonl(path)


@pytest.mark.parametrize("label, spans, why", [
    (0, [{"start": 0, "end": 4}], "'label' 0 .* a span marks an unfaithful part"),
    (1, [], "'label' 1 .* no span marks an unfaithful part"),
    (1, [{"start": 0, "end": 4, "label": "faithful"}], "'label' 1 .* no span marks an unfaithful part"),
])
def test_load_jsonl_refuses_a_label_the_spans_contradict(tmp_path: Path, label, spans, why) -> None:
    # both were taken: the sentences then had labels that contradict the response's own
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps({**GOOD, "label": label, "spans": spans}) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"mine\.jsonl:1: {why}"):
        load_jsonl(path)
    kept = [(1, [{"start": 0, "end": 4, "label": "excluded"}]), (0, []), (0, [{"start": 0, "end": 4,
                                                                              "label": "faithful"}])]
    for label, spans in kept:  # an excluded span may hold the fault
        path.write_text(json.dumps({**GOOD, "label": label, "spans": spans}) + "\n", encoding="utf-8")
        assert load_jsonl(path)[0].response_label == label


def test_load_jsonl_non_object_line(tmp_path: Path) -> None:
    path = tmp_path / "mine.jsonl"
    path.write_text("[1, 2]\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"mine\.jsonl:1\b"):
        load_jsonl(path)


def test_load_jsonl_names_every_bad_line_at_once(tmp_path: Path) -> None:
    path = tmp_path / "mine.jsonl"
    rows = [GOOD, {**GOOD, "response": ""}, GOOD, {**GOOD, "spans": [{"start": 0, "end": 80}]}]
    rows += [{**GOOD, "label": 2}] * 11
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_jsonl(path)
    message = str(info.value)
    assert message.startswith("13 bad lines: ") and "mine.jsonl:2: 'response' must be a non-empty string" in message
    assert "mine.jsonl:4: span [0, 80) is not inside the response (0 to 5 characters)" in message
    assert "and 3 more bad lines" in message and "mine.jsonl:3" not in message


# ---------------------------------------------------------------------------------------------------------------
# load_dataset / data_root
# ---------------------------------------------------------------------------------------------------------------


def test_load_dataset_unknown_name_lists_names(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        load_dataset("no-such-set", tmp_path)
    for name in ("faithbench", "qags-cnndm", "begin-dev", ".jsonl"):
        assert name in str(info.value)
    with pytest.raises(InputError):
        load_dataset(str(tmp_path / "missing.jsonl"))  # a .jsonl that does not exist


def test_load_dataset_by_name_uses_root(faithbench_root: Path) -> None:
    assert len(load_dataset("faithbench", faithbench_root)) == 5
    assert len(load_dataset("faithbench", str(faithbench_root))) == 5


@pytest.mark.parametrize(("policy", "expected"), [("exclude", None), ("faithful", 0), ("unfaithful", 1)])
def test_load_dataset_passes_policies(faithbench_root: Path, begin_root: Path, policy, expected) -> None:
    # both fixtures share tmp_path, so one root holds faithbench/ and begin-dev/
    assert faithbench_root == begin_root
    by_id = {e.id: e for e in load_dataset("faithbench", faithbench_root, questionable=policy)}
    assert by_id["batch_1-1"].response_label == expected
    begin = load_dataset("begin-dev", begin_root, generic=policy)
    assert begin[2].response_label == expected
    # the default is "exclude" for both
    assert {e.id: e for e in load_dataset("faithbench", faithbench_root)}["batch_1-1"].response_label is None
    assert load_dataset("begin-dev", begin_root)[2].response_label is None


def test_load_dataset_rejects_unknown_policy(faithbench_root: Path) -> None:
    with pytest.raises(InputError, match="exclude, faithful or unfaithful"):
        load_dataset("faithbench", faithbench_root, questionable="maybe")
    with pytest.raises(InputError, match="exclude, faithful or unfaithful"):
        load_dataset("begin-dev", faithbench_root, generic="maybe")


def test_data_root_env_and_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "work" / "empty"
    empty.mkdir(parents=True)
    monkeypatch.chdir(empty)
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.setenv("FAITHWATCH_DATA", str(data))
    assert data_root() == data
    other = tmp_path / "other"
    other.mkdir()
    assert data_root(other) == other  # an explicit root wins over the environment
    monkeypatch.delenv("FAITHWATCH_DATA")
    with pytest.raises(InputError, match="FAITHWATCH_DATA"):
        data_root()
    with pytest.raises(InputError, match="data folder"):
        load_dataset("faithbench")


def test_data_root_finds_shared_data_in_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FAITHWATCH_DATA", raising=False)
    (tmp_path / "shared" / "data").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert data_root() == Path("shared/data")


def test_data_root_explicit_missing_root_raises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAITHWATCH_DATA", str(tmp_path))
    with pytest.raises(InputError):
        data_root(tmp_path / "typo")


# ---------------------------------------------------------------------------------------------------------------
# the real shared data
# ---------------------------------------------------------------------------------------------------------------


def test_real_shared_data_smoke() -> None:
    if not REAL_DATA.is_dir():
        pytest.skip(f"{REAL_DATA} not present")
    expected = {"faithbench": (750, 2186), "qags-cnndm": (235, 714), "begin-dev": (430, 0)}
    for name, (n_examples, n_spans) in expected.items():
        examples = load_dataset(name, REAL_DATA)
        assert len(examples) == n_examples, name
        assert len({e.id for e in examples}) == n_examples, name
        assert sum(len(e.spans) for e in examples) == n_spans, name
        for e in examples:
            assert e.response.strip() and e.context.strip() and e.question.strip(), e.id
            assert e.response_label in (0, 1, None), e.id
            for s in e.spans:
                assert 0 <= s.start < s.end <= len(e.response), (e.id, s)
    qags = load_dataset("qags-cnndm", REAL_DATA)
    assert Counter(s.label for e in qags for s in e.spans) == {"faithful": 531, "unfaithful": 183}


EXTRA = Path(__file__).resolve().parents[1] / "training" / "data"


@pytest.mark.parametrize(("name", "source", "n", "unfaithful"), [
    ("begin-dev-cmu", "cmu", 337, 278),
    ("begin-dev-tc", "tc", 381, 307),
])
def test_the_extra_begin_dev_splits_load_as_documented(name, source, n, unfaithful) -> None:
    """training/data/README.md's counts; each file holds one part of BEGIN's development split, never its test."""
    path = EXTRA / f"{name}.tsv"
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    assert {r["data_source"] for r in rows} == {source}
    examples = [e for e in load_dataset(str(path)) if e.response_label is not None]  # 'Generic' rows: no label
    assert len(examples) == n
    assert sum(e.response_label == 1 for e in examples) == unfaithful
    assert {e.dataset for e in examples} == {name}
    assert not any("test" in p.name for p in EXTRA.glob("begin*"))


def test_a_missing_data_file_is_named_as_missing(tmp_path: Path) -> None:
    """A data file that is not there is 'not found', not an 'unknown dataset'; an unknown name still is."""
    for name in ("missing.jsonl", "missing.tsv", "missing.json"):
        with pytest.raises(InputError, match="data file not found"):
            load_dataset(str(tmp_path / name))
    (tmp_path / "folder.jsonl").mkdir()
    with pytest.raises(InputError, match="a folder, not a file"):
        load_dataset(str(tmp_path / "folder.jsonl"))
    with pytest.raises(InputError, match="unknown dataset 'no-such-set'"):
        load_dataset("no-such-set")


def test_a_lone_surrogate_in_a_data_file_is_named(tmp_path: Path) -> None:
    # "\ud800" in JSON reads as a lone surrogate, which no tokenizer takes (an internal TypeError in eval before)
    generic = tmp_path / "mine.jsonl"
    generic.write_text(json.dumps(GOOD) + "\n" + json.dumps({**GOOD, "response": "x\ud800"}) + "\n",
                       encoding="utf-8")
    with pytest.raises(InputError, match=r"mine\.jsonl:2: 'response' holds a lone surrogate U\+D800"):
        load_dataset(str(generic))
    edits = tmp_path / "summedits_x.json"
    edits.write_text(json.dumps([{"doc": "Paris \udcff", "summary": "s", "label": 1, "id": "e1"}]), encoding="utf-8")
    with pytest.raises(InputError, match=r"record e1: the context holds a lone surrogate U\+DCFF at character 6"):
        load_dataset(str(edits))


def test_the_labelled_example_file_labels_every_sentence_and_both_classes() -> None:
    # examples/labelled.jsonl is what the README and docs/datasets.md point a new user to
    from faithwatch.text.sentences import sentence_spans

    path = Path(__file__).resolve().parents[1] / "examples" / "labelled.jsonl"
    examples = load_dataset(str(path))
    assert len(examples) == 14 and len({e.context for e in examples}) == 5
    rows = [(e.id, start, end) for e in examples for start, end in sentence_spans(e.response)]
    out = label_sentences(examples, _table(rows))
    assert out.attrs["dropped"] == 0 and len(out) == len(rows)
    by_response = out.groupby("example_id").label.max()
    assert {e.id: int(e.response_label) for e in examples} == by_response.to_dict()
    assert 0 < out.label.sum() < len(out)  # both classes among the sentences
