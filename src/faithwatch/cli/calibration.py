"""`faithwatch calibrate`: fit a trained detector's threshold to your own domain, from a few labelled responses
or (``--unlabelled``) from many unlabelled ones."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import typer

from faithwatch.cli._common import (
    OverwriteArtifactOpt,
    ThreadsOpt,
    check_artifact_out,
    err,
    fail,
    group,
    options_given,
    writable,
)
from faithwatch.cli._labelled import DATA_ROOT_OPT, QUESTIONABLE_OPT, checked_data, detector_alignment, load_tables
from faithwatch.errors import FaithwatchError, InputError
from faithwatch.store import write_folder_atomic

app = group()


@app.command()
def calibrate(
    ctx: typer.Context,
    detector_name: str = typer.Option("default", "--detector", help="A detector folder, or default: the shipped one."),
    data: str = typer.Option(..., "--data", help="Labelled responses of your domain: .jsonl files in the generic "
                             "format (spans or labels) or named data sets, comma-separated."),
    out_dir: Path = typer.Option(..., "--out", file_okay=False, callback=writable,
                                 help="Folder for the re-calibrated detector (not --detector's; new or empty, "
                                      "--overwrite replaces a detector there)."),
    overwrite: bool = OverwriteArtifactOpt,
    unlabelled: bool = typer.Option(False, "--unlabelled", help="Use no labels: move the scores so that the median "
                                    "sentence of your responses lands where the training data's did (needs "
                                    "responses only, e.g. faithwatch score's input; at least 20 sentences, 200+ "
                                    "advised). Assumes a share of unfaithful sentences like the training data's."),
    questionable: str = QUESTIONABLE_OPT,
    data_root: str | None = DATA_ROOT_OPT,
    threads: int | None = ThreadsOpt,
) -> None:
    """Re-fit a detector's probability map and threshold on responses of your own domain.

    The aggregator's weights stay as they are; only what turns its raw score into a verdict changes. With labels,
    the map and threshold are refitted, both classes weighted equally: use 25 or more labelled responses. With
    --unlabelled, the map is shifted so that your sentences' median score matches the training data's (no labels
    read). docs/transfer.md measures both. Pass the new folder as --detector to monitor, score, serve or generate.
    """
    names, _ = checked_data(data)
    from faithwatch.detectors import detector_path

    try:
        if unlabelled and "questionable" in options_given(ctx):  # it labels spans, and no label is read: ignored
            raise InputError("--questionable says how FaithBench's Questionable spans are labelled, and --unlabelled "
                             "reads no label: leave --questionable out")
        detector = detector_path(detector_name, trained_only=True)
        if out_dir.resolve() == detector.resolve():
            raise InputError("--out must be another folder than --detector (the original is kept)")
        check_artifact_out(out_dir, overwrite)
        # torch and scikit-learn: seconds, after the paths are checked
        from faithwatch.detectors.calibration import FEW_UNLABELLED, shift_caveat
        from faithwatch.eval.harness import load_artifacts
        from faithwatch.eval.recalibration import (
            FEW_RESPONSES,
            FEW_UNFAITHFUL,
            adapt_unlabelled,
            recalibrate,
            reference_origin,
        )
        from faithwatch.eval.report import check_in_sample
        from faithwatch.eval.training import TEXT_FAMILIES

        meta = json.loads((detector / "detector.json").read_text())
        families = (meta.get("params", {}).get("recipe") or {}).get("families") or ["?"]
        text_only = set(families) <= set(TEXT_FAMILIES)  # no teacher forcing needed for these features
        monitor, tables = load_tables(names, meta["model_id"], detector_alignment(meta, None), data_root, err,
                                questionable, text_only, labels=not unlabelled)
        for name, d in tables.items():
            check = check_in_sample(name, d.examples, meta.get("training_data") or [], meta.get("metrics"),
                                    data_root)
            if check.in_sample:
                err.print(f"[yellow]warning:[/] {name}: {check.why(len(d.examples))}; calibrate on responses of "
                          "your domain that the detector has not seen")
        det, _ = load_artifacts(detector, monitor.lm.model_id)
        import pandas as pd

        if unlabelled:
            rows = pd.concat([d.all_sentences for d in tables.values()], ignore_index=True)
            origin = reference_origin(det)
            result = adapt_unlabelled(det, rows, source=data)
        else:
            rows = pd.concat([d.sentences for d in tables.values()], ignore_index=True)
            result = recalibrate(det, rows, source=data)

        def write(folder: Path) -> None:
            det.save(folder)
            if (detector / "lookback-lens").is_dir():
                shutil.copytree(detector / "lookback-lens", folder / "lookback-lens")

        write_folder_atomic(out_dir, write)
    except FaithwatchError as exc:
        raise fail(exc) from None
    if unlabelled:
        if result.n_sentences < FEW_UNLABELLED:
            err.print(f"[yellow]warning:[/] only {result.n_sentences} sentences: a median from fewer than "
                      f"{FEW_UNLABELLED} is noisy (docs/transfer.md)")
        err.print(f"{det.name}: your sentences' median log-odds {result.domain_median_logit:+.3f} against the "
                  f"reference {result.reference_logit:+.3f} (the median of the data the threshold was fitted on: "
                  f"{origin}): every log-odds {'lowered' if result.shift > 0 else 'raised'} by "
                  f"{abs(result.shift):.3f} (shift {result.shift:+.3f}: your median minus the reference); threshold "
                  f"{result.threshold:.3f} kept; flagged {result.flagged_before:.0%} → {result.flagged_after:.0%} of "
                  f"{result.n_sentences} sentences of {result.n_responses} responses (no labels used); saved to "
                  f"{out_dir}")
        caveat = shift_caveat(result.flagged_before)
        if caveat:
            err.print(f"[yellow]warning:[/] {caveat}")
    else:
        if result.n_responses < FEW_RESPONSES:
            err.print(f"[yellow]warning:[/] only {result.n_responses} labelled responses: a threshold from fewer than "
                      f"{FEW_RESPONSES} is noisy (docs/transfer.md)")
        if result.n_unfaithful < FEW_UNFAITHFUL:
            err.print(f"[yellow]warning:[/] only {result.n_unfaithful} unfaithful sentences: the --max-false-accept "
                      f"thresholds of the new detector are quantiles of their scores (noisy below {FEW_UNFAITHFUL})")
        err.print(f"{det.name}: threshold {result.threshold_before:.3f} → {result.threshold_after:.3f} on "
                  f"{result.n_sentences} sentences ({result.n_unfaithful} unfaithful) of {result.n_responses} "
                  f"responses; flagged {result.flagged_before:.0%} → {result.flagged_after:.0%}; balanced accuracy "
                  f"{result.ba_before:.3f} → {result.ba_after:.3f} (IN-SAMPLE: measured on the same sentences); "
                  f"saved to {out_dir}")
    print(json.dumps({"detector": str(out_dir), **result.to_dict()}), flush=True)  # one line, never wrapped
