"""`faithwatch check`: claim-level checking of responses against references (see docs/claims.md)."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from faithwatch import registry
from faithwatch.alignment import CHECK_SCORER, spec_help
from faithwatch.claims.checking import DEFAULT_CHECKER, nli_scorer_spec
from faithwatch.claims.pipeline import MAX_CONTEXT_CHARS
from faithwatch.cli._common import (
    EXIT_PARTIAL,
    DeviceOpt,
    ThreadsOpt,
    bad_record_printer,
    batch_language_note,
    check_names,
    check_scorer,
    domain_hint,
    err,
    fail,
    file_to_write,
    float_option,
    given_flags,
    group,
    input_contexts,
    out,
    print_notes,
    progress,
    read_text,
    refuse_unread,
    report_empty,
    resumable,
    transcript_note,
)
from faithwatch.errors import FaithwatchError, InputError
from faithwatch.results import ASIDE_ABSENCE, ASIDE_FRAMING, check_notes

app = group()

COLOURS = {"Entailment": "green", "Neutral": "yellow", "Contradiction": "red", "Conflict": "magenta",
           "Abstain": "dim"}
_EXCERPT = 160


def _short(text: str, limit: int = _EXCERPT) -> str:
    text = " ".join(text.split())
    return escape(text if len(text) <= limit else text[: limit - 1] + "…")


def _resolve_device(device: str | None) -> str:
    if device:
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def _print_check(out: Console, result, response: str) -> None:
    """Per-claim lines coloured by label, then the response-level line."""
    out.print(f"[dim]extractor {escape(result.extractor)} · checker {escape(result.checker)} · "
              f"aggregation {result.aggregation}[/]")
    for v in result.verdicts:
        colour = COLOURS.get(v.label, "white")
        conf = "  —  " if v.confidence is None else f"{v.confidence:.2f}"
        claim = " | ".join(v.claim.triplet) if v.claim.triplet else v.claim.text
        out.print(f"[{colour}]■ {v.label:<13}[/] {conf}  {_short(claim)}")
        if v.claim.response_span and v.claim.granularity == "triplet":
            s, e = v.claim.response_span
            out.print(f"    [dim]response [{s}:{e}] “{_short(response[s:e])}” (match {v.claim.span_score:.2f})[/]")
        elif v.claim.response_span is None:
            out.print("    [dim]response span: not found[/]")
        for ev in v.evidence:
            score = "" if ev.score is None else f" {ev.score:.2f}"
            out.print(f"    [dim]{ev.label.lower()}{score} · passage {ev.passage_index} [{ev.start}:{ev.end}] "
                      f"“{_short(ev.text)}”[/]")
            for change in ev.changes:
                out.print(f"    [{colour}]changed:[/] {escape(change.describe())}")
    for aside, why in ((result.framing, f"{ASIDE_FRAMING} (framing)"), (result.absence, ASIDE_ABSENCE)):
        if aside:
            lines = "; ".join(f"“{_short(c.text)}”" for c in aside)
            out.print(f"[dim]not checked, {len(aside)} line{'s' if len(aside) != 1 else ''}: {why}: {lines}[/]")
    if result.abstained:
        out.print("[bold]response:[/] [dim]Abstain[/] (no claim extracted)")
        return
    agg = result.aggregate
    shown = (", ".join(f"{k} {v:.2f}" for k, v in agg.items() if v) if isinstance(agg, dict)
             else f"[{COLOURS.get(agg, 'white')}]{agg}[/]")
    rate = result.hallucination_rate
    n = len(result.claims)
    out.print(f"[bold]response:[/] {shown} · hallucination rate {rate:.2f} · {n} claim{'s' if n != 1 else ''}")


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def _print_summaries(out: Console, summaries) -> None:
    for by, groups in summaries.items():
        table = Table(title="all responses" if by == "all" else f"by {by}", title_justify="left")
        for col in (by if by != "all" else "", "responses", "failed", "abstained", "claims", "Entail.", "Neutral",
                    "Contra.", "Conflict", "halluc. rate"):
            table.add_column(col, justify="left" if col in (by, "") else "right")
        for name, s in groups.items():
            rates = s.label_rates or {}
            table.add_row(escape(name) if by != "all" else "", str(s.responses), str(s.failed), str(s.abstained),
                          str(s.claims), _pct(rates.get("Entailment")), _pct(rates.get("Neutral")),
                          _pct(rates.get("Contradiction")), _pct(rates.get("Conflict")), _pct(s.hallucination_rate))
        out.print(table)



@app.command()
def check(
    ctx: typer.Context,
    input: Path | None = typer.Option(None, "--input", "-i", help="JSONL: {id?, context: str | [str], response, "
                                      "question?, model?, dataset?}, or a .csv / .tsv file with those columns "
                                      "in a header row (one passage per context)."),
    output: Path | None = typer.Option(None, "--output", "-o", parser=file_to_write, metavar="<file>",
                                       help="JSONL of checked responses (appended, resumable); with "
                                            "--context/--response: the JSON of the one response."),
    context: list[Path] | None = typer.Option(None, "--context", "-c", help="Reference passage file ('-' for "
                                              "stdin); repeat for several passages."),
    response: Path | None = typer.Option(None, "--response", "-r", help="Response file to check ('-' for stdin)."),
    question: str | None = typer.Option(None, "--question", "-q", help="The question (optional) for one response."),
    extractor: str = typer.Option("auto", "--extractor", help="Claims: response | sentence | subsentence | "
                                  "triplet (LLM) | auto: triplet when --llm-url or --llm-model names an LLM, else "
                                  "sentence (the embedded 135M model seldom writes valid triplets for real answers)."),
    checker: str = typer.Option(DEFAULT_CHECKER, "--checker", help=registry.checkers.choices() + "."),
    nli_model: str | None = typer.Option(None, "--nli-model", help="3-class NLI model dir or hub id (default: "
                                         "nli-minilm, shipped with faithwatch)."),
    alignment: str = typer.Option(CHECK_SCORER, "--alignment", help=f"Scorer of --checker alignment: {spec_help()}."),
    detector: str | None = typer.Option(None, "--detector", help="Detector of --checker detector: default (the "
                                        "shipped one) or a trained detector folder that reads text only."),
    combine: str = typer.Option("conflict", "--combine", help="Across passages: conflict | max-entail | "
                                "any-contradiction."),
    entail_threshold: float = float_option(0.7, "--entail-threshold", help="Alignment score >= this: "
                                           "Entailment."),
    contradict_threshold: float = float_option(0.2, "--contradict-threshold", help="Alignment score < this: "
                                               "Contradiction."),
    chunk_tokens: int | None = typer.Option(None, "--chunk-tokens", min=8, help="NLI: max tokens of a "
                                            "reference chunk (default: what the model window allows)."),
    aggregate: str = typer.Option("strict", "--aggregate", "--aggregation", help="Per response: strict | soft | "
                                  "majority (the output's and the server's `aggregation`)."),
    llm_url: str | None = typer.Option(None, "--llm-url", help="OpenAI-compatible base URL, e.g. "
                                       "http://localhost:8000/v1 (default: a local HF chat model)."),
    llm_model: str | None = typer.Option(None, "--llm-model", help="Model name at --llm-url, or a local HF "
                                         "chat model dir / hub id (default: embedded SmolLM2-135M)."),
    llm_api_key_env: str = typer.Option("OPENAI_API_KEY", "--llm-api-key-env", help="Environment variable "
                                        "holding the API key (not sent when unset)."),
    llm_timeout: float = float_option(120.0, "--llm-timeout", min=0.1, help="Seconds per LLM request."),
    max_retries: int = typer.Option(2, "--max-retries", min=0, help="Re-asks after an invalid LLM answer."),
    group_by: str = typer.Option("model,dataset", "--group-by", help="Comma-separated input fields for the "
                                 "batch summaries."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Start afresh instead of resuming."),
    json_out: bool = typer.Option(False, "--json", help="One response: print its JSON instead of text."),
    html: Path | None = typer.Option(None, "--html", parser=file_to_write, metavar="<file>",
                                     help="One response: write a self-contained HTML report (claims coloured by "
                                          "verdict, evidence highlighted in the references)."),
    device: str | None = DeviceOpt,
    max_context_chars: int = typer.Option(MAX_CONTEXT_CHARS, "--max-context-chars", min=1, help="Most characters "
                                          "of a response's passages together (as the server bounds them)."),
    truncate_context: bool = typer.Option(False, "--truncate-context", help="Cut longer passages at the tail "
                                          "(with a warning) instead of refusing them."),
    threads: int | None = ThreadsOpt,
) -> None:
    """Extract claims from responses and check each against the references (RefChecker-style)."""
    batch = input is not None
    try:
        extractor = _check_usage(batch, input, output, context, response, html, extractor, checker, aggregate,
                                 combine, detector, llm_url, llm_model)
        _check_models(checker, nli_model=nli_model, alignment=alignment)
        _check_read(ctx, batch=batch, extractor=extractor, checker=checker)
        passages = [] if batch else [read_text(p, "context") for p in context]
        answer = None if batch else read_text(response, "response")
        records = None
        if batch:  # before a model loads: a file that cannot be read (a CSV not in UTF-8) was found after it
            from faithwatch.batch import check_not_input
            from faithwatch.claims.pipeline import read_claim_records

            records = list(read_claim_records(input))
            check_not_input(input, output)
        the_extractor, the_checker = _extractor_and_checker(
            extractor, checker, llm_url=llm_url, llm_model=llm_model, llm_api_key_env=llm_api_key_env,
            llm_timeout=llm_timeout, device=device, nli_model=nli_model, alignment=alignment, combine=combine,
            entail_threshold=entail_threshold, contradict_threshold=contradict_threshold, chunk_tokens=chunk_tokens,
            max_retries=max_retries, detector=detector)
    except FaithwatchError as exc:
        raise fail(exc) from None
    if batch:
        _check_batch(the_extractor, the_checker, input, output, aggregate=aggregate, overwrite=overwrite,
                     group_by=group_by, max_context_chars=max_context_chars, truncate_context=truncate_context,
                     detector=detector, records=records)
    else:
        _check_one(the_extractor, the_checker, answer, passages, question=question, aggregate=aggregate,
                   output=output, json_out=json_out, html=html, max_context_chars=max_context_chars,
                   truncate_context=truncate_context, checker=checker)


def _check_usage(batch: bool, input: Path | None, output: Path | None, context: list[Path] | None,
                 response: Path | None, html: Path | None, extractor: str, checker: str, aggregate: str,
                 combine: str, detector: str | None, llm_url: str | None, llm_model: str | None) -> str:
    """Refuse a wrong combination of options (InputError); the extractor ``auto`` resolves to."""
    from faithwatch.claims.aggregation import AGGREGATIONS
    from faithwatch.claims.checking import COMBINE_RULES
    from faithwatch.claims.types import GRANULARITIES

    if batch and (context or response):
        raise InputError("use either --input/--output (a JSONL batch) or --context/--response (one), not both")
    if batch and html is not None:
        raise InputError("--html reports one response (--context/--response), not a batch")
    if batch and output is None:
        raise InputError("--input needs --output (the JSONL of results)")
    if not batch and (not context or response is None):
        raise InputError("give --input/--output for a batch, or --context FILE --response FILE for one")
    if extractor == "auto":
        extractor = "triplet" if llm_url or llm_model else "sentence"
    for value, valid, what in ((extractor, (*GRANULARITIES, "auto"), "--extractor"),
                               (checker, registry.checkers.names(), "--checker"),
                               (aggregate, AGGREGATIONS, "--aggregate"), (combine, COMBINE_RULES, "--combine")):
        if value not in valid:
            raise InputError(f"{what} must be one of {', '.join(valid)}, got {value!r}")
    check_names(detector=detector)
    if batch and not input.is_file():
        raise InputError(f"input file not found: {input}")
    return extractor


def _check_models(checker: str, *, nli_model: str | None, alignment: str) -> None:
    """The checker's model folder, before the LLM of ``--extractor triplet`` loads (a missing ``--nli-model`` was
    found after it)."""
    from faithwatch.models.folders import check_model_folder

    if checker == "nli" and nli_model is not None:
        spec = nli_scorer_spec(nli_model)
        if spec == f"nli:{nli_model.strip()}":  # a model folder or hub id
            check_model_folder(nli_model.strip(), "NLI model")
        else:
            check_scorer(spec, "--nli-model")
    if checker == "alignment":
        check_names(alignment=alignment)


#: the options each built-in checker reads (a plug-in checker: not checked)
_CHECKER_READS = {"nli": ("nli_model", "combine", "chunk_tokens"), "llm": ("combine", "max_retries"),
                  "alignment": ("alignment", "entail_threshold", "contradict_threshold"),
                  "detector": ("detector", "combine")}
_LLM_OPTIONS = ("llm_url", "llm_model", "llm_api_key_env", "llm_timeout", "max_retries")
_BATCH_OPTIONS, _ONE_OPTIONS = ("group_by", "overwrite"), ("question", "json_out")


def _check_read(ctx: typer.Context, *, batch: bool, extractor: str, checker: str) -> None:
    """Refuse options given on the command line that this run would not read (they were ignored)."""
    uses_llm = extractor == "triplet" or checker == "llm"
    for names, reason in (
        (_BATCH_OPTIONS if not batch else _ONE_OPTIONS,
         "one response (--context/--response)" if batch else "a batch (--input/--output)"),
        (() if uses_llm else _LLM_OPTIONS, "an LLM: --checker llm or --extractor triplet"),
    ):
        stray = given_flags(ctx, names)
        if stray:
            raise InputError(f"{', '.join(stray)} {'is' if len(stray) == 1 else 'are'} for {reason}")
    reads = _CHECKER_READS.get(checker)
    if reads is None:
        return
    others = {n for r in _CHECKER_READS.values() for n in r} - set(_LLM_OPTIONS if uses_llm else ())
    refuse_unread(ctx, others - set(reads), f"--checker {checker}", reads, "choose a checker")


def _extractor_and_checker(extractor: str, checker: str, *, llm_url: str | None, llm_model: str | None,
                           llm_api_key_env: str, llm_timeout: float, device: str | None, nli_model: str | None,
                           alignment: str, combine: str, entail_threshold: float, contradict_threshold: float,
                           chunk_tokens: int | None, max_retries: int, detector: str | None):
    """The claim extractor and the checker (loading the LLM first when either needs one)."""
    from faithwatch.claims.checking import CheckerSpec, get_checker
    from faithwatch.claims.extraction import get_extractor
    from faithwatch.claims.llm import get_backend

    backend = None
    if extractor == "triplet" or checker == "llm":
        if llm_url:
            backend = get_backend(llm_url, llm_model, api_key_env=llm_api_key_env, timeout=llm_timeout)
        else:
            with err.status("Loading the LLM…", spinner="dots"):
                backend = get_backend(None, llm_model, device=device)
    needs_device = checker in ("nli", "detector") or (checker == "alignment" and alignment.strip() != "lexical")
    spec = CheckerSpec(kind=checker, nli_model=nli_model, alignment=alignment, combine=combine,
                       entail_threshold=entail_threshold, contradict_threshold=contradict_threshold,
                       max_chunk_tokens=chunk_tokens, max_retries=max_retries, detector=detector,
                       device=_resolve_device(device) if needs_device else "cpu")
    with err.status("Loading the checker…", spinner="dots"):
        the_checker = get_checker(spec, backend)
    return get_extractor(extractor, backend, max_retries=max_retries), the_checker


def _check_one(the_extractor, the_checker, answer: str, passages: list[str], *, question: str | None,
               aggregate: str, output: Path | None, json_out: bool, html: Path | None, max_context_chars: int,
               truncate_context: bool, checker: str) -> None:
    """Check one response; print it (text or JSON), write its JSON and HTML report where asked."""
    from faithwatch.claims.pipeline import check_response, fit_context

    try:
        passages, cut = fit_context(passages, max_context_chars, truncate_context)
        if cut:
            err.print(f"[yellow]warning:[/] {cut} context characters cut (--max-context-chars {max_context_chars})")
        with err.status("Checking…", spinner="dots"):
            result = check_response(answer, passages, the_extractor, the_checker, question=question,
                                    aggregation=aggregate)
    except FaithwatchError as exc:
        raise fail(exc) from None
    notes = check_notes(passages, answer, detector=checker == "detector")
    payload = json.dumps({**result.to_dict(), "notes": notes}, ensure_ascii=False, allow_nan=False)
    if output is not None:  # its folder is made, as every other output's is
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(payload + "\n", encoding="utf-8")
    if json_out:
        print(payload, flush=True)
    if html is not None:
        from faithwatch.report.claims import write_claims_html

        err.print(f"HTML report: {write_claims_html(html, result, passages, question=question)}")
    if result.extraction_error is not None:
        err.print(f"[bold red]extraction failed:[/] {escape(result.extraction_error)}")
        raise typer.Exit(EXIT_PARTIAL)
    if not json_out:
        _print_check(out, result, answer)
    print_notes(notes)


def _check_batch(the_extractor, the_checker, input: Path, output: Path, *, aggregate: str, overwrite: bool,
                 group_by: str, max_context_chars: int, truncate_context: bool, detector: str | None,
                 records: list | None = None) -> None:
    """Check a file of responses into ``output`` (resumable), then print the summaries and any notes."""
    from faithwatch.claims.pipeline import DEFAULT_GROUP_BY, check_file

    keys = [k.strip() for k in group_by.split(",") if k.strip()]
    try:
        with resumable(output), progress() as bar:
            task = bar.add_task("check", total=None)

            summary = check_file(
                the_extractor, the_checker, input, output, aggregation=aggregate, overwrite=overwrite,
                group_by=keys, on_bad=bad_record_printer(bar),
                on_progress=lambda n, total: bar.update(task, completed=n, total=total),
                max_context_chars=max_context_chars, truncate_context=truncate_context, records=records,
            )
    except FaithwatchError as exc:
        raise fail(exc) from None
    _print_summaries(out, summary.summaries)
    absent = [k for k in keys if k not in summary.summaries and k not in DEFAULT_GROUP_BY]
    if absent and summary.total:  # a typo in --group-by gave no summary by it, silently
        err.print(f"note: no record has the field{'s' if len(absent) > 1 else ''} {', '.join(map(repr, absent))}: "
                  "no summary by it (--group-by names input fields)")
    report_empty(summary.total, input)
    err.print(f"{summary.checked} checked, {summary.skipped_done} already done, {len(summary.bad)} bad "
              f"({summary.failed} failed extraction/checking) of {summary.total} records → {output}")
    err.print(f"summaries: {output.with_name(output.name + '.summary.json').resolve()}")
    monitor = getattr(the_checker, "monitor", None)  # the detector checker
    contexts = list(input_contexts(input, check=True))  # read once for the notes below
    if monitor is not None:
        domain_hint(monitor.detector, monitor.threshold, output,
                    lambda row: [(c.get("scores") or {}).get("detector_score") for c in row.get("claims") or []],
                    input, detector)
        transcript_note(contexts)
    batch_language_note(contexts)
    if summary.bad:
        err.print(f"bad records are listed in {output.with_name(output.name + '.errors.jsonl').resolve()}")
        raise typer.Exit(EXIT_PARTIAL)
