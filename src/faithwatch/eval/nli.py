"""``faithwatch eval-nli``: the NLI model against the lexical and embedding scorers on NLI dev sets.

For every dev file: 3-way accuracy and macro-F1 when the set is 3-way, and entailment-vs-not accuracy
and macro-F1 for every set. The ``lexical`` and ``embedding`` scorers give one number per pair, so they
are scored entailment-vs-not only, with a threshold chosen on a sample of the training pairs.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from sklearn.metrics import accuracy_score, f1_score

from faithwatch import stats
from faithwatch.nli.data import LICENSED_SOURCES, NLIPair, is_binary_set, read_pairs

ProgressFn = Callable[[str, int, int], None]  # (what, done, total)


@dataclass
class SetResult:
    """Figures of one scorer on one dev set (``None`` where it does not apply)."""

    dataset: str
    scorer: str
    n: int
    accuracy_3way: float | None
    macro_f1_3way: float | None
    accuracy_binary: float
    macro_f1_binary: float
    threshold: float | None = None
    pairs_per_second: float | None = None


@dataclass
class NLIEvalReport:
    """Everything ``eval-nli`` measured."""

    results: list[SetResult] = field(default_factory=list)
    thresholds: dict[str, float] = field(default_factory=dict)
    model: str = "nli-minilm"
    precision: str = ""
    pairs_per_second: float | None = None

    def to_json(self) -> dict:
        """JSON form: every field."""
        return asdict(self)


def best_threshold(scores: Sequence[float], entailed: Sequence[bool]) -> float:
    """Threshold on ``scores`` (score >= t means entailed) with the best accuracy
    (:func:`faithwatch.stats.best_threshold`)."""
    return stats.best_threshold(scores, entailed, objective="accuracy")


def _binary(gold: Sequence[NLIPair], pred_entailed: np.ndarray) -> tuple[float, float]:
    y = np.array([p.entailed for p in gold])
    return float(accuracy_score(y, pred_entailed)), float(f1_score(y, pred_entailed, average="macro"))


def score_pairs(scorer, pairs: Sequence[NLIPair], progress: ProgressFn | None = None, what: str = "") -> np.ndarray:
    """One alignment score per pair (hypothesis scored against its premise)."""
    out = np.zeros(len(pairs))
    for i, p in enumerate(pairs):
        out[i] = scorer.score(p.hypothesis, p.premise)
        if progress and (i % 50 == 0 or i == len(pairs) - 1):
            progress(what, i + 1, len(pairs))
    return out


def evaluate_nli(
    dev_files: Sequence[str | Path],
    train_file: str | Path,
    encoder,
    baselines: dict[str, object],
    limit: int | None = None,
    threshold_pairs: int = 2000,
    seed: int = 0,
    progress: ProgressFn | None = None,
) -> NLIEvalReport:
    """Evaluate ``encoder`` (a :class:`~faithwatch.nli.model.CrossEncoder`) and the ``baselines``
    (name -> alignment scorer) on ``dev_files``; baseline thresholds come from ``train_file``."""
    report = NLIEvalReport(model=encoder.name, precision=encoder.precision)
    train = read_pairs(train_file, sorted(LICENSED_SOURCES))
    random.Random(seed).shuffle(train)
    sample = train[:threshold_pairs]
    for name, scorer in baselines.items():
        s = score_pairs(scorer, sample, progress, f"threshold {name}")
        report.thresholds[name] = best_threshold(s, [p.entailed for p in sample])

    total_pairs, total_seconds = 0, 0.0
    for path in dev_files:
        pairs = read_pairs(path)
        if limit is not None and len(pairs) > limit:
            random.Random(seed).shuffle(pairs)
            pairs = pairs[:limit]
        dataset = Path(path).stem.removeprefix("dev_")
        binary_set = is_binary_set(pairs)
        t0 = time.perf_counter()
        probs = np.zeros((len(pairs), 3))
        step = 256
        for i in range(0, len(pairs), step):
            chunk = pairs[i : i + step]
            probs[i : i + len(chunk)] = encoder.predict_proba([p.premise for p in chunk], [p.hypothesis for p in chunk])
            if progress:
                progress(f"{dataset} {encoder.name}", i + len(chunk), len(pairs))
        seconds = time.perf_counter() - t0
        total_pairs += len(pairs)
        total_seconds += seconds
        pred = probs.argmax(1)
        acc3 = f13 = None
        if not binary_set:
            gold = [p.label for p in pairs]
            acc3 = float(accuracy_score(gold, pred))
            f13 = float(f1_score(gold, pred, average="macro", labels=[0, 1, 2]))
        # entailment vs not: entailed when p(entailment) beats p(neutral) + p(contradiction)
        accb, f1b = _binary(pairs, probs[:, 0] > 0.5)
        report.results.append(SetResult(dataset, encoder.name, len(pairs), acc3, f13, accb, f1b, 0.5,
                                         len(pairs) / seconds if seconds else None))
        for name, scorer in baselines.items():
            s = score_pairs(scorer, pairs, progress, f"{dataset} {name}")
            t = report.thresholds[name]
            accb, f1b = _binary(pairs, s >= t)
            report.results.append(SetResult(dataset, name, len(pairs), None, None, accb, f1b, t))
    report.pairs_per_second = total_pairs / total_seconds if total_seconds else None
    return report


def _fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def report_markdown(report: NLIEvalReport) -> str:
    """The report as a Markdown table (one row per dev set and scorer)."""
    lines = [f"# NLI evaluation: {report.model} ({report.precision})", "",
             "| dev set | scorer | n | 3-way acc | 3-way macro-F1 | binary acc | binary macro-F1 |",
             "|---|---|---|---|---|---|---|"]
    for r in report.results:
        lines.append(f"| {r.dataset} | {r.scorer} | {r.n} | {_fmt(r.accuracy_3way)} | {_fmt(r.macro_f1_3way)} | "
                     f"{_fmt(r.accuracy_binary)} | {_fmt(r.macro_f1_binary)} |")
    lines += ["", "Binary: entailment vs not. Baseline thresholds (chosen on training pairs): "
              + ", ".join(f"{k} {v:.3f}" for k, v in report.thresholds.items()) + ".",
              f"{report.model} throughput over all sets: {_fmt(report.pairs_per_second)} pairs/s."]
    return "\n".join(lines) + "\n"


def write_report(report: NLIEvalReport, out_dir: str | Path) -> Path:
    """Write ``results.md`` and ``results.json`` to ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.md").write_text(report_markdown(report))
    (out / "results.json").write_text(json.dumps(report.to_json(), indent=2) + "\n")
    return out
