"""Evaluation of the LSS search (paper 004) on ``lss-dev``, and what can honestly be measured on
``refchecker-annotations``.

lss-dev (``<data>/lss-dev/LSS_dev.csv``)
    One row per annotation: a (Statement, Reference) pair, the annotator's LSS, LSS* and 1-5 support rating.
    Many pairs were annotated twice. The search runs once per distinct pair (results cached in JSONL, resumable)
    and every row gets its pair's values. Reported per row (n = annotations), with 95% intervals from a bootstrap
    over *pairs* (rows of one pair move together):

    * Pearson and Spearman correlation with the human rating of: the LSS score (|LSS| / |claim|) and the paper's
      ROUGE-L(claim, LSS) for every scorer, the plain alignment score of the claim (the scorer's support of the
      whole claim), ROUGE-L(claim, reference) (F1 and precision), and the lexical pre-filter alone (share of
      claim words found in the reference);
    * the same for the *human* LSS / LSS* of the same row: an oracle of what a perfect LSS extractor could reach
      (inflated: the annotator wrote the LSS and the rating together);
    * agreement of the found LSS with the human LSS (word-level P/R/F1, exact match, length correlation).

refchecker-annotations
    Claim triplets of 2,100 responses (7 LLMs x 3 context settings) with human Entailment / Neutral /
    Contradiction labels, but *without* the questions and references. Only descriptive statistics are computed
    (:mod:`faithwatch.eval.refchecker`, re-exported here); its ``REFCHECKER_NOT_EVALUABLE`` lists what cannot be
    evaluated and why.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import re
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from faithwatch.alignment.base import AlignmentScorer
from faithwatch.claims.lss import ALGORITHM, absent_words, lss, lss_tagged, split_words
from faithwatch.claims.rouge import align_to_claim, lss_rouge_l, rouge_l, word_prf
from faithwatch.errors import InputError
from faithwatch.eval.refchecker import (
    REFCHECKER_DIR,
    REFCHECKER_LABELS,
    REFCHECKER_NOT_EVALUABLE,
    load_refchecker,
    summarize_refchecker,
)
from faithwatch.stats import resample_indices
from faithwatch.store import JsonlStore, read_utf8

__all__ = [
    "LSS_DEV_FILE",
    "PAPER_T5_XL_PEARSON",
    "REFCHECKER_DIR",
    "REFCHECKER_LABELS",
    "REFCHECKER_NOT_EVALUABLE",
    "LSSConfig",
    "LSSEvalResult",
    "correlate",
    "evaluate_lss_dev",
    "load_lss_dev",
    "load_refchecker",
    "run_lss_eval",
    "score_pairs",
    "summarize_refchecker",
]

LSS_DEV_FILE = "lss-dev/LSS_dev.csv"
#: Pearson correlation of the paper's fine-tuned T5-XL LSS with the human rating (paper 004, section 6.1)
PAPER_T5_XL_PEARSON = 0.48

#: short name -> how the long lss-dev column header starts
_COLUMNS = {
    "statement": "Statement",
    "reference": "Reference",
    "unrelated": "Does the statement seem unrelated",
    "human_lss": "LSS - ",
    "human_lss_star": "LSS* - ",
    "lss_star_difficult": "Was it difficult",
    "rating": "On a scale of 1-5",
}
_RATING_RE = re.compile(r"^\s*([1-5])(?:\s|-|$)")

ProgressFn = Callable[[str, int, int], None]

# ---------------------------------------------------------------- lss-dev loading


def _find_file(path: str | Path, relative: str) -> Path:
    p = Path(path)
    if p.is_file():
        return p
    for cand in (p / relative, p / Path(relative).name):
        if cand.is_file():
            return cand
    raise InputError(f"cannot find {relative} under {p}")


def load_lss_dev(path: str | Path) -> pd.DataFrame:
    """Load LSS_dev.csv (a file, the ``lss-dev`` folder or the data root) into short, typed columns.

    Columns: ``row_id``, ``worker_id``, ``statement``, ``reference``, ``human_lss`` / ``human_lss_star`` (``""``
    when the annotator found nothing supported), ``unrelated`` / ``lss_star_difficult`` (bool), ``rating``
    (int 1-5) and ``pair_id`` (same for the rows of one (statement, reference) pair).

    Raises:
        InputError: missing file or column, a blank statement/reference, or a rating that is not 1-5.
    """
    file = _find_file(path, LSS_DEV_FILE)
    try:
        raw = pd.read_csv(io.StringIO(read_utf8(file, "annotation file")), dtype=str, keep_default_na=False)
    except (pd.errors.EmptyDataError, pd.errors.ParserError) as exc:
        raise InputError(f"{file} cannot be read as CSV: {str(exc).strip()}") from None
    found: dict[str, str] = {}
    for short, prefix in _COLUMNS.items():
        matches = [c for c in raw.columns if c.strip().startswith(prefix)]
        if len(matches) != 1:
            raise InputError(f"{file}: expected one column starting with {prefix!r}, found {len(matches)} "
                             f"(columns: {list(raw.columns)})")
        found[short] = matches[0]
    df = pd.DataFrame({short: raw[col].astype(str) for short, col in found.items()})
    df.insert(0, "row_id", raw.get("task_response_id", pd.Series([str(i) for i in range(len(raw))])))
    df.insert(1, "worker_id", raw.get("worker_id", ""))
    ratings = []
    for i, value in enumerate(df["rating"]):
        m = _RATING_RE.match(value)
        if not m:
            raise InputError(f"{file}: row {i + 2}: rating {value!r} is not 1-5")
        ratings.append(int(m.group(1)))
    df["rating"] = ratings
    for col in ("statement", "reference"):
        blank = df[col].str.strip() == ""
        if blank.any():
            raise InputError(f"{file}: row {int(np.flatnonzero(blank)[0]) + 2}: blank {col}")
    for col in ("human_lss", "human_lss_star"):
        df[col] = df[col].str.strip()
    for col in ("unrelated", "lss_star_difficult"):
        df[col] = df[col].str.strip().str.lower().isin(("yes", "true", "1", "x"))
    df["pair_id"] = [_digest(s, r) for s, r in zip(df.statement, df.reference, strict=True)]
    return df


def _digest(*parts: str) -> str:
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode()).hexdigest()[:24]


# ---------------------------------------------------------------- scoring pairs (cached)


@dataclass(frozen=True)
class LSSConfig:
    """Search settings of :func:`faithwatch.claims.lss.lss` used by the evaluation (all part of the cache key)."""

    threshold: float = 0.5
    max_evaluations: int = 200
    beam_width: int = 2
    max_span: int = 1
    prefilter: bool = True
    reinsert: bool = True

    def key(self, scorer: str, statement: str, reference: str) -> str:
        """Cache key of one pair under these settings, this scorer and this algorithm version."""
        return _digest(ALGORITHM, scorer, json.dumps(asdict(self), sort_keys=True), statement, reference)


def score_pairs(
    df: pd.DataFrame,
    scorer: AlignmentScorer,
    config: LSSConfig | None = None,
    cache: str | Path | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> pd.DataFrame:
    """Run the LSS search once per distinct (statement, reference) pair of ``df``; resumable through ``cache``.

    Args:
        df: rows with ``statement`` and ``reference`` (e.g. from :func:`load_lss_dev`).
        scorer: the support scorer, or an LSS tagger (:class:`faithwatch.nli.tagger.LSSTagger`: its words at or
            above ``config.threshold`` are the LSS; the search settings do not apply).
        config: search settings (default :class:`LSSConfig`).
        cache: JSONL file; pairs already in it (same key) are not searched again, new ones are appended.
        on_progress: called with (pairs done, pairs in all) after every pair.

    Returns:
        One row per pair: ``pair_id``, ``lss``, ``kept_indices``, ``lss_length``, ``claim_length``, ``lss_score``,
        ``lss_rouge_l``, ``claim_support``, ``lss_support``, ``evaluations``, ``truncated_search``, ``seconds``.
    """
    config = config or LSSConfig()
    pairs = df.drop_duplicates(["statement", "reference"])[["statement", "reference"]]
    cache_path = Path(cache) if cache is not None else None
    store = JsonlStore(cache_path, key=lambda row: row["key"]) if cache_path else None
    done: dict[Any, dict[str, Any]] = store.load() if store else {}
    rows: list[dict[str, Any]] = []
    with ExitStack() as stack:
        put = stack.enter_context(store.appending()) if store else None
        tagged = hasattr(scorer, "word_probabilities")  # the LSS tagger: one model pass, no search
        name = scorer.version if tagged else scorer.name
        for n, (statement, reference) in enumerate(pairs.itertuples(index=False), 1):
            key = config.key(name, statement, reference)
            rec = done.get(key)
            if rec is None:
                start = time.perf_counter()
                if tagged:
                    res = lss_tagged([statement], [reference], scorer, threshold=config.threshold)[0]
                else:
                    res = lss(statement, reference, scorer, threshold=config.threshold,
                              max_evaluations=config.max_evaluations, beam_width=config.beam_width,
                              max_span=config.max_span, prefilter=config.prefilter, reinsert=config.reinsert)
                rec = {
                    "key": key,
                    "pair_id": _digest(statement, reference),
                    "lss": res.text,
                    "kept_indices": list(res.kept_indices),
                    "lss_length": res.length,
                    "claim_length": len(res.claim_words),
                    "lss_score": res.score,
                    "lss_rouge_l": lss_rouge_l(statement, res.text).f1,
                    "claim_support": res.support_of_claim,
                    "lss_support": res.support_of_subsequence,
                    "evaluations": res.evaluations,
                    "truncated_search": res.truncated_search,
                    "seconds": round(time.perf_counter() - start, 4),
                    **({"word_support": list(res.word_support)} if tagged else {}),
                }
                if put:
                    put(rec)
                done[key] = rec
            rows.append(rec)
            if on_progress:
                on_progress(n, len(pairs))
    out = pd.DataFrame(rows)
    return out.drop(columns=["key"]) if len(out) else out


# ---------------------------------------------------------------- correlations


def _check_corr_input(x: np.ndarray, y: np.ndarray, what: str) -> None:
    if len(x) != len(y):
        raise InputError(f"{what}: {len(x)} scores for {len(y)} ratings")
    if len(x) < 3:
        raise InputError(f"{what}: a correlation needs at least 3 values, got {len(x)}")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise InputError(f"{what}: non-finite values")
    for arr, side in ((x, "the scores"), (y, "the ratings")):
        if np.ptp(arr) == 0:
            raise InputError(f"{what}: {side} are constant ({arr[0]:g} for all {len(arr)} rows); "
                             "the correlation is undefined")


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.corrcoef(x, y)[0, 1])


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    return _pearson(stats.rankdata(x), stats.rankdata(y))  # Spearman = Pearson of the (average) ranks


def _boot_samples(groups: Sequence[Any] | None, n: int, n_boot: int, seed: int) -> list[np.ndarray]:
    """Row indices of ``n_boot`` cluster-bootstrap replicates (:func:`faithwatch.stats.resample_indices`)."""
    if groups is not None and len(groups) != n:
        raise InputError(f"{len(groups)} groups for {n} values")
    return list(resample_indices(n, n_boot, seed, None if groups is None else list(groups))) if n_boot > 0 else []


def _correlate(x: np.ndarray, y: np.ndarray, samples: list[np.ndarray], n_groups: int, what: str) -> dict[str, Any]:
    _check_corr_input(x, y, what)
    out: dict[str, Any] = {"pearson": _pearson(x, y), "spearman": _spearman(x, y), "n": len(x), "n_groups": n_groups}
    boot_p: list[float] = []
    boot_s: list[float] = []
    for idx in samples:
        bx, by = x[idx], y[idx]
        if np.ptp(bx) == 0 or np.ptp(by) == 0:  # undefined on this replicate: skipped (and counted)
            continue
        boot_p.append(_pearson(bx, by))
        boot_s.append(_spearman(bx, by))
    for name, values in (("pearson", boot_p), ("spearman", boot_s)):
        ok = bool(values)
        out[f"{name}_low"] = float(np.percentile(values, 2.5)) if ok else None
        out[f"{name}_high"] = float(np.percentile(values, 97.5)) if ok else None
    out["n_boot_used"] = len(boot_p)
    for k in ("pearson", "spearman"):
        if not math.isfinite(out[k]):  # cannot happen after the checks above; never let a NaN out
            raise InputError(f"{what}: {k} correlation is not finite")
    return out


def correlate(
    scores: Sequence[float],
    ratings: Sequence[float],
    groups: Sequence[Any] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    what: str = "correlation",
) -> dict[str, Any]:
    """Pearson and Spearman correlation with 95% percentile intervals from a (cluster) bootstrap.

    Args:
        scores, ratings: paired values.
        groups: cluster id per value (e.g. the pair id); the bootstrap resamples clusters. Default: each value.
        n_boot: bootstrap replicates (0: no intervals); replicates with a constant side are skipped and counted.
        seed: bootstrap seed.
        what: name used in error messages.

    Returns:
        ``pearson``, ``pearson_low``, ``pearson_high``, ``spearman``, ``spearman_low``, ``spearman_high``, ``n``,
        ``n_groups``, ``n_boot_used`` (intervals are ``None`` when no replicate was usable).

    Raises:
        InputError: fewer than 3 values, non-finite values, or constant scores or ratings.
    """
    x = np.asarray(scores, dtype=float)
    y = np.asarray(ratings, dtype=float)
    _check_corr_input(x, y, what)
    n_groups = len(x) if groups is None else len(set(groups))
    return _correlate(x, y, _boot_samples(groups, len(x), n_boot, seed), n_groups, what)


# ---------------------------------------------------------------- lss-dev evaluation


def _human_columns(df: pd.DataFrame) -> pd.DataFrame:
    """Per row: the human LSS aligned to the claim words, oracle scores and the pre-filter baseline."""
    rows = []
    for statement, reference, human, star in zip(df.statement, df.reference, df.human_lss, df.human_lss_star,
                                                 strict=True):
        words = split_words(statement)
        kept = align_to_claim(words, human) if human else ()
        absent = absent_words(words, reference)
        rows.append({
            "claim_length": len(words),
            "human_kept": kept,
            "human_lss_score": len(kept) / len(words),
            "human_lss_rouge_l": lss_rouge_l(statement, human).f1,
            "human_lss_star_rouge_l": lss_rouge_l(statement, star).f1,
            "rouge_l_f1": rouge_l(statement, reference).f1,
            "rouge_l_precision": rouge_l(statement, reference).precision,
            "prefilter_score": sum(not a for a in absent) / len(words),
        })
    return pd.DataFrame(rows, index=df.index)


def evaluate_lss_dev(
    df: pd.DataFrame,
    per_scorer: dict[str, pd.DataFrame],
    n_boot: int = 1000,
    seed: int = 0,
) -> dict[str, pd.DataFrame]:
    """The lss-dev tables from loaded rows and each scorer's :func:`score_pairs` output.

    Returns:
        ``"correlation with the human 1-5 rating"`` (method, scorer, kind, Pearson/Spearman with 95% CI, n, note),
        ``"agreement with the human LSS"`` and ``"mean score per human rating"``. A method whose scores are
        constant gets ``None`` values and a note instead of a number.
    """
    human = _human_columns(df)
    ratings = df.rating.to_numpy(dtype=float)
    methods: list[tuple[str, str, str, np.ndarray]] = []
    agreement = []
    per_rating = {"human LSS score (oracle)": human.human_lss_score}
    for spec, pairs in per_scorer.items():
        by_pair = pairs.set_index("pair_id")
        missing = set(df.pair_id) - set(by_pair.index)
        if missing:
            raise InputError(f"scorer {spec}: {len(missing)} pairs of the data have no LSS result")
        rows = by_pair.loc[df.pair_id]
        tagger = "word_support" in rows  # the tagger's claim support is its own mean word probability
        methods += [
            ("LSS score |LSS|/|claim|", spec, "LSS (ours)", rows.lss_score.to_numpy(float)),
            ("ROUGE-L F1(claim, LSS)", spec, "LSS (ours)", rows.lss_rouge_l.to_numpy(float)),
            ("mean word support of the claim" if tagger else "alignment score of the claim", spec,
             "LSS (ours)" if tagger else "baseline", rows.claim_support.to_numpy(float)),
        ]
        per_rating[f"LSS score ({spec})"] = rows.lss_score.reset_index(drop=True).set_axis(df.index)
        prf = [word_prf(k, h) for k, h in zip(rows.kept_indices, human.human_kept, strict=True)]
        full = [word_prf(range(n), h) for n, h in zip(human.claim_length, human.human_kept, strict=True)]
        agreement.append(_agreement_row(f"found LSS ({spec})", prf, rows, human, df))
        if len(agreement) == 1:  # scorer-independent reference point, once
            agreement.insert(0, _agreement_row("keep the whole claim (trivial)", full, None, human, df))
        agreement[-1]["mean evaluations per pair"] = float(pairs.evaluations.mean())
        agreement[-1]["truncated pairs"] = int(pairs.truncated_search.sum())
        agreement[-1]["seconds per pair"] = float(pairs.seconds.mean())
    methods += [
        ("ROUGE-L F1(claim, reference)", "-", "baseline", human.rouge_l_f1.to_numpy(float)),
        ("ROUGE-L precision(claim, reference)", "-", "baseline", human.rouge_l_precision.to_numpy(float)),
        ("lexical pre-filter only: share of claim words in the reference", "-", "baseline",
         human.prefilter_score.to_numpy(float)),
        ("human LSS score |LSS|/|claim|", "human", "oracle (same annotator)", human.human_lss_score.to_numpy(float)),
        ("ROUGE-L F1(claim, human LSS)", "human", "oracle (same annotator)", human.human_lss_rouge_l.to_numpy(float)),
        ("ROUGE-L F1(claim, human LSS*)", "human", "oracle (same annotator)",
         human.human_lss_star_rouge_l.to_numpy(float)),
    ]
    # the same replicates for every method, so their intervals are comparable
    samples = _boot_samples(df.pair_id, len(df), n_boot, seed)
    n_groups = int(df.pair_id.nunique())
    corr_rows = []
    for method, spec, kind, scores in methods:
        row: dict[str, Any] = {"method": method, "scorer": spec, "kind": kind}
        try:
            row.update(_correlate(scores, ratings, samples, n_groups, f"{method} ({spec})"))
            row["note"] = ""
        except InputError as exc:
            row.update({k: None for k in ("pearson", "spearman", "n", "n_groups")})
            row["n"] = len(scores)
            row["note"] = str(exc)
        corr_rows.append(row)
    cols = ["method", "scorer", "kind", "pearson", "pearson_low", "pearson_high", "spearman", "spearman_low",
            "spearman_high", "n", "n_groups", "n_boot_used", "note"]
    corr = pd.DataFrame(corr_rows).reindex(columns=cols)
    means = pd.DataFrame({name: pd.Series(v.to_numpy(float), index=df.index) for name, v in per_rating.items()})
    means["rating"] = df.rating
    by_rating = means.groupby("rating").mean()
    by_rating.insert(0, "n", df.groupby("rating").size())
    return {
        "correlation with the human 1-5 rating": corr,
        "agreement with the human LSS": pd.DataFrame(agreement),
        "mean score per human rating": by_rating.reset_index(),
    }


def _agreement_row(name: str, prf: list, rows: pd.DataFrame | None, human: pd.DataFrame,
                   df: pd.DataFrame) -> dict[str, Any]:
    ours = (rows.lss_length.to_numpy(float) if rows is not None else human.claim_length.to_numpy(float))
    gold = np.array([len(k) for k in human.human_kept], dtype=float)
    try:
        length_r: float | None = correlate(ours, gold, n_boot=0, what=name)["pearson"]
    except InputError:
        length_r = None
    gold_sets = [set(k) for k in human.human_kept]
    pred_sets = ([set(k) for k in rows.kept_indices] if rows is not None
                 else [set(range(n)) for n in human.claim_length])
    return {
        "method": name,
        "word precision": float(np.mean([p.precision for p in prf])),
        "word recall": float(np.mean([p.recall for p in prf])),
        "word F1": float(np.mean([p.f1 for p in prf])),
        "exact match": float(np.mean([p == g for p, g in zip(pred_sets, gold_sets, strict=True)])),
        "Pearson LSS length vs human": length_r,
        "mean LSS score": float(np.mean(ours / human.claim_length.to_numpy(float))),
        "n": len(df),
    }


# ---------------------------------------------------------------- one run


@dataclass
class LSSEvalResult:
    """All tables of one ``eval-lss`` run, its metadata, and each scorer's per-pair results."""

    tables: dict[str, pd.DataFrame]
    meta: dict[str, Any]
    pairs: dict[str, pd.DataFrame]
    #: tables with a row of a scorer trained on some of these pairs -> the data set (for the report's marks)
    in_sample_tables: dict[str, str] = field(default_factory=dict)


def in_sample_mark(scorer: Any, pair_ids: Sequence[str]) -> str:
    """``""``, or how to mark a tagger that was trained on some of these pairs (``pair_ids``, as
    :func:`load_lss_dev` digests them), e.g. ``"in-sample: 1017 of 1017 pairs trained on"``."""
    trained = set(getattr(getattr(scorer, "meta", None), "training", {}).get("pair_ids", ()))
    ids = set(pair_ids)
    seen = len(ids & trained)
    return f"in-sample: {seen} of {len(ids)} pairs trained on" if seen else ""


def _cache_file(cache_dir: Path, spec: str, config: LSSConfig) -> Path:
    safe = re.sub(r"[^A-Za-z0-9.+-]+", "_", spec)[:60]
    return cache_dir / f"lss_{safe}_{_digest(json.dumps(asdict(config), sort_keys=True))[:8]}.jsonl"


def run_lss_eval(
    data_root: str | Path,
    scorers: Sequence[str] | dict[str, AlignmentScorer],
    config: LSSConfig | None = None,
    *,
    limit: int | None = None,
    cache_dir: str | Path | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    refchecker: bool = True,
    device: str = "cpu",
    on_progress: ProgressFn | None = None,
    annotations: str | Path | None = None,
) -> LSSEvalResult:
    """Evaluate the LSS search on lss-dev with each scorer (and summarise refchecker-annotations) in one run.

    Args:
        data_root: folder holding ``lss-dev/`` (and ``refchecker-annotations/``).
        annotations: another CSV in lss-dev's layout to evaluate instead (e.g. another split).
        scorers: scorer specs for :func:`faithwatch.alignment.get_scorer`, or ready scorers by name.
        config: search settings.
        limit: use only the first ``limit`` rows of LSS_dev.csv.
        cache_dir: folder of the resumable per-pair JSONL caches (one per scorer and config).
        n_boot, seed: bootstrap of the correlation intervals.
        refchecker: also summarise refchecker-annotations when the folder exists.
        device: torch device of model-based scorers.
        on_progress: called with (scorer, pairs done, pairs in all).
    """
    from faithwatch.alignment import get_scorer

    config = config or LSSConfig()
    source = annotations if annotations is not None else data_root
    df = load_lss_dev(source)
    if limit is not None:
        if limit < 3:
            raise InputError(f"--limit must be at least 3 rows, got {limit}")
        df = df.iloc[:limit].reset_index(drop=True)
    if not len(scorers):
        raise InputError("no scorer given")
    per_scorer: dict[str, pd.DataFrame] = {}
    seconds: dict[str, float] = {}
    for spec in scorers:
        scorer = scorers[spec] if isinstance(scorers, dict) else get_scorer(spec, device=device)
        if scorer is None:
            raise InputError("the LSS search needs a scorer; 'none' is not one")
        start = time.perf_counter()
        cache = _cache_file(Path(cache_dir), spec, config) if cache_dir is not None else None
        mark = in_sample_mark(scorer, df.pair_id)
        spec = f"{spec} [{mark}]" if mark else spec
        per_scorer[spec] = score_pairs(df, scorer, config, cache,
                                       on_progress=(lambda n, t, s=spec: on_progress(s, n, t)) if on_progress
                                       else None)
        seconds[spec] = round(time.perf_counter() - start, 1)
    tables = evaluate_lss_dev(df, per_scorer, n_boot=n_boot, seed=seed)
    meta: dict[str, Any] = {
        "data": str(_find_file(source, LSS_DEV_FILE).resolve()),
        "rows": len(df),
        "pairs": int(df.pair_id.nunique()),
        "scorers": list(per_scorer),
        "algorithm": ALGORITHM,
        **{f"search {k}": v for k, v in asdict(config).items()},
        "seconds per scorer (incl. cached pairs)": seconds,
        "n_boot": n_boot,
        "seed": seed,
        "paper 004 T5-XL Pearson (for reference)": PAPER_T5_XL_PEARSON,
    }
    ref_dir = Path(data_root) / REFCHECKER_DIR
    if refchecker and ref_dir.is_dir():
        tables.update(summarize_refchecker(ref_dir))
        meta["refchecker"] = str(ref_dir.resolve())
    elif refchecker:
        meta["refchecker"] = f"not found: {ref_dir}"
    marked = [spec for spec in per_scorer if spec.endswith("]") and "[in-sample" in spec]
    data_set = Path(meta["data"]).name
    in_sample = {name: data_set for name, t in tables.items() if marked and t.isin(marked).any().any()}
    return LSSEvalResult(tables, meta, per_scorer, in_sample)
