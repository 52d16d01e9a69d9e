"""faithwatch proxy on this machine: the latency it adds per sentence, and FOD over the API on the counterfactual set.

Upstream: `faithwatch serve`'s /v1/chat/completions with the embedded SmolLM2-135M-Instruct (greedy); local copy:
the embedded model with the shipped detector (or ``--local none``: model-free signals). Both run in this process
(two uvicorn threads), as in the offline README example.

    python bench/proxy.py latency          # added seconds per sentence / the upstream's own seconds per sentence
    python bench/proxy.py counterfactual   # success of fod through the proxy vs the greedy upstream
    python bench/proxy.py choices          # serve's n choices in one batch vs the same choices one at a time

``latency``: each question is answered three ways in one run: straight from the upstream (streamed), through the
proxy with ``annotate`` (text passes at once; each verdict follows its sentence) and with ``abstain`` (each
sentence is held until scored). Per sentence: the upstream's own time, the proxy's scoring time (teacher forcing
and signals of the call that made the sentence final, from the verdicts' ``latency_ms``), and the ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from servers import serve  # noqa: E402  (the same uvicorn-in-a-thread helper as the tests)

QUESTIONS = [
    ("When was the Eiffel Tower built, and how tall is it?",
     "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris. It was built from 1887 to "
     "1889 by the company of Gustave Eiffel. It is 330 metres tall and was the tallest man-made structure for 41 "
     "years."),
    ("What does the museum offer?",
     "The city museum opens at nine in the morning and closes at six in the evening. It holds a collection of "
     "Roman coins, a library of old maps and a hall of paintings by local artists. Entry is free on Sundays."),
    ("How did the company do in 2023?",
     "The company reported revenue of 4.2 billion dollars in 2023, up 12 percent from the previous year. Its "
     "profit fell to 300 million dollars because of higher energy costs. It plans to open two factories."),
]


def _stream(url: str, body: dict) -> tuple[float, list[dict], str]:
    start, notes, text = time.perf_counter(), [], ""
    with httpx.stream("POST", url + "/v1/chat/completions", json={**body, "stream": True}, timeout=600) as r:
        for line in r.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            event = json.loads(line[6:])
            if "error" in event:
                raise RuntimeError(event["error"])
            for choice in event.get("choices", []):
                text += choice["delta"].get("content") or ""
            note = event.get("faithwatch") or {}
            if "sentence" in note:
                notes.append(note)
    return time.perf_counter() - start, notes, text


def _servers(args):
    from faithwatch.monitor import Monitor
    from faithwatch.proxy import ProxySettings, Upstream, create_proxy_app
    from faithwatch.server import create_app

    upstream_monitor = Monitor(alignment="none", signals=["likelihood"], detector="heuristic")
    local = Monitor(None if args.local == "embedded" else args.local)
    return upstream_monitor, local, ProxySettings, Upstream, create_proxy_app, create_app


def latency(args) -> None:
    from faithwatch.proxy import split_request

    upstream_monitor, local, ProxySettings, Upstream, create_proxy_app, create_app = _servers(args)
    with serve(create_app(upstream_monitor, max_new_tokens=args.tokens)) as up:
        base = {"max_tokens": args.tokens, "temperature": 0}
        for q, c in QUESTIONS[:1]:  # warm-up
            _stream(up, {**base, "messages": [{"role": "user", "content": q}], "context": c})
        rows = {"upstream": [], "annotate": [], "abstain": []}  # seconds per answer
        per_sentence: list[float] = []  # the upstream's seconds per sentence
        scoring: list[float] = []
        refused = 0
        for policy in ("annotate", "abstain"):
            app = create_proxy_app(local, Upstream(up + "/v1"), ProxySettings(policy=policy))
            with serve(app) as px:
                for q, c in QUESTIONS:
                    body = {**base, "messages": [{"role": "user", "content": q}], "context": c}
                    direct, _, direct_text = _stream(up, split_request(body).body)
                    took, notes, text = _stream(px, body)
                    rows[policy].append(took)
                    if policy == "annotate":
                        assert text == direct_text, "annotate must pass the upstream's answer unchanged"
                        rows["upstream"].append(direct)
                        per_sentence.append(direct / max(1, len(notes)))
                        scoring += [note["latency_ms"] / 1000 for note in notes]
                    else:
                        refused += any(n["verdict"] == "flagged" for n in notes)
    up_s, score_s = statistics.mean(per_sentence), statistics.mean(scoring)
    print(f"{len(QUESTIONS)} answers of up to {args.tokens} tokens; local copy {local.model_id}, detector "
          f"{local.detector.name}; upstream {upstream_monitor.model_id} (greedy); both on this machine's cores")
    print(f"upstream alone           {up_s:7.3f} s per sentence   (baseline)")
    print(f"added by the proxy       {score_s:7.3f} s per sentence   {score_s / up_s:5.2f}x the upstream's time "
          "(teacher forcing + signals in the call that made the sentence final)")
    answer = statistics.mean(rows["upstream"])
    print(f"per answer: upstream alone {answer:.2f} s; through the proxy, annotate "
          f"{statistics.mean(rows['annotate']):.2f} s ({statistics.mean(rows['annotate']) / answer:.2f}x, the "
          f"local copy and the upstream share the cores); abstain {statistics.mean(rows['abstain']):.2f} s "
          f"({refused} of {len(QUESTIONS)} answers refused)")


def counterfactual(args) -> None:
    from faithwatch.decoding.counterfactual import judge, load_counterfactual
    from faithwatch.proxy import split_request

    upstream_monitor, local, ProxySettings, Upstream, create_proxy_app, create_app = _servers(args)
    items = load_counterfactual()[:: args.every][: args.limit or None]
    out = {"greedy": [], "fod": []}
    agree = {"greedy": [], "fod": []}
    with serve(create_app(upstream_monitor, max_new_tokens=args.tokens)) as up:
        settings = ProxySettings(policy="fod", tau1=args.tau1, tau2=args.tau2, samples=args.samples,
                                 max_sentence_tokens=32, max_sentences=4)
        with serve(create_proxy_app(local, Upstream(up + "/v1"), settings)) as px:
            for n, item in enumerate(items, 1):
                body = {"messages": [{"role": "user", "content": item.question}], "context": item.context,
                        "max_tokens": args.tokens, "temperature": 0}
                for name, url in (("greedy", up), ("fod", px)):
                    sent = body if name == "fod" else split_request(body).body
                    answer = httpx.post(url + "/v1/chat/completions", json=sent, timeout=600).json()
                    text = answer["choices"][0]["message"]["content"]
                    refused = bool((answer.get("faithwatch") or {}).get("summary", {}).get("refused"))
                    ok = judge(text, item, refused=refused).success
                    (out if item.kind == "counterfactual" else agree)[name].append(ok)
                print(f"\r{n}/{len(items)}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    for name in ("greedy", "fod"):
        cf, ag = out[name], agree[name]
        print(f"{name:<7} counterfactual success {sum(cf) / max(1, len(cf)):.3f} ({sum(cf)}/{len(cf)}); agreeing "
              f"items {sum(ag) / max(1, len(ag)):.3f} ({sum(ag)}/{len(ag)})")


def choices(args) -> None:
    """Seconds for ``n`` = ``--samples`` choices of ``--tokens`` tokens (what FOD over the API asks per step):
    generated together (branches of one session, as serve does) and one after the other (n requests of one
    choice, the same seeds), in the same run; the same texts either way."""
    from faithwatch.models.loading import load_model
    from faithwatch.server.chat import ChatRequest, generate_choices

    lm = load_model(None)
    rows = []
    for question, context in QUESTIONS:
        messages = [{"role": "user", "content": f"{context}\n\nQuestion: {question}"}]
        ask = dict(messages=messages, temperature=1.0, seed=3)
        generate_choices(lm, ChatRequest(**ask, n=1), 2, lambda: None)  # warm-up
        start = time.perf_counter()
        together = generate_choices(lm, ChatRequest(**ask, n=args.samples), args.tokens, lambda: None)
        mid = time.perf_counter()
        alone = [generate_choices(lm, ChatRequest(**{**ask, "seed": 3 + i}, n=1), args.tokens, lambda: None)[0]
                 for i in range(args.samples)]
        end = time.perf_counter()
        same = sum(a["message"] == b["message"] for a, b in zip(together, alone, strict=True))
        rows.append((end - mid, mid - start))
        print(f"{question[:40]:<42} one at a time {end - mid:6.2f} s, together {mid - start:6.2f} s "
              f"({(end - mid) / (mid - start):4.2f}x); {same}/{args.samples} choices identical", flush=True)
    alone_s, together_s = (sum(r[i] for r in rows) for i in (0, 1))
    print(f"all: {args.samples} choices of {args.tokens} tokens, together {alone_s / together_s:.2f}x faster than "
          "one at a time")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["latency", "counterfactual", "choices"])
    parser.add_argument("--local", default="embedded", help="the local copy: embedded, or none (model-free)")
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--limit", type=int, default=0, help="counterfactual: first N items (0: all)")
    parser.add_argument("--every", type=int, default=1, help="counterfactual: every N-th item (a stratified subset)")
    parser.add_argument("--samples", type=int, default=6, help="fod: continuations per step (S)")
    parser.add_argument("--tau1", type=float, default=None)
    parser.add_argument("--tau2", type=float, default=None)
    args = parser.parse_args()
    {"latency": latency, "counterfactual": counterfactual, "choices": choices}[args.what](args)


if __name__ == "__main__":
    main()
