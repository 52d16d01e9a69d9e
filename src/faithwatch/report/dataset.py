"""HTML report of a dataset evaluation, rendered from a faithwatch ``results.json`` alone.

Works for every report written by :func:`faithwatch.eval.report.write_report` (``faithwatch eval``,
``eval-decoding``, ``eval-lss``): the run information, every table (``{value, low, high}`` cells shown as
``0.712 [0.680, 0.741]``, missing values as ``n/a``), grouped by the part of the table name before " · " (the
data set, or the source model, as the commands name them), and the ROC curves with their PNGs embedded as
base64 ``data:`` URIs. A curve whose PNG is missing is re-plotted from the ``fpr``/``tpr`` points stored in the
JSON. Other PNGs listed under ``files.images`` (e.g. score histograms, if a command wrote any) are embedded too;
nothing is plotted that the results do not contain, so a report without histograms shows none.
"""

from __future__ import annotations

import base64
import io
import json
import math
from pathlib import Path
from typing import Any

from faithwatch.errors import InputError
from faithwatch.report._env import environment
from faithwatch.store import read_utf8

__all__ = ["dataset_html", "format_cell", "write_dataset_html"]

_MISSING = "n/a"
_GROUP_SEP = " · "


def _is_ci(x: Any) -> bool:
    return isinstance(x, dict) and set(x) == {"value", "low", "high"}


def format_cell(x: Any, digits: int = 3) -> str:
    """A JSON value as table text: ``{value, low, high}`` → ``"0.712 [0.680, 0.741]"``, null → ``"n/a"``."""
    if x is None:
        return _MISSING
    if _is_ci(x):
        parts = [x["value"], x["low"], x["high"]]
        if any(p is None for p in parts):
            return _MISSING if x["value"] is None else f"{float(x['value']):.{digits}f}"
        return f"{float(parts[0]):.{digits}f} [{float(parts[1]):.{digits}f}, {float(parts[2]):.{digits}f}]"
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        if not math.isfinite(x):
            return str(x)
        if x.is_integer() and abs(x) < 1e15:
            return str(int(x))
        if 1e-3 <= abs(x) < 1e6:
            return f"{x:.4f}".rstrip("0").rstrip(".")
        return f"{x:.3e}"
    if isinstance(x, (dict, list)):
        return json.dumps(x, ensure_ascii=False)
    return str(x)


def _is_numeric(x: Any) -> bool:
    return (isinstance(x, (int, float)) and not isinstance(x, bool)) or _is_ci(x)


def _data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _read_png(report_dir: Path, name: str) -> bytes | None:
    """The bytes of a PNG inside ``report_dir`` (names that leave the folder are refused), or None."""
    path = (report_dir / name).resolve()
    try:
        path.relative_to(report_dir.resolve())
    except ValueError:
        return None
    return path.read_bytes() if path.is_file() else None


def _replot(title: str, methods: list[dict[str, Any]]) -> bytes | None:
    """Re-plot a ROC curve from its stored points (same look as ``write_report``), or None without points."""
    from faithwatch.eval.report import _plot_roc

    if not methods or any(not m.get("fpr") or not m.get("tpr") or m.get("auroc") is None for m in methods):
        return None
    buf = io.BytesIO()
    _plot_roc(buf, title, methods)  # type: ignore[arg-type]  # savefig accepts a binary file object
    return buf.getvalue()


def _table_view(table: dict[str, Any]) -> dict[str, Any]:
    columns = [str(c) for c in table.get("columns") or []]
    records = table.get("records") or []
    if not columns:  # a table written by hand: take the keys in first-seen order
        for r in records:
            columns += [str(k) for k in r if str(k) not in columns]
    right = [any(_is_numeric(r.get(c)) for r in records) and all(r.get(c) is None or _is_numeric(r.get(c))
                                                               for r in records) for c in columns]
    rows = [[(format_cell(r.get(c)), right[i]) for i, c in enumerate(columns)] for r in records]
    name = str(table.get("name", ""))
    return {"name": name, "columns": list(zip(columns, right, strict=True)), "rows": rows}


def _group(name: str) -> str:
    return name.split(_GROUP_SEP, 1)[0] if _GROUP_SEP in name else ""


def dataset_html(results_json: str | Path) -> str:
    """A self-contained HTML page of a faithwatch ``results.json`` (PNGs looked up next to it and embedded).

    Raises:
        ValueError (:class:`faithwatch.errors.InputError`): the file is missing or not a faithwatch results JSON.
    """
    path = Path(results_json)
    if not path.is_file():
        raise InputError(f"results file not found: {path}")
    try:
        doc = json.loads(read_utf8(path, "results file"))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("tables", []), list):
        raise InputError(f"{path} is not a faithwatch results.json (no 'tables' list)")
    report_dir = path.parent
    title = str(doc.get("title") or "faithwatch evaluation")

    tables = [_table_view(t) for t in doc.get("tables") or [] if isinstance(t, dict)]
    groups: list[dict[str, Any]] = []
    for t in tables:  # consecutive tables of the same data set / model together, in the order written
        g = _group(t["name"])
        if not groups or groups[-1]["name"] != g:
            groups.append({"name": g, "tables": []})
        groups[-1]["tables"].append(t)
    for k, t in enumerate(tables):
        t["anchor"] = f"table-{k}"

    used: set[str] = set()
    curves = []
    for c in doc.get("curves") or []:
        if not isinstance(c, dict):
            continue
        name, image = str(c.get("name", "")), c.get("image")
        methods = [m for m in c.get("methods") or [] if isinstance(m, dict)]
        png = _read_png(report_dir, str(image)) if image else None
        source = "file"
        if png is None:
            png, source = _replot(f"{title}: ROC, {name}", methods), "re-plotted from results.json"
        if image:
            used.add(str(image))
        curves.append({
            "name": name,
            "image": str(image or ""),
            "uri": _data_uri(png) if png else None,
            "source": source,
            "methods": [{"method": str(m.get("method", "")), "auroc": format_cell(m.get("auroc")),
                         "n": format_cell(m.get("n")), "n_positive": format_cell(m.get("n_positive"))}
                        for m in methods],
        })
    images = []
    for name in (doc.get("files") or {}).get("images") or []:
        if str(name) in used:
            continue
        png = _read_png(report_dir, str(name))
        if png is not None:
            images.append({"name": str(name), "uri": _data_uri(png)})

    meta = doc.get("meta") or {}
    template = environment().get_template("dataset.html.j2")
    return template.render(
        title=title,
        schema_version=format_cell(doc.get("schema_version")),
        meta=[(str(k), format_cell(v)) for k, v in meta.items()] if isinstance(meta, dict) else [],
        groups=groups,
        tables=tables,
        curves=curves,
        images=images,
        source=path.name,
    )


def write_dataset_html(report_dir: str | Path) -> Path:
    """Render ``report_dir/results.json`` into ``report_dir/index.html`` and return its path."""
    folder = Path(report_dir)
    out = folder / "index.html"
    out.write_text(dataset_html(folder / "results.json"), encoding="utf-8")
    return out
