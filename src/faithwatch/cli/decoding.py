"""`faithwatch generate`: answer with a decoding strategy and show its trace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape

from faithwatch import registry
from faithwatch.cli._common import (
    DeviceMapOpt,
    DeviceOpt,
    DtypeOpt,
    InstructionOpt,
    ThreadsOpt,
    TruncOpt,
    check_generation,
    check_model_path,
    check_names,
    err,
    fail,
    file_to_write,
    float_option,
    group,
    instruction_kwargs,
    out,
    print_notes,
    read_text,
    refuse_unread,
)
from faithwatch.errors import FaithwatchError
from faithwatch.params import DEFAULT_STRATEGY, DecodingParams, bounds, checked_params, default, help_of
from faithwatch.text.visible import is_blank

if TYPE_CHECKING:
    from faithwatch.decoding.types import DecodingResult

app = group()

_KIND_STYLE = {"accept": "green", "keep": "green", "select": "bold green", "backtrack": "red", "prune": "red",
               "drop": "yellow", "refuse": "bold red", "candidate": "dim", "stop": "magenta"}


def _param(name: str, flags: str, **kw: Any) -> Any:
    """An option for one :class:`~faithwatch.params.DecodingParams` field that stays ``None`` unless given, so
    that a strategy's own defaults (a registered ``defaults=``) apply; the help shows the general default."""
    make = float_option if DecodingParams.model_fields[name].annotation is float else typer.Option
    return make(None, flags, help=f"{help_of(name)} [default: {default(name)}, unless the strategy sets "
                        "its own]", show_default=False, **{**bounds(name), **kw})


#: the command-line options of a strategy: the decoding parameters and the Lookback Lens
STRATEGY_OPTIONS = (*DecodingParams.model_fields, "lens")


def options_read(strategy: str) -> tuple[str, ...] | None:
    """The :data:`STRATEGY_OPTIONS` that ``strategy`` reads (``None`` for a plug-in that does not say)."""
    from faithwatch.decoding import params_read

    reads = params_read(strategy)
    return None if reads is None else (*reads, *(["lens"] if strategy == "lookback" else []))


def _check_read(ctx: typer.Context, strategy: str) -> None:
    """Options the strategy does not read are refused: they were ignored (``--strategy greedy --tau1 0.3``)."""
    reads = options_read(strategy)
    if reads is not None:
        refuse_unread(ctx, [name for name in STRATEGY_OPTIONS if name not in reads], f"--strategy {strategy}", reads,
                      "choose a strategy")


@app.command()
def generate(
    ctx: typer.Context,
    context: Path = typer.Option(..., "--context", "-c", help="File with the retrieved context."),
    question: str = typer.Option(..., "--question", "-q", help="The user's question."),
    strategy: str = typer.Option(DEFAULT_STRATEGY, "--strategy", "-s", help=registry.strategies.choices()),
    tau1: float | None = _param("tau1", "--tau1"),
    tau2: float | None = _param("tau2", "--tau2"),
    beams: int | None = _param("beams", "--beams"),
    samples: int | None = _param("samples", "--samples"),
    temperature: float | None = _param("temperature", "--temperature"),
    alpha: float | None = _param("alpha", "--alpha"),
    abstain_threshold: float | None = _param("abstain_threshold", "--abstain-threshold"),
    max_new_tokens: int | None = _param("max_new_tokens", "--max-new-tokens"),
    seed: int | None = _param("seed", "--seed"),
    coverage: bool | None = _param("coverage", "--coverage/--no-coverage"),
    last_resort: bool | None = _param("last_resort", "--last-resort/--no-last-resort"),
    trim: bool | None = _param("trim", "--trim/--no-trim"),
    no_repeat: bool | None = _param("no_repeat", "--no-repeat/--allow-repeat"),
    lens: Path | None = typer.Option(None, "--lens", help="Lookback Lens folder for --strategy lookback."),
    model: str | None = typer.Option(None, "--model", "-m", help="Causal LM (default: embedded SmolLM2)."),
    device: str | None = DeviceOpt,
    dtype: str | None = DtypeOpt,
    device_map: str | None = DeviceMapOpt,
    detector: str | None = typer.Option(None, "--detector", help="Sentence scorer (default: shipped/heuristic)."),
    truncate_context: bool = TruncOpt,
    json_out: bool = typer.Option(False, "--json", help="Print the result (answer, sentences, trace) as JSON."),
    html: Path | None = typer.Option(None, "--html", parser=file_to_write, metavar="<file>",
                                     help="Also write a self-contained HTML report (answer, sentence scores, "
                                          "evidence, trace)."),
    threads: int | None = ThreadsOpt,
    instruction: str | None = InstructionOpt,
) -> None:
    """Generate an answer with a faithfulness-oriented strategy; every candidate and decision is traced."""
    from faithwatch.errors import InputError

    try:
        context_text = read_text(context, "context")  # before the heavy imports: a bad path fails at once
        if is_blank(context_text):
            raise InputError("The context is empty: faithwatch needs a non-empty context.")
        check_generation(model, question)
        check_names(detector=detector, strategy=strategy)
        given = {k: ctx.params[k] for k in DecodingParams.model_fields if ctx.params.get(k) is not None}
        checked_params(**given)  # a bad value (--alpha nan) before the model loads
        _check_read(ctx, strategy)
        check_names(lens=lens)  # a lens the strategy reads
        check_model_path(model)
        from faithwatch.decoding import generate as run
        from faithwatch.monitor import Monitor

        with err.status("Loading model…"):
            monitor = Monitor(model, detector=detector, device=device, dtype=dtype, device_map=device_map,
                              truncate_context=truncate_context,
                              **instruction_kwargs(instruction))
        with err.status(f"Decoding with {strategy}…"):
            result = run(monitor, question, context_text, strategy, lens=lens, **given)
    except FaithwatchError as exc:
        raise fail(exc) from None
    if html is not None:
        from faithwatch.report import write_response_html

        write_response_html(html, result, question=question, context=context_text,
                            title=f"faithwatch generate ({strategy}): {question}",
                            meta={"model": monitor.lm.model_id})
        err.print(f"HTML report → {html}")
    if json_out:
        print(json.dumps(result.to_dict(), allow_nan=False))
        print_notes(result.notes)
        return
    for e in result.trace:
        style = _KIND_STYLE.get(e.kind, "")
        score = "" if e.score is None else f"{e.score:.2f} "
        beam = "" if e.beam is None else f"b{e.beam} "
        out.print(f"[{style}]{e.kind:>9}[/] s{e.step} {beam}{score}{escape(' '.join(e.text[:90].split()))}"
                  + (f" [dim]({e.reason})[/]" if e.reason else ""))
    label = "[bold red]REFUSED[/] " if result.refused else ""
    out.print(f"\n{label}[bold]{result.answer}[/]")
    hint = refusal_hint(result, float(monitor.threshold)) if result.refused else None
    if hint:
        out.print(f"[yellow]{escape(hint)}[/]")
    mean = "n/a" if result.mean_score is None else f"{result.mean_score:.2f}"
    out.print(f"[dim]{strategy} · {result.num_tokens} tokens in the answer, {result.generated_tokens} generated · "
              f"mean sentence score {mean} ({result.detector}) · stop: {result.stop_reason}[/]")
    print_notes(result.notes)


def refusal_hint(result: DecodingResult, threshold: float) -> str | None:
    """What came nearest to an answer when ``result`` is a refusal, and the option that would have taken it."""
    best = result.closest()
    if best is None:
        return None
    tau2, text = result.params.get("tau2"), " ".join(best.text.split())
    text = text if len(text) <= 100 else text[:99] + "…"
    hint = f"Closest to passing: {best.score:.2f} \"{text}\"" + ("" if tau2 is None else f" (tau2 = {tau2:g})") + "."
    if result.params.get("last_resort") is False and tau2 is not None and threshold < tau2:
        hint += (f" --last-resort searches once more at the detector's threshold ({threshold:.2f}); it then also "
                 "answers questions the context cannot answer.")
    return hint
