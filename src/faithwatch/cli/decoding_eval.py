"""`faithwatch eval-decoding`: decoding strategies side by side on counterfactual QA or plain prompts.

Writes ``results.md`` / ``results.json`` (tables of :mod:`faithwatch.eval.decoding`), ``answers.jsonl``
(one row per strategy and item) and keeps ``cache.jsonl`` so an interrupted run resumes where it stopped.
Exit code 1 when some items failed (their rows carry the error; the rest were evaluated and written).
"""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from faithwatch.alignment import CHECK_SCORER
from faithwatch.cli._common import (
    EXIT_PARTIAL,
    DeviceMapOpt,
    DeviceOpt,
    DtypeOpt,
    InstructionOpt,
    ThreadsOpt,
    check_names,
    err,
    fail,
    file_to_write,
    float_option,
    group,
    instruction_kwargs,
    options_given,
    out,
    progress,
    refuse_unread,
    writable,
)
from faithwatch.errors import FaithwatchError, InputError
from faithwatch.params import DecodingParams, bounds, checked_params, default, help_of

app = group()

CHECKER_HELP = (f"Faithfulness judge (never the guiding detector): a three-way NLI scorer (nli-minilm, the shipped "
                f"model; nli:<model>) or any other alignment scorer thresholded at 0.7 ({CHECK_SCORER}, lexical, ...).")


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt while the block runs (the main thread only), so a stopped run still reports."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


NOT_RUN = "not run (interrupted)"


def _not_run(*args: Any, **kwargs: Any) -> Any:
    raise FaithwatchError(NOT_RUN)


def build_checker(spec: str, device: str = "cpu") -> Any:
    """The claims checker named by ``spec``: an NLI checker for an NLI scorer spec, else an alignment checker."""
    from faithwatch.alignment import is_nli_spec
    from faithwatch.claims.checking import CheckerSpec, get_checker

    spec = spec.strip()
    try:
        nli = is_nli_spec(spec)
    except ValueError as exc:
        raise InputError(f"unknown --checker {spec!r}: {exc}") from None
    if nli:
        return get_checker(CheckerSpec(kind="nli", nli_model=spec, device=device))
    return get_checker(CheckerSpec(kind="alignment", alignment=spec, device=device))


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and value != value):  # None or NaN: not measured
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _print_summary(console: Any, summary: Any, checker: str) -> None:
    from faithwatch.eval.decoding_summary import baseline_strategy

    table = Table(title=f"decoding strategies (faithfulness by {checker})", title_justify="left")
    cols = list(summary.columns)
    def has(col: str) -> bool:
        return col in cols and summary[col].notna().any()

    has_success, has_agree, has_unans = has("success_rate"), has("agree_success_rate"), has("unanswerable_decline_rate")
    baseline = baseline_strategy(list(summary.strategy))
    gain_head = f"gain vs {baseline} [95% CI]"
    heads = ["strategy", "n"] + (["success [95% CI]", gain_head, "common"] if has_success else []) + (
        ["agreeing"] if has_agree else []) + (["unanswerable: declined", "states memory"] if has_unans else []) + [
        "abstain", "faithful", "claims", "tokens", "sentences", "generated", "backtracks", "errors"]
    for h in heads:
        table.add_column(h, justify="left" if h == "strategy" else "right")
    for r in summary.to_dict("records"):
        cells = [r["strategy"], str(r["n"])]
        if has_success:
            ci = "" if r["success_low"] is None else f" [{r['success_low']:.2f}, {r['success_high']:.2f}]"
            gain = ("—" if r["success_gain"] is None else f"{r['success_gain']:+.2f}") + (
                "" if r["success_gain_low"] is None else
                                                  f" [{r['success_gain_low']:+.2f}, {r['success_gain_high']:+.2f}]")
            if r["strategy"] == baseline:
                gain = "(baseline)"
            cells += [_fmt(r["success_rate"], 2) + ci, gain, _fmt(r["common_rate"])]
        if has_agree:
            cells.append(_fmt(r["agree_success_rate"]))  # the do-no-harm check: success where context agrees
        if has_unans:  # where the context does not hold the fact: declined, or stated what the model remembers
            cells += [_fmt(r["unanswerable_decline_rate"]), _fmt(r["unanswerable_common_rate"])]
        cells += [_fmt(r["abstention_rate"]), _fmt(r["faithfulness"]), _fmt(r["informativeness"], 2),
                  _fmt(r["answer_tokens"], 1), _fmt(r["answer_sentences"], 2), _fmt(r["generated_tokens"], 1),
                  _fmt(r["backtracks"], 2), str(r["errors"])]
        table.add_row(*cells)
    console.print(table)


def _tau_grid(spec: str | None) -> tuple[tuple[float, float], ...]:
    from faithwatch.eval.decoding_cv import DEFAULT_GRID

    if spec is None:
        return DEFAULT_GRID
    try:
        grid = tuple((float(a), float(b)) for a, b in (p.split(":") for p in spec.split(",") if p.strip()))
    except ValueError:
        raise InputError(f"--tau-grid must look like '0.5:0.6,0.7:0.85', got {spec!r}") from None
    if not grid:
        raise InputError("--tau-grid is empty")
    for tau1, tau2 in grid:  # a τ out of [0, 1] (or nan) failed every run of its point
        try:
            checked_params(tau1=tau1, tau2=tau2)
        except InputError as exc:
            raise InputError(f"--tau-grid point {tau1:g}:{tau2:g}: {exc}") from None
    return grid


def _cross_validated(monitor, items, names, params, grid, cache_path, judge, console):
    """Out-of-fold success of every strategy among ``names`` that reads τ1 or τ2 (τ chosen on the other folds)."""
    import pandas as pd

    from faithwatch.eval.decoding_cv import cross_validate_tau, tau_points, taus_read

    bar = progress(console)
    rows = []
    for name in [n for n in names if taus_read(n)]:
        task = bar.add_task(f"τ grid · {name}", total=len(tau_points(name, grid)) * len(items))
        done = {"n": 0}

        def on_progress(n: int, total: int, strategy: str, item_id: str, task=task, done=done) -> None:
            done["n"] += 1
            bar.update(task, completed=done["n"])

        with bar:
            res = cross_validate_tau(monitor, items, name, grid=grid, params=params, cache_path=cache_path,
                                     on_progress=on_progress, checker=judge)
        rows.append(res.summary())
    return pd.DataFrame(rows)


def _check_options(ctx: typer.Context, names: list[str]) -> None:
    """Options that no strategy of the run reads, and settings at odds, are refused: they were ignored (or, for
    --cv-tau, refused only after every strategy had run)."""
    from faithwatch.cli.decoding import STRATEGY_OPTIONS, options_read
    from faithwatch.eval.decoding_cv import taus_read

    given, cv_tau = options_given(ctx), ctx.params["cv_tau"]
    if "tau_grid" in given and not cv_tau:
        raise InputError("--tau-grid is the grid of --cv-tau: add --cv-tau, or leave --tau-grid out")
    if "cache" in given and ctx.params["no_cache"]:
        raise InputError("--cache names the results cache and --no-cache turns it off: give one of them")
    if cv_tau and not any(taus_read(n) for n in names):
        raise InputError("--cv-tau needs a strategy that reads τ1 or τ2 (fod, fod-fallback, rerank-coverage, …) "
                         "in --strategies")
    each = [options_read(n) for n in names]
    if any(r is None for r in each):  # a plug-in that does not say what it reads
        return
    reads = {"seed", *(r for rs in each for r in rs)}  # the seed is the bootstrap's too
    refuse_unread(ctx, [o for o in STRATEGY_OPTIONS if o not in reads], f"--strategies {','.join(names)}",
                  [o for o in STRATEGY_OPTIONS if o in reads], "add a strategy to --strategies")



def _runs(n: int) -> str:
    return f"{n} run{'s' if n != 1 else ''}"


@app.command(name="eval-decoding")
def eval_decoding(
    ctx: typer.Context,
    data: str = typer.Option("counterfactual", "--data", help="'counterfactual' (the packaged counterfactual "
                             "QA set) or a .jsonl of {id, question, context[, context_answers, common_answers]}."),
    strategies: str = typer.Option("greedy,cad,fod,fod-fallback", "--strategies", help="Comma-separated strategies."),
    report: Path = typer.Option(..., "--report", file_okay=False, callback=writable,
                                help="Folder for results.md/.json, answers.jsonl, cache.jsonl."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N items."),
    tau1: float = float_option(default("tau1"), "--tau1", help=help_of("tau1"), **bounds("tau1")),
    tau2: float = float_option(default("tau2"), "--tau2", help=help_of("tau2"), **bounds("tau2")),
    beams: int = typer.Option(default("beams"), "--beams", help=help_of("beams"), **bounds("beams")),
    samples: int = typer.Option(default("samples"), "--samples", help=help_of("samples"), **bounds("samples")),
    temperature: float = float_option(default("temperature"), "--temperature", help=help_of("temperature"),
                                      **bounds("temperature")),
    alpha: float = float_option(default("alpha"), "--alpha", help=help_of("alpha"), **bounds("alpha")),
    abstain_threshold: float = float_option(default("abstain_threshold"), "--abstain-threshold",
                                             help=help_of("abstain_threshold"), **bounds("abstain_threshold")),
    max_new_tokens: int = typer.Option(default("max_new_tokens"), "--max-new-tokens", **bounds("max_new_tokens")),
    seed: int = typer.Option(default("seed"), "--seed", help="Sampling seed (and bootstrap seed).", **bounds("seed")),
    coverage: bool = typer.Option(default("coverage"), "--coverage/--no-coverage", help=help_of("coverage")),
    last_resort: bool = typer.Option(default("last_resort"), "--last-resort/--no-last-resort",
                                     help=help_of("last_resort")),
    trim: bool = typer.Option(default("trim"), "--trim/--no-trim", help=help_of("trim")),
    no_repeat: bool = typer.Option(default("no_repeat"), "--no-repeat/--allow-repeat", help=help_of("no_repeat")),
    lens: Path | None = typer.Option(None, "--lens", help="Lookback Lens folder for the lookback strategy."),
    model: str | None = typer.Option(None, "--model", "-m", help="Causal LM (default: embedded SmolLM2)."),
    detector: str | None = typer.Option(None, "--detector", help="Guiding detector (default: the model's)."),
    alignment: str | None = typer.Option(None, "--alignment", help="The monitor's alignment scorer "
                                         "(default: the detector's)."),
    checker: str = typer.Option("lexical", "--checker", help=CHECKER_HELP),
    cache: Path | None = typer.Option(None, "--cache", parser=file_to_write, metavar="<file>",
                                      help="Results cache (default: <report>/cache.jsonl)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write a cache."),
    traces: bool = typer.Option(False, "--traces", help="Keep every search trace in answers.jsonl."),
    n_boot: int = typer.Option(1000, "--n-boot", min=1, help="Bootstrap replicates for the success CI."),
    device: str | None = DeviceOpt,
    dtype: str | None = DtypeOpt,
    device_map: str | None = DeviceMapOpt,
    cv_tau: bool = typer.Option(False, "--cv-tau", help="Also run the strategies that read τ (FOD, "
                                "rerank-coverage) over a τ1/τ2 grid and report success with τ chosen on the "
                                "other folds (4-fold cross-validation)."),
    tau_grid: str | None = typer.Option(None, "--tau-grid", help="With --cv-tau: 'τ1:τ2,…' (default: "
                                        "0.5:0.5,0.5:0.6,0.6:0.6,0.6:0.7,0.7:0.7,0.7:0.85)."),
    threads: int | None = ThreadsOpt,
    instruction: str | None = InstructionOpt,
) -> None:
    """Compare decoding strategies: success on counterfactual contexts, faithfulness, informativeness, cost."""
    from faithwatch.decoding.counterfactual import load_items
    from faithwatch.eval import decoding as ev
    try:
        names = ev.parse_strategies(strategies, ev.known_strategies())
        _check_options(ctx, names)
        items = load_items(data)[:limit] if limit else load_items(data)
        if cv_tau:  # found after every strategy had run
            from faithwatch.eval.decoding_cv import cv_items

            cv_items(items)
            grid = _tau_grid(tau_grid)
        judge = build_checker(checker, device or "cpu")
        params: dict[str, Any] = {k: ctx.params[k] for k in DecodingParams.model_fields if k in ctx.params}
        checked_params(**params)  # a bad value (--alpha nan) before the model loads, not in every run
        check_names(detector=detector, alignment=alignment, lens=lens)  # they were found once it had loaded
        from faithwatch.eval.report import write_report
        from faithwatch.monitor import Monitor

        with err.status("Loading model…"):
            monitor = Monitor(model, detector=detector, alignment=alignment or "auto", device=device, dtype=dtype,
                              device_map=device_map,
                              **instruction_kwargs(instruction))
        if lens is not None:
            from faithwatch.detectors import load_detector

            params["lens"] = load_detector(str(lens), expect_model_id=monitor.lm.model_id)
    except FaithwatchError as exc:
        raise fail(exc) from None
    guide_alignment = getattr(monitor.alignment, "name", None)
    overlap = bool(guide_alignment) and bool(
        set(checker.strip().lower().split("+")) & set(str(guide_alignment).lower().split("+")))
    if overlap:
        err.print(f"[yellow]the checker's scorer ({checker}) is part of the monitor's alignment signal "
                  f"({guide_alignment}), so faithfulness is not fully independent of the search; use "
                  "--checker nli:<model> for an independent judge[/]")
    cache_path = None if no_cache else (cache or report / "cache.jsonl")
    run = dict(checker=judge, params=params, cache_path=cache_path, keep_trace=traces, n_boot=n_boot, seed=seed)
    interrupted = False
    bar = progress(err)
    try:
        with _sigterm_as_interrupt(), bar:
            task = bar.add_task("decoding", total=len(items) * len(names))

            def on_progress(done: int, total: int, strategy: str, item_id: str) -> None:
                bar.update(task, completed=done, description=f"{strategy} · {item_id}")

            result = ev.evaluate_strategies(monitor, items, names, on_progress=on_progress, **run)
    except KeyboardInterrupt:
        if cache_path is None:
            raise fail(InputError("interrupted; with --no-cache there is nothing to report")) from None
        interrupted = True
        err.print("[yellow]interrupted:[/] writing the report from the runs finished so far (the cache); the "
                  "others are rows marked 'not run'. Run the same command again to continue.")
        result = ev.evaluate_strategies(monitor, items, names, generate_fn=_not_run, **run)
    try:
        meta = {**result.meta, "data": data, "limit": limit, "model_id": monitor.lm.model_id,
                "detector": monitor.detector.name, "alignment": guide_alignment,
                "checker_overlaps_guide": overlap, "interrupted": interrupted}
        if lens is not None:
            meta["lens"] = str(lens)
        note = ev.in_sample_note(data, params, names)
        tables = result.tables(note)
        marked = dict.fromkeys(tables, data) if note else {}
        if note:
            err.print(f"[yellow]{note}[/]")
        if cv_tau and not interrupted:
            cv = _cross_validated(monitor, items, names, params, grid, cache_path, judge, err)
            tables["τ cross-validated (out of fold)"] = cv
            out.print(cv.round(3).to_string(index=False))
        paths = write_report(report, "faithwatch eval-decoding", tables, {}, meta, in_sample_tables=marked)
        from faithwatch.report import write_dataset_html

        paths.append(write_dataset_html(report))
        answers = report / ev.ANSWERS_FILE
        with answers.open("w", encoding="utf-8") as handle:
            for row in ev.answer_records(result):
                handle.write(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n")
    except FaithwatchError as exc:
        raise fail(exc) from None
    _print_summary(out, result.summary, result.meta["checker"])
    if result.by_topic is not None:
        out.print(result.by_topic.fillna(float("nan")).round(3).to_string(index=False, na_rep="n/a"))
    not_run = [r for r in result.rows if str(r.get("error") or "").endswith(NOT_RUN)]
    if interrupted:  # the report was read back from the cache: every finished run counts as "from the cache"
        err.print(f"interrupted: {_runs(result.reused)} finished so far, {len(not_run)} not started (rows marked "
                  f"'not run', in the errors column); run the same command again to continue. Report: "
                  f"{', '.join(str(p) for p in [*paths[:2], paths[-1]])}, {answers}")
        raise typer.Exit(EXIT_PARTIAL)
    err.print(f"{_runs(result.generated)}, {result.reused} from the cache; report: "
              f"{', '.join(str(p) for p in [*paths[:2], paths[-1]])}, {answers}")
    errors = [r for r in result.rows if r.get("error")]
    if errors:
        err.print(f"[yellow]{_runs(len(errors))} failed[/] (first: {errors[0]['strategy']} · {errors[0]['id']}: "
                  f"{errors[0]['error']})")
        raise typer.Exit(EXIT_PARTIAL)
