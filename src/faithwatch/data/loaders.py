"""Loaders for the labelled data sets in ``shared/data`` and for users' own JSONL."""

from __future__ import annotations

import csv
import glob
import io
import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Literal, get_args

from faithwatch import records
from faithwatch.data.schema import LabelledExample, LabelledSpan
from faithwatch.errors import InputError
from faithwatch.store import read_lines, read_utf8
from faithwatch.tasks import DIALOGUE_INSTRUCTION, QA_INSTRUCTION, SUMMARY_INSTRUCTION, SUMMARY_QUESTION
from faithwatch.text.visible import escaped, is_blank, require_text

log = logging.getLogger(__name__)

Policy = Literal["exclude", "faithful", "unfaithful"]
#: the label policies of FaithBench's Questionable spans and BEGIN's Generic responses
POLICIES: tuple[str, ...] = get_args(Policy)
#: FaithBench's response-level predictions of other detectors kept in ``meta`` (1 = consistent)
FAITHBENCH_DETECTORS = ("hhem-2.1", "trueteacher", "true_nli", "gpt_4o")


def data_root(root: str | Path | None = None) -> Path:
    """The shared data folder: ``root``, ``$FAITHWATCH_DATA``, or ``shared/data`` here or one level up."""
    if root is not None:
        if not Path(root).is_dir():
            raise InputError(f"data folder not found: {root}")
        return Path(root)
    candidates = [os.environ.get("FAITHWATCH_DATA"), "shared/data", "../shared/data"]
    for c in candidates:
        if c and Path(c).is_dir():
            return Path(c)
    raise InputError("cannot find the data folder: pass --data-root or set FAITHWATCH_DATA")


def _policy_label(policy: Policy) -> str:
    return {"exclude": "excluded", "faithful": "faithful", "unfaithful": "unfaithful"}[policy]


def load_faithbench(root: Path, questionable: Policy = "exclude") -> list[LabelledExample]:
    """FaithBench: summaries with annotators' character spans (Unwanted / Questionable / Benign).

    Unwanted spans are unfaithful, Benign ones faithful, Questionable ones follow ``questionable``.
    Sentences with no span are faithful. Response label: 1 if any Unwanted span, else None if any
    Questionable span under the "exclude" policy, else 0.
    """
    out = []
    for path in sorted(glob.glob(str(root / "faithbench" / "batch_*.json"))):
        batch = Path(path).stem
        for sample in json.loads(read_utf8(Path(path), "FaithBench file"))["samples"]:
            summary = sample["summary"]
            spans, categories = [], set()
            for ann in sample["annotations"]:
                label = _faithbench_label(ann.get("label") or [], questionable)
                if label is None:
                    log.info("faithbench %s/%s: annotation %s has no label; skipped", batch, sample["sample_id"],
                             ann.get("annot_id"))
                    continue
                categories.add(label)
                start, end = ann.get("summary_start"), ann.get("summary_end")
                if start is None or end is None or summary[start:end] != ann.get("summary_span"):
                    text = ann.get("summary_span") or ""
                    found = summary.find(text) if text else -1
                    if found < 0:
                        log.info("faithbench %s/%s: annotation %s has no locatable span; skipped",
                                 batch, sample["sample_id"], ann.get("annot_id"))
                        continue
                    start, end = found, found + len(text)
                spans.append(LabelledSpan(start, end, label, ann.get("annotator_id")))
            # the response label counts every labelled annotation, located or not
            response_label = 1 if "unfaithful" in categories else (None if "excluded" in categories else 0)
            meta = sample.get("metadata", {})
            out.append(LabelledExample(
                dataset="faithbench", id=f"{batch}-{sample['sample_id']}", context=sample["source"],
                question=SUMMARY_QUESTION, instruction=SUMMARY_INSTRUCTION, response=summary, spans=spans,
                default_label=0, response_label=response_label, source_model=meta.get("summarizer"), meta=meta,
            ))
    return out


def _faithbench_label(labels: list[str], questionable: Policy) -> str | None:
    """Span label from an annotation's label list: any Unwanted wins, then Questionable, then Benign."""
    tops = {label.split(".")[0] for label in labels}
    if "Unwanted" in tops:
        return "unfaithful"
    if "Questionable" in tops:
        return _policy_label(questionable)
    if "Benign" in tops:
        return "faithful"
    return None


def load_qags(root: Path) -> list[LabelledExample]:
    """QAGS (CNN/DM): summary sentences with 3 yes/no votes each; majority vote gives the label."""
    return load_qags_file(root / "qags-cnndm" / "mturk_cnndm.jsonl", "qags-cnndm")


def load_qags_file(path: Path, dataset: str) -> list[LabelledExample]:
    """A QAGS file as released (``mturk_<source>.jsonl``: ``article`` and ``summary_sentences``, each with its
    workers' yes/no ``responses``); labels as :func:`load_qags`. Ids are ``qags-<n>``, ``n`` counting the records
    from 0 (blank lines skipped)."""
    out = []
    numbered = [(n, line) for n, line in enumerate(read_lines(path), start=1)
                if line.strip()]
    for i, (n, line) in enumerate(numbered):
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{n}: invalid JSON ({exc})") from None
        if not isinstance(row, dict) or not {"article", "summary_sentences"} <= row.keys():
            raise InputError(f"{path}:{n}: not a QAGS record (needs 'article' and 'summary_sentences')")
        parts, spans, pos = [], [], 0
        for j, sent in enumerate(row["summary_sentences"]):
            votes = _qags_votes(sent)
            if votes is None:
                raise InputError(f"{path}:{n}: summary sentence {j} is not a QAGS sentence (needs a 'sentence' text "
                                 "and 'responses', each with a yes/no 'response')")
            text = sent["sentence"].strip()
            label = "faithful" if sum(votes) * 2 > len(votes) else "unfaithful"
            if sum(votes) * 2 == len(votes):
                label = "excluded"  # a tie (only with an even number of workers)
            spans.append(LabelledSpan(pos, pos + len(text), label))
            parts.append(text)
            pos += len(text) + 1
        response = " ".join(parts)
        labels = {s.label for s in spans}
        out.append(LabelledExample(
            dataset=dataset, id=f"qags-{i}", context=row["article"], question=SUMMARY_QUESTION,
            instruction=SUMMARY_INSTRUCTION, response=response, spans=spans, default_label=None,
            response_label=1 if "unfaithful" in labels else 0,
        ))
    return out


def _qags_votes(sent: object) -> list[bool] | None:
    """The workers' yes votes of one QAGS summary sentence, or ``None`` when it is not one."""
    if not isinstance(sent, dict) or not isinstance(sent.get("sentence"), str) or is_blank(sent["sentence"]):
        return None
    responses = sent.get("responses")
    if not isinstance(responses, list) or not responses:
        return None
    answers = [r.get("response") if isinstance(r, dict) else None for r in responses]
    if not all(isinstance(a, str) and a.strip().lower() in ("yes", "no") for a in answers):
        return None
    return [a.strip().lower() == "yes" for a in answers]


def read_json_list(path: Path, what: str) -> list:
    """The JSON list in ``path``; ``InputError`` naming the file for invalid JSON or another top-level value."""
    try:
        rows = json.loads(read_utf8(path, "data file"))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: invalid JSON ({exc})") from None
    if not isinstance(rows, list):
        raise InputError(f"{path}: expected a JSON list of {what}, got {type(rows).__name__}")
    return rows


SUMMEDITS_FIELDS = ("doc", "summary", "label")


def load_summedits_file(path: Path, dataset: str) -> list[LabelledExample]:
    """A SummEdits file as released (``summedits_<domain>.json``: a JSON list of objects with ``doc``, ``summary``
    and ``label``, 1 = consistent, 0 = inconsistent; or the same objects one per line in a ``.jsonl``). The label is
    a response label (1 = unfaithful here, the other way round); the summary is a summary of ``doc``. Ids are the
    records' ``id`` or ``summedits-<index>``."""
    if path.suffix == ".json":
        numbered = [(f"record {i}", row) for i, row in enumerate(read_json_list(path, "SummEdits records"))]
    else:
        numbered = []
        for n, line in enumerate(read_lines(path), start=1):
            if line.strip():
                try:
                    numbered.append((f"line {n}", json.loads(line)))
                except json.JSONDecodeError as exc:
                    raise InputError(f"{path}:{n}: invalid JSON ({exc})") from None
    out = []
    for i, (where, row) in enumerate(numbered):
        if not isinstance(row, dict) or not set(SUMMEDITS_FIELDS) <= row.keys():
            raise InputError(f"{path}, {where}: not a SummEdits record (needs {', '.join(SUMMEDITS_FIELDS)})")
        if row["label"] not in (0, 1) or isinstance(row["label"], bool):
            raise InputError(f"{path}, {where}: 'label' must be 1 (consistent) or 0 (inconsistent), "
                             f"got {row['label']!r}")
        blank = [k for k in ("doc", "summary") if not isinstance(row[k], str) or is_blank(row[k])]
        if blank:
            raise InputError(f"{path}, {where}: missing or empty {blank}")
        out.append(LabelledExample(
            dataset=dataset, id=str(row.get("id", f"summedits-{i}")), context=row["doc"], question=SUMMARY_QUESTION,
            instruction=SUMMARY_INSTRUCTION, response=row["summary"], default_label=None,
            response_label=1 - row["label"],
        ))
    return out


def load_begin(root: Path, generic: Policy = "exclude") -> list[LabelledExample]:
    """BEGIN (WoW dev): response-level labels; 'Generic' follows ``generic`` (default: excluded)."""
    return load_begin_file(root / "begin-dev" / "begin_dev_wow.tsv", "begin-dev", generic)


#: the suffixes of data files read by path (generic JSONL, QAGS, BEGIN, SummEdits); such a set is named by its stem
DATA_SUFFIXES = (".jsonl", ".json", ".tsv")


def dataset_name(name: str) -> str:
    """The name a data set given to ``--data`` goes by: a file's stem, or the name as given."""
    return Path(name).stem if name.endswith(DATA_SUFFIXES) else name


#: the columns of a BEGIN file as released
BEGIN_COLUMNS = ("knowledge", "message", "response", "begin_label")
#: the question of a BEGIN response that opens the conversation (an empty ``message``): the prompt needs one, and
#: the same stand-in on every path keeps such rows in text-only and teacher-forced evaluations alike
BEGIN_FIRST_TURN = "(The conversation starts here.)"
#: the labels of a BEGIN file ("Generic" follows the ``generic`` policy)
BEGIN_LABELS = ("Fully attributable", "Not fully attributable", "Generic")


def load_begin_file(path: Path, dataset: str, generic: Policy = "exclude") -> list[LabelledExample]:
    """A BEGIN file as released (tab-separated, with :data:`BEGIN_COLUMNS` and ``model_name``); labels as
    :func:`load_begin`. Ids are ``begin-<row>``. The files are plain TSV: a ``"`` is text (a response may open
    with one), never a quote that would join rows; a row with more or fewer fields than the header is an error."""
    out = []
    with io.StringIO(read_utf8(path, "data file"), newline="") as handle:
        reader = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        missing = [c for c in BEGIN_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(f"{path}: not a BEGIN file: no column {', '.join(missing)} "
                             f"(columns: {', '.join(reader.fieldnames or [])})")
        for i, row in enumerate(reader):
            if None in row or None in row.values():
                raise InputError(f"{path}:{reader.line_num}: {'more' if None in row else 'fewer'} tab-separated fields "
                                 f"than the header's {len(reader.fieldnames or [])}")
            if row["begin_label"] not in BEGIN_LABELS:
                raise InputError(f"{path}:{reader.line_num}: begin_label {row['begin_label']!r} is none of "
                                 f"{', '.join(BEGIN_LABELS)}")
            blank = [c for c in ("knowledge", "response") if is_blank(row[c] or "")]
            if blank:
                raise InputError(f"{path}:{reader.line_num}: empty {' and '.join(blank)}")
            label = {"Fully attributable": 0, "Not fully attributable": 1}.get(row["begin_label"])
            if label is None:
                label = {"exclude": None, "faithful": 0, "unfaithful": 1}[generic]
            out.append(LabelledExample(
                dataset=dataset, id=f"begin-{i}", context=row["knowledge"],
                question=BEGIN_FIRST_TURN if is_blank(row["message"] or "") else row["message"],
                instruction=DIALOGUE_INSTRUCTION, response=row["response"], default_label=None,
                response_label=label, source_model=row.get("model_name"),
            ))
    return out


def load_jsonl(path: Path) -> list[LabelledExample]:
    """Users' own data. One JSON object per line::

        {"id"?, "context", "question"?, "response", "instruction"?, "source_model"?,
         "spans"?: [{"start", "end", "label"?: "unfaithful"|"faithful"|"excluded"}],   # label defaults to unfaithful
         "label"?: 0|1}                                                                 # response level, 1 = unfaithful

    With ``spans``, sentences not covered by any span are faithful. Without a question (left out or null) the
    response is a summary of the context: the summarization sets' question and instruction. Bad lines raise one
    InputError that names every one of them (the first :data:`MAX_NAMED` and how many more), so that a file is
    fixed in one pass.
    """
    out, bad, unknown = [], [], set()
    for n, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row, dict):
                raise InputError(f"expected a JSON object, got {type(row).__name__}")
            if row.get("label") not in (None, 0, 1) or isinstance(row.get("label"), bool):
                raise InputError(f"'label' must be 0 (faithful) or 1 (unfaithful), got {row.get('label')!r}")
            texts = _texts(row)
            spans = _spans(row.get("spans", []), len(texts.response))
            if "spans" in row:
                _check_agreement(row.get("label"), spans)
        except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
            bad.append(f"{path}:{n}: {exc}")
            continue
        out.append(LabelledExample(
            dataset=path.stem, id=str(row.get("id", f"line-{n}")), context=texts.context, question=texts.question,
            response=texts.response, instruction=texts.instruction or QA_INSTRUCTION, spans=spans,
            default_label=0 if "spans" in row else None, response_label=row.get("label"),
            source_model=str(row["source_model"]) if row.get("source_model") is not None else None,
        ))
        unknown.update(k for k in row if k not in GENERIC_FIELDS)
    if bad:
        more = f"; and {len(bad) - MAX_NAMED} more bad lines" if len(bad) > MAX_NAMED else ""
        raise InputError(f"{len(bad)} bad line{'s' if len(bad) > 1 else ''}: " + "; ".join(bad[:MAX_NAMED]) + more)
    if unknown:
        log.warning("%s: field%s %s ignored (the fields read are %s)", path, "s" if len(unknown) > 1 else "",
                    ", ".join(repr(k) for k in sorted(unknown)), ", ".join(GENERIC_FIELDS))
    return out


def _texts(row: dict) -> records.ScoreRecord:
    """A generic record's text fields, checked as a scored record's are (:mod:`faithwatch.records`: strings with
    something to read; no question means a summary of the context); an :class:`InputError` names what is wrong."""
    texts = {k: row[k] for k in ("context", "question", "response", "instruction") if k in row}
    record, problems = records.parse(records.ScoreRecord, texts)
    if problems:
        raise InputError("; ".join(problems))
    return record


#: how many bad lines one error names
MAX_NAMED = 10
#: the fields of a generic JSONL record (:func:`load_jsonl`)
GENERIC_FIELDS = ("id", "context", "question", "response", "instruction", "source_model", "spans", "label")
_SPAN_FORM = '{"start": int, "end": int, "label"?: "unfaithful" | "faithful" | "excluded"}'


def _spans(raw: object, n_chars: int) -> list[LabelledSpan]:
    """A record's ``spans``, each checked for its form, its label and its place in a response of ``n_chars``
    characters (an :class:`InputError` naming the span otherwise)."""
    if not isinstance(raw, list):
        raise InputError(f"'spans' must be a list of {_SPAN_FORM}, got {type(raw).__name__}")
    out = []
    for i, span in enumerate(raw, start=1):
        ok = isinstance(span, dict) and all(isinstance(span.get(k), int) and not isinstance(span.get(k), bool)
                                            for k in ("start", "end"))
        if not ok:
            shown = json.dumps(span, ensure_ascii=False)[:60]
            raise InputError(f"span {i} must be {_SPAN_FORM}, got {shown}")
        s = LabelledSpan(span["start"], span["end"], span.get("label", "unfaithful"))
        if s.label not in ("unfaithful", "faithful", "excluded"):
            raise InputError(f"span label {s.label!r} is none of unfaithful, faithful, excluded")
        if not 0 <= s.start < s.end <= n_chars:
            raise InputError(f"span [{s.start}, {s.end}) is not inside the response (0 to {n_chars} characters)")
        out.append(s)
    return out


def _check_agreement(label: int | None, spans: list[LabelledSpan]) -> None:
    """A response label and the spans say the same (an :class:`InputError` otherwise): with ``spans``, sentences
    no span overlaps are faithful, so label 1 needs a span that is unfaithful (or excluded: the fault may lie
    there), and label 0 allows none that is unfaithful."""
    kinds = {s.label for s in spans}
    if label == 0 and "unfaithful" in kinds:
        raise InputError("'label' 0 (a faithful response) but a span marks an unfaithful part: fix one of them")
    if label == 1 and not kinds & {"unfaithful", "excluded"}:
        raise InputError("'label' 1 (an unfaithful response) but no span marks an unfaithful part, so every "
                         "sentence would read as faithful: mark the part, or leave 'spans' out for a response-level "
                         "label only")


def to_jsonl_row(example: LabelledExample) -> dict:
    """``example`` in the generic JSONL format that :func:`load_jsonl` reads back."""
    row = {"id": example.id, "context": example.context, "question": example.question, "response": example.response,
           "instruction": example.instruction}
    if example.spans or example.default_label is not None:  # no "spans": response-level only, as read back
        row["spans"] = [{"start": s.start, "end": s.end, "label": s.label} for s in example.spans]
    if example.response_label is not None:
        row["label"] = example.response_label
    if example.source_model is not None:
        row["source_model"] = example.source_model
    return row


DATASETS: dict[str, Callable[[Path], list[LabelledExample]]] = {
    "faithbench": load_faithbench,
    "qags-cnndm": load_qags,
    "begin-dev": load_begin,
}


def load_dataset(name: str, root: str | Path | None = None, *, questionable: Policy = "exclude",
                 generic: Policy = "exclude") -> list[LabelledExample]:
    """A dataset by name or path (see :func:`_load_dataset`); one that holds no record, or a file that is not UTF-8,
    is an :class:`InputError`."""
    examples = _load_dataset(name, root, questionable=questionable, generic=generic)
    if not examples:
        raise InputError(f"{name} holds no records")
    for example in examples:  # JSON's "\ud800" escape reads as a lone surrogate, which no model takes
        for field in ("context", "question", "response", "instruction"):
            require_text(getattr(example, field), f"{name}: record {escaped(example.id)}: the {field}")
    return examples


def _load_dataset(name: str, root: str | Path | None = None, *, questionable: Policy = "exclude",
                  generic: Policy = "exclude") -> list[LabelledExample]:
    """A dataset by name (see :data:`DATASETS`) or a path: a JSONL file in the generic format, or a file of QAGS
    (``mturk_*.jsonl``), BEGIN (``*.tsv``) or SummEdits (``*.json`` or ``*.jsonl``) as released, recognised by its
    fields; the data set's name is then the file's stem.

    ``questionable``: FaithBench's Questionable spans; ``generic``: BEGIN's Generic responses.
    """
    if questionable not in POLICIES or generic not in POLICIES:
        raise InputError("label policies must be exclude, faithful or unfaithful")
    check_dataset_name(name)
    if name == "faithbench":
        return load_faithbench(data_root(root), questionable)
    if name == "begin-dev":
        return load_begin(data_root(root), generic)
    if name in DATASETS:
        return DATASETS[name](data_root(root))
    path = Path(name)
    if path.suffix == ".tsv":
        return load_begin_file(path, path.stem, generic)
    if path.suffix == ".json":
        return load_summedits_file(path, path.stem)
    kind = _released_kind(path)
    if kind == "qags":
        return load_qags_file(path, path.stem)
    return load_summedits_file(path, path.stem) if kind == "summedits" else load_jsonl(path)


def check_dataset_name(name: str) -> None:
    """An :class:`InputError` for a ``--data`` name that is neither a known data set nor a data file that exists,
    without reading anything (so that a command can refuse it before loading a model)."""
    if name in DATASETS:
        return
    path = Path(name)
    if path.suffix in DATA_SUFFIXES:
        if not path.is_file():
            raise InputError(f"data file not found: {name}" + (" (a folder, not a file)" if path.is_dir() else ""))
        return
    raise InputError(f"unknown dataset '{name}': use one of {', '.join(DATASETS)}, a .jsonl file (generic, QAGS "
                     "or SummEdits), a SummEdits .json file or a BEGIN .tsv file")


def _released_kind(path: Path) -> Literal["qags", "summedits", "generic"]:
    """Which format a JSONL file's first record has: QAGS (article and summary sentences), SummEdits (doc,
    summary and label) or, with a ``response`` field or anything else, the generic one."""
    first = next((line for line in read_lines(path, "data file") if line.strip()), "")
    try:
        row = json.loads(first)
    except json.JSONDecodeError:
        return "generic"  # the generic loader names the bad line
    if not isinstance(row, dict) or "response" in row:
        return "generic"
    if {"summary_sentences", "article"} <= row.keys():
        return "qags"
    return "summedits" if set(SUMMEDITS_FIELDS) <= row.keys() else "generic"
