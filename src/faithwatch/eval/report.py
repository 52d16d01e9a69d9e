"""Evaluation reports: strict JSON, markdown tables and ROC-curve PNGs.

``results.json`` is the machine-readable source of truth (an HTML page can be rendered from it alone)::

    {
      "schema_version": 1,
      "title": "...",
      "meta": {...},
      "tables": [{"name": "...", "columns": ["..."], "records": [{"column": value, ...}, ...]}],
      "curves": [{"name": "...", "image": "roc_<name>.png",
                  "methods": [{"method": "...", "auroc": 0.71, "n": 500, "n_positive": 120,
                               "fpr": [...], "tpr": [...]}]}],
      "files": {"json": "results.json", "markdown": "results.md", "images": ["roc_<name>.png", ...]}
    }

Missing values (None, NaN, NA, NaT) and infinities become ``null``; :class:`MetricCI` cells become
``{"value", "low", "high"}`` objects (rendered as ``0.712 [0.680, 0.741]`` in markdown). Curve scores are
*unfaithfulness* scores (higher = more likely unfaithful) with labels 1 = unfaithful.

In-sample figures are marked. A table named ``"<data set>"`` or ``"<data set> · ..."`` and a curve named
``"<data set>"``, where the evaluated detector was trained on that data set, get :data:`IN_SAMPLE_NOTE` in their
markdown heading (and in the JSON table name), ``"in_sample": true`` in the JSON, and "(IN-SAMPLE)" in their plot
titles; the top-level ``"in_sample"`` lists those data sets. Other tables (leave-one-data-set-out, transfer
matrix, ...) are never marked.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import functools
import hashlib
import json
import math
import re
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from faithwatch.errors import FaithwatchError, InputError
from faithwatch.eval.metrics import DetectionMetrics, MetricCI, roc_points

__all__ = ["IN_SAMPLE_NOTE", "SCHEMA_VERSION", "detection_table", "format_ci", "trained_on", "write_report"]

SCHEMA_VERSION = 1
_MISSING_MD = "n/a"
#: the mark of a table or curve whose data set the evaluated detector was trained on (or calibrated on: its
#: threshold was fitted there, :func:`fitted_on`)
IN_SAMPLE_NOTE = "IN-SAMPLE (the detector was trained on this data set)"
_GROUP_SEP = " · "
# a mark already in a table name: this module's own, or the older "(IN-SAMPLE: the detector was trained on this set)"
_IN_SAMPLE_TAG = re.compile(r"\s*(?:—\s*)?(?:" + re.escape(IN_SAMPLE_NOTE) + r"|\(IN-SAMPLE\b[^)]*\))")


def format_ci(metric_ci: MetricCI, digits: int = 3) -> str:
    """``"0.712 [0.680, 0.741]"``: the value and its confidence interval, ``digits`` decimals."""
    return f"{metric_ci.value:.{digits}f} [{metric_ci.low:.{digits}f}, {metric_ci.high:.{digits}f}]"


def detection_table(results: Mapping[str, DetectionMetrics]) -> pd.DataFrame:
    """One row per method from :class:`DetectionMetrics`; metric columns hold :class:`MetricCI` cells (or None).

    The metrics are computed on unfaithfulness scores (1 − faithfulness); ``flag_below`` gives the threshold on
    the faithfulness score, as the detector states it (a sentence scoring below it is flagged), or None.
    ``best_balanced_accuracy`` is the balanced accuracy at the set's own best threshold (an upper bound, chosen on
    the set itself); its gap to ``balanced_accuracy`` is what the detector's threshold costs on this set.
    """
    rows = []
    for method, m in results.items():
        rows.append(
            {
                "method": method,
                "auroc": m.auroc,
                "auprc": m.auprc,
                "balanced_accuracy": m.balanced_accuracy,
                "best_balanced_accuracy": m.best_balanced_accuracy,
                "flag_below": None if m.threshold is None else 1.0 - m.threshold,
                "n": m.n,
                "n_positive": m.n_positive,
                "n_boot_used": m.n_boot_used,
            }
        )
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- JSON


def _is_missing(x: Any) -> bool:
    """None, NaN, pd.NA or NaT (scalars only)."""
    if x is None or x is pd.NA or x is pd.NaT:
        return True
    return isinstance(x, (float, np.floating)) and math.isnan(x)


def _jsonable(x: Any) -> Any:
    """Convert to plain JSON types; missing and non-finite numbers become None."""
    if _is_missing(x):
        return None
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating, decimal.Decimal)):
        f = float(x)
        return f if math.isfinite(f) else None
    if isinstance(x, str):
        return x
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return _jsonable(dataclasses.asdict(x))
    if isinstance(x, Mapping):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if isinstance(x, (pd.Series, pd.Index)):
        return _jsonable(x.tolist())
    if isinstance(x, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (dt.datetime, dt.date, dt.time)):  # includes pd.Timestamp
        return x.isoformat()
    if isinstance(x, (dt.timedelta, pd.Timedelta)):
        return x.total_seconds()
    if isinstance(x, Path):
        return str(x)
    return str(x)


def _columns(df: pd.DataFrame, name: str) -> list[str]:
    cols = [" / ".join(map(str, c)) if isinstance(c, tuple) else str(c) for c in df.columns]
    dupes = sorted({c for c in cols if cols.count(c) > 1})
    if dupes:
        raise InputError(f"table {name!r} has duplicate column names {dupes}; records need unique columns")
    return cols


def _prepare_table(df: pd.DataFrame, name: str) -> tuple[list[str], list[list[Any]], list[bool]]:
    """Columns, row values (raw) and a right-align flag per column; a meaningful index becomes columns."""
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"table {name!r} must be a pandas DataFrame, got {type(df).__name__}")
    # keep a named or non-integer index (e.g. method names) as columns; drop a plain unnamed row number
    if any(n is not None for n in df.index.names) or not pd.api.types.is_integer_dtype(df.index.dtype):
        df = df.reset_index()
    cols = _columns(df, name)
    numeric = [pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype) for dtype in df.dtypes]
    rows = [list(r) for r in df.itertuples(index=False, name=None)]
    return cols, rows, numeric


# ---------------------------------------------------------------- markdown


def _md_value(x: Any) -> str:
    if isinstance(x, MetricCI):
        return format_ci(x)
    if _is_missing(x):
        return _MISSING_MD
    if isinstance(x, (bool, np.bool_)):
        return "true" if x else "false"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, (float, np.floating)):
        f = float(x)
        if not math.isfinite(f):
            return "inf" if f > 0 else "-inf"
        if f.is_integer() and abs(f) < 1e15:
            return str(int(f))
        if 1e-3 <= abs(f) < 1e6:
            return f"{f:.4f}".rstrip("0").rstrip(".")
        return f"{f:.3e}"
    if isinstance(x, (dict, list, tuple)):
        return json.dumps(_jsonable(x), allow_nan=False)
    return str(x)


def _md_cell(x: Any) -> str:
    """A value as one markdown table cell: pipes escaped, line breaks flattened."""
    text = _md_value(x)
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r\n", " ").replace("\n", " ")


def _md_table(cols: Sequence[str], rows: Sequence[Sequence[Any]], right: Sequence[bool]) -> str:
    """A GitHub-flavoured markdown table (no third-party formatter)."""
    header = [_md_cell(c) for c in cols]
    body = [[_md_cell(v) for v in row] for row in rows]
    widths = [max([len(h), 3, *(len(r[i]) for r in body)]) for i, h in enumerate(header)]

    def line(cells: Sequence[str]) -> str:
        padded = [c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right, strict=True)]
        return "| " + " | ".join(padded) + " |"

    sep = "| " + " | ".join(("-" * (w - 1) + ":") if r else "-" * w for w, r in zip(widths, right, strict=True)) + " |"
    return "\n".join([line(header), sep, *(line(r) for r in body)])


# ---------------------------------------------------------------- in-sample marking


def trained_on(training_data: Sequence[str]) -> set[str]:
    """The data set names of a detector's ``training_data`` lines (``"ragtruth-qa: 400 sentences (...)"``)."""
    return {str(line).split(":", 1)[0].strip() for line in training_data if str(line).split(":", 1)[0].strip()}


def fitted_on(training_data: Sequence[str], metrics: Mapping[str, Any] | None = None) -> set[str]:
    """The data sets a detector's figures are in-sample for: those it was trained on (:func:`trained_on`) and
    those a labelled ``faithwatch calibrate`` fitted its threshold on (``metrics["recalibration"]["source"]``, the
    ``--data`` it was given: names or files, a file by its stem)."""
    from faithwatch.data.loaders import dataset_name

    out = trained_on(training_data)
    source = ((metrics or {}).get("recalibration") or {}).get("source")
    for part in str(source or "").split(","):
        part = part.strip()
        if part:
            out.add(dataset_name(part))
    return out


def seen_in_training(examples: Sequence[Any], trained: Collection[str], root: str | Path | None = None,
                     ) -> dict[str, int]:
    """How many of ``examples`` (context and response) each training set in ``trained`` holds, for the sets that
    load here: by name (``root``: the shared data folder), as a path, or as ``training/data/<name>.jsonl`` under the
    working folder (the shipped detector's other sets, from the repository's root). A data set under another name
    or path is in-sample too when it repeats a training set's responses. Sets that do not load are skipped (their
    names still count)."""
    return seen_by_fingerprints(examples, _loaded_prints(trained, root))


def _loaded_prints(trained: Collection[str], root: str | Path | None) -> dict[str, frozenset[str]]:
    """The fingerprints of the training sets ``trained`` that load here (see :func:`seen_in_training`)."""
    where = {name: Path("training") / "data" / f"{name}.jsonl" for name in trained}
    return {name: _response_keys(str(local) if local.is_file() else name, None if root is None else str(root))
            for name, local in where.items()}


#: where a detector trained by ``faithwatch train`` records its training responses' fingerprints (in ``metrics``)
FINGERPRINTS = "training_responses"


def response_fingerprints(examples: Sequence[Any]) -> list[str]:
    """Short fingerprints (16 hex digits of :func:`_response_key`) of the examples' context and response, sorted: what
    a detector records of its training sets so that a set is found in-sample by content, whatever its name."""
    return sorted({_response_key(e)[:16] for e in examples})


def seen_by_fingerprints(examples: Sequence[Any], prints: Mapping[str, Sequence[str]]) -> dict[str, int]:
    """How many of ``examples`` each training set of ``prints`` (name -> :func:`response_fingerprints`) holds."""
    mine = set(response_fingerprints(examples))
    found = {name: len(mine.intersection(theirs)) for name, theirs in sorted(prints.items())}
    return {name: k for name, k in found.items() if k}


@dataclasses.dataclass(frozen=True)
class SampleCheck:
    """Whether a data set's figures are in-sample for a detector (:func:`check_in_sample`)."""

    by_name: bool  # a calibration source, or a training set without fingerprints, of this name
    seen: dict[str, int]  # training set -> how many of this set's responses it holds
    named_like: bool  # a training set had this name (in-sample only when ``by_name`` or ``seen``)

    @property
    def in_sample(self) -> bool:
        """Whether any of the data set was seen in training (by name or by example)."""
        return self.by_name or bool(self.seen)

    def why(self, n_examples: int) -> str:
        """What makes the set in-sample, for a warning ("" when it is not)."""
        if self.by_name:
            return "the detector was trained or calibrated on it"
        return ", ".join(f"{k} of its {n_examples} responses from {s}" for s, k in self.seen.items())


def check_in_sample(name: str, examples: Sequence[Any], training_data: Sequence[str],
                    metrics: Mapping[str, Any] | None, root: str | Path | None = None) -> SampleCheck:
    """Whether the data set ``name`` (its ``examples``) is in-sample for a detector of this ``training_data`` and
    ``metrics``: by content where the detector recorded fingerprints (:data:`FINGERPRINTS`) or the training set
    loads here, else by name; calibration sources go by name."""
    trained = fitted_on(training_data, metrics)
    prints = (metrics or {}).get(FINGERPRINTS) or {}
    by_name = fitted_on([], metrics) | (trained - set(prints))
    if name in by_name:
        return SampleCheck(True, {}, True)
    seen = seen_by_fingerprints(examples, {**prints, **_loaded_prints(trained - set(prints), root)})  # hashed once
    return SampleCheck(False, seen, name in trained)


def _response_key(example: Any) -> str:
    return hashlib.sha1(f"{example.context}\x00{example.response}".encode()).hexdigest()


@functools.lru_cache(maxsize=32)
def _response_keys(name: str, root: str | None) -> frozenset[str]:
    """The response keys of one training set, loaded once per process (empty when it does not load here)."""
    from faithwatch.data.loaders import load_dataset

    try:
        return frozenset(response_fingerprints(load_dataset(name, root)))
    except (FaithwatchError, OSError, ValueError):
        return frozenset()


def _in_sample_from_meta(meta: Mapping[str, Any]) -> set[str]:
    """The training data sets of the detector folder ``meta["detector"]`` (as ``faithwatch eval`` passes it), or
    nothing when that is not a detector folder."""
    folder = meta.get("detector")
    if not isinstance(folder, (str, Path)) or not str(folder):
        return set()
    path = Path(folder) / "detector.json"
    try:
        doc = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        return set()
    lines = doc.get("training_data") if isinstance(doc, dict) else None
    metrics = doc.get("metrics") if isinstance(doc, dict) and isinstance(doc.get("metrics"), dict) else None
    return fitted_on(lines, metrics) if isinstance(lines, list) else set()


def _data_set_of(name: str) -> str:
    """The data set a table name is about: the part before " · " (or the whole name)."""
    return name.split(_GROUP_SEP, 1)[0].strip()


def _mark(name: str, in_sample: bool) -> str:
    """``name`` without any earlier IN-SAMPLE tag, then with :data:`IN_SAMPLE_NOTE` when ``in_sample``."""
    base = _IN_SAMPLE_TAG.sub("", name).rstrip()
    return f"{base} — {IN_SAMPLE_NOTE}" if in_sample else base


# ---------------------------------------------------------------- ROC plots


def _safe_name(name: str, taken: set[str]) -> str:
    """A file-name-safe, unique version of ``name``."""
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "curve"
    candidate, k = base, 2
    while candidate.lower() in taken:
        candidate, k = f"{base}_{k}", k + 1
    taken.add(candidate.lower())
    return candidate


def _plot_roc(path: Path, title: str, methods: list[dict[str, Any]]) -> None:
    # the object-oriented API with the Agg canvas: no pyplot, no global backend switch
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5.5, 5.0))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for m in methods:
        ax.plot(m["fpr"], m["tpr"], lw=1.6, label=f"{m['method']} (AUROC {m['auroc']:.3f})")
    ax.plot([0, 1], [0, 1], ls="--", lw=1.0, color="grey", label="chance")
    ax.set_xlim(-0.01, 1.01)  # a small margin keeps lines along the axes visible
    ax.set_ylim(-0.01, 1.01)
    ax.set_aspect("equal")
    ax.set_xlabel("False positive rate (faithful sentences flagged)")
    ax.set_ylabel("True positive rate (unfaithful sentences flagged)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize="small")
    fig.savefig(path, dpi=120, bbox_inches="tight", metadata={"Software": None})


#: at most this many methods of a curve get a score histogram (the first ones: the detector comes first)
HIST_METHODS = 4


def _plot_histograms(path: Path, title: str, methods: Mapping[str, tuple[ArrayLike, ArrayLike]]) -> None:
    """One panel per method: its unfaithfulness scores of faithful vs unfaithful sentences."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    items = list(methods.items())[:HIST_METHODS]
    fig = Figure(figsize=(4.0 * len(items), 3.4))
    FigureCanvasAgg(fig)
    for k, (method, (labels, scores)) in enumerate(items):
        ax = fig.add_subplot(1, len(items), k + 1)
        y = np.asarray(labels, dtype=bool)
        x = np.asarray(scores, dtype=np.float64)
        bins = np.histogram_bin_edges(x, bins=30)
        ax.hist(x[~y], bins=bins, alpha=0.6, density=True, label=f"faithful (n={int((~y).sum())})", color="#2b8a3e")
        ax.hist(x[y], bins=bins, alpha=0.6, density=True, label=f"unfaithful (n={int(y.sum())})", color="#c92a2a")
        ax.set_title(str(method), fontsize="medium")
        ax.set_xlabel("unfaithfulness score")
        if k == 0:
            ax.set_ylabel("density")
        ax.legend(fontsize="x-small")
        ax.grid(alpha=0.3)
    fig.suptitle(title, y=1.04)
    fig.savefig(path, dpi=110, bbox_inches="tight", metadata={"Software": None})


def _curve_methods(name: str, methods: Mapping[str, tuple[ArrayLike, ArrayLike]]) -> list[dict[str, Any]]:
    from sklearn.metrics import roc_auc_score

    if not methods:
        raise InputError(f"curve {name!r} has no methods")
    out = []
    for method, pair in methods.items():
        try:
            labels, scores = pair
        except (TypeError, ValueError) as exc:
            raise InputError(f"curve {name!r} / {method!r} must be a (labels, unfaithful_scores) pair") from exc
        fpr, tpr, _ = roc_points(labels, scores)  # validates: both classes, finite scores
        y = np.asarray(labels, dtype=np.float64)
        out.append(
            {
                "method": str(method),
                "auroc": float(roc_auc_score(y, np.asarray(scores, dtype=np.float64))),
                "n": len(y),
                "n_positive": int(y.sum()),
                "fpr": fpr.tolist(),
                "tpr": tpr.tolist(),
            }
        )
    return out


# ---------------------------------------------------------------- report


def write_report(
    out_dir: str | Path,
    title: str,
    tables: Mapping[str, pd.DataFrame],
    curves: Mapping[str, Mapping[str, tuple[ArrayLike, ArrayLike]]],
    meta: Mapping[str, Any],
    *,
    in_sample: Collection[str] | None = None,
    in_sample_tables: Mapping[str, str] | None = None,
) -> list[Path]:
    """Write ``results.json``, ``results.md``, one ``roc_<name>.png`` and one ``hist_<name>.png`` (score
    histograms of faithful vs unfaithful, first methods) per entry of ``curves`` into ``out_dir``.

    Args:
        out_dir: created if missing; existing files of the same names are overwritten.
        title: report title (markdown heading, JSON ``title``, prefix of the plot titles).
        tables: name -> DataFrame; written as records (JSON) and markdown tables. A non-default index is kept as
            columns. Missing values become ``null`` / ``n/a``; :class:`MetricCI` cells are supported.
        curves: curve name -> {method name -> (labels, unfaithful_scores)}; labels 1 = unfaithful, scores higher =
            more likely unfaithful. One PNG per curve name, one line per method with its AUROC in the legend.
        meta: free-form run information (model, dataset, seed, ...), stored as-is (made JSON-safe).
        in_sample: the data sets the evaluated detector was trained on; their tables (``"<data set> · ..."``)
            and curves are marked :data:`IN_SAMPLE_NOTE`. None: the data sets in the ``training_data`` of the
            detector folder ``meta["detector"]``, if that is one (``faithwatch eval`` passes it). A table name
            that already carries an "(IN-SAMPLE...)" tag is treated as in-sample too.
        in_sample_tables: table name -> the data set it is in-sample on, for tables the caller marks for a reason
            of its own (defaults chosen on that set, a model trained on part of it): their names, which say why,
            are kept as given; they get ``"in_sample": true`` and their data sets join the top-level list.

    Returns:
        The written paths: ``results.json``, ``results.md``, then the PNGs (ROC, histogram) in the order of ``curves``.

    Raises:
        ValueError (:class:`faithwatch.errors.InputError`): a table that is not a DataFrame or has duplicate
            columns, a curve without methods, single-class labels or non-finite scores.
    """
    out = Path(out_dir)
    # prepare everything first, so bad input fails before any file (or the folder) is written
    trained = {str(d) for d in in_sample} if in_sample is not None else _in_sample_from_meta(meta)
    trained |= {_data_set_of(str(name)) for name in tables if _IN_SAMPLE_TAG.search(str(name))}
    prepared: dict[str, tuple[list[str], list[list[Any]], list[bool]]] = {}
    table_in_sample: dict[str, bool] = {}
    own = {str(k): str(v) for k, v in (in_sample_tables or {}).items()}
    unknown = sorted(set(own) - {str(n) for n in tables})
    if unknown:
        raise InputError(f"in_sample_tables names tables that are not in the report: {unknown}")
    for name, df in tables.items():
        flag = str(name) in own or _data_set_of(str(name)) in trained
        marked = str(name) if str(name) in own else _mark(str(name), flag)
        prepared[marked] = _prepare_table(df, str(name))
        table_in_sample[marked] = flag
    taken = {"results"}
    curve_data = []
    for name, methods in curves.items():
        curve_data.append(
            {
                "name": str(name),
                "image": f"roc_{(safe := _safe_name(str(name), taken))}.png",
                "histogram": f"hist_{safe}.png",
                "in_sample": str(name) in trained,
                "methods": _curve_methods(str(name), methods),
            }
        )
    by_detector = sorted({_data_set_of(str(n)) for n in tables if _data_set_of(str(n)) in trained}
                         | {c["name"] for c in curve_data if c["in_sample"]})
    reported = sorted(set(by_detector) | set(own.values()))

    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    images: list[Path] = []
    for c, methods in zip(curve_data, curves.values(), strict=True):
        tag = " (IN-SAMPLE)" if c["in_sample"] else ""
        path = out / c["image"]
        _plot_roc(path, f"{title}: ROC, {c['name']}{tag}", c["methods"])
        hist = out / c["histogram"]
        _plot_histograms(hist, f"{title}: scores, {c['name']}{tag}", methods)
        images += [path, hist]

    doc = {
        "schema_version": SCHEMA_VERSION,
        "title": str(title),
        "meta": _jsonable(dict(meta)),
        "in_sample": reported,
        "tables": [
            {"name": str(name), "in_sample": table_in_sample[name], "columns": cols,
             "records": [dict(zip(cols, _jsonable(r), strict=True)) for r in rows]}
            for name, (cols, rows, _) in prepared.items()
        ],
        "curves": _jsonable(curve_data),
        "files": {"json": "results.json", "markdown": "results.md", "images": [p.name for p in images]},
    }
    json_path = out / "results.json"
    json_path.write_text(json.dumps(doc, indent=2, allow_nan=False, ensure_ascii=False) + "\n", encoding="utf-8")
    written.append(json_path)

    md = [f"# {title}", ""]
    if meta:
        md += ["## Run", ""]
        for k, v in doc["meta"].items():
            md.append(f"- **{k}**: {_md_value(v)}")
        md.append("")
    if by_detector:
        md += ["## In-sample figures", "",
               f"The detector was trained on {', '.join(by_detector)}: every table and ROC curve of these data sets "
               f"below is marked **{IN_SAMPLE_NOTE}**. In-sample figures overstate how the detector does on data "
               "it has not seen; leave-one-data-set-out figures (where present) hold each data set out of "
               "training and are not marked.", ""]
    if own:
        md += ["## In-sample figures" if not by_detector else "", "",
               f"The tables marked IN-SAMPLE below were measured on {', '.join(sorted(set(own.values())))}, which "
               "chose part of what they measure (each title says what). They overstate how it does on data it "
               "has not seen.", ""]
    for name, (cols, rows, right) in prepared.items():
        md += [f"## {name}", "", _md_table(cols, rows, right), ""]
    if curve_data:
        md += ["## ROC curves", ""]
        for c in curve_data:
            aucs = ", ".join(f"{m['method']} {m['auroc']:.3f}" for m in c["methods"])
            md += [f"### {_mark(c['name'], c['in_sample'])}", "", f"AUROC: {aucs}", "",
                   f"![ROC {c['name']}]({c['image']})", "", f"![scores {c['name']}]({c['histogram']})", ""]
    md_path = out / "results.md"
    md_path.write_text("\n".join(md), encoding="utf-8")
    written.append(md_path)

    return written + images
