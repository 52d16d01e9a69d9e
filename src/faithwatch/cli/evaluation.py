"""`faithwatch eval`: a detector beside every baseline on labelled sets, with 95% intervals, its threshold on each
set, and with ``--transfer`` the leave-one-data-set-out, ablation and transfer-matrix tables."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape
from rich.table import Table

from faithwatch.cli._common import (
    AddressOpt,
    GpusPerWorkerOpt,
    RayOpt,
    ThreadsOpt,
    WorkersOpt,
    check_ray_options,
    err,
    fail,
    group,
    out,
    progress,
    seed_option,
    writable,
)
from faithwatch.cli._labelled import (
    AUGMENT_OPT,
    DATA_ROOT_OPT,
    QUESTIONABLE_OPT,
    TEXT_ONLY_OPT,
    checked_data,
    detector_alignment,
    load_tables,
    ray_settings,
)
from faithwatch.errors import FaithwatchError, InputError

if TYPE_CHECKING:
    from faithwatch.eval.metrics import DetectionMetrics

app = group()


@app.command(name="eval")
def evaluate(
    ctx: typer.Context,
    detector_name: str = typer.Option("default", "--detector", help="A detector folder made by `faithwatch train`, "
                                      "or default: the shipped one."),
    data: str = typer.Option(..., "--data", help="Comma-separated data sets to evaluate on: names, generic "
                             ".jsonl files, or QAGS (mturk_*.jsonl) / BEGIN (.tsv) / SummEdits (.json) files as "
                             "released; a folder stands for its .jsonl, .json and .tsv files."),
    report: Path = typer.Option(Path("results"), "--report", file_okay=False, callback=writable,
                                help="Folder for results.md/.json and ROC PNGs."),
    transfer: bool = typer.Option(False, "--transfer", help="Also the transfer matrix, leave-one-out and "
                                  "ablation tables across the --data sets (trains many detectors)."),
    n_boot: int = typer.Option(1000, "--n-boot", min=1, help="Bootstrap replicates for the 95% intervals."),
    seed: int = seed_option(0),
    questionable: str = QUESTIONABLE_OPT,
    data_root: str | None = DATA_ROOT_OPT,
    text_only: bool = TEXT_ONLY_OPT,
    augment: str | None = AUGMENT_OPT,
    alignment: str | None = typer.Option(None, "--alignment", help="Alignment scorer (default: the detector's; "
                                         "another one only for a detector that does not use align_score)."),
    ray: bool = RayOpt,
    address: str | None = AddressOpt,
    workers: int = WorkersOpt,
    gpus_per_worker: float = GpusPerWorkerOpt,
    threads: int | None = ThreadsOpt,
) -> None:
    """AUROC / AUPRC / balanced accuracy of a detector and every baseline, side by side, with 95% CIs."""
    if augment and not transfer:  # their features were computed (minutes to hours), then not read
        raise fail(InputError("--augment adds training data to the detectors that --transfer trains; without "
                              "--transfer nothing is trained: add --transfer, or leave --augment out"))
    names, extra = checked_data(data, augment)
    from faithwatch.detectors import detector_path

    try:
        if transfer and len(names) < 2:  # said only after every feature had been computed
            raise InputError("--transfer holds each data set out in turn: give --data two or more labelled sets")
        detector = detector_path(detector_name, trained_only=True)
        from faithwatch.eval import harness  # torch and scikit-learn: seconds, after the paths are checked
        from faithwatch.eval.report import write_report
        from faithwatch.eval.training import TEXT_FAMILIES

        meta = json.loads((detector / "detector.json").read_text())
        alignment = detector_alignment(meta, alignment)
        families = (meta.get("params", {}).get("recipe") or {}).get("families", ["?"])
        if text_only:
            from faithwatch.eval.training import check_text_only

            check_text_only(families)
        elif set(families) <= set(TEXT_FAMILIES):
            err.print("[dim]This detector reads text signals only: --text-only skips the language model (much "
                      "faster, and no record is refused for a context over the model window); without it the "
                      "model's baselines (FLARE, Lookback Lens) are measured too.[/]")
        check_ray_options(ctx)
        monitor, tables = load_tables(names, meta["model_id"], alignment, data_root, err, questionable,
                                text_only, extra, ray_settings(ray, address, workers, gpus_per_worker, threads))
        det, lens = harness.load_artifacts(detector, monitor.lm.model_id)
    except FaithwatchError as exc:
        raise fail(exc) from None
    start = time.perf_counter()
    run = _Run(det=det, lens=lens, n_boot=n_boot, seed=seed, detector_name=detector_name)
    for name, d in tables.items():
        if not d.train_only:
            run.add_set(name, d, _in_sample_tag(name, d, det, data_root))
    run.add_calibration_table()
    if transfer and len(tables) < 2:
        err.print("[yellow]--transfer needs at least two labelled data sets (each is held out in turn): no "
                  "leave-one-out, matrix or ablation tables[/]")
    if transfer and len(tables) >= 2:
        run.add_transfer_tables(tables, monitor, seed)
    paths = write_report(report, f"faithwatch eval: {det.name}", run.tables, run.curves,
                         {"detector": str(detector), "data": list(tables), "n_boot": n_boot, "seed": seed,
                          "model_id": monitor.lm.model_id, "alignment": alignment,
                          "seconds_after_features": round(time.perf_counter() - start, 1)}, in_sample=run.in_sample)
    from faithwatch.report import write_dataset_html

    index = write_dataset_html(report)
    err.print(f"report: {', '.join(str(p) for p in paths[:2])}, {index} and {len(paths) - 2} plots")


def _in_sample_tag(name: str, d: Any, det: Any, data_root: str | None) -> str:
    """The title tag of a set the detector was trained or calibrated on ("" for one it never saw); says so too."""
    from faithwatch.eval.report import check_in_sample

    check = check_in_sample(name, d.examples, det.meta.training_data, det.meta.metrics, data_root)
    if check.by_name:
        err.print(f"[yellow]{name}: the detector was trained or calibrated on it; its figures are in-sample[/]")
        return " (IN-SAMPLE: the detector was trained or calibrated on this set)"
    if check.seen:
        sets = check.why(len(d.examples))
        err.print(f"[yellow]{name}: {sets}, a set the detector was trained or calibrated on; its figures are "
                  "in-sample[/]")
        return f" (IN-SAMPLE: {sets}, which the detector was trained or calibrated on)"
    if check.named_like:
        err.print(f"[dim]{name}: a training set of the detector had this name, but none of these responses: "
                  "out of sample[/]")
    return ""


class _Run:
    """The tables, curves and calibration rows of one `faithwatch eval`, filled set by set."""

    def __init__(self, *, det: Any, lens: Any, n_boot: int, seed: int, detector_name: str) -> None:
        self.det, self.lens, self.n_boot, self.seed, self.detector_name = det, lens, n_boot, seed, detector_name
        self.tables: dict[str, Any] = {}
        self.curves: dict[str, dict] = {}
        self.calibration: list[dict] = []
        self.in_sample: set[str] = set()

    def add_set(self, name: str, d: Any, tag: str) -> None:
        """Sentence- and response-level tables of the labelled set ``name`` (``tag``: its in-sample title tag)."""
        if tag:
            self.in_sample.add(name)
        if d.sentences.empty:
            err.print(f"[yellow]{name}: no sentence has a label (no record has 'label' or 'spans'); sentence-level "
                      "metrics skipped[/]")
        elif d.sentences.label.nunique() < 2:
            err.print(f"[yellow]{name}: sentence labels have one class; sentence-level metrics skipped[/]")
        else:
            self._sentence_level(name, d, tag)
        self._response_level(name, d, tag)

    def _sentence_level(self, name: str, d: Any, tag: str) -> None:
        from faithwatch.eval import harness
        from faithwatch.eval.recalibration import balanced_accuracy_after_shift
        from faithwatch.eval.report import detection_table, format_ci

        det = self.det
        ev = harness.score_dataset(name, d.sentences, det, self.lens)
        metrics = ev.metrics(self.n_boot, self.seed)
        self.tables[f"{name} · sentence level{tag}"] = detection_table(metrics).reset_index()
        self.curves[name] = {m: (ev.table.label.to_numpy(), 1 - s) for m, s in ev.scores.items()
                             if m in (det.name, harness.FLARE, "align_score", "Lookback Lens")}
        _print_table(out, f"{name} · sentence level (n={len(d.sentences)}){tag}", metrics, format_ci)
        shifted = balanced_accuracy_after_shift(det, ev.table, name, logits=ev.logits)
        self.calibration.append(_calibration_row(name, bool(tag), ev.scores[det.name], det.threshold,
                                                 metrics[det.name], shifted))
        hint = _threshold_hint(name, metrics[det.name], self.detector_name, shifted)
        if hint:
            err.print(f"[yellow]{hint}[/]")
        by_source = harness.by_source_model(ev, det.name)
        if len(by_source) > 1:
            self.tables[f"{name} · by source model{tag}"] = by_source

    def _response_level(self, name: str, d: Any, tag: str) -> None:
        from faithwatch.eval import harness
        from faithwatch.eval.metrics import detection_metrics
        from faithwatch.eval.report import detection_table, format_ci
        from faithwatch.eval.training import syncheck_scores

        det = self.det
        responses = harness.response_level(d.examples, d.all_sentences, syncheck_scores(det, d.all_sentences))
        if not len(responses) or responses.label.nunique() != 2 or name == "qags-cnndm":
            return
        rm = {det.name + " (min sentence score)": detection_metrics(
            responses.label, 1 - responses.score, threshold=harness.unfaithful_threshold(det.threshold),
            n_boot=self.n_boot, seed=self.seed)}
        self.tables[f"{name} · response level{tag}"] = detection_table(rm).reset_index()
        _print_table(out, f"{name} · response level (n={len(responses)}){tag}", rm, format_ci)
        if name == "faithbench":
            comp = harness.faithbench_comparison(responses, det.threshold, det.name)
            self.tables[f"faithbench · response level vs stored detectors{tag}"] = comp
            out.print(f"[bold]faithbench · response level vs stored detectors (the responses they all "
                      f"scored){escape(tag)}[/]")
            out.print(escape(comp.round(3).to_string(index=False, na_rep="—")))

    def add_calibration_table(self) -> None:
        """The detector's threshold on each set (none when no set had sentence-level metrics)."""
        if not self.calibration:
            return
        import pandas as pd

        title = "the detector's threshold on each set (balanced accuracy; the last column reads labels only to score)"
        self.tables[title] = pd.DataFrame(self.calibration)
        out.print(f"[bold]{title}[/]")
        out.print(self.tables[title].fillna(float("nan")).to_string(index=False, na_rep="—",
                                                                   float_format=lambda x: f"{x:.3f}"))

    def add_transfer_tables(self, tables: dict, monitor: Any, seed: int) -> None:
        """Leave one data set out, its gains and targets, the feature-family ablation and the transfer matrix."""
        from faithwatch.eval import transfer as tr
        from faithwatch.eval.training import Recipe

        frames = {n: d.sentences for n, d in tables.items()}
        stored = self.det.meta.params.get("recipe")
        recipe = Recipe.from_dict(stored) if stored else Recipe(kind=self.det.meta.kind)
        with progress(err) as bar:
            task = bar.add_task("leave one data set out", total=len(frames))
            folds = tr.leave_one_out(frames, recipe, monitor.lm.model_id, seed=seed,
                                     num_layers=monitor.lm.num_layers, num_heads=monitor.lm.num_heads,
                                     on_fold=lambda _held: bar.advance(task))
        added = {}
        with err.status("ablation and transfer matrix…"):
            added["leave one data set out: AUROC on the held-out set (every model fitted without it)"] = \
                tr.loo_auroc_table(folds, self.det.name)
            gains = tr.loo_gain_table(folds)
            added["leave one data set out: gains and calibration"] = gains
            added["transfer targets (worst held-out set; margin < 0: missed by that much)"] = tr.target_table(gains)
            added["feature-family ablation (leave-one-out AUROC)"] = tr.ablation(
                frames, recipe, monitor.lm.model_id, seed)
            added["transfer matrix (AUROC, train row → test column; diagonal: out of fold by example)"] = \
                tr.transfer_matrix(frames, recipe, monitor.lm.model_id, seed)
        self.tables.update(added)
        for title, table in added.items():
            out.print(f"[bold]{title}[/]")
            out.print(table.fillna(float("nan")).round(3).to_string(index=False, na_rep="—"))


def _calibration_row(name: str, trained_on: bool, scores, threshold: float, m: DetectionMetrics,
                     shifted: float | None) -> dict:
    """One set's line of the calibration table: how the detector's threshold does there, and after an unlabelled
    shift to the set (labels read only to score it); ``trained_on``: the detector was trained on the set."""
    return {"data set": name, "in-sample": trained_on, "flagged": float((scores < threshold).mean()),
            "bal. acc. at the threshold": None if m.balanced_accuracy is None else m.balanced_accuracy.value,
            "at the set's best threshold": m.best_balanced_accuracy,
            "after calibrate --unlabelled on the set": shifted}


def _threshold_hint(name: str, m: DetectionMetrics, detector: str | Path, shifted: float | None) -> str | None:
    """A note when the detector's threshold costs more than the issue's 0.03 of balanced accuracy on ``name``
    (``shifted``: the balanced accuracy after ``calibrate --unlabelled`` on the same sentences, if known)."""
    from faithwatch.eval.transfer import TARGET_CALIBRATION_COST

    if m.balanced_accuracy is None or m.best_balanced_accuracy is None:
        return None
    cost = m.best_balanced_accuracy - m.balanced_accuracy.value
    if cost <= TARGET_CALIBRATION_COST:
        return None
    unlabelled = ("without labels, `--unlabelled` moves it (too few sentences here to measure it)"
                  if shifted is None else
                  f"without labels, `--unlabelled` moves it (on these sentences it gives {shifted:.3f})")
    return (f"{name}: the detector's threshold costs {cost:.3f} of sentence balanced accuracy here "
            f"({m.balanced_accuracy.value:.3f} against {m.best_balanced_accuracy:.3f} at this set's best threshold). "
            f"`faithwatch calibrate --detector {detector} --data <labelled responses of this domain> --out DIR` "
            f"re-fits it (evaluate on other responses than you calibrate on); {unlabelled}.")


def _print_table(console, title, metrics, format_ci) -> None:
    table = Table(title=title, title_justify="left")
    for col in ("method", "AUROC [95% CI]", "AUPRC [95% CI]", "bal. acc. [95% CI]", "at best thr."):
        table.add_column(col)
    for method, m in sorted(metrics.items(), key=lambda kv: -kv[1].auroc.value):
        table.add_row(method, format_ci(m.auroc), format_ci(m.auprc),
                      format_ci(m.balanced_accuracy) if m.balanced_accuracy else "—",
                      "—" if m.best_balanced_accuracy is None else f"{m.best_balanced_accuracy:.3f}")
    console.print(table)
