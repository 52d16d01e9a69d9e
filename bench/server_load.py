"""Load check of the HTTP server (not a timed test): concurrent requests from this process to a server process.

By default it starts ``python -m faithwatch.server`` (= ``faithwatch serve``) on 127.0.0.1 with a free port,
waits for /healthz, then for each concurrency level (default 1, 4, 16) sends a bounded number of requests
(--requests) within a bounded time (--duration) and prints throughput, p50/p99 latency and error counts
(503 "queue full" counted apart). ``--url`` targets a running server instead (loopback only).

    python bench/server_load.py --model tests-model-dir --endpoint monitor --requests 16 --max-new-tokens 24

``--batch-rows 1,16`` starts one server per value (``faithwatch serve --batch-rows``: concurrent /v1/monitor
streams decoded as rows of one batch) and prints, in the same run, each server's throughput at the highest
concurrency against its own at 1 client, and the batched servers' against the unbatched one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from urllib.parse import urlparse

import httpx

CONTEXT = ("The Eiffel Tower is a wrought iron lattice tower on the Champ de Mars in Paris, France. It is named "
           "after the engineer Gustave Eiffel, whose company designed and built the tower from 1887 to 1889.")
QUESTION = "Who built the Eiffel Tower, and when?"
RESPONSE = "Gustave Eiffel's company built it. Construction ran from 1887 to 1889."


@dataclass
class Level:
    """Outcome of one concurrency level."""

    concurrency: int
    latencies: list[float] = field(default_factory=list)
    first_event: list[float] = field(default_factory=list)
    rejected: int = 0  # 503 queue full
    errors: dict[str, int] = field(default_factory=dict)
    wall_s: float = 0.0

    def error(self, what: str) -> None:
        self.errors[what] = self.errors.get(what, 0) + 1


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def _body(endpoint: str, max_new_tokens: int) -> tuple[str, dict]:
    if endpoint == "monitor":
        return "/v1/monitor", {"question": QUESTION, "context": CONTEXT, "max_new_tokens": max_new_tokens}
    if endpoint == "generate":
        return "/v1/generate", {"question": QUESTION, "context": CONTEXT, "strategy": "greedy",
                                "max_new_tokens": max_new_tokens}
    if endpoint == "check":
        return "/v1/check", {"response": RESPONSE, "contexts": [CONTEXT], "alignment": "lexical"}
    return "/v1/score", {"records": [{"question": QUESTION, "context": CONTEXT, "response": RESPONSE}]}


async def _one(client: httpx.AsyncClient, endpoint: str, max_new_tokens: int, level: Level) -> None:
    path, body = _body(endpoint, max_new_tokens)
    start = time.perf_counter()
    try:
        if endpoint == "monitor":
            async with client.stream("POST", path, json=body) as response:
                if response.status_code != 200:
                    await response.aread()
                    _count_status(response.status_code, level)
                    return
                failed, first = None, None
                async for line in response.aiter_lines():
                    if line.startswith("event: sentence") and first is None:
                        first = time.perf_counter() - start
                    if line.startswith("event: error"):
                        failed = "stream error event"
                if first is not None:
                    level.first_event.append(first)
                if failed:
                    level.error(failed)
                    return
        else:
            response = await client.post(path, json=body)
            if response.status_code != 200:
                _count_status(response.status_code, level)
                return
    except httpx.HTTPError as exc:
        level.error(type(exc).__name__)
        return
    level.latencies.append(time.perf_counter() - start)


def _count_status(status: int, level: Level) -> None:
    if status == 503:
        level.rejected += 1
    else:
        level.error(f"HTTP {status}")


async def _run_level(url: str, endpoint: str, concurrency: int, requests: int, duration: float,
                     max_new_tokens: int, timeout: float) -> Level:
    level = Level(concurrency)
    remaining = requests
    stop_at = time.monotonic() + duration
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, timeout=timeout, limits=limits) as client:

        async def worker() -> None:
            nonlocal remaining
            while remaining > 0 and time.monotonic() < stop_at:
                remaining -= 1
                await _one(client, endpoint, max_new_tokens, level)

        start = time.perf_counter()
        try:
            await asyncio.wait_for(asyncio.gather(*(worker() for _ in range(concurrency))), duration + timeout)
        except asyncio.TimeoutError:  # not the builtin before Python 3.11
            level.error("bench deadline")
        level.wall_s = time.perf_counter() - start
    return level


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start_server(args: argparse.Namespace, rows: int) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    cmd = [sys.executable, "-m", "faithwatch.server", "--host", "127.0.0.1", "--port", str(port),
           "--queue-size", str(args.queue_size), "--timeout", str(args.timeout), "--log-level", "warning",
           "--check-alignment", "lexical", "--threads", str(args.threads), "--batch-rows", str(rows)]
    if args.model:
        cmd += ["--model", args.model]
    if args.detector:
        cmd += ["--detector", args.detector]
    cmd += shlex.split(args.server_args)
    env = {**os.environ, "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1")}
    proc = subprocess.Popen(cmd, env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + args.startup_timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with {proc.returncode}")
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    proc.terminate()
    raise SystemExit("the server did not come up in time")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="A running server on loopback (default: start one).")
    parser.add_argument("--model", help="Model of the started server (default: embedded SmolLM2-135M).")
    parser.add_argument("--detector", help="Detector of the started server.")
    parser.add_argument("--server-args", default="", help="More options of the started server, e.g. "
                        "'--device cuda --alignment lexical'.")
    parser.add_argument("--endpoint", choices=("score", "monitor", "generate", "check"), default="score")
    parser.add_argument("--concurrency", default="1,4,16", help="Comma-separated levels.")
    parser.add_argument("--requests", type=int, default=16, help="Requests per level (upper bound).")
    parser.add_argument("--duration", type=float, default=60.0, help="Seconds per level (upper bound).")
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--queue-size", type=int, default=8, help="Queue of the started server.")
    parser.add_argument("--threads", type=int, default=1, help="torch threads of the started server.")
    parser.add_argument("--timeout", type=float, default=120.0, help="Per-request timeout (client and server).")
    parser.add_argument("--startup-timeout", type=float, default=180.0)
    parser.add_argument("--batch-rows", default="16", help="Comma-separated --batch-rows of started servers "
                        "(e.g. 1,16: unbatched and batched in one run).")
    parser.add_argument("--json", action="store_true", help="Print one JSON line per level too.")
    args = parser.parse_args()
    levels = [int(x) for x in args.concurrency.split(",") if x.strip()]
    if args.requests < 1 or args.duration <= 0 or not levels or min(levels) < 1:
        parser.error("--requests, --duration and every concurrency level must be positive")

    rows_list = [int(x) for x in args.batch_rows.split(",") if x.strip()]
    if args.url:
        host = urlparse(args.url).hostname
        if host not in ("127.0.0.1", "localhost", "::1"):
            parser.error("--url must be a loopback address")
        rows_list = [0]  # the running server's own setting
    rates: dict[int, dict[int, float]] = {}
    for rows in rows_list:
        rates[rows] = _run_server(args, levels, rows)
    top, low = max(levels), min(levels)
    print("\nratios (same run):")
    for rows, by_level in rates.items():
        name = "running server" if rows == 0 else f"--batch-rows {rows}"
        if by_level.get(low):
            print(f"  {name}: {top} clients / {low} client(s) = {by_level[top] / by_level[low]:.2f}x")
    if 1 in rates and rates[1].get(top):
        for rows, by_level in rates.items():
            if rows != 1:
                print(f"  --batch-rows {rows} / --batch-rows 1 at {top} clients = "
                      f"{by_level[top] / rates[1][top]:.2f}x")


def _run_server(args: argparse.Namespace, levels: list[int], rows: int) -> dict[int, float]:
    """Start a server (or use --url), run every level; returns throughput per level."""
    proc = None
    if args.url:
        url = args.url.rstrip("/")
    else:
        proc, url = _start_server(args, rows)
    rates: dict[int, float] = {}
    try:
        health = httpx.get(url + "/healthz", timeout=5).json()
        print(f"\nserver {url}: model {health['model_id']}, detector {health['detector']}, queue limit "
              f"{health['queue']['queue_size']}, workers {health['queue']['workers']}, batch rows "
              f"{(health.get('live_batch') or {}).get('max_rows', 1)}; endpoint /v1/{args.endpoint}")
        print(f"{'conc':>4} {'sent':>5} {'ok':>4} {'503':>4} {'err':>4} {'req/s':>7} {'p50 s':>7} {'p99 s':>7} "
              f"{'first s':>7} {'rows/step':>9}  errors")
        for concurrency in levels:
            before = (httpx.get(url + "/healthz", timeout=5).json().get("live_batch") or {})
            level = asyncio.run(_run_level(url, args.endpoint, concurrency, args.requests, args.duration,
                                           args.max_new_tokens, args.timeout))
            after = (httpx.get(url + "/healthz", timeout=5).json().get("live_batch") or {})
            ok = len(level.latencies)
            errors = sum(level.errors.values())
            sent = ok + level.rejected + errors
            rate = ok / level.wall_s if level.wall_s else 0.0
            rates[concurrency] = rate
            p50, p99 = _pct(level.latencies, 0.5), _pct(level.latencies, 0.99)
            first = statistics.median(level.first_event) if level.first_event else None
            rows_per_step = _rows_per_step(before, after)

            def f(v: float | None) -> str:
                return "—" if v is None else f"{v:.3f}"

            print(f"{concurrency:>4} {sent:>5} {ok:>4} {level.rejected:>4} {errors:>4} {rate:>7.2f} {f(p50):>7} "
                  f"{f(p99):>7} {f(first):>7} {f(rows_per_step):>9}  {level.errors or ''}")
            if args.json:
                print(json.dumps({"batch_rows": rows, "concurrency": concurrency, "sent": sent, "ok": ok,
                                  "rejected_503": level.rejected, "errors": level.errors, "throughput_rps": rate,
                                  "p50_s": p50, "p99_s": p99, "median_first_sentence_s": first,
                                  "mean_rows_per_step": rows_per_step, "wall_s": level.wall_s}))
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
    return rates


def _rows_per_step(before: dict, after: dict) -> float | None:
    """Mean rows per forward step of the live batch during a level (from /healthz before and after)."""
    steps = (after.get("steps") or 0) - (before.get("steps") or 0)
    if steps <= 0 or not after.get("mean_rows_per_step"):
        return None
    rows_after = after["mean_rows_per_step"] * after["steps"]
    rows_before = (before.get("mean_rows_per_step") or 0) * (before.get("steps") or 0)
    return (rows_after - rows_before) / steps


if __name__ == "__main__":
    main()
