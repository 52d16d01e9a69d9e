"""Pool several ``faithwatch eval-decoding`` reports into one table (issue 12, the fresh check sets).

Reads each report's ``answers.jsonl`` or ``answers.jsonl.gz`` (item ids must differ between the sets) and prints
the same columns as ``eval-decoding``: success on the counterfactual items, the paired bootstrap gain over greedy,
and success on the agreeing items. No model runs; a second.

    python training/experiments/pool_decoding.py docs/results/decoding-fresh2 docs/results/decoding-fresh3 \
        docs/results/decoding-fresh4

``FOLDER:STRATEGY`` reads only that strategy's rows of a report (to pool greedy from one run with another
strategy from a later one). ``FOLDER!`` reads a run made with fod-fallback's last resort on as if it had been
off (the default since the thirtieth session): an answer whose trace shows the third search (three ``select``
events) becomes the refusal the previous code gave there, the method of docs/decoding_eval.md ("The last resort,
measured").
"""

from __future__ import annotations

import sys

from faithwatch.eval.decoding import read_answers
from faithwatch.eval.decoding_summary import summarize


def as_refusal(row: dict) -> dict:
    """The row as a refusal (what fod-fallback without its last resort answers where the third search ran)."""
    out = dict(row, abstained=True, empty=False, success=False, common_hit=False)
    return out | ({"declined": True} if row.get("unanswerable") else {})


def main(folders: list[str]) -> None:
    rows = []
    for spec in folders:
        folder, _, only = spec.partition(":")
        no_last_resort = folder.endswith("!")
        folder = folder.rstrip("!")
        read = read_answers(folder)
        if no_last_resort:
            read = [as_refusal(r) if r["trace_counts"].get("select", 0) >= 3 else r for r in read]
        rows += [r for r in read if not only or r["strategy"] == only]
    ids = [(r["strategy"], r["id"]) for r in rows]
    if len(ids) != len(set(ids)):
        raise SystemExit("the same (strategy, id) occurs in two reports: pool only sets with distinct item ids")
    strategies = list(dict.fromkeys(r["strategy"] for r in rows))
    n_cf = len({r["id"] for r in rows if "success" in r and not r.get("agrees")})
    n_agree = len({r["id"] for r in rows if r.get("agrees")})
    table = summarize(rows, strategies)
    cols = ["strategy", "success_rate", "success_gain", "success_gain_low", "success_gain_high", "agree_success_rate"]
    print(f"{len(folders)} reports: {n_cf} counterfactual items, {n_agree} agreeing")
    print(table[cols].to_string(index=False, float_format=lambda x: f"{x:.3f}"))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    main(sys.argv[1:])
