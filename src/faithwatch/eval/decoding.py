"""Evaluating decoding strategies side by side: faithfulness, informativeness, abstention, cost and, on
counterfactual items, whether the answer follows the context (paper 000 §4.3, §5.2).

:func:`evaluate_strategies` runs every strategy on every item (item by item, so an interrupted run has
comparable results for all strategies) and returns a :class:`DecodingEvaluation`: a summary table with one
row per strategy, the per-item rows, and a success-by-topic table for counterfactual items.

Metrics per strategy: :mod:`faithwatch.eval.decoding_summary`.

The checker
-----------
Faithfulness is judged by a claim checker of :mod:`faithwatch.claims` that is **not** the detector that
guided the search: by default :class:`~faithwatch.claims.AlignmentChecker` over the lexical alignment
scorer (score >= 0.7: Entailment). Scoring answers with the guiding detector would reward a search for
fooling its own judge. Caveat: the lexical scorer is one input of the default monitor's alignment signal
(``lexical+embedding``), so for a fully independent judge use an NLI checker (``--checker nli:<model>``).

Caching
-------
With ``cache_path``, each finished (strategy, item) is appended to a JSONL file at once (flushed and
synced), keyed by ``(strategy, item id, params hash)``; the params hash covers the generation parameters
the monitor's model, detector and alignment scorer, and the source of :mod:`faithwatch.decoding` (so answers
cached before a strategy's rules changed are generated again). A re-run reuses every cached row whose item
(question, context, answers) is unchanged, so a crash loses at most the item in progress; a torn last line
is cut off. Cached answers checked by another checker are re-checked without generating again.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import math
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

import faithwatch.decoding
import faithwatch.registry
from faithwatch.checksums import code_sha256
from faithwatch.claims.checking import AlignmentChecker, Checker
from faithwatch.claims.extraction import ClaimExtractor, SegmentExtractor
from faithwatch.claims.pipeline import check_response
from faithwatch.claims.types import ENTAILMENT, finite
from faithwatch.decoding.counterfactual import QAItem, is_packaged, is_refusal, judge
from faithwatch.decoding.types import DecodingResult
from faithwatch.errors import FaithwatchError, InputError, check_bools
from faithwatch.eval.decoding_summary import baseline_strategy, summarize, topic_table
from faithwatch.models.prompts import DEFAULT_INSTRUCTION
from faithwatch.params import DecodingParams
from faithwatch.store import JsonlStore, lines_of, read_utf8

CACHE_VERSION = 1
#: the generation parameters (:class:`~faithwatch.params.DecodingParams`: paper 000 Table 2)
DEFAULT_PARAMS: dict[str, Any] = DecodingParams().model_dump()
INFORMATIVENESS_UNIT = "sentences"


class GenerateFn(Protocol):
    """Runs one strategy: ``generate_fn(monitor, question, context, strategy=..., **params)``."""

    def __call__(self, monitor: Any, question: str, context: str, strategy: str = ..., **params: Any
                 ) -> DecodingResult:
        """Answer ``question`` from ``context`` with ``strategy``."""


#: ``on_progress(done, total, strategy, item_id)`` after each (strategy, item), cached or not
ProgressFn = Callable[[int, int, str, str], None]


def generate(monitor: Any, question: str, context: str, strategy: str = "fod", **params: Any) -> DecodingResult:
    """The default ``generate_fn``: :func:`faithwatch.decoding.strategies.generate` (imported on first use)."""
    from faithwatch.decoding.strategies import generate as strategies_generate

    return strategies_generate(monitor, question, context, strategy=strategy, **params)


def known_strategies() -> tuple[str, ...]:
    """The registered strategy names (:data:`faithwatch.registry.strategies`)."""
    from faithwatch import registry

    return registry.strategies.names()


def parse_strategies(spec: str | Sequence[str], known: Sequence[str] | None = None) -> list[str]:
    """Strategy names from ``"greedy,cad,fod"`` (or a list): non-empty, no repeats, all known (if ``known``)."""
    names = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec) if s and s.strip()]
    if not names:
        raise InputError("no strategy given")
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise InputError(f"strategies given twice: {', '.join(dupes)}")
    if known is not None:
        unknown = [n for n in names if n not in known]
        if unknown:
            raise InputError(f"unknown strategies {unknown}; available: {', '.join(known)}")
    return names


# ---- the checker ----------------------------------------------------------------------------------------


def default_checker() -> Checker:
    """The default faithfulness judge: alignment checker over the lexical scorer (no model)."""
    from faithwatch.alignment import LexicalScorer

    return AlignmentChecker(LexicalScorer())


def _checker_name(checker: Checker, extractor: ClaimExtractor) -> str:
    return f"{getattr(checker, 'name', type(checker).__name__)} on {getattr(extractor, 'name', '?')} claims"


def _no_claims(name: str, error: str | None = None) -> dict[str, Any]:
    return {"checker": name, "n_claims": 0, "n_supported": 0, "labels": {}, "error": error}


def _abstained(gen: Mapping[str, Any]) -> bool:
    return bool(gen["refused"]) or is_refusal(gen["answer"])


def check_answer(answer: str, item: QAItem, checker: Checker, extractor: ClaimExtractor) -> dict[str, Any]:
    """Claims of ``answer`` and how many the checker finds supported (Entailment) by the item's context.

    A checker failure (:class:`~faithwatch.errors.FaithwatchError`) is returned in ``error`` with no claims.
    """
    name = _checker_name(checker, extractor)
    if not answer.strip():
        return _no_claims(name)
    try:
        result = check_response(answer, [item.context], extractor, checker, question=item.question)
    except FaithwatchError as exc:
        return _no_claims(name, f"{type(exc).__name__}: {exc}")
    if not result.ok:
        return {"checker": name, "n_claims": 0, "n_supported": 0, "labels": {}, "error": result.extraction_error}
    labels = Counter(v.label for v in result.verdicts)
    return {"checker": name, "n_claims": len(result.claims), "n_supported": labels.get(ENTAILMENT, 0),
            "labels": dict(labels), "error": None}


# ---- parameters and identity ---------------------------------------------------------------------------


def _identity(obj: Any) -> Any:
    """A JSON-able identity of a parameter value (objects: type, name, model and creation time)."""
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else str(obj)
    if isinstance(obj, (Path,)):
        return str(obj)
    if isinstance(obj, Mapping):
        return {str(k): _identity(v) for k, v in sorted(obj.items(), key=lambda kv: str(kv[0]))}
    if isinstance(obj, (list, tuple)):
        return [_identity(v) for v in obj]
    meta = getattr(obj, "meta", None)
    return {"type": type(obj).__name__, "name": getattr(obj, "name", None),
            "model_id": getattr(obj, "model_id", None) or getattr(meta, "model_id", None),
            "created": getattr(meta, "created", None)}


def monitor_identity(monitor: Any) -> dict[str, Any]:
    """Model, detector and alignment scorer (and its version) of a monitor, and its instruction when it is not the
    default (what the cache key depends on; the default adds no key, so earlier caches stay valid)."""
    lm = getattr(monitor, "lm", None)
    alignment = getattr(monitor, "alignment", None)
    out = {"model_id": getattr(lm, "model_id", None), "detector": _identity(getattr(monitor, "detector", None)),
           "alignment": getattr(alignment, "name", None), "alignment_version": getattr(alignment, "version", None)}
    instruction = getattr(monitor, "instruction", DEFAULT_INSTRUCTION)
    if instruction != DEFAULT_INSTRUCTION:  # another prompt: other answers
        out["instruction"] = instruction
    return out


@functools.cache
def decoding_code_digest() -> str:
    """sha256 of :mod:`faithwatch.decoding`'s code: a change to a strategy's rules makes cached answers stale, an
    edit of comments or docstrings does not."""
    return code_sha256(Path(faithwatch.decoding.__file__).parent)


def params_hash(params: Mapping[str, Any], monitor: Any = None) -> str:
    """16 hex digits identifying the generation parameters, the monitor and the decoding code."""
    blob = json.dumps({"params": _identity(dict(params)), "monitor": monitor_identity(monitor),
                       "code": decoding_code_digest()}, sort_keys=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


# ---- the cache --------------------------------------------------------------------------------------------

CacheKey = tuple[str, str, str]


def cache_store(path: Path) -> JsonlStore:
    """The results cache: rows by (strategy, item id, params hash); rows of another cache version are ignored."""
    return JsonlStore(path, key=lambda row: (str(row["strategy"]), str(row["id"]), str(row["params_hash"])),
                      accept=lambda row: row.get("cache_version") == CACHE_VERSION)


def read_cache(path: Path) -> dict[CacheKey, dict[str, Any]]:
    """Rows of a cache file by key (the last row of a key wins), repaired as :mod:`faithwatch.store` says."""
    return cache_store(path).load()  # type: ignore[return-value]


# ---- one run -----------------------------------------------------------------------------------------------


def generation_record(result: DecodingResult, seconds: float, keep_trace: bool = False) -> dict[str, Any]:
    """What is kept of a :class:`DecodingResult` (the trace only as counts unless ``keep_trace``)."""
    if not isinstance(getattr(result, "answer", None), str):
        raise TypeError(f"generate_fn must return a DecodingResult, got {type(result).__name__}")
    sentences = [{"text": s.text, "score": finite(s.score, "sentence score")} for s in result.sentences]
    scores = [s["score"] for s in sentences if s["score"] is not None]
    out: dict[str, Any] = {
        "answer": result.answer,
        "refused": bool(result.refused),
        "num_tokens": int(result.num_tokens),
        "generated_tokens": int(result.generated_tokens),
        "n_sentences": len(sentences),
        "guide_score": sum(scores) / len(scores) if scores else None,
        "sentences": sentences,
        "stop_reason": result.stop_reason,
        "detector": result.detector,
        "trace_counts": dict(Counter(e.kind for e in result.trace)),
        "seconds": round(float(seconds), 4),
    }
    if keep_trace:
        out["trace"] = [e.to_dict() for e in result.trace]
    return out


def item_row(strategy: str, item: QAItem, gen: Mapping[str, Any], check: Mapping[str, Any] | None,
             cached: bool) -> dict[str, Any]:
    """The per-item output row: the generation, the checker's verdicts and the counterfactual outcome."""
    abstained = _abstained(gen)
    answered = not abstained and bool(gen["answer"].strip())
    n_claims = int(check["n_claims"]) if check else 0
    row: dict[str, Any] = {
        "strategy": strategy,
        "id": item.id,
        "topic": item.topic,
        "question": item.question,
        **{k: v for k, v in gen.items() if k != "sentences"},
        "abstained": abstained,
        "empty": not abstained and not gen["answer"].strip(),
        "n_claims": n_claims if answered else 0,
        "n_supported": int(check["n_supported"]) if check and answered else 0,
        "faithfulness": (int(check["n_supported"]) / n_claims) if check and answered and n_claims else None,
        "checker": check["checker"] if check else None,
        "check_error": check.get("error") if check else None,
        "sentences": gen["sentences"],
        "cached": cached,
    }
    if item.is_counterfactual or item.unanswerable:
        outcome = judge(gen["answer"], item, refused=abstained)
        row.update(success=outcome.success, context_hit=outcome.context_hit, common_hit=outcome.common_hit,
                   agrees=item.agrees, context_answers=[list(g) for g in item.context_answers],
                   common_answers=list(item.common_answers))
        if item.unanswerable:
            row.update(unanswerable=True, declined=outcome.declined)
    return row


# ---- the evaluation -------------------------------------------------------------------------------------------


@dataclass
class DecodingEvaluation:
    """What :func:`evaluate_strategies` returns."""

    summary: pd.DataFrame
    rows: list[dict[str, Any]]
    by_topic: pd.DataFrame | None
    meta: dict[str, Any] = field(default_factory=dict)
    generated: int = 0  # new generate_fn calls
    reused: int = 0  # (strategy, item) results taken from the cache

    def tables(self, in_sample: str | None = None) -> dict[str, pd.DataFrame]:
        """The report tables, by title; ``in_sample`` (see :func:`in_sample_note`) is added to every title."""
        out = {"strategies": self.summary}
        if self.by_topic is not None:
            out["success rate by topic"] = self.by_topic
        return {f"{name} — {in_sample}" if in_sample else name: table for name, table in out.items()}


#: the parameters whose shipped defaults (faithwatch.params) were chosen on the packaged counterfactual set
TUNED_ON_PACKAGED = ("tau1", "tau2", "coverage", "abstain_threshold")


def strategy_reads(strategy: str, key: str) -> bool:
    """Whether ``strategy`` reads the parameter ``key`` (its registry entry's ``reads``; a plug-in that does not
    say reads all)."""
    reads = faithwatch.registry.strategies.get(strategy).options.get("reads")
    return reads is None or key in reads


def in_sample_note(data: str, params: Mapping[str, Any], strategies: Sequence[str]) -> str | None:
    """The in-sample warning for a run on the packaged counterfactual set at the defaults that were chosen on it.

    ``None`` for other data, other values, or strategies that read none of those parameters.
    """
    if not is_packaged(data):
        return None
    readers_of = {k: [s for s in strategies if strategy_reads(s, k)] for k in TUNED_ON_PACKAGED
                  if params.get(k, DEFAULT_PARAMS[k]) in (None, DEFAULT_PARAMS[k])}
    tuned = [k for k, readers in readers_of.items() if readers]
    if not tuned:
        return None
    readers = list(dict.fromkeys(s for k in tuned for s in readers_of[k]))
    return (f"IN-SAMPLE for {', '.join(readers)}: the default {', '.join(tuned)} {'was' if len(tuned) == 1 else 'were'}"
            " chosen on this packaged set (out-of-fold figures: --cv-tau)")


def evaluate_strategies(
    monitor: Any,
    items: Sequence[QAItem],
    strategies: Sequence[str],
    *,
    generate_fn: GenerateFn | None = None,
    checker: Checker | None = None,
    extractor: ClaimExtractor | None = None,
    params: Mapping[str, Any] | None = None,
    on_progress: ProgressFn | None = None,
    cache_path: str | Path | None = None,
    keep_trace: bool = False,
    n_boot: int = 1000,
    seed: int = 0,
) -> DecodingEvaluation:
    """Run each strategy on each item and compare them (see the module doc for metrics and caching).

    Args:
        monitor: a :class:`faithwatch.monitor.Monitor`, handed to ``generate_fn``.
        items: from :func:`faithwatch.decoding.counterfactual.load_items` (counterfactual items or plain prompts).
        strategies: strategy names, passed as ``strategy=`` to ``generate_fn``.
        generate_fn: default :func:`generate` (the strategies of :mod:`faithwatch.decoding.strategies`).
        checker / extractor: the faithfulness judge (default :func:`default_checker` on sentence claims).
        params: generation keyword arguments (default :data:`DEFAULT_PARAMS`; given keys replace defaults).
        on_progress: called after each (strategy, item) as ``(done, total, strategy, item_id)``.
        cache_path: JSONL file of finished results, created if missing, reused when present.
        keep_trace: keep every result's full trace in the rows (else counts per event kind).
        n_boot / seed: bootstrap replicates and seed of the success-rate interval.

    A :class:`~faithwatch.errors.FaithwatchError` raised by ``generate_fn`` for one item (e.g. a context
    too long for the model) becomes a row with ``error`` (counted in ``errors``, left out of the metrics,
    not cached: a re-run tries it again); any other exception stops the run (finished rows stay cached).
    """
    check_bools(keep_trace=keep_trace)
    items = list(items)
    if not items:
        raise InputError("no items to evaluate")
    ids = [i.id for i in items]
    if len(set(ids)) != len(ids):
        raise InputError(f"item ids must be unique; repeated: {sorted({i for i in ids if ids.count(i) > 1})[:5]}")
    strategies = parse_strategies(list(strategies))
    run = generate_fn or generate
    checker = checker or default_checker()
    extractor = extractor or SegmentExtractor("sentence")
    check_name = _checker_name(checker, extractor)
    full = {**DEFAULT_PARAMS, **dict(params or {})}
    phash = params_hash(full, monitor)

    cache_file = Path(cache_path) if cache_path is not None else None
    cached: dict[CacheKey, dict[str, Any]] = {}
    stack = ExitStack()
    put = None
    if cache_file is not None:
        cached = read_cache(cache_file)
        put = stack.enter_context(cache_store(cache_file).appending())

    rows: list[dict[str, Any]] = []
    total, done, generated, reused = len(items) * len(strategies), 0, 0, 0
    try:
        for item in items:
            for strategy in strategies:
                key = (strategy, item.id, phash)
                hit = cached.get(key)
                if hit is not None and hit.get("item_hash") == item.fingerprint:
                    gen, check = hit["generation"], hit.get("check")
                    if not check or check.get("checker") != check_name or check.get("error"):
                        check = _no_claims(check_name) if _abstained(gen) else \
                            check_answer(gen["answer"], item, checker, extractor)
                        if put is not None:
                            put({**hit, "check": check})
                    rows.append(item_row(strategy, item, gen, check, cached=True))
                    reused += 1
                else:
                    start = time.perf_counter()
                    try:
                        result = run(monitor, item.question, item.context, strategy=strategy, **full)
                    except FaithwatchError as exc:
                        rows.append({"strategy": strategy, "id": item.id, "topic": item.topic,
                                     "question": item.question, "error": f"{type(exc).__name__}: {exc}"})
                    else:
                        generated += 1
                        gen = generation_record(result, time.perf_counter() - start, keep_trace)
                        check = _no_claims(check_name) if _abstained(gen) else \
                            check_answer(gen["answer"], item, checker, extractor)
                        if put is not None:
                            put({"cache_version": CACHE_VERSION, "strategy": strategy, "id": item.id,
                                             "params_hash": phash, "item_hash": item.fingerprint,
                                             "generation": gen, "check": check})
                        rows.append(item_row(strategy, item, gen, check, cached=False))
                done += 1
                if on_progress is not None:
                    on_progress(done, total, strategy, item.id)
    finally:
        stack.close()

    summary = summarize(rows, strategies, n_boot=n_boot, seed=seed)
    meta = {
        "strategies": strategies,
        "n_items": len(items),
        "n_counterfactual": sum(i.is_counterfactual and not i.agrees for i in items),
        "n_agreeing": sum(i.agrees for i in items),
        "n_unanswerable": sum(i.unanswerable for i in items),
        "params": _identity(full),
        "params_hash": phash,
        "monitor": monitor_identity(monitor),
        "checker": check_name,
        "faithfulness": f"share of claims labelled {ENTAILMENT} by {check_name} against the item's context, "
                        "mean over answered non-empty responses; not the detector that guided the search",
        "informativeness": f"number of claims ({INFORMATIVENESS_UNIT}) per response, 0 when abstained or empty "
                           "(paper 000 §4.3 counts propositions)",
        "success": "answer states a context answer and no common-knowledge answer; a refusal is a failure",
        "success_ci": f"95% percentile bootstrap, {n_boot} replicates, seed {seed}",
        "success_gain": f"success minus {baseline_strategy(strategies)}'s on the same counterfactual items, with a "
                        "paired 95% bootstrap interval (the same items drawn for both)",
        "generated": generated,
        "reused_from_cache": reused,
        "cache": str(cache_file) if cache_file is not None else None,
    }
    return DecodingEvaluation(summary, rows, topic_table(rows, strategies), meta, generated, reused)


#: the report file of per-item rows; the reports stored under ``docs/results/`` keep it gzipped (``.gz``)
ANSWERS_FILE = "answers.jsonl"


def read_answers(report: str | Path) -> list[dict[str, Any]]:
    """The per-item rows of an ``eval-decoding`` report folder: its ``answers.jsonl``, or ``answers.jsonl.gz``."""
    folder = Path(report)
    plain, packed = folder / ANSWERS_FILE, folder / f"{ANSWERS_FILE}.gz"
    if plain.is_file():
        text = read_utf8(plain, "answers file")
    elif packed.is_file():
        with gzip.open(packed, "rt", encoding="utf-8") as handle:
            text = handle.read()
    else:
        raise InputError(f"{folder}: no {ANSWERS_FILE} or {ANSWERS_FILE}.gz (not an eval-decoding report)")
    return [json.loads(line) for line in lines_of(text) if line.strip()]


def answer_records(evaluation: DecodingEvaluation) -> list[dict[str, Any]]:
    """The per-item rows as JSON-safe dicts (for :data:`ANSWERS_FILE`)."""
    return [json.loads(json.dumps(r, ensure_ascii=False, allow_nan=False, default=str)) for r in evaluation.rows]


__all__ = [
    "ANSWERS_FILE",
    "DEFAULT_PARAMS",
    "DecodingEvaluation",
    "GenerateFn",
    "ProgressFn",
    "answer_records",
    "check_answer",
    "default_checker",
    "evaluate_strategies",
    "generate",
    "generation_record",
    "item_row",
    "known_strategies",
    "monitor_identity",
    "params_hash",
    "parse_strategies",
    "read_answers",
    "read_cache",
]
