"""Running a decoding strategy (:func:`generate`), the one-beam strategies (greedy, abstention, CAD, AdaCAD) and the
helpers every strategy shares. The searching strategies have a module each: :mod:`.fod` (FOD, FOD-BT, FOD-CAD,
FOD-AdaCAD, FOD-fallback), :mod:`.rerank` (rerank, rerank-coverage) and :mod:`.lookback_guided` (Lookback Lens).

Every strategy runs on :class:`~faithwatch.decoding.loop.DecodingLoop` and returns a
:class:`~faithwatch.decoding.types.DecodingResult` with a trace of every candidate considered.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from faithwatch import registry
from faithwatch.decoding import params_read
from faithwatch.decoding.coverage import Coverage
from faithwatch.decoding.loop import (
    Beam,
    Candidate,
    Chooser,
    DecodingLoop,
    adacad_chooser,
    cad_chooser,
    greedy_chooser,
)
from faithwatch.decoding.types import REFUSAL, DecodingResult, TraceEvent
from faithwatch.params import DEFAULT_STRATEGY, DecodingParams, checked_params
from faithwatch.results import verdict_notes
from faithwatch.text import repeats

if TYPE_CHECKING:
    from faithwatch.models.prompts import PromptPair


@dataclass
class StrategyRun:
    """What a strategy works with: the decoding loop, the monitor, the parameters, the trace it appends to."""

    loop: DecodingLoop
    monitor: Any
    params: DecodingParams
    trace: list[TraceEvent]
    generator: torch.Generator
    lens: Any = None


#: a strategy: ``run -> (the chosen beam, refused)``
Strategy = Callable[[StrategyRun], tuple[Beam, bool]]


def generate(
    monitor,
    question: str,
    context: str,
    strategy: str = DEFAULT_STRATEGY,
    *,
    params: DecodingParams | None = None,
    lens=None,
    instruction: str | None = None,
    **overrides: Any,
) -> DecodingResult:
    """Answer ``question`` from ``context`` with a decoding strategy (see :data:`faithwatch.registry.strategies`).

    Parameters come from ``params`` (default :class:`~faithwatch.params.DecodingParams`) with keyword
    ``overrides`` (``tau1=0.6``, ...); a bad value is an :class:`InputError`. ``adacad`` sets α per token from the
    divergence of the two distributions; ``fod-cad`` runs FOD on CAD's distribution (stage 1 greedy and stage 2
    sampling alike). Sentence scores come from the monitor's detector; ``lens`` (a LookbackLens or its folder)
    guides ``lookback``.
    """
    entry, chosen = _entry_and_params(strategy, params, overrides)
    loop = DecodingLoop(monitor, question, context, max_new_tokens=chosen.max_new_tokens,
                        max_sentence_tokens=chosen.max_sentence_tokens, instruction=instruction)
    run = StrategyRun(loop, monitor, chosen, [], torch.Generator().manual_seed(chosen.seed), lens)
    beam, refused = entry.obj(run)
    return _result(run, strategy, beam, refused)


def _entry_and_params(strategy: str, params: DecodingParams | None, overrides: dict[str, Any]):
    """The registry entry of ``strategy`` and its parameters (``params`` with ``overrides``, then its defaults)."""
    entry = registry.strategies.get(strategy)
    chosen = checked_params(**{**(params.model_dump(exclude_unset=True) if params else {}), **overrides})
    return entry, chosen.for_strategy(entry.options.get("defaults", {}))


#: the one-beam strategies (no search, a deterministic chooser): their chooser from the parameters
_ONE_BEAM: dict[str, Callable[[DecodingParams], Chooser]] = {
    "greedy": lambda p: greedy_chooser(),
    "abstain": lambda p: greedy_chooser(),
    "cad": lambda p: cad_chooser(p.alpha, greedy_chooser()),
    "adacad": lambda p: adacad_chooser(greedy_chooser()),
}


@dataclass(frozen=True)
class OneBeamPlan:
    """A one-beam strategy (greedy, abstain, cad, adacad) ready to run token by token as a row of a live batch
    (:meth:`~faithwatch.live_batch.LiveBatch.submit_strategy`): its parameters and chooser."""

    strategy: str
    params: DecodingParams
    chooser: Chooser

    def result(self, monitor: Any, prompts: PromptPair, ids: list[int], sentences: list, stop: str) -> DecodingResult:
        """The :class:`DecodingResult` of the finished beam decoded from ``prompts`` (as :func:`generate` returns
        it)."""
        trace = [TraceEvent("accept", r.index, r.text, r.score, 0) for r in sentences]
        refused = _refusal(self.strategy, sentences, self.params, trace)
        text = monitor.lm.tokenizer.decode(ids, skip_special_tokens=True)
        return _decoding_result(monitor, prompts, self.strategy, self.params, trace, Beam(ids, sentences, True, stop),
                                refused, text, sentences, len(ids))


def one_beam_plan(strategy: str, params: DecodingParams | None = None, **overrides: Any) -> OneBeamPlan | None:
    """The plan of a one-beam strategy, or ``None`` for a strategy that searches (FOD, rerank, lookback, ...).
    Bad parameters are an :class:`InputError`, as in :func:`generate`."""
    _entry, chosen = _entry_and_params(strategy, params, overrides)
    make = _ONE_BEAM.get(strategy)
    return None if make is None else OneBeamPlan(strategy, chosen, make(chosen))


def _refusal(strategy: str, sentences: list, params: DecodingParams, trace: list[TraceEvent]) -> bool:
    """Abstain's rule: refuse when a sentence scores below ``abstain_threshold`` (a ``refuse`` event)."""
    low = [s for s in sentences if s.below(params.abstain_threshold)] if strategy == "abstain" else []
    if low:
        trace.append(TraceEvent("refuse", low[0].index, low[0].text, low[0].score,
                                reason=f"score below {params.abstain_threshold}"))
    return bool(low)


def _plain(run: StrategyRun, strategy: str) -> tuple[Beam, bool]:
    beam = run_to_end(run.loop, _ONE_BEAM[strategy](run.params), run.trace)
    return beam, _refusal(strategy, beam.sentences, run.params, run.trace)


def greedy(run: StrategyRun) -> tuple[Beam, bool]:
    """Plain greedy decoding (the baseline)."""
    return _plain(run, "greedy")


def abstain(run: StrategyRun) -> tuple[Beam, bool]:
    """Greedy, refusing when a sentence scores below ``abstain_threshold``."""
    return _plain(run, "abstain")


def cad(run: StrategyRun) -> tuple[Beam, bool]:
    """Context-aware decoding with a fixed α (Shi et al.)."""
    return _plain(run, "cad")


def adacad(run: StrategyRun) -> tuple[Beam, bool]:
    """CAD with α per token from the Jensen-Shannon divergence of the two distributions (AdaCAD)."""
    return _plain(run, "adacad")


def run_to_end(loop: DecodingLoop, chooser: Chooser, trace: list[TraceEvent]) -> Beam:
    """Decode the loop's one beam to its end with ``chooser``, each sentence an ``accept`` event."""
    while not loop.beams[0].finished:
        (cand,) = loop.sample(1, chooser)
        loop.keep([cand])
        if cand.report is not None:
            trace.append(TraceEvent("accept", cand.report.index, cand.report.text, cand.report.score, 0))
    return loop.beams[0]


def question_coverage(run: StrategyRun) -> Coverage:
    """The question coverage a strategy reads (no slots when ``coverage`` is off)."""
    return Coverage(run.loop.question, run.loop.context) if run.params.coverage else Coverage("")


def most_complete(beams: list[Beam], coverage: Coverage) -> Beam:
    """The beam with the fewest open question slots, then the best mean sentence score (the first of equals)."""
    return min(beams, key=lambda b: (coverage.open(answer_texts(b)), -b.mean_score))


def repeats_answer(beam: Beam, cand: Candidate) -> bool:
    """Whether ``cand``'s sentence says one of ``beam``'s sentences again (:func:`faithwatch.text.repeats`)."""
    return cand.report is not None and repeats(cand.report.text, answer_texts(beam))


def answer_texts(beam: Beam, cand: Candidate | None = None) -> list[str]:
    """The sentences of ``beam``, with ``cand``'s sentence after them."""
    return [x.text for x in beam.sentences] + ([cand.report.text] if cand is not None and cand.report else [])


def _result(run: StrategyRun, strategy: str, beam: Beam, refused: bool) -> DecodingResult:
    loop, monitor = run.loop, run.monitor
    sentences = beam.sentences
    if strategy == "lookback" and beam.ids and not refused:  # chunks are not sentences: score them afterwards
        sentences = monitor.score(loop.question, loop.context, beam.ids).sentences
    return _decoding_result(monitor, loop.prompts, strategy, run.params, run.trace, beam, refused,
                            loop.text(beam.ids), sentences, loop.generated)


def _decoding_result(monitor: Any, prompts: PromptPair, strategy: str, params: DecodingParams,
                     trace: list[TraceEvent], beam: Beam, refused: bool, text: str, sentences: list,
                     generated: int) -> DecodingResult:
    """A refusal has no answer sentences (the trace keeps them). The notes read the context the model saw."""
    sentences = [] if refused else sentences
    return DecodingResult(
        strategy=strategy, answer=REFUSAL if refused else text.strip(), refused=refused,
        sentences=sentences, trace=trace, num_tokens=0 if refused else len(beam.ids),
        generated_tokens=generated, stop_reason="refused" if refused else (beam.stop_reason or "eos"),
        params={"strategy": strategy, **_read_params(strategy, params)}, detector=monitor.detector.name,
        context_tokens_cut=prompts.context_tokens_cut,
        notes=verdict_notes(prompts.context, sentences, prompts.context_tokens_cut),
    )


def _read_params(strategy: str, params: DecodingParams) -> dict[str, Any]:
    """The parameters ``strategy`` reads (its registry entry's ``reads`` and the token budgets); every parameter
    for a plug-in that does not say."""
    dump = params.model_dump()
    reads = params_read(strategy)
    return dump if reads is None else {k: dump[k] for k in reads}
