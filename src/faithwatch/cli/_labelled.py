"""Labelled data sets for the detector commands (`train`, `select`, `eval`, `calibrate`): their shared options,
the ``--data`` list, and loading their feature tables with progress."""

from __future__ import annotations

from pathlib import Path

import typer

from faithwatch.cli._common import check_names, fail, progress
from faithwatch.data.loaders import DATA_SUFFIXES, POLICIES, check_dataset_name, dataset_name
from faithwatch.errors import InputError

MODEL_OPT = typer.Option(None, "--model", "-m", help="Causal LM (default: embedded SmolLM2).")
ALIGN_OPT = typer.Option(None, "--alignment", help="Alignment scorer (default: the default).")
QUESTIONABLE_OPT = typer.Option("exclude", "--questionable", help="FaithBench Questionable spans: "
                                "exclude | faithful | unfaithful.")
DATA_ROOT_OPT = typer.Option(None, "--data-root", help="Folder of the shared data sets.")
AUGMENT_OPT = typer.Option(None, "--augment", help="Comma-separated training-only data sets (e.g. from "
                           "`faithwatch synth-edits`): trained on, never held out or used for calibration.")
TEXT_ONLY_OPT = typer.Option(False, "--text-only", help="Sentence features from the text alone, without teacher "
                             "forcing (families alignment, lexical, edits, tagger; train without --features or "
                             "--recipe: those families): minutes instead of hours.")


def data_sets(spec: str) -> list[str]:
    """The data sets of ``--data``: comma-separated names or files; a folder stands for its .jsonl, .json and .tsv
    files (sorted), each its own data set (e.g. SummEdits' ten domain files). A name given twice counts once; two
    files with one name (``a/x.jsonl``, ``b/x.jsonl``), a missing file or an unknown name are an
    :class:`InputError` (found before any model or feature stack is imported)."""
    names = []
    for d in (d.strip() for d in spec.split(",")):
        if d and Path(d).is_dir():
            files = sorted(str(f) for f in Path(d).iterdir() if f.suffix in DATA_SUFFIXES and f.is_file())
            if not files:
                raise InputError(f"--data: folder {d} holds no {', '.join(DATA_SUFFIXES)} file")
            names += files
        elif d:
            names.append(d)
    if not names:
        raise InputError("--data names no data set")
    names = list(dict.fromkeys(names))
    for name in names:
        check_dataset_name(name)
    named: dict[str, str] = {}
    for name in names:  # a data set is named by its file's stem: a second one would overwrite the first's tables
        other = named.setdefault(dataset_name(name), name)
        if other != name:
            raise InputError(f"--data: {other} and {name} would both be the data set {dataset_name(name)!r} (a file "
                             "goes by its name without the folder and suffix): rename one")
    return names


def checked_data(data: str, augment: str | None = None) -> tuple[list[str], list[str]]:
    """The data sets of ``--data`` and of ``--augment`` (see :func:`data_sets`): a command's first step, so that a
    mistyped file is answered before the detector and model stacks are imported."""
    try:
        extra = data_sets(augment) if augment else []
        return data_sets(data), extra
    except InputError as exc:
        raise fail(exc) from None


def ray_settings(ray: bool, address: str | None, workers: int, gpus_per_worker: float, threads: int | None):
    """The Ray settings of ``--ray`` (one example per actor call), or ``None``."""
    from faithwatch.scale import RaySettings

    return RaySettings(address=address, workers=workers, gpus_per_worker=gpus_per_worker, batch_size=1,
                       threads=threads) if ray else None


def check_questionable(questionable: str, names: list[str]) -> None:
    """``--questionable`` is a label policy, and set to anything but the default it needs FaithBench among the data
    sets (it was ignored without; a bad value was found once the model had loaded)."""
    if questionable not in POLICIES:
        raise InputError(f"--questionable must be {', '.join(POLICIES[:-1])} or {POLICIES[-1]}, got {questionable!r}")
    if questionable != "exclude" and "faithbench" not in names:
        raise InputError("--questionable labels FaithBench's Questionable spans, and no data set is faithbench: "
                         "leave it out, or add faithbench to --data")


def load_tables(names, model, alignment, data_root, console, questionable="exclude", text_only=False, augment=None,
          ray_settings=None, labels=True):
    """The monitor and the feature tables of ``names`` and of the ``augment`` sets (both from :func:`checked_data`);
    ``labels=False``: the labels are not read (the summary line counts every sentence)."""
    from faithwatch.eval.features import RayExtraction
    from faithwatch.eval.pipeline import (
        TEXT_ONLY_RAY,
        extraction_kwargs,
        extraction_monitor,
        load_labelled,
        read_labelled,
    )

    if ray_settings is not None and text_only:
        raise InputError(TEXT_ONLY_RAY)  # before loading the model
    augment = augment or []
    check_questionable(questionable, [*names, *augment])
    check_names(alignment=alignment)  # nli:/no/dir was found once the model had loaded
    with console.status("Reading the data sets…"):  # a bad one was found once the model had loaded
        loaded = read_labelled(names, data_root=data_root, questionable=questionable, augment=augment)
    with console.status("Loading model…"):
        monitor = extraction_monitor(model, alignment)
    ray = None if ray_settings is None else RayExtraction(
        extraction_kwargs(model, monitor.lm.num_layers, alignment), ray_settings)
    with progress(console) as bar:
        tasks: dict[str, int] = {}

        def on_progress(name: str, n: int, total: int) -> None:
            if name not in tasks:
                tasks[name] = bar.add_task(f"features {name}", total=total)
            bar.update(tasks[name], completed=n)

        data = load_labelled(names, monitor, data_root=data_root, questionable=questionable, on_progress=on_progress,
                             text_only=text_only, augment=augment, ray=ray, loaded=loaded)
    for d in data.values():
        if d.failed:
            console.print(f"[yellow]{d.name}: {len(d.failed)} examples could not be scored[/] "
                          f"(first: {next(iter(d.failed.items()))})")
        role = " (training only)" if d.train_only else ""
        if not labels:
            console.print(f"{d.name}: {len(d.all_sentences)} sentences of {d.all_sentences.example_id.nunique()} "
                          "responses (labels not read)")
            continue
        console.print(f"{d.name}{role}: {len(d.sentences)} labelled sentences "
                      f"({int(d.sentences.label.sum())} unfaithful), {d.unlabelled_sentences} without a label left out")
    return monitor, data


def detector_alignment(meta: dict, asked: str | None) -> str | None:
    """The alignment scorer to evaluate with: the detector's, or the one asked for when the detector does not read
    ``align_score`` (else a clear refusal)."""
    trained = meta.get("metrics", {}).get("alignment")
    if asked is None or asked == trained:
        return trained
    if "align_score" in meta.get("feature_names", []):
        raise InputError(f"the detector reads align_score from {trained!r}; with --alignment {asked} it would get "
                         f"another feature. Leave --alignment out, or train a detector with --alignment {asked}")
    return asked
