"""What the proxy does with each scored sentence of the upstream's answer.

* ``annotate``: pass every piece through as it arrives; each sentence's score follows as soon as it is final.
* ``abstain``: hold each sentence until it is scored; at the first flagged one, stop the upstream and end the
  answer with the refusal sentence (marked as such).
* ``fod``: FOD over the API (paper 000 Algorithm 1). Sentences pass while they score >= tau1; at the first that
  does not, the upstream stream is stopped, and a sentence-level beam search runs from the faithful prefix: for
  each open beam, ask the upstream for continuations (``n``; the prefix as a partial assistant message with
  ``continue_final_message``, or re-prompted), keep each one's first sentence, score it locally, prune those
  below tau2 and keep the K beams of best mean score, until a beam ends. The chosen beam's sentences follow.
  With ``no_repeat`` (the default, as in :class:`~faithwatch.params.DecodingParams`), a sentence that says one already
  in the answer again counts as a low one in both stages.

Each policy is an async generator of :class:`Delta` (text for the client), :class:`Note` (a sentence's verdict)
and one final :class:`Done`. Every decision also goes into the trace (:class:`~faithwatch.decoding.TraceEvent`).
"""

from __future__ import annotations

import asyncio
import copy
import math
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from faithwatch.decoding.types import REFUSAL, REPEATED, TraceEvent
from faithwatch.monitor import Monitor
from faithwatch.params import DecodingParams
from faithwatch.proxy.request import RagRequest
from faithwatch.proxy.upstream import Upstream, UpstreamError
from faithwatch.results import SentenceReport, response_score, verdict_notes
from faithwatch.server.domain import RecentScores
from faithwatch.text import repeats, split_sentences
from faithwatch.watch import StreamWatch

POLICIES = ("annotate", "abstain", "fod")
#: the :class:`ProxySettings` fields that only some policies read, by policy (fod flags at tau1, not threshold)
POLICY_READS = {"annotate": ("threshold",), "abstain": ("threshold",),
                "fod": ("tau1", "tau2", "beams", "samples", "temperature", "no_repeat", "continuation")}
CONTINUATIONS = ("continue", "reprompt")


@dataclass
class Delta:
    """Text for the client (and the upstream's log-probabilities of it, when the client asked for them)."""

    text: str
    logprobs: list[dict[str, Any]] | None = None


@dataclass
class Note:
    """A sentence's verdict."""

    report: SentenceReport
    latency_s: float
    refusal: bool = False
    candidate: bool = False  # a continuation FOD's search scored (not sent unless its beam is chosen)


@dataclass
class Done:
    """The answer ended: why, and the summary."""

    finish_reason: str
    summary: dict[str, Any]


Event = Delta | Note | Done


@dataclass
class ProxySettings:
    """How the proxy treats answers. ``tau1``/``tau2``/``threshold`` default to the monitor's threshold."""

    policy: str = "annotate"
    threshold: float | None = None  # annotate/abstain: flag below this
    tau1: float | None = None
    tau2: float | None = None
    beams: int = DecodingParams().beams
    samples: int = DecodingParams().samples
    temperature: float = DecodingParams().temperature
    max_sentence_tokens: int = DecodingParams().max_sentence_tokens
    max_sentences: int = 12  # FOD: beam-search steps at most
    continuation: str = "continue"
    refusal: str = REFUSAL
    logprobs: bool = False  # ask the upstream for log-probabilities (top 5) for the api signal
    seed: int = 0
    no_repeat: bool = DecodingParams().no_repeat  # fod: a repeated sentence counts as a low one

    def resolve(self, which: str, base: float) -> float:
        """``threshold``, ``tau1``, ``tau2`` or ``flag`` (the one the policy flags at: tau1 for fod), ``base``
        (the monitor's threshold) where unset."""
        which = ("tau1" if self.policy == "fod" else "threshold") if which == "flag" else which
        value = {"threshold": self.threshold, "tau1": self.tau1, "tau2": self.tau2}[which]
        return base if value is None else value

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise ValueError(f"unknown policy {self.policy!r}; choose one of {', '.join(POLICIES)}")
        if self.continuation not in CONTINUATIONS:
            raise ValueError(f"continuation must be one of {', '.join(CONTINUATIONS)}")
        if self.beams < 1 or self.samples < 1 or self.max_sentences < 1:
            raise ValueError("beams, samples and max_sentences must be at least 1")


class Scoring:
    """Runs the monitor's work on one worker thread (one model-heavy job at a time), off the event loop; keeps the
    scores of the latest sentences sent to clients (``/healthz``'s ``domain``)."""

    def __init__(self, monitor: Monitor) -> None:
        self.monitor = monitor
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="faithwatch-proxy")
        self.recent = RecentScores()

    async def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run ``fn(*args)`` on the scoring thread, awaited."""
        return await asyncio.get_running_loop().run_in_executor(self.executor, fn, *args)

    def shutdown(self) -> None:
        """Stop the scoring thread, dropping queued calls."""
        self.executor.shutdown(wait=False, cancel_futures=True)


@dataclass
class Run:
    """One proxied answer."""

    rag: RagRequest
    upstream: Upstream
    scoring: Scoring
    settings: ProxySettings
    client_logprobs: bool = False
    meta: dict[str, Any] = field(default_factory=dict)  # id / model / created of the upstream's answer
    trace: list[TraceEvent] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    calls: int = 0  # requests this answer sent upstream (retries included)

    def count_call(self) -> None:
        """Count one request sent upstream."""
        self.calls += 1

    @property
    def monitor(self) -> Monitor:
        """The monitor that scores this answer."""
        return self.scoring.monitor

    def threshold(self, which: str) -> float:
        """The flag threshold ``which`` names, the monitor's by default."""
        return self.settings.resolve(which, self.monitor.threshold)

    def note(self, report: SentenceReport, latency: float, flag_below: float, candidate: bool = False) -> Note:
        """Record a scored sentence (flagged below ``flag_below``) and its scoring latency."""
        report.flagged = report.below(flag_below)
        note = Note(report, latency, candidate=candidate)
        self.notes.append(note)
        return note

    def done(self, finish_reason: str, refused: bool) -> Done:
        """The answer's end: its summary, and the scores of the sentences sent kept among the recent ones."""
        self.scoring.recent.add(n.report.score for n in self.notes if not n.candidate)
        self.scoring.recent.add_context(self.rag.context)
        return Done(finish_reason, self.summary(refused))

    def summary(self, refused: bool) -> dict[str, Any]:
        """The answer's summary: its sentences' verdicts (those sent to the client; FOD's other candidates only
        counted), latencies, this answer's upstream calls and the trace."""
        latencies = [n.latency_s for n in self.notes]
        sent = [n for n in self.notes if not n.candidate]
        score = response_score([n.report.score for n in sent], [n.report.set_aside for n in sent])
        return {
            "policy": self.settings.policy, "context_source": self.rag.source, "refused": refused,
            "sentences": len(sent), "flagged": sum(n.report.flagged for n in sent),
            "candidates_scored": len(self.notes) - len(sent),
            "score": score, "threshold": self.threshold("flag"),
            "detector": self.monitor.detector.name, "model_id": self.monitor.model_id,
            "latency_ms": {"mean": round(1000 * sum(latencies) / len(latencies), 2) if latencies else None,
                           "max": round(1000 * max(latencies), 2) if latencies else None},
            "upstream_calls": self.calls, "trace": [e.to_dict() for e in self.trace],
            "notes": verdict_notes(self.rag.context, [n.report for n in sent]),
        }

    def stream_body(self) -> dict[str, Any]:
        """The upstream request body for a streamed answer: one choice, with log-probabilities if the settings ask."""
        body = {**self.rag.body, "n": 1}
        if self.settings.logprobs and not body.get("logprobs"):
            body.update(logprobs=True, top_logprobs=5)
        return body


def _choice(chunk: dict[str, Any]) -> dict[str, Any] | None:
    choices = chunk.get("choices") or []
    return next((c for c in choices if isinstance(c, dict) and c.get("index", 0) == 0), None)


def _entries(choice: dict[str, Any]) -> list[dict[str, Any]]:
    logprobs = choice.get("logprobs") or {}
    return [e for e in (logprobs.get("content") or []) if isinstance(e, dict) and "logprob" in e]


def _as_tokens(entries: list[dict[str, Any]]) -> list[tuple[str, float, list[float]]]:
    return [(str(e.get("token", "")), float(e["logprob"]),
             [float(t["logprob"]) for t in e.get("top_logprobs") or [] if "logprob" in t]) for e in entries]


async def _pieces(run: Run) -> AsyncIterator[tuple[str, list[dict[str, Any]], str | None]]:
    """(text, log-probability entries, finish reason) of the upstream's streamed answer."""
    async with run.upstream.stream(run.stream_body(), run.count_call) as chunks:
        async for chunk in chunks:
            for key in ("id", "model", "created", "system_fingerprint"):
                if key in chunk and key not in run.meta:
                    run.meta[key] = chunk[key]
            choice = _choice(chunk)
            if choice is None:
                continue
            text = (choice.get("delta") or {}).get("content") or ""
            yield text, _entries(choice), choice.get("finish_reason")


async def annotate(run: Run) -> AsyncIterator[Event]:
    """Everything passes through; each sentence's verdict follows it."""
    watch: StreamWatch = await run.scoring.call(run.monitor.watch, run.rag.question, run.rag.context)
    finish = "stop"
    flag_below = run.threshold("threshold")
    async for text, entries, reason in _pieces(run):
        finish = reason or finish
        if text or entries:
            yield Delta(text, entries if run.client_logprobs else None)
        for report in await run.scoring.call(watch.add, text, _as_tokens(entries)):
            yield run.note(report, watch.latencies[report.index], flag_below)
    for report in await run.scoring.call(watch.finish):
        yield run.note(report, watch.latencies[report.index], flag_below)
    yield run.done(finish, refused=False)


async def abstain(run: Run) -> AsyncIterator[Event]:
    """Sentences are released once scored; the first flagged one ends the answer with the refusal."""
    async for event in _gated(run, run.threshold("threshold"), backtrack=False):
        yield event


async def fod(run: Run) -> AsyncIterator[Event]:
    """Greedy sentences while they score >= tau1, then a sentence-level beam search over the upstream."""
    async for event in _gated(run, run.threshold("tau1"), backtrack=True):
        yield event


async def _gated(run: Run, gate: float, backtrack: bool) -> AsyncIterator[Event]:
    watch: StreamWatch = await run.scoring.call(run.monitor.watch, run.rag.question, run.rag.context)
    sent = 0  # characters of the answer released to the client
    finish, failed = "stop", None
    said: list[str] = []  # the sentences released so far (fod: a repeat of one backtracks)
    pieces = _pieces(run)
    try:
        ended = False
        while failed is None:
            try:
                text, entries, reason = await pieces.__anext__()
                finish = reason or finish
                reports = await run.scoring.call(watch.add, text, _as_tokens(entries))
            except StopAsyncIteration:
                ended = True
                reports = await run.scoring.call(watch.finish)
            for report in reports:
                yield run.note(report, watch.latencies[report.index], gate)
                if report.below(gate) or (backtrack and run.settings.no_repeat and repeats(report.text, said)):
                    failed = report
                    break
                said.append(report.text)
                run.trace.append(TraceEvent("accept", report.index, report.text, report.score, 0,
                                            reason=f"score >= {gate:.3g}"))
                yield Delta(watch.tracker.text[sent : report.end])
                sent = report.end
            if ended:
                break
    finally:
        await pieces.aclose()  # stops the upstream's generation
    if failed is None:
        yield Delta(watch.tracker.text[sent:])
        yield run.done(finish, refused=False)
        return
    prefix = watch.tracker.text[:sent]
    if not backtrack:
        run.trace.append(TraceEvent("refuse", failed.index, failed.text, failed.score, 0,
                                    reason=f"score below {gate:.3g}; the upstream was stopped"))
        yield Delta(("" if not prefix or prefix[-1].isspace() else " ") + run.settings.refusal)
        yield run.done("stop", refused=True)
        return
    why = f"below tau1={gate:.3g}" if failed.below(gate) else REPEATED
    run.trace.append(TraceEvent("backtrack", failed.index, failed.text, failed.score, 0,
                                reason=f"{why}; the upstream was stopped"))
    accepted = [n.report.score for n in run.notes if n.report.end <= sent]
    best = await _beam_search(run, prefix, accepted, len(accepted))
    if best is None:
        yield Delta(("" if not prefix or prefix[-1].isspace() else " ") + run.settings.refusal)
        yield run.done("stop", refused=True)
        return
    for note in best.notes:  # the chosen continuation's verdicts, sent like the others
        note.candidate = False
        yield note
    yield Delta(best.text[sent:])
    yield run.done("stop", refused=False)


@dataclass
class _Beam:
    text: str
    scores: list[float]
    finished: bool = False
    notes: list[Note] = field(default_factory=list)  # the verdicts of the sentences this search added

    @property
    def mean(self) -> float:
        return sum(self.scores) / len(self.scores) if self.scores else 0.0


async def _beam_search(run: Run, prefix: str, scores: list[float], step: int) -> _Beam | None:
    """Paper 000 Algorithm 1, stage 2, over the upstream; ``None`` when nothing faithful was found."""
    s, tau2 = run.settings, run.threshold("tau2")
    beams = [_Beam(prefix, list(scores))]
    for _ in range(s.max_sentences):
        open_beams = [b for b in beams if not b.finished]
        per_beam = math.ceil(s.samples / len(open_beams))
        survivors: list[tuple[_Beam, int]] = [(b, i) for i, b in enumerate(beams) if b.finished]  # carried
        fresh, repeated = 0, False
        for parent, beam in enumerate(open_beams):
            said = split_sentences(beam.text) if s.no_repeat else []  # once per beam, not per candidate
            for cand in await _candidates(run, beam, per_beam, step):
                text = cand.text[len(beam.text):].strip() or "<eos>"
                score = cand.scores[-1] if len(cand.scores) > len(beam.scores) else None
                run.trace.append(TraceEvent("candidate", step, text, score, parent))
                if score is not None and score < tau2:
                    run.trace.append(TraceEvent("prune", step, text, score, parent, reason=f"below tau2={tau2:.3g}"))
                elif score is not None and repeats(text, said):
                    run.trace.append(TraceEvent("prune", step, text, score, parent, reason=REPEATED))
                    repeated = True
                elif any(c.text == cand.text and c.finished == cand.finished for c, _ in survivors):
                    run.trace.append(TraceEvent("drop", step, text, score, parent, reason="the same as another beam"))
                else:
                    survivors.append((cand, parent))
                    fresh += 1
        if not fresh:
            new = " new" if repeated else ""  # some candidates only repeated their answer
            run.trace.append(TraceEvent("stop", step, reason=f"no{new} candidate scored >= tau2={tau2:.3g}"))
            break
        survivors.sort(key=lambda c: -c[0].mean)
        kept = survivors[: s.beams]
        for cand, parent in survivors[s.beams :]:
            run.trace.append(TraceEvent("drop", step, cand.text, cand.mean, parent,
                                        reason=f"not among the {s.beams} best beams"))
        for i, (cand, _) in enumerate(kept):
            run.trace.append(TraceEvent("keep", step, cand.text[len(prefix):], cand.mean, i, reason="beam"))
        beams = [c for c, _ in kept]
        step += 1
        if any(b.finished for b in beams):
            run.trace.append(TraceEvent("stop", step, reason="a beam ended"))
            break
    grown = [b for b in beams if len(b.scores) > len(scores) or b.finished]
    if not grown:
        return None if not prefix.strip() else _Beam(prefix, scores, True)
    best = max(grown, key=lambda b: b.mean)
    run.trace.append(TraceEvent("select", step, best.text, best.mean, beams.index(best), reason="most faithful beam"))
    if not best.text.strip():
        return None
    return best


async def _candidates(run: Run, beam: _Beam, n: int, step: int) -> list[_Beam]:
    """``n`` continuations of ``beam`` by the upstream, each cut after its first new sentence and scored."""
    texts = await _continuations(run, beam.text, n, step)
    out = []
    for text, reason in texts:
        if beam.text and text and not text[0].isspace() and not beam.text[-1].isspace():
            text = " " + text
        full = beam.text + text
        if not full.strip():
            out.append(_Beam(beam.text, list(beam.scores), finished=True, notes=list(beam.notes)))
            continue
        start = time.perf_counter()
        result = await run.scoring.call(run.monitor.score, run.rag.question, run.rag.context, full)
        new = [r for r in result.sentences if r.end > len(beam.text.rstrip())]
        if not new:  # nothing but whitespace: the answer ended
            out.append(_Beam(beam.text, list(beam.scores), finished=True, notes=list(beam.notes)))
            continue
        first = new[0]
        note = run.note(first, time.perf_counter() - start, run.threshold("tau2"), candidate=True)
        ended = reason == "stop" and len(new) == 1
        out.append(_Beam(result.response[: first.end], [*beam.scores, first.score], finished=ended,
                         notes=[*beam.notes, note]))
    return out


async def _continuations(run: Run, prefix: str, n: int, step: int) -> list[tuple[str, str | None]]:
    """``n`` texts continuing ``prefix`` (fewer if the upstream ignores ``n``: then more calls)."""
    s = run.settings
    body = copy.deepcopy({k: v for k, v in run.rag.body.items() if k not in ("logprobs", "top_logprobs",
                                                                              "stream_options")})
    messages = body["messages"]
    if prefix.strip() and s.continuation == "continue":
        messages.append({"role": "assistant", "content": prefix})
        body.update(continue_final_message=True, add_generation_prompt=False)
    elif prefix.strip():
        messages.append({"role": "user", "content": "Continue this answer from where it stops, without repeating "
                                                     f"it:\n\n{prefix}"})
    body.update(temperature=s.temperature, max_tokens=s.max_sentence_tokens)
    out: list[tuple[str, str | None]] = []
    for attempt in range(n):
        body.update(n=n - len(out), seed=s.seed + 1000 * step + attempt)
        data = await run.upstream.complete(body, run.count_call)
        for choice in data.get("choices") or []:
            message = choice.get("message") if isinstance(choice, dict) else None
            if not isinstance(message, dict):
                raise UpstreamError(502, "the upstream sent a choice without a message")
            out.append((message.get("content") or "", choice.get("finish_reason")))
        if len(out) >= n:
            break
    return out[:n]


RUNNERS = {"annotate": annotate, "abstain": abstain, "fod": fod}
