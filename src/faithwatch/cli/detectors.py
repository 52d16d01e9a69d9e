"""`faithwatch train`, `select`, `synth-edits` and `transfer-lens`: detectors from labelled data (their evaluation,
`faithwatch eval`, is :mod:`faithwatch.cli.evaluation`).

Their feature caches are extracted on this machine, or with ``--ray`` on Ray actors (docs/scale.md).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import typer
from rich.table import Table

from faithwatch.cli._common import (
    AddressOpt,
    GpusPerWorkerOpt,
    OverwriteArtifactOpt,
    RayOpt,
    ThreadsOpt,
    WorkersOpt,
    check_artifact_out,
    check_model_path,
    check_names,
    check_ray_options,
    err,
    fail,
    file_to_write,
    float_option,
    given_flags,
    group,
    out,
    progress,
    read_text,
    seed_option,
    writable,
)
from faithwatch.cli._labelled import (
    ALIGN_OPT,
    AUGMENT_OPT,
    DATA_ROOT_OPT,
    MODEL_OPT,
    QUESTIONABLE_OPT,
    TEXT_ONLY_OPT,
    checked_data,
    load_tables,
    ray_settings,
)
from faithwatch.errors import FaithwatchError, InputError
from faithwatch.store import write_folder_atomic

app = group()

def _recipe(path, kind, features, transform, c_value, monotone, weighting, probe_layers, probe_c, pooling=None,
            centering=None):
    """A recipe from a JSON file (or the default), with the given options changed."""
    from faithwatch.eval.training import Recipe, check_strength, with_recipe

    for flag, value in (("--C", c_value), ("--probe-C", probe_c)):
        if value is not None:  # the recipe's message names its fields (C, probe_C)
            check_strength(flag, value)

    if path is not None:
        text = read_text(path, "recipe")
        try:
            recipe = Recipe.from_dict(json.loads(text).get("recipe", {}))
        except (json.JSONDecodeError, AttributeError, TypeError) as exc:
            raise InputError(f"{path} is not a recipe JSON ({exc})") from None
    else:
        recipe = Recipe()
    changes: dict = {}
    if kind is not None:
        changes["kind"] = kind  # the recipe validates every field
    if features is not None:
        changes["families"] = tuple(f.strip() for f in features.split(",") if f.strip())
    if probe_layers is not None:
        try:
            layers = tuple(int(x) for x in probe_layers.split(",") if x.strip())
        except ValueError:
            raise InputError(f"--probe-layers must be comma-separated integers, got {probe_layers!r}") from None
        changes["probe_layers"] = layers
        families = [f for f in changes.get("families", recipe.families) if f != "probe"]
        changes["families"] = tuple(families + (["probe"] if layers else []))
    for key, value in (("transform", transform), ("C", c_value), ("monotone", monotone), ("weighting", weighting),
                       ("probe_C", probe_c), ("pooling", pooling), ("centering", centering)):
        if value is not None:
            changes[key] = value
    recipe = with_recipe(recipe, **changes) if changes else recipe
    if c_value is not None and recipe.kind != "lr":  # they were ignored
        raise InputError(f"--C is the L2 strength of the logistic regression; kind {recipe.kind} does not read it")
    if probe_c is not None and not recipe.probe_layers:
        raise InputError("--probe-C is the L2 strength of the hidden-state probe: add --probe-layers, or leave it "
                         "out")
    return recipe



@app.command()
def train(
    ctx: typer.Context,
    data: str = typer.Option(..., "--data", help="Comma-separated data sets (faithbench, qags-cnndm, begin-dev) "
                             "or files: generic .jsonl, or QAGS (mturk_*.jsonl) / BEGIN (.tsv) / SummEdits (.json) "
                             "as released; a folder stands for its .jsonl, .json and .tsv files."),
    out_dir: Path = typer.Option(..., "--out", file_okay=False, callback=writable,
                                 help="Folder for the detector artifact (new or empty; --overwrite replaces a "
                                      "detector there)."),
    overwrite: bool = OverwriteArtifactOpt,
    recipe_file: Path | None = typer.Option(None, "--recipe", help="A recipe JSON (from `faithwatch select`); "
                                            "the options below change it."),
    detector: str | None = typer.Option(None, "--detector", help="Aggregator: lr | xgb | mlp."),
    features: str | None = typer.Option(None, "--features", help="Comma-separated feature families, e.g. "
                                        "alignment,lexical (an unknown name lists them all)."),
    transform: str | None = typer.Option(None, "--transform", help="Feature scaling: robust | quantile | "
                                         "standard."),
    c_value: float | None = float_option(None, "--C", help="Inverse L2 strength of the LR aggregator."),
    monotone: bool | None = typer.Option(None, "--monotone/--free", help="Sign-constrain features of known "
                                         "meaning (e.g. align_score can only raise the score)."),
    weighting: str | None = typer.Option(None, "--weighting", help="dataset (every data set and class equal) "
                                         "| pooled."),
    pooling: str | None = typer.Option(None, "--pooling", help="pooled (one regression on all sets) | averaged "
                                       "(one per data set, averaged) | blended (half of each)."),
    centering: str | None = typer.Option(None, "--centering", help="dataset (move every training set's feature "
                                         "medians onto a common one before the fit, so that the weights learn "
                                         "what separates sentences within a data set) | none."),
    probe_layers: str | None = typer.Option(None, "--probe-layers", help="Comma-separated layers of a "
                                            "hidden-state probe ('' for none); adds the probe family."),
    probe_c: float | None = float_option(None, "--probe-C", help="Inverse L2 strength of the probe."),
    lens: str = typer.Option("span", "--lens", help="Also train a Lookback Lens: span | window | none "
                             "(none with --text-only)."),
    seed: int = seed_option(0),
    model: str | None = MODEL_OPT,
    alignment: str | None = ALIGN_OPT,
    questionable: str = QUESTIONABLE_OPT,
    data_root: str | None = DATA_ROOT_OPT,
    text_only: bool = TEXT_ONLY_OPT,
    augment: str | None = AUGMENT_OPT,
    ray: bool = RayOpt,
    address: str | None = AddressOpt,
    workers: int = WorkersOpt,
    gpus_per_worker: float = GpusPerWorkerOpt,
    threads: int | None = ThreadsOpt,
) -> None:
    """Train a SynCheck detector (and a Lookback Lens) on labelled data; features are cached.

    The score is calibrated and the threshold chosen on out-of-fold predictions: each data set is predicted
    by the recipe trained on the others (one data set: 5 folds of examples).
    """
    names, extra = checked_data(data, augment)
    from faithwatch.eval.report import FINGERPRINTS, response_fingerprints
    from faithwatch.eval.training import FEW_TRAINING_PER_CLASS, check_text_only, fit_lookback_lens, fit_syncheck
    from faithwatch.signals import signal_versions

    if lens not in ("span", "window", "none"):
        raise fail(InputError("--lens must be span, window or none"))
    try:
        if text_only and features is None and recipe_file is None:  # the default recipe reads the model too
            from faithwatch.eval.training import TEXT_FAMILIES

            features = ",".join(TEXT_FAMILIES)
            err.print(f"--text-only: the families {features}")
        recipe = _recipe(recipe_file, detector, features, transform, c_value, monotone, weighting,
                         probe_layers, probe_c, pooling, centering)
        check_artifact_out(out_dir, overwrite)  # before hours of features
        if text_only:
            check_text_only(recipe.families)
            if given_flags(ctx, ["lens"]) and lens != "none":  # it was dropped with a note
                raise InputError(f"--text-only trains no Lookback Lens (it reads the model's attention): leave "
                                 f"--lens {lens} out, or drop --text-only")
            if lens != "none":
                err.print("--text-only: no Lookback Lens (it needs the model's attention)")
                lens = "none"
        check_ray_options(ctx)
        monitor, tables = load_tables(names, model, alignment, data_root, err, questionable, text_only,
                                extra, ray_settings(ray, address, workers, gpus_per_worker, threads))
        import pandas as pd

        train_df = pd.concat([t.sentences for t in tables.values()], ignore_index=True)
        start = time.perf_counter()
        with err.status("training, and predicting every data set out of fold for calibration…"):
            det = fit_syncheck(train_df, recipe, model_id=monitor.lm.model_id, seed=seed)
        det.meta.metrics["alignment"] = monitor.alignment.name if monitor.alignment else None
        det.meta.metrics["alignment_version"] = getattr(monitor.alignment, "version", None)
        det.meta.metrics.update(signal_versions(recipe.families))
        det.meta.metrics["label_policy"] = {"faithbench_questionable": questionable}
        det.meta.metrics[FINGERPRINTS] = {name: response_fingerprints(t.examples) for name, t in tables.items()}
        lens_det = None
        if lens != "none":
            lens_df = train_df if lens == "span" else pd.concat([t.windows for t in tables.values()])
            lens_det = fit_lookback_lens(lens_df, model_id=monitor.lm.model_id, num_layers=monitor.lm.num_layers,
                                         num_heads=monitor.lm.num_heads, mode=lens, seed=seed)

        def write(folder: Path) -> None:
            det.save(folder)
            if lens_det is not None:
                lens_det.save(folder / "lookback-lens")

        write_folder_atomic(out_dir, write)  # a detector already there (--overwrite) goes whole, its lens too
    except FaithwatchError as exc:
        raise fail(exc) from None
    err.print(f"trained {det.name} on {len(train_df)} sentences in {time.perf_counter() - start:.1f} s; "
              f"threshold {det.threshold:.3f} (out of fold); saved to {out_dir}")
    n_bad = int(train_df.label.sum())
    if min(n_bad, len(train_df) - n_bad) < FEW_TRAINING_PER_CLASS:
        err.print(f"[yellow]warning:[/] only {len(train_df) - n_bad} faithful and {n_bad} unfaithful sentences: "
                  f"with fewer than {FEW_TRAINING_PER_CLASS} of either class the weights and the threshold are "
                  "noisy; check the detector with `faithwatch eval` on data it was not trained on")
    metrics = {k: v for k, v in det.meta.metrics.items() if k != FINGERPRINTS}  # thousands of them: in the file only
    print(json.dumps({"detector": str(out_dir), "recipe": recipe.to_dict(), "n_train": len(train_df),  # one line
                      "threshold": det.threshold, "metrics": metrics}, default=str), flush=True)

@app.command()
def select(
    ctx: typer.Context,
    data: str = typer.Option(..., "--data", help="Comma-separated labelled data sets (at least two)."),
    out_file: Path = typer.Option(Path("recipe.json"), "--out", parser=file_to_write, metavar="<file>",
                                  help="Where to write the chosen recipe."),
    table_file: Path | None = typer.Option(None, "--table", parser=file_to_write, metavar="<file>",
                                           help="Also write the whole table as CSV."),
    seed: int = seed_option(0),
    model: str | None = MODEL_OPT,
    alignment: str | None = ALIGN_OPT,
    questionable: str = QUESTIONABLE_OPT,
    data_root: str | None = DATA_ROOT_OPT,
    text_only: bool = TEXT_ONLY_OPT,
    augment: str | None = AUGMENT_OPT,
    ray: bool = RayOpt,
    address: str | None = AddressOpt,
    workers: int = WorkersOpt,
    gpus_per_worker: float = GpusPerWorkerOpt,
    threads: int | None = ThreadsOpt,
) -> None:
    """Choose a training recipe by transfer: the best worst-case leave-one-data-set-out gain over align_score.

    Every candidate is trained on all data sets but one and scored on the one left out, in turn. Train the
    chosen recipe with `faithwatch train --recipe recipe.json`.
    """
    names, extra = checked_data(data, augment)
    from faithwatch.eval.selection import candidate_grid
    from faithwatch.eval.selection import select as run_select

    try:
        if len(names) < 2:  # before the features, which can take hours
            raise InputError(f"selection by transfer needs at least two labelled data sets in --data (each is held "
                             f"out in turn), got {len(names)}; --augment sets are training only")
        check_ray_options(ctx)
        monitor, tables = load_tables(names, model, alignment, data_root, err, questionable, text_only,
                                extra, ray_settings(ray, address, workers, gpus_per_worker, threads))
        grid = candidate_grid(text_only=text_only)
        with progress(err) as bar:
            task = bar.add_task("leave-one-data-set-out", total=len(grid))
            best, table = run_select({n: d.sentences for n, d in tables.items()}, grid, monitor.lm.model_id,
                                     seed=seed, on_recipe=lambda i, n: bar.update(task, completed=i))
    except FaithwatchError as exc:
        raise fail(exc) from None
    rich_table = Table(title="held-out AUROC by recipe (best worst-case gain over align_score first)")
    for col in table.columns:
        rich_table.add_column(col.removeprefix("auroc "), justify="left" if col == "recipe" else "right")
    for row in table.itertuples(index=False):
        rich_table.add_row(*(f"{v:.3f}" if isinstance(v, float) else str(v) for v in row))
    out.print(rich_table)
    out_file.write_text(json.dumps({"recipe": best.to_dict(), "data": list(tables),
                                    "selection": table.iloc[0].drop("recipe").to_dict()}, indent=2) + "\n",
                        encoding="utf-8")
    if table_file is not None:
        table.to_csv(table_file, index=False)
    again = " ".join(["--data", data, *(["--augment", augment] if augment else []),
                      *(["--alignment", alignment] if alignment not in (None, "auto") else []),
                      *(["--text-only"] if text_only else [])])
    err.print(f"chosen recipe written to {out_file}; train it with `faithwatch train {again} --recipe {out_file} "
              "--out DETECTOR_DIR`")

@app.command(name="synth-edits")
def synth_edits(
    data: str = typer.Option(..., "--data", help="Data sets whose contexts the responses are built from."),
    out_file: Path = typer.Option(..., "--out", parser=file_to_write, metavar="<file>",
                                  help="The JSONL file to write (generic format)."),
    n: int = typer.Option(600, "--n", min=2, help="Responses to build (about half unfaithful)."),
    seed: int = seed_option(0, "which sentences are edited, and how"),
    data_root: str | None = DATA_ROOT_OPT,
) -> None:
    """Build near-copy responses with one changed number, entity or negation (span-labelled), for --augment.

    Responses copy a few sentences of a context; about half change one of them. Use the file as a
    training-only set: `faithwatch train --augment FILE`.
    """
    names, _ = checked_data(data)
    from faithwatch.data.loaders import load_dataset, to_jsonl_row
    from faithwatch.data.synthetic_edits import edit_examples

    try:
        sources = [e for name in names for e in load_dataset(name, data_root)]
        examples = edit_examples(sources, n, seed=seed, dataset=out_file.stem)
    except (FaithwatchError, ValueError) as exc:
        raise fail(exc if isinstance(exc, FaithwatchError) else InputError(str(exc))) from None
    out_file.parent.mkdir(parents=True, exist_ok=True)
    out_file.write_text("".join(json.dumps(to_jsonl_row(e)) + "\n" for e in examples), encoding="utf-8")
    bad = sum(e.response_label for e in examples)
    err.print(f"{len(examples)} responses ({bad} with a changed sentence) from {len(sources)} source examples "
              f"→ {out_file}")
    repeats = len(examples) - len({(e.context, e.response) for e in examples})
    if repeats:  # the file is as the seed makes it; a user should know how much of it is the same pair again
        err.print(f"[yellow]note:[/] {repeats} of the responses repeat an earlier one word for word (with its "
                  "context): the sources hold fewer distinct edits than --n asks for, and a repeat weighs its pair "
                  "more in training; give a smaller --n or more --data")

@app.command(name="transfer-lens")
def transfer_lens_cmd(
    lens_dir: Path = typer.Option(..., "--lens", help="A Lookback Lens folder (e.g. <detector>/lookback-lens)."),
    target_model: str = typer.Option(..., "--target-model", help="The model to transfer the lens to."),
    data: str = typer.Option(..., "--data", help="Data sets whose texts are run through both models."),
    out_dir: Path = typer.Option(..., "--out", file_okay=False, callback=writable,
                                 help="Folder for the mapped lens (new or empty; --overwrite replaces a lens there)."),
    overwrite: bool = OverwriteArtifactOpt,
    max_examples: int = typer.Option(300, "--max-examples", min=2, help="Texts used to fit the mapping."),
    source_model: str | None = typer.Option(None, "--source-model", help="Override the lens's model path."),
    data_root: str | None = typer.Option(None, "--data-root"),
    threads: int | None = ThreadsOpt,
) -> None:
    """Map a Lookback Lens to another model by a linear head mapping fitted on shared texts (paper 003 §4)."""
    names, _ = checked_data(data)
    try:  # before the detector and model stacks are imported (seconds)
        check_artifact_out(out_dir, overwrite)
        check_names(lens=lens_dir)
        check_model_path(target_model)
        check_model_path(source_model)
    except FaithwatchError as exc:
        raise fail(exc) from None
    from faithwatch.data.loaders import load_dataset
    from faithwatch.detectors import LookbackLens
    from faithwatch.eval.lens_transfer import transfer_lens
    from faithwatch.monitor import Monitor

    try:
        lens = LookbackLens.load(lens_dir)
        # the texts before both models load: a bad --data was found after them
        examples = [e for name in names for e in load_dataset(name, data_root)][:max_examples]
        with err.status("Loading both models…"):
            kw = {"signals": ["likelihood", "entropy", "lookback"], "detector": "heuristic", "alignment": "none"}
            source = Monitor(source_model or lens.model_id, **kw)
            target = Monitor(target_model, **kw)
        with progress(err) as bar:
            task = bar.add_task("both models", total=len(examples))
            mapped, mapping = transfer_lens(lens, source, target, examples,
                                            on_progress=lambda n, t: bar.update(task, completed=n))
        write_folder_atomic(out_dir, mapped.save)
    except FaithwatchError as exc:
        raise fail(exc) from None
    err.print(f"head mapping fitted on {mapping.n_train} sentences, R² {mapping.r2:.3f}; mapped lens → {out_dir}")
