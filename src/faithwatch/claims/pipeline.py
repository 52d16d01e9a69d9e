"""Extract-then-check for one response, and for a JSONL file of responses (resumable).

Input lines: ``{"id"?: str|int, "context": str | [str, ...], "response": str, "question"?: str,
"model"?: str, "dataset"?: str}``; a list ``context`` holds several reference passages.

As in :mod:`faithwatch.batch`, every finished record is appended to the output and flushed at once,
re-running skips the ids already in the output (a torn last line is dropped), and a bad record is
reported with its line number in ``<output>.errors.jsonl`` while the rest go on. A response whose
claims could not be extracted (or judged) is such a bad record: it is never written as a result, and
a re-run tries it again. Summaries per model / data set go to ``<output>.summary.json``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from faithwatch.claims.aggregation import AGGREGATIONS, GroupSummary, aggregate, hallucination_rate, soft, summarize
from faithwatch.claims.checking import Checker, CheckError, validate_references
from faithwatch.claims.extraction import ClaimExtractor, ExtractionError
from faithwatch.claims.llm import LLMUnavailableError
from faithwatch.claims.types import ResponseCheck
from faithwatch.errors import FaithwatchError, InputError
from faithwatch.results import check_notes
from faithwatch.text import cut_passages
from faithwatch.text.visible import is_blank, require_text

#: input fields copied to the output row (with any other field named by ``group_by``), and usable as summary groups
CARRIED_FIELDS = ("model", "dataset")
DEFAULT_GROUP_BY = ("model", "dataset")


def _name(obj: Any) -> str:
    return str(getattr(obj, "name", type(obj).__name__))


def check_response(
    response: str,
    references: str | Sequence[str],
    extractor: ClaimExtractor,
    checker: Checker,
    *,
    question: str | None = None,
    aggregation: str = "strict",
) -> ResponseCheck:
    """Extract the claims of ``response`` and check each against the reference passage(s).

    An :class:`~faithwatch.claims.extraction.ExtractionError` is returned as a result whose
    ``extraction_error`` says why (no claims, no aggregate, no rate). Input errors, backend errors and
    :class:`~faithwatch.claims.checking.CheckError` are raised.
    """
    if aggregation not in AGGREGATIONS:
        raise InputError(f"unknown aggregation {aggregation!r}; choose one of {', '.join(AGGREGATIONS)}")
    refs = validate_references(references)  # fail on a bad reference before paying for extraction
    if not isinstance(response, str) or is_blank(response):
        raise InputError("the response is empty: there is no claim to check")
    require_text(response, "the response")
    require_text(question, "the question")
    try:
        claims = extractor.extract(response, question)
    except ExtractionError as exc:
        return ResponseCheck(response, [], [], aggregation, None, None, None, _name(extractor), _name(checker),
                             extraction_error=str(exc))
    from faithwatch.detectors.framing import aside_kinds  # the detectors package loads torch: not for `--help`

    # set aside unchecked, as the monitor sets them aside: about the answer, or what the passages lack
    context = "\n\n".join(refs)
    kinds = [aside_kinds(c.text, context) for c in claims]
    framing = [c for c, (f, _) in zip(claims, kinds, strict=True) if f]
    absence = [c for c, (_, a) in zip(claims, kinds, strict=True) if a]
    claims = [c for c, (f, a) in zip(claims, kinds, strict=True) if not (f or a)]
    verdicts = list(checker.check(claims, refs, question)) if claims else []
    if len(verdicts) != len(claims):
        raise CheckError(f"the checker {_name(checker)!r} gave {len(verdicts)} verdicts for {len(claims)} claims "
                         "(one per claim, in order)")
    return ResponseCheck(
        response=response,
        claims=claims,
        verdicts=verdicts,
        aggregation=aggregation,
        aggregate=aggregate(verdicts, aggregation),
        hallucination_rate=hallucination_rate(verdicts),
        label_ratios=soft(verdicts),
        extractor=_name(extractor),
        checker=_name(checker),
        framing=framing,
        absence=absence,
    )


# ---- JSONL batches ------------------------------------------------------------------------------------


def read_claim_records(path: Path) -> Iterator[Any]:
    """Parse and validate input lines: :class:`faithwatch.batch.Record` or :class:`faithwatch.batch.BadRecord`."""
    from faithwatch.batch import read_records
    from faithwatch.records import CheckRecord

    return read_records(path, CheckRecord)


@dataclass
class ClaimsBatchSummary:
    """What a batch run did, and the per-group summaries of everything in the output."""

    total: int = 0
    checked: int = 0
    skipped_done: int = 0
    failed: int = 0  # valid records whose extraction or checking failed (among ``bad``)
    bad: list[Any] = field(default_factory=list)  # faithwatch.batch.BadRecord
    summaries: dict[str, dict[str, GroupSummary]] = field(default_factory=dict)

    def summaries_dict(self) -> dict[str, Any]:
        """JSON form of the summaries: grouping key -> group -> summary."""
        return {by: {g: s.to_dict() for g, s in groups.items()} for by, groups in self.summaries.items()}


def _read_rows(path: Path) -> list[dict[str, Any]]:
    from faithwatch.batch import output_store

    return list(output_store(path).load().values())


def _check_compatible(rows: list[dict[str, Any]], extractor: str, checker: str, aggregation: str) -> None:
    """Refuse to resume an output made with another extractor/checker/aggregation (mixed results)."""
    if not rows:
        return
    first = rows[0]
    was = (first.get("extractor"), first.get("checker"), first.get("aggregation"))
    now = (extractor, checker, aggregation)
    if was != now:
        raise InputError(
            f"the output already holds results of extractor {was[0]!r}, checker {was[1]!r}, aggregation "
            f"{was[2]!r}; this run uses {now[0]!r}, {now[1]!r}, {now[2]!r}. Use --overwrite or another output."
        )


def build_summaries(rows: Iterable[dict[str, Any]], group_by: Sequence[str] = DEFAULT_GROUP_BY
                    ) -> dict[str, dict[str, GroupSummary]]:
    """``{"all": {"all": ...}, "<field>": {<value>: ...}}`` for each ``group_by`` field present in the rows."""
    rows = list(rows)
    out = {"all": summarize(rows)}
    for key in group_by:
        if any(r.get(key) is not None for r in rows):
            out[key] = summarize(rows, by=key)
    return out


#: the default limit on a response's passages together: 16 characters per token of the embedded model's
#: 8192-token window, the bound the server applies before it tokenises (docs/server.md)
MAX_CONTEXT_CHARS = 131_072


def fit_context(context: str | list[str], max_chars: int | None = MAX_CONTEXT_CHARS, truncate: bool = False
                ) -> tuple[str | list[str], int]:
    """``context`` within ``max_chars`` characters (all passages together): unchanged, cut at the tail with
    ``truncate`` (later passages dropped first), or an :class:`InputError`. Returns it and the characters cut."""
    passages = [context] if isinstance(context, str) else list(context)
    chars = sum(len(p) for p in passages)
    if max_chars is None or chars <= max_chars:
        return context, 0
    if not truncate:
        raise InputError(f"the context has {chars} characters, more than the limit of {max_chars}; shorten it, "
                         "raise --max-context-chars, or cut its tail with --truncate-context")
    kept, cut = cut_passages(passages, max_chars)
    return (kept[0] if isinstance(context, str) else kept), cut


def check_file(
    extractor: ClaimExtractor,
    checker: Checker,
    input_path: Path,
    output_path: Path,
    *,
    aggregation: str = "strict",
    overwrite: bool = False,
    group_by: Sequence[str] = DEFAULT_GROUP_BY,
    on_progress: Callable[[int, int], None] | None = None,
    on_bad: Callable[[Any], None] | None = None,
    max_context_chars: int | None = MAX_CONTEXT_CHARS,
    truncate_context: bool = False,
    records: Iterable[Any] | None = None,
) -> ClaimsBatchSummary:
    """Check every record of ``input_path`` into ``output_path`` (resuming unless ``overwrite``); a record whose
    passages exceed ``max_context_chars`` is a bad record, or is cut at the tail with ``truncate_context``.
    ``records``: the input as :func:`read_claim_records` gave it, where the caller read it already. Each row carries
    its ``notes`` (:func:`~faithwatch.results.check_notes`: a transcript or another language). The
    output's sidecar records the extractor, the checker and what its verdicts depend on (a checker's ``config()``:
    thresholds, the detector's content hash, ...); resuming under another configuration is refused.

    Raises :class:`~faithwatch.claims.llm.LLMUnavailableError` when the LLM endpoint cannot be reached
    (every record would fail; the finished ones are kept and a re-run resumes).
    """
    from faithwatch.batch import run_batch

    if aggregation not in AGGREGATIONS:
        raise InputError(f"unknown aggregation {aggregation!r}; choose one of {', '.join(AGGREGATIONS)}")
    items = list(read_claim_records(input_path) if records is None else records)
    detector = _name(checker).startswith("detector:")  # its transcript caution (check_notes)
    failures: list[dict[str, Any]] = []  # failed checks, for the summaries

    def process(item) -> dict[str, Any]:
        d = item.data
        carried = {k: d[k] for k in dict.fromkeys((*CARRIED_FIELDS, *group_by)) if d.get(k) is not None}
        try:
            context, _ = fit_context(d["context"], max_context_chars, truncate_context)
            result = check_response(d["response"], context, extractor, checker,
                                    question=d.get("question"), aggregation=aggregation)
        except LLMUnavailableError:
            raise
        except FaithwatchError as exc:
            error = f"check failed: {exc}" if isinstance(exc, CheckError) else str(exc)
            failures.append({**carried, "error": error})
            raise FaithwatchError(error) from exc
        if result.extraction_error is not None:
            failures.append({**carried, "error": result.extraction_error})
            raise FaithwatchError(f"extraction failed: {result.extraction_error}")
        notes = check_notes(validate_references(context), d["response"], detector=detector)
        return {**carried, **result.to_dict(), "notes": notes}

    def prepare(path: Path) -> None:
        _check_compatible(_read_rows(path), _name(extractor), _name(checker), aggregation)

    config = {"extractor": _name(extractor), "checker": _name(checker), "aggregation": aggregation,
              **(checker.config() if callable(getattr(checker, "config", None)) else {})}
    run = run_batch(items, output_path, process, overwrite=overwrite, prepare=prepare, on_progress=on_progress,
                    on_bad=on_bad, source=input_path, config=config)
    summary = ClaimsBatchSummary(total=run.total, checked=run.scored, skipped_done=run.skipped_done, bad=run.bad,
                                 failed=len(failures))
    summary.summaries = build_summaries([*_read_rows(output_path), *failures], group_by)
    summary_path = output_path.with_name(output_path.name + ".summary.json")
    summary_path.write_text(json.dumps(summary.summaries_dict(), indent=2, allow_nan=False) + "\n", encoding="utf-8")
    return summary
