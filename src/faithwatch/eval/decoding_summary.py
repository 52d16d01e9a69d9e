"""The summary of a decoding evaluation: one row per strategy, and success by topic (:func:`summarize`,
:func:`topic_table`; :func:`faithwatch.eval.decoding.evaluate_strategies` calls them on its per-item rows).

Metrics per strategy
--------------------
* ``success_rate`` [``success_low``, ``success_high``] - counterfactual items only: share of items whose
  answer states the context's answer (every asked fact) and no common-knowledge answer
  (:func:`faithwatch.decoding.counterfactual.success`; a refusal is a failure), with a 95% percentile
  bootstrap interval; ``common_rate`` - share of answers stating the common-knowledge answer;
* ``success_gain`` [``success_gain_low``, ``success_gain_high``] - the success rate minus greedy's (or, without
  greedy, the first strategy's) on the same counterfactual items, with a paired bootstrap interval: the items
  are drawn once for both strategies, so the interval is that of the difference;
* ``agree_success_rate`` - the same success on the items whose context agrees with common knowledge (the
  do-no-harm check), when the set has such items;
* ``unanswerable_decline_rate`` / ``unanswerable_common_rate`` - on the items whose context does not hold the
  asked fact, when the set has such items: the share of answers that decline (a refusal, or an answer saying
  the context does not give it: :func:`faithwatch.decoding.counterfactual.declines`), and the share that state
  the fact as remembered (``common_answers``); these items are left out of every other success figure;
* ``abstention_rate`` - share of refused answers;
* ``faithfulness`` - mean, over answered non-empty responses, of the share of claims the *checker* labels
  Entailment (paper 000 §4.3: abstained and empty responses are left out);
* ``informativeness`` - mean number of claims per response, 0 for abstained or empty ones (paper 000 §4.3
  counts propositions; claims here are **sentences**, from ``SegmentExtractor("sentence")``, until a
  proposition extractor is used);
* ``answer_tokens`` / ``answer_sentences`` - mean length of the answered responses (tokens of the returned
  answer; sentences as the monitor split them);
* ``generated_tokens`` - mean number of tokens the search generated per item (candidates included): its cost;
* ``backtracks`` - mean number of ``backtrack`` trace events; ``guide_score`` - mean sentence score of the
  answers by the monitor's detector (the score that guided the search, *not* an evaluation);
* ``seconds`` - mean wall time per item (new runs only; cached rows keep their original time).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from faithwatch.stats import mean_ci


def bootstrap_ci(values: Sequence[float], n_boot: int = 1000, seed: int = 0, confidence: float = 0.95
                 ) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean of ``values`` (:func:`faithwatch.stats.mean_ci`); ``None`` for no
    values."""
    return mean_ci(values, n_boot, seed, confidence)


def _mean(values: Sequence[float]) -> float | None:
    return float(sum(values) / len(values)) if values else None


def _frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    """A DataFrame whose missing cells stay ``None`` (never NaN)."""
    df = pd.DataFrame.from_records(records)
    for col in df.columns:
        if any(r.get(col) is None for r in records):
            df[col] = pd.Series([r.get(col) for r in records], dtype=object, index=df.index)
    return df


def baseline_strategy(strategies: Sequence[str]) -> str:
    """The strategy that ``success_gain`` is measured against: greedy when it ran, else the first one."""
    return "greedy" if "greedy" in strategies else strategies[0]


def _counterfactual(r: Mapping[str, Any]) -> bool:
    """A judged row of a counterfactual item (not an agreeing or unanswerable one)."""
    return "success" in r and not r.get("agrees") and not r.get("unanswerable")


def _paired_gain(rows: Sequence[Mapping[str, Any]], strategy: str, baseline: str, n_boot: int, seed: int
                 ) -> tuple[float | None, tuple[float, float] | None]:
    """Mean per-item success difference ``strategy − baseline`` on the counterfactual items both judged, with a
    paired bootstrap interval (the same items drawn for both)."""
    def judged(name: str) -> dict[str, float]:
        return {r["id"]: float(r["success"]) for r in rows
                if r["strategy"] == name and not r.get("error") and _counterfactual(r)}

    mine, base = judged(strategy), judged(baseline)
    diffs = [mine[i] - base[i] for i in mine if i in base]
    return _mean(diffs), bootstrap_ci(diffs, n_boot, seed)


def summarize(rows: Sequence[Mapping[str, Any]], strategies: Sequence[str], *, n_boot: int = 1000,
              seed: int = 0) -> pd.DataFrame:
    """One row per strategy (see the module doc for the columns); ``rows`` with an ``error`` are only counted."""
    counterfactual = any("success" in r for r in rows)
    baseline = baseline_strategy(strategies) if strategies else None
    records = []
    for strategy in strategies:
        mine = [r for r in rows if r["strategy"] == strategy]
        ok = [r for r in mine if not r.get("error")]
        answered = [r for r in ok if not r["abstained"] and not r["empty"]]
        rec: dict[str, Any] = {"strategy": strategy, "n": len(ok), "errors": len(mine) - len(ok)}
        if counterfactual:
            judged = [float(r["success"]) for r in ok if _counterfactual(r)]
            ci = bootstrap_ci(judged, n_boot, seed)
            rec.update(
                success_rate=_mean(judged),
                success_low=ci[0] if ci else None,
                success_high=ci[1] if ci else None,
                common_rate=_mean([float(r["common_hit"]) for r in ok if _counterfactual(r)]),
            )
            gain, gain_ci = _paired_gain(rows, strategy, baseline, n_boot, seed)
            rec.update(success_gain=gain, success_gain_low=gain_ci[0] if gain_ci else None,
                       success_gain_high=gain_ci[1] if gain_ci else None)
            agreeing = [float(r["success"]) for r in ok if r.get("agrees")]
            if agreeing or any(r.get("agrees") for r in rows):
                rec["agree_success_rate"] = _mean(agreeing)
            if any(r.get("unanswerable") for r in rows):
                rec["unanswerable_decline_rate"] = _mean([float(r["declined"]) for r in ok if r.get("unanswerable")])
                rec["unanswerable_common_rate"] = _mean([float(r["common_hit"]) for r in ok
                                                         if r.get("unanswerable")])
        faith = [r["faithfulness"] for r in answered if r["faithfulness"] is not None]
        guide = [r["guide_score"] for r in answered if r.get("guide_score") is not None]
        rec.update(
            abstention_rate=_mean([float(r["abstained"]) for r in ok]),
            faithfulness=_mean(faith),
            informativeness=_mean([float(r["n_claims"]) for r in ok]),
            answer_tokens=_mean([float(r["num_tokens"]) for r in answered]),
            answer_sentences=_mean([float(r["n_sentences"]) for r in answered]),
            generated_tokens=_mean([float(r["generated_tokens"]) for r in ok]),
            backtracks=_mean([float(r["trace_counts"].get("backtrack", 0)) for r in ok]),
            guide_score=_mean(guide),
            seconds=_mean([float(r["seconds"]) for r in ok]),
        )
        records.append(rec)
    return _frame(records)


def topic_table(rows: Sequence[Mapping[str, Any]], strategies: Sequence[str]) -> pd.DataFrame | None:
    """Success rate per topic (rows) and strategy (columns), with the number of items; ``None`` without topics."""
    judged = [r for r in rows if _counterfactual(r) and not r.get("error") and r.get("topic")]
    if not judged:
        return None
    records = []
    for topic in dict.fromkeys(r["topic"] for r in judged):
        rec: dict[str, Any] = {"topic": topic, "items": len({r["id"] for r in judged if r["topic"] == topic})}
        for s in strategies:
            rec[s] = _mean([float(r["success"]) for r in judged if r["topic"] == topic and r["strategy"] == s])
        records.append(rec)
    return _frame(records)


__all__ = ["baseline_strategy", "bootstrap_ci", "summarize", "topic_table"]
