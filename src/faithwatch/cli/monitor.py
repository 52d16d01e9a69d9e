"""`faithwatch monitor` and `faithwatch score`: live monitoring and teacher-forced scoring of existing answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape

from faithwatch.alignment import DEFAULT_SCORER, spec_help
from faithwatch.alignment.edits import EDIT_FEATURES, EditChange, EditScorer, counts
from faithwatch.cli._common import (
    EXIT_PARTIAL,
    AddressOpt,
    CudaGraphOpt,
    DetectorOpt,
    DeviceMapOpt,
    DeviceOpt,
    DtypeOpt,
    GpusPerWorkerOpt,
    InstructionOpt,
    ModelOpt,
    RayOpt,
    SignalsOpt,
    StaticCacheOpt,
    ThreadsOpt,
    TruncOpt,
    WorkersOpt,
    bad_record_printer,
    batch_language_note,
    check_generation,
    check_model_path,
    check_names,
    check_ray_options,
    cuda_graph_note,
    domain_hint,
    err,
    fail,
    file_to_write,
    float_option,
    given_flags,
    group,
    input_contexts,
    instruction_kwargs,
    out,
    print_notes,
    progress,
    read_text,
    report_empty,
    resumable,
    signal_list,
    transcript_note,
    writable,
)
from faithwatch.errors import FaithwatchError, InputError
from faithwatch.results import SentenceReport
from faithwatch.text.visible import is_blank

app = group()
SHOWN = ("align_score", "tag_min_content", "novel_numbers", "novel_entities", "edit_swap_num", "edit_neg_flip",
         "min_prob", "mean_entropy", "mean_pci", "lookback_mean")

AlignOpt = typer.Option(
    "auto", "--alignment", help=f"auto (the detector's scorer, else {DEFAULT_SCORER}) | {spec_help()}"
)
LidOpt = typer.Option(None, "--lid-bank", exists=True, dir_okay=False,
                      help="LID reference bank (.safetensors); without it lid_* are absent.")
MaxFalseAcceptOpt = float_option(None, "--max-false-accept", help="Flag at the threshold that lets through at most "
                                  "this share of unfaithful sentences (e.g. 0.1; estimated out of fold, or, after a "
                                  "labelled `calibrate`, on its sentences: in-sample).")


def _build_monitor(model, alignment, signals, lid_bank, detector, truncate, device, max_new_tokens=256,
                   max_false_accept=None, dtype=None, device_map=None, static_cache=False, cuda_graph=False,
                   run_ahead=None, instruction=None):
    if max_false_accept is not None and not 0.0 < max_false_accept < 1.0:
        raise InputError(f"--max-false-accept must be between 0 and 1 (exclusive), got {max_false_accept}")
    check_names(detector=None if detector is None else str(detector), alignment=alignment)
    families = signal_list(signals)
    check_model_path(model)
    from faithwatch.monitor import Monitor  # torch and the detectors: seconds, after the names are checked

    with err.status("Loading model…", spinner="dots"):
        monitor = Monitor(
            model, alignment=alignment, signals=families,
            lid_bank=lid_bank, detector=detector, truncate_context=truncate, device=device, dtype=dtype,
            device_map=device_map, static_cache=static_cache, cuda_graph=cuda_graph, run_ahead=run_ahead,
            max_new_tokens=max_new_tokens, max_false_accept=max_false_accept,
            **instruction_kwargs(instruction),
        )
    cuda_graph_note(monitor, cuda_graph)
    return monitor


def _sentence_scores(row: dict) -> list[Any]:
    """A ``score`` output row's sentence scores (in a Parquet shard, ``sentences`` is JSON text)."""
    sentences = row.get("sentences") or []
    if isinstance(sentences, str):
        sentences = json.loads(sentences)
    return [s.get("score") for s in sentences]


def _ray_detector(output: Path, detector: str | None) -> tuple[Any, float] | None:
    """The detector the Ray workers scored ``output`` with, and its threshold, as the output's recorded
    configuration names them (None when it names no such detector, e.g. one changed since)."""
    from faithwatch.detectors.shipped import resolve_detector
    from faithwatch.monitor import NO_MODEL
    from faithwatch.scale import recorded_config

    config = recorded_config(output)
    if not config or config.get("threshold") is None:
        return None
    model_id = config.get("model_id")
    try:
        det = resolve_detector(detector, None if model_id == NO_MODEL else model_id)
    except FaithwatchError:
        return None
    if getattr(getattr(det, "meta", None), "content_hash", None) != config.get("detector_content_hash"):
        return None
    return det, float(config["threshold"])


def _colour(score: float, threshold: float) -> str:
    return "red" if score < threshold else ("green" if score >= 0.7 else "yellow")


def _print_sentence(report: SentenceReport, threshold: float, context: str) -> None:
    colour = _colour(report.score, threshold)
    flag = " [bold red]UNFAITHFUL?[/]" if report.flagged else ""
    if report.set_aside:
        flag = f" [dim]({report.aside_reason})[/]"
    out.print(f"[{colour}]■ {report.score:.2f}[/] {report.text}{flag}")
    shown = [f"{k}={report.features[k]:.3f}" for k in SHOWN if report.features.get(k) is not None]
    out.print(f"  [dim]{'  '.join(shown)}[/]")
    for change in _edit_changes(report, context) if report.flagged else ():
        out.print(f"  [red]changed:[/] {escape(change.describe())}")


_EDITS = EditScorer()


def _edit_changes(report: SentenceReport, context: str) -> list[EditChange]:
    """What a sentence changed in the context sentence it copies (:meth:`EditScorer.changes`), when the monitor
    counted such changes and the same ones are found against ``context`` (a cut context may differ: then none)."""
    features = report.features
    if not any(features.get(f) for f in EDIT_FEATURES[1:]):
        return []
    changes = _EDITS.changes(report.text, context)[1]  # one scorer: the context is tokenised once per answer
    found = counts(changes)
    return changes if all((features.get(f) or 0.0) == n for f, n in found.items()) else []


@app.command()
def monitor(
    context: Path = typer.Option(..., "--context", "-c", help="File with the retrieved context ('-' for stdin)."),
    question: str = typer.Option(..., "--question", "-q", help="The user's question."),
    model: str | None = ModelOpt,
    max_new_tokens: int = typer.Option(256, "--max-new-tokens", min=1, help="Generation budget in tokens."),
    json_lines: bool = typer.Option(False, "--json", help="One JSON object per line instead of coloured text."),
    vectors: bool = typer.Option(False, "--vectors", help="With --json: include per-head lookback ratios."),
    alignment: str = AlignOpt,
    signals: str | None = SignalsOpt,
    lid_bank: Path | None = LidOpt,
    detector: str | None = DetectorOpt,
    truncate_context: bool = TruncOpt,
    device: str | None = DeviceOpt,
    dtype: str | None = DtypeOpt,
    device_map: str | None = DeviceMapOpt,
    html: Path | None = typer.Option(None, "--html", parser=file_to_write, metavar="<file>",
                                     help="Also write a self-contained HTML report of the answer."),
    max_false_accept: float | None = MaxFalseAcceptOpt,
    threads: int | None = ThreadsOpt,
    static_cache: bool = StaticCacheOpt,
    cuda_graph: bool = CudaGraphOpt,
    run_ahead: int | None = typer.Option(None, "--run-ahead", min=1, help="Greedy tokens decoded on the device per "
                                         "copy to the host (default: 8 on a GPU, 1 on a CPU); a sentence is shown "
                                         "up to that many tokens late, with the same score."),
    instruction: str | None = InstructionOpt,
) -> None:
    """Generate an answer and print each sentence the moment it is complete, with its score and signals."""
    try:
        if vectors and not json_lines:  # the coloured text shows no vectors: it was ignored
            raise InputError("--vectors adds the lookback ratios to the JSON lines: add --json, or leave it out")
        ctx = read_text(context, "context")
        if is_blank(ctx):
            raise InputError("The context is empty: faithwatch needs a non-empty context.")
        check_generation(model, question)
        if vectors and signals is not None:  # before the model, where the signals are named
            _check_vectors(signal_list(signals))
        mon = _build_monitor(model, alignment, signals, lid_bank, detector, truncate_context, device, max_new_tokens,
                             max_false_accept, dtype, device_map, static_cache, cuda_graph, run_ahead, instruction)
        if vectors:
            _check_vectors([s.name for s in mon.signals])
        threshold = mon.threshold

        def emit(report: SentenceReport) -> None:
            if json_lines:
                print(json.dumps({"type": "sentence", **report.to_dict(vectors)}, allow_nan=False), flush=True)
            else:
                _print_sentence(report, threshold, ctx)

        if not json_lines:
            origin = getattr(getattr(mon.detector, "meta", None), "params", {}).get("threshold_from")
            shown = mon.detector.name + (f" ({origin})" if origin and origin != "out-of-fold predictions" else "")
            out.print(f"[dim]model {mon.lm.model_id} · detector {escape(shown)} · alignment "
                      f"{mon.alignment.name if mon.alignment else 'none'} · flag below {threshold:.2f}[/]")
        result = mon.generate(question, ctx, on_sentence=emit)
    except FaithwatchError as exc:
        raise fail(exc) from None
    if html is not None:
        from faithwatch.report import write_response_html

        write_response_html(html, result, question=question, context=ctx, title=f"faithwatch monitor: {question}")
        err.print(f"HTML report → {html}")
    summary = {k: v for k, v in result.to_dict(False).items() if k not in ("sentences", "context")}
    if json_lines:
        print(json.dumps({"type": "summary", **summary}, allow_nan=False), flush=True)
    else:
        score = result.score
        verdict = "no sentence" if score is None else f"[{_colour(score, threshold)}]{score:.2f}[/] (worst sentence)"
        out.print(f"[bold]response score:[/] {verdict} · {result.num_tokens} tokens · stop: {result.stop_reason}"
                  + (f" · context cut by {result.context_tokens_cut} tokens" if result.context_tokens_cut else ""))
        if mon.detector.name.startswith("heuristic"):
            out.print("[dim]score: an untrained heuristic of the signals (see README), not a trained detector.[/]")
    print_notes(result.notes)


def _check_vectors(signals: list[str]) -> None:
    """``--vectors`` asked of a run whose signals give none (``--signals``, ``--model none``) was ignored."""
    from faithwatch.signals import emits_vectors

    if not any(emits_vectors(name) for name in signals):
        raise InputError("--vectors adds the lookback ratios (and hidden states) to the output, and this run's "
                         "signals give none: add lookback to --signals, or leave --vectors out")


def _check_forward_options(ctx: typer.Context, mon: Any) -> None:
    """--batch-size and --host-workers shape the model's forward passes; a run without them ignored both."""
    if not mon.model_free:
        return
    stray = given_flags(ctx, ("batch_size", "host_workers"))
    if stray:
        why = "--model none" if mon.lm is None else "signals that read no model output (--signals)"
        it = "it" if len(stray) == 1 else "them"
        raise InputError(f"{', '.join(stray)} shape{'s' if len(stray) == 1 else ''} the language model's forward "
                         f"passes, and with {why} there are none: leave {it} out")


@app.command()
def score(
    ctx: typer.Context,
    input: Path = typer.Option(..., "--input", "-i", help="JSONL: {id?, context, question?, response, "
                               "instruction?} (no question: scored as a summary), or a .csv / .tsv file with "
                               "those columns in a header row; with --ray also Parquet (a .parquet file or a "
                               "folder of them; an id per record)."),
    output: str = typer.Option(..., "--output", "-o", callback=writable,
                               help="JSONL of per-sentence features (appended, resumable); with --ray, a folder of "
                                    "shards when it ends with '/', exists or --format is given."),
    model: str | None = ModelOpt,
    vectors: bool = typer.Option(True, "--vectors/--no-vectors", help="Include per-head lookback ratios."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Start afresh instead of resuming."),
    alignment: str = AlignOpt,
    signals: str | None = SignalsOpt,
    lid_bank: Path | None = LidOpt,
    detector: str | None = DetectorOpt,
    truncate_context: bool = TruncOpt,
    device: str | None = DeviceOpt,
    dtype: str | None = DtypeOpt,
    device_map: str | None = DeviceMapOpt,
    batch_size: int = typer.Option(1, "--batch-size", min=1, help="Records per forward pass (similar lengths "
                                   "together; features equal one-at-a-time scoring)."),
    host_workers: int = typer.Option(0, "--host-workers", min=0, help="Track sentences in this many worker "
                                     "processes during the forward passes (with --batch-size, for GPUs: docs/"
                                     "scale.md)."),
    ray: bool = RayOpt,
    address: str | None = AddressOpt,
    workers: int = WorkersOpt,
    gpus_per_worker: float = GpusPerWorkerOpt,
    output_format: str | None = typer.Option(None, "--format", help="With --ray: write --output as a folder of "
                                             "shards: parquet | jsonl (a folder without --format: parquet)."),
    shard_rows: int | None = typer.Option(None, "--shard-rows", min=1, help="With --ray and a folder: rows per "
                                          "shard (default 1000; a shard is also written at least every minute)."),
    threads: int | None = ThreadsOpt,
) -> None:
    """Compute the per-sentence signals of existing responses by teacher forcing (resumable)."""
    from faithwatch.batch import check_not_input, read_records, score_file
    from faithwatch.scale import is_parquet_input, shard_format

    parquet = is_parquet_input(input)
    if not (input.is_file() or (parquet and input.is_dir())):
        raise fail(InputError(f"input file not found: {input}"))
    try:
        fmt = shard_format(output, output_format)
        if host_workers and ray:
            raise InputError("--host-workers is for one process; with --ray, each worker tracks its own records")
        if parquet and not ray:
            raise InputError("a Parquet input needs --ray (docs/scale.md)")
        check_ray_options(ctx)
        if shard_rows is not None and not fmt:
            raise InputError("--shard-rows sets the rows of a shard: give --output a folder (docs/scale.md)")
        if fmt and not ray:
            raise InputError(f"--output {output} is a folder (of shards): give a .jsonl file, or add --ray to write "
                             "shards there (docs/scale.md)")
    except FaithwatchError as exc:
        raise fail(exc) from None
    output_path = Path(output)
    try:
        asked_vectors = vectors and bool(given_flags(ctx, ["vectors"]))  # on by default: asked for, it must give some
        if asked_vectors and signals is not None:  # before the model
            _check_vectors(signal_list(signals))
        if ray:
            from faithwatch.scale import RaySettings, score_with_ray

            kwargs = {"model": model, "alignment": alignment, "detector": detector, "truncate_context":
                      truncate_context, "device": device, "dtype": dtype, "device_map": device_map,
                      "signals": signal_list(signals),
                      "lid_bank": str(lid_bank) if lid_bank else None}
            settings = RaySettings(address=address, workers=workers, gpus_per_worker=gpus_per_worker,
                                   batch_size=max(batch_size, 1), threads=threads)

            def run(on_progress, on_bad):
                return score_with_ray(kwargs, input, output_path, settings, vectors=vectors, overwrite=overwrite,
                                      on_progress=on_progress, on_bad=on_bad, output_format=fmt,
                                      **({} if shard_rows is None else {"shard_rows": shard_rows}))
        else:
            records = list(read_records(input))  # a file that cannot be read (a CSV not in UTF-8): before the model
            check_not_input(input, output_path)
            mon = _build_monitor(model, alignment, signals, lid_bank, detector, truncate_context, device,
                                 dtype=dtype, device_map=device_map)
            _check_forward_options(ctx, mon)
            if asked_vectors:
                _check_vectors([s.name for s in mon.signals])
            if signals is None and mon.model_unread:
                err.print(f"[dim]The detector {mon.detector.name} reads text signals only; with --signals text "
                          "the language model is not run (the same scores, about 2.5x faster on a CPU; the "
                          "output then lacks the model's signals).[/]")

            def run(on_progress, on_bad):
                return score_file(mon, input, output_path, vectors=vectors, overwrite=overwrite,
                                  batch_size=batch_size, host_workers=host_workers, on_progress=on_progress,
                                  on_bad=on_bad, records=records)
        with resumable(output), progress() as bar:
            task = bar.add_task("scoring", total=None)
            summary = run(lambda n, total: bar.update(task, completed=n, total=total), bad_record_printer(bar))
    except FaithwatchError as exc:
        raise fail(exc) from None
    report_empty(summary.total, input)
    if summary.corrupt_output:
        lines = ", ".join(str(c.line) for c in summary.corrupt_output[:10])
        err.print(f"[yellow]warning:[/] {len(summary.corrupt_output)} unreadable line(s) in {output} (line {lines}) "
                  "were kept and skipped (a record found only there is scored again)")
    rate = f" ({summary.scored / summary.seconds:.2f} records/s)" if summary.seconds and summary.scored else ""
    err.print(f"{summary.scored} scored{rate}, {summary.skipped_done} already done, {len(summary.bad)} bad "
              f"of {summary.total} records → {output}")
    scored_by = _ray_detector(output_path, detector) if ray else (mon.detector, mon.threshold)
    if scored_by is not None:
        domain_hint(*scored_by, output_path, _sentence_scores, input, detector)
    if input.is_file() and not parquet:
        contexts = list(input_contexts(input))  # read once for both notes
        transcript_note(contexts)
        batch_language_note(contexts)
    if summary.bad:
        err.print(f"bad records are listed in {summary.errors}")
        raise typer.Exit(EXIT_PARTIAL)
