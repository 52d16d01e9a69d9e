"""The Monitor: live sentence-by-sentence faithfulness monitoring, and the same by teacher forcing."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from numbers import Integral
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from faithwatch import registry
from faithwatch.alignment import DEFAULT_SCORER, get_scorer, parse_spec
from faithwatch.alignment.base import AlignmentScorer
from faithwatch.detectors import Detector, HeuristicDetector
from faithwatch.detectors.absence import ABSENCE_RULE
from faithwatch.detectors.heuristic import WEIGHTS as HEURISTIC_WEIGHTS
from faithwatch.detectors.shipped import resolve_detector
from faithwatch.errors import ContextTooLongError, FaithwatchError, InputError, check_bools
from faithwatch.models.ahead import GREEDY, OnDevice
from faithwatch.models.folders import NO_MODEL, is_no_model
from faithwatch.models.prompts import DEFAULT_INSTRUCTION, PromptPair, build_prompts, check_text, groups_in_order
from faithwatch.models.records import Needs, TokenRecords
from faithwatch.results import MonitorResult, SentenceReport
from faithwatch.scoring import detector_features, sentence_reports, signal_values
from faithwatch.sentences import GenerationRule, Sentence, SentenceTracker, Tracked, track
from faithwatch.signals import (
    LIDBank,
    SentenceTrace,
    Signal,
    SignalContext,
    UpstreamToken,
    build_signals,
    default_lid_layers,
    default_signals,
    is_model_free,
    model_free_signals,
    parse_signals,
)
from faithwatch.text import FRAMING_RULE

if TYPE_CHECKING:
    from faithwatch.hostpool import TrackingPool
    from faithwatch.models.engine import EngineSession
    from faithwatch.models.loading import LoadedModel
    from faithwatch.watch import StreamWatch

#: picks the next token from log-probabilities [V] on the host, or an :class:`OnDevice` chooser (no host sync)
TokenChooser = Callable[[torch.Tensor], int] | OnDevice
TEACHER_FORCING_CHUNK = 256
#: greedy tokens decoded on a GPU before their statistics come to the host (``Monitor(run_ahead=...)``)
RUN_AHEAD_CUDA = 8
#: one record of :meth:`Monitor.score_many`: (question, context, response) or with an instruction as fourth item
ScoreInput = tuple


def greedy(logprobs: torch.Tensor) -> int:
    """The most likely token."""
    return int(torch.argmax(logprobs))


def _budget(value: Any) -> int:
    """A token budget: an integer of at least 1 (an :class:`InputError` otherwise, never a bool or a string)."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise InputError(f"max_new_tokens must be an integer of at least 1, got {value!r}")
    return int(value)


def _refuse_model_options(**given: object) -> None:
    """With model 'none', options that shape a language model or fit its window are refused (they were ignored,
    silently)."""
    named = [name for name, value in given.items() if value not in (None, False)]
    if named:
        verb, it = ("sets", "it") if len(named) == 1 else ("set", "them")
        raise InputError(f"{', '.join(named)} {verb} how the language model runs: with model 'none' there is no "
                         f"model (leave {it} out, or give a model)", names=tuple(named))

class Monitor:
    """Scores every sentence of a RAG answer for faithfulness, live or for a given response.

    ``model``: a :class:`LoadedModel`, a model directory / hub id, ``None`` for the embedded
    SmolLM2-135M-Instruct, or ``"none"`` (:data:`NO_MODEL`) for no model at all: the monitor then computes only
    model-free signals (alignment, lexical, edits, tagger, api) and scores given text.
    ``signals``: families to compute, a list or a comma-separated string (default:
    :func:`~faithwatch.signals.default_signals`).
    ``alignment``: an alignment scorer or its spec (default ``"auto"``: the detector's scorer, else
    ``DEFAULT_SCORER``, ``"nli-minilm+lexical+embedding"``; ``"none"`` for none).
    ``max_false_accept``: flag at the threshold that lets through at most this share of unfaithful sentences
    (estimated on the detector's out-of-fold predictions) instead of the detector's balanced threshold.
    ``lid_bank``: reference hidden states for ``lid_layer_*`` (absent without one). ``hidden_layers``: layers at
    which the opt-in ``hidden`` signal also records sentence-mean states (for training probes).
    ``dtype`` / ``device_map``: how to load ``model`` (see :func:`~faithwatch.models.loading.load_model`).
    ``static_cache``: decode into a preallocated KV cache (fixed shapes; the same records as the default dynamic
    cache, see :class:`~faithwatch.models.engine.DecodingEngine`). ``cuda_graph``: replay each decode step as a
    CUDA graph on a GPU (implies ``static_cache``; the same static-shape step runs eagerly on a CPU; see
    :mod:`faithwatch.models.graphstep`). ``run_ahead``: greedy live generation chooses this many tokens on the
    device before their statistics come to the host, and decodes the next ones while the host scores (no device
    sync per token; default :data:`RUN_AHEAD_CUDA` on a GPU, 1 (off) on a CPU, where it gains nothing). The
    records and scores are those of token-by-token decoding; a sentence is reported up to that many tokens later.
    """

    def __init__(
        self,
        model: LoadedModel | str | None = None,
        *,
        signals: Sequence[str] | str | None = None,
        alignment: AlignmentScorer | str | None = "auto",
        lid_bank: LIDBank | str | Path | None = None,
        lid_layers: Sequence[int] | None = None,
        hidden_layers: Sequence[int] | None = None,
        detector: Detector | str | None = None,
        instruction: str | None = DEFAULT_INSTRUCTION,
        max_new_tokens: int = 256,
        truncate_context: bool = False,
        device: str | None = None,
        max_false_accept: float | None = None,
        dtype: str | None = None,
        device_map: str | None = None,
        static_cache: bool = False,
        cuda_graph: bool = False,
        run_ahead: int | None = None,
    ) -> None:
        if isinstance(signals, str):  # "alignment,lexical" (a string was read letter by letter: "unknown signal 'a'")
            signals = parse_signals(signals)
        if signals is not None and not signals:  # was read as the default, silently
            raise InputError("signals names no signal family: leave it out (None) for the default, or name some")
        check_bools(truncate_context=truncate_context, static_cache=static_cache, cuda_graph=cuda_graph)
        if run_ahead is not None and run_ahead < 1:  # checked before any model or scorer loads
            raise InputError(f"run_ahead must be at least 1, got {run_ahead}")
        # here, not at the top: they import transformers, which a usage error (score --input missing) waited for
        from faithwatch.models.engine import DecodingEngine
        from faithwatch.models.loading import LoadedModel, check_device, load_model

        # None: the default, as in score() and generate()
        self.instruction = check_text("instruction", DEFAULT_INSTRUCTION if instruction is None else instruction)
        if is_no_model(model):
            if lid_bank is not None:
                raise InputError("a LID bank describes a language model's hidden states: with model 'none' there "
                                 "are none to compare (leave the bank out, or give a model)")
            check_device(device)  # the text scorers' device
            _refuse_model_options(dtype=dtype, device_map=device_map, static_cache=static_cache,
                                  cuda_graph=cuda_graph, truncate_context=truncate_context)
            self.lm: LoadedModel | None = None
        else:
            self.lm = model if isinstance(model, LoadedModel) else load_model(model, device=device, dtype=dtype,
                                                                              device_map=device_map)
        self.max_new_tokens = _budget(max_new_tokens)
        self.truncate_context = truncate_context
        self.detector = self._resolve_detector(detector)
        #: sentences scoring below this are flagged: the detector's threshold, or one for a false-accept rate
        self.threshold = self._threshold(max_false_accept)
        meta = getattr(self.detector, "meta", None)
        if lid_bank is None and getattr(self.detector, "lid_bank", None) is not None:
            lid_bank = self.detector.lid_bank  # the bank the detector was trained with
            lid_layers = lid_layers or meta.layers.get("lid")
        wanted = signals or default_signals()
        if self.lm is None:
            wanted = signals or list(model_free_signals())
            needy = [n for n in wanted if not is_model_free(n)]
            if needy:
                raise InputError(f"signals {needy} need a language model; with model 'none' choose among "
                                 f"{', '.join(registry.signals.names(model_free=True))}")
        alignment = self._resolve_alignment(alignment, meta)
        if "alignment" not in wanted:
            alignment = None
        where = str(self.lm.device) if self.lm is not None else (device or "cpu")
        self.alignment = get_scorer(alignment, device=where) if isinstance(alignment, str) else alignment
        if isinstance(lid_bank, (str, Path)):
            lid_bank = LIDBank.load(lid_bank, expect_model_id=self.lm.model_id)
        layers = tuple(lid_layers) if lid_layers else default_lid_layers(self.lm.num_layers) if self.lm else ()
        self.signals = self._build_signals(wanted, layers, lid_bank, tuple(hidden_layers or ()), where)
        #: no signal reads model output: teacher forcing can skip the model (live generation still runs it)
        self.model_free = all(is_model_free(n) for n in wanted)
        self._pool: TrackingPool | None = None  # score_many's sentence-tracking workers, if asked for
        #: the detector reads a feature of a signal that needs the model (unknown features: assumed so)
        self.detector_reads_model = self._reads_model(getattr(meta, "feature_names", None))
        self._check_versions(meta)
        missing = sorted(set(self.detector_features) - set(self.feature_names))
        if missing and self.lm is None and not signals:  # every text signal runs: the rest need the model
            raise InputError(f"detector '{self.detector.name}' reads the language model (features {missing[:4]}"
                             f"{' …' if len(missing) > 4 else ''}); without a model (--model none, check, a text-only "
                             "server) use a detector trained with --text-only")
        if missing:
            raise InputError(f"detector '{self.detector.name}' needs features {missing} that the chosen signals "
                             "do not compute")
        if isinstance(self.detector, HeuristicDetector) and not set(HEURISTIC_WEIGHTS) & set(self.feature_names):
            raise InputError(f"the heuristic detector needs at least one of {sorted(HEURISTIC_WEIGHTS)}; the chosen "
                             "signals compute none of them")
        needs = Needs()
        for signal in self.signals:
            needs = needs | signal.needs
        self.engine = (DecodingEngine(self.lm, needs, static_cache=static_cache, cuda_graph=cuda_graph)
                       if self.lm is not None else None)
        on_gpu = self.lm is not None and self.lm.device.type == "cuda"
        self.run_ahead = run_ahead or (RUN_AHEAD_CUDA if on_gpu else 1)

    @property
    def model_id(self) -> str:
        """The monitored model's id (:data:`NO_MODEL` without one)."""
        return NO_MODEL if self.lm is None else self.lm.model_id

    def _resolve_detector(self, detector: Detector | str | Path | None) -> Detector:
        if isinstance(detector, Detector):
            return detector
        return resolve_detector(detector, None if self.lm is None else self.lm.model_id)

    def _threshold(self, max_false_accept: float | None) -> float:
        if max_false_accept is None:
            return float(self.detector.threshold)
        if not hasattr(self.detector, "false_accept_threshold"):
            raise InputError(f"detector '{self.detector.name}' cannot set a threshold for a false-accept rate; "
                             "use a trained detector (the shipped one, or one from `faithwatch train`)")
        return float(self.detector.false_accept_threshold(max_false_accept))

    @staticmethod
    def _resolve_alignment(alignment: AlignmentScorer | str | None, meta) -> AlignmentScorer | str | None:
        trained = (getattr(meta, "metrics", None) or {}).get("alignment") if meta is not None else None
        if alignment == "auto":
            return trained or DEFAULT_SCORER
        if isinstance(alignment, str):
            parse_spec(alignment)  # an unknown scorer is named as such, before any comparison
        name = alignment.name if isinstance(alignment, AlignmentScorer) else alignment
        if trained and name != trained:
            raise InputError(f"the detector was trained with alignment '{trained}', not '{name}'; "
                             "leave --alignment out to use the detector's")
        return alignment

    def _check_versions(self, meta) -> None:
        """Refuse a part whose version differs from the one the detector was trained with: the alignment scorer
        (e.g. another NLI adapter) and each versioned text signal whose features it reads (the LSS tagger, the
        near-copy edits). The detector records them as ``<part>_version`` in its metrics; a detector that
        records none for a part (made before it had a version) is not refused for it."""
        trained = (getattr(meta, "metrics", None) or {}) if meta is not None else {}
        read = set(getattr(meta, "feature_names", []))
        for name, part in self._versioned_parts():
            if part is not self.alignment and not read & set(part.feature_names):
                continue  # a signal whose features the detector does not read (the scorer is always checked)
            want, have = trained.get(f"{name}_version"), getattr(part, "version", None)
            if want and have != want:
                label = name if getattr(part, "name", name) == name else f"{name} {part.name!r}"
                raise InputError(f"the detector was trained with {label} version {want!r}, but this one is "
                                 f"version {have!r} (it changed since); retrain the detector")

    def _versioned_parts(self) -> list[tuple[str, Any]]:
        """The alignment scorer and the signals that declare a version, by name."""
        parts = [("alignment", self.alignment)] if self.alignment is not None else []
        return [(name, part) for name, part in parts + [(s.name, s) for s in self.signals]
                if getattr(part, "version", None)]

    def part_versions(self) -> dict[str, str]:
        """``{part: version}`` of the alignment scorer and of each signal that declares a version (the lexical
        scorer's and NLI adapter's, the LSS tagger's, the near-copy edits' rules): a score depends on them."""
        return {name: str(part.version) for name, part in self._versioned_parts()}

    @property
    def detector_features(self) -> list[str]:
        """The features the detector reads (empty for one that declares none, such as the heuristic)."""
        return detector_features(self.detector)

    def scoring_config(self) -> dict[str, Any]:
        """What a score depends on: the model, the detector (its content hash, for a trained one), its threshold,
        the alignment scorer, the signals and their versions. A resumed batch output refuses rows made under
        another config (e.g. under rules of the edits signal since changed)."""
        meta = getattr(self.detector, "meta", None)
        return {"model_id": self.model_id, "detector": self.detector.name,
                "detector_content_hash": getattr(meta, "content_hash", None) or None,
                "threshold": round(float(self.threshold), 9),
                "alignment": self.alignment.name if self.alignment is not None else None,
                "signals": [s.name for s in self.signals], "versions": self.part_versions(),
                "framing": FRAMING_RULE, "absence": ABSENCE_RULE}

    @property
    def model_unread(self) -> bool:
        """Teacher forcing runs the model for signals the detector does not read (``--signals text`` skips it)."""
        return not self.model_free and not self.detector_reads_model

    def _reads_model(self, features: Sequence[str] | None) -> bool:
        if not features:
            return True
        read = set(features)
        return any(not is_model_free(s.name) for s in self.signals if read & set(s.feature_names))

    def _build_signals(self, names: Sequence[str], layers: tuple[int, ...], bank: LIDBank | None,
                       hidden_layers: tuple[int, ...], device: str = "cpu") -> list[Signal]:
        ctx = SignalContext(layers=layers, lid_bank=bank, alignment=self.alignment,
                            probe=getattr(self.detector, "probe", None), hidden_layers=hidden_layers,
                            device=device)
        return build_signals(names, ctx)

    @property
    def feature_names(self) -> list[str]:
        """Every feature the monitor emits, in order."""
        return [name for signal in self.signals for name in signal.feature_names]

    # --- live -------------------------------------------------------------------------------------------
    def stream(
        self,
        question: str,
        context: str,
        *,
        max_new_tokens: int | None = None,
        choose: TokenChooser = greedy,
    ) -> Iterator[SentenceReport]:
        """Generate an answer and yield each sentence the moment it is final, scored."""
        for item in self._live(question, context, max_new_tokens, choose):
            if isinstance(item, SentenceReport):
                yield item

    def generate(
        self,
        question: str,
        context: str,
        *,
        max_new_tokens: int | None = None,
        choose: TokenChooser = greedy,
        on_sentence: Callable[[SentenceReport], None] | None = None,
        instruction: str | None = None,
    ) -> MonitorResult:
        """Generate an answer and return it with every sentence scored (``on_sentence`` sees each live);
        ``instruction`` replaces the monitor's for this call."""
        for item in self._live(question, context, max_new_tokens, choose, instruction):
            if isinstance(item, SentenceReport):
                if on_sentence is not None:
                    on_sentence(item)
            else:
                return item
        raise AssertionError("unreachable")

    def _live(self, question: str, context: str, max_new_tokens: int | None, choose: TokenChooser,
              instruction: str | None = None):
        self._need_model("generate")
        budget = self.max_new_tokens if max_new_tokens is None else _budget(max_new_tokens)
        prompts, session = self._start(question, context, reserve=budget, instruction=instruction)
        context = prompts.context  # cut with truncate_context: alignment sees what the model saw
        rule = GenerationRule(self.lm.tokenizer, self.lm.eos_token_ids, budget)
        reports: list[SentenceReport] = []
        on_device = GREEDY if choose is greedy else choose if isinstance(choose, OnDevice) else None
        if on_device is not None and self.run_ahead > 1:
            steps = self._ahead(session, rule, budget, on_device)
        else:
            host = on_device.host if on_device is not None else None
            steps = self._one_by_one(session, rule,
                                     choose if host is None else lambda lp: host(lp, len(session.records)))
        for closed in steps:
            for report in self._reports(closed, session.records, question, context):
                reports.append(report)
                yield report
        yield self._result(question, context, rule.tracker, reports, prompts, "live", rule.stop, session.records)

    @staticmethod
    def _one_by_one(session: EngineSession, rule: GenerationRule, choose: Callable[[torch.Tensor], int]
                    ) -> Iterator[list[Sentence]]:
        """Choose on the host, feed, and yield the sentences each token closes."""
        while not rule.done:
            token = choose(session.next_logprobs())
            closed, feed = rule.take(token)
            if feed:
                session.feed([token])
                closed += rule.fed(token)
            yield closed

    def _ahead(self, session: EngineSession, rule: GenerationRule, budget: int, choose: OnDevice
               ) -> Iterator[list[Sentence]]:
        """Tokens chosen on the device ``run_ahead`` at a time; the next chunk is launched before this one
        is collected, so the device decodes while the host tracks and scores. Tokens decoded past an end of
        sequence are cut from the records (the session ends there)."""
        launched = 0

        def launch():
            nonlocal launched
            n = min(self.run_ahead, budget - launched)
            launched += n
            return session.launch(n, choose) if n > 0 else None

        current = launch()
        while not rule.done:
            ahead = launch()
            for token in session.collect(current):
                closed, feed = rule.take(token)
                if feed:
                    closed += rule.fed(token)
                else:
                    session.cut(len(rule.tracker.ids))
                yield closed
                if rule.done:
                    break
            current = ahead

    # --- streamed text -------------------------------------------------------------------------------------
    def watch(self, question: str, context: str, *, instruction: str | None = None, reserve: int | None = None
              ) -> StreamWatch:
        """Score a response that arrives in pieces (e.g. another model's stream): ``add`` text, then ``finish``;
        each returns the sentences that became final, scored as :meth:`score` would score them."""
        from faithwatch.watch import StreamWatch

        return StreamWatch(self, question, context, instruction=instruction, reserve=reserve)

    # --- teacher forcing ----------------------------------------------------------------------------------
    def score(
        self, question: str, context: str, response: str | Sequence[int], *, instruction: str | None = None
    ) -> MonitorResult:
        """Score an existing response (text, or the model's token ids) by teacher forcing."""
        if self.lm is None:
            return self._text_result(question, context, response)
        ids = self._response_ids(response)
        prompts = self._forced_prompts(question, context, len(ids), instruction)
        if self.model_free:  # no signal reads the model's output: the prompt is built, not run
            return self._forced_result(question, prompts, ids, TokenRecords(token_ids=list(ids)))
        session = self.engine.start_forced(prompts)  # a prompt the last record had is not prefilled again
        for i in range(0, len(ids), TEACHER_FORCING_CHUNK):
            session.feed(ids[i : i + TEACHER_FORCING_CHUNK])
        return self._forced_result(question, prompts, ids, session.records)

    def score_many(self, records: Sequence[ScoreInput], *, batch_size: int = 8, host_workers: int = 0
                   ) -> list[MonitorResult | FaithwatchError]:
        """Score many (question, context, response[, instruction]) records by teacher forcing, ``batch_size`` per
        forward pass (records of similar length together). Each result equals :meth:`score` of that record (within
        float tolerance); a record that cannot be scored gets its :class:`FaithwatchError` in its place.
        ``host_workers``: track the responses' sentences in that many worker processes, during the forward passes
        (for GPUs, where this host work bounds records/s; the same sentences)."""
        if batch_size < 1:
            raise InputError(f"batch_size must be at least 1, got {batch_size}")
        if host_workers < 0:
            raise InputError(f"host_workers must be 0 or more, got {host_workers}")
        if self.lm is None:
            return [self._or_error(self.score, *r[:3], instruction=r[3] if len(r) > 3 else None) for r in records]
        out: list[MonitorResult | FaithwatchError | None] = [None] * len(records)
        ready: list[tuple[int, PromptPair, list[int]]] = []
        for i, record in enumerate(records):
            question, context, response, *rest = record
            try:
                ids = self._response_ids(response)
                prompts = self._forced_prompts(question, context, len(ids), rest[0] if rest else None)
            except FaithwatchError as exc:
                out[i] = exc
                continue
            ready.append((i, prompts, ids))
        if self.model_free:  # as in score: nothing to run the model for
            results = self._forced_results([(records[i][0], prompts, ids, TokenRecords(token_ids=list(ids)))
                                            for i, prompts, ids in ready])
            for (i, _, _), result in zip(ready, results, strict=True):
                out[i] = result
            return out  # type: ignore[return-value]
        # by prompt length, records of one prompt together (their branches share its prefill), then response length
        group, _ = groups_in_order(p.key for _, p, _ in ready)
        ready = [ready[j] for j in sorted(range(len(ready)),
                                          key=lambda j: (len(ready[j][1].rag_ids), group[j], len(ready[j][2])))]
        pool = self._tracking_pool(host_workers) if host_workers and ready else None
        tracking = [pool.submit(ids) for _, _, ids in ready] if pool else None  # runs while the device does
        for start in range(0, len(ready), batch_size):
            chunk = ready[start : start + batch_size]
            session = self.engine.start_many([prompts for _, prompts, _ in chunk])
            longest = max(len(ids) for _, _, ids in chunk)
            for at in range(0, longest, TEACHER_FORCING_CHUNK):
                session.feed_many([ids[at : at + TEACHER_FORCING_CHUNK] for _, _, ids in chunk])
            tracked = [pool.result(f) for f in tracking[start : start + batch_size]] if tracking else None
            results = self._forced_results([(records[i][0], prompts, ids, recs) for (i, prompts, ids), recs in
                                            zip(chunk, session.branch_records, strict=True)], tracked)
            for (i, _, _), result in zip(chunk, results, strict=True):
                out[i] = result
        return out  # type: ignore[return-value]

    def _forced_prompts(self, question: str, context: str, n_ids: int, instruction: str | None) -> PromptPair:
        """The prompts of a teacher-forced record. The model window applies when the model runs, or when
        ``truncate_context`` asks for the cut (the scores then equal a run with the model); a record over it, for a
        detector that reads no model signal, gets an error that says how to score it without the model."""
        try:
            return self._prompts(question, context, n_ids, instruction,
                                 fit=not self.model_free or self.truncate_context)
        except ContextTooLongError as exc:
            if not self.model_unread:
                raise
            raise ContextTooLongError(f"{exc} The detector {self.detector.name} reads text signals only: with "
                                      "signals 'text' (--signals text) the model does not run and its window does "
                                      "not apply.") from None

    @staticmethod
    def _or_error(fn: Callable[..., Any], *args, **kwargs) -> Any:
        try:
            return fn(*args, **kwargs)
        except FaithwatchError as exc:
            return exc

    def _text_result(self, question: str, context: str, response: str | Sequence[int]) -> MonitorResult:
        """No model: sentences split from the text (characters as tokens), model-free signals only."""
        if not isinstance(response, str):
            what = "token ids" if isinstance(response, Sequence) and not isinstance(response, bytes | bytearray) \
                else type(response).__name__
            raise InputError(f"without a model the response must be text, not {what}")
        check_text("response", response)
        prompts = self._prompts(question, context, 0)
        tracker = SentenceTracker(None)  # type: ignore[arg-type]
        sentences = tracker.add_text(response) + tracker.finish()
        records = TokenRecords(token_ids=[])
        reports = self._reports(sentences, records, question, prompts.context)
        return self._result(question, prompts.context, tracker, reports, prompts, "teacher-forced", "given", records)

    def _need_model(self, what: str) -> None:
        if self.lm is None:
            raise InputError(f"this monitor has no model (model 'none'): it cannot {what}; it scores given text")

    def _response_ids(self, response: str | Sequence[int]) -> list[int]:
        if isinstance(response, str):
            check_text("response", response)
            return list(self.lm.tokenizer(response, add_special_tokens=False)["input_ids"])
        if hasattr(response, "tolist") and not isinstance(response, bytes | bytearray):
            response = response.tolist()  # a numpy array or a torch tensor of ids
        if isinstance(response, bytes | bytearray) or not isinstance(response, Sequence):
            raise InputError(f"The response must be a string or a list of token ids, got {type(response).__name__}.")
        vocab = self.lm.vocab_size
        bad = [t for t in response if isinstance(t, bool) or not isinstance(t, Integral) or not 0 <= t < vocab]
        if bad:
            raise InputError(f"The response's token ids must be integers from 0 to {vocab - 1} (this model's "
                             f"vocabulary), got {bad[0]!r}.")
        ids = [int(t) for t in response]
        if not ids:
            raise InputError("The response has no tokens: there is nothing to score.")
        return ids

    def _forced_result(self, question: str, prompts: PromptPair, ids: list[int], records: TokenRecords
                       ) -> MonitorResult:
        return self._forced_results([(question, prompts, ids, records)])[0]

    def close(self) -> None:
        """Stop the sentence-tracking worker processes that :meth:`score_many` started, if any (they restart on
        the next call that asks for them). ``with Monitor(...) as monitor:`` closes on leaving the block."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def __enter__(self) -> Monitor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _tracking_pool(self, workers: int) -> TrackingPool:
        """The monitor's sentence-tracking worker processes (started on first use, kept for later calls)."""
        from faithwatch.hostpool import TrackingPool

        pool = self._pool
        if pool is None or pool.workers != workers:
            if pool is not None:
                pool.close()
            pool = self._pool = TrackingPool(self.lm.tokenizer, workers)
        return pool

    def _forced_results(self, items: Sequence[tuple[str, PromptPair, list[int], TokenRecords]],
                        tracked: Sequence[Tracked] | None = None) -> list[MonitorResult | FaithwatchError]:
        """Teacher-forced results of (question, prompts, ids, records) items, their sentences scored together; if
        that fails, each item alone, so that one bad record gets its error and the others their results.
        ``tracked``: the items' sentences, already tracked (e.g. in worker processes)."""
        if tracked is None:
            tracked = [track(self.lm.tokenizer, ids) for _, _, ids, _ in items]
        # prompts.context is cut with truncate_context: alignment sees what the model saw
        groups = [(done.sentences, records, question, prompts.context)
                  for (question, prompts, _, records), done in zip(items, tracked, strict=True)]
        if len(items) == 1:
            all_reports: list = self._reports_many(groups)  # one item: its error is raised
        else:
            all_reports = self._reports_each(groups, FaithwatchError)
        out: list[MonitorResult | FaithwatchError] = []
        for (question, prompts, _, records), done, reports in zip(items, tracked, all_reports, strict=True):
            if isinstance(reports, FaithwatchError):
                out.append(reports)
                continue
            out.append(self._result(question, prompts.context, done, reports, prompts, "teacher-forced", "given",
                                    records))
        return out

    # --- shared -------------------------------------------------------------------------------------------
    def _prompts(self, question: str, context: str, reserve: int, instruction: str | None = None, *,
                 fit: bool = True) -> PromptPair:
        """The RAG prompt and its twin; ``fit=False`` when the model will not run them, so that the model window
        (and ``truncate_context``) do not apply."""
        if self.lm is None:  # no prompt to build; the inputs are still checked
            check_text("context", context)
            if instruction is not None:
                check_text("instruction", instruction)
            return PromptPair([], [], "", "", 0, context)
        return build_prompts(
            self.lm.tokenizer, question, context, instruction=self.instruction if instruction is None else instruction,
            max_length=self.lm.max_length if fit else None, reserve=reserve, truncate_context=self.truncate_context,
        )

    def _start(
        self, question: str, context: str, reserve: int, instruction: str | None = None
    ) -> tuple[PromptPair, EngineSession]:
        prompts = self._prompts(question, context, reserve, instruction)
        return prompts, self.engine.start(prompts)

    def _reports(
        self, sentences: list[Sentence], records: TokenRecords, question: str, context: str,
        upstream: Sequence[UpstreamToken] = (),
    ) -> list[SentenceReport]:
        """Signals and score of final sentences, from one branch's token records (and an upstream's tokens)."""
        return self._reports_many([(sentences, records, question, context, upstream)])[0]

    def _reports_many(self, groups: Sequence[tuple]) -> list[list[SentenceReport]]:
        """:meth:`_reports` of several (sentences, records, question, context[, upstream]) groups, e.g. the records
        of a batch: each signal sees all their sentences in one call (an alignment model runs once for all)."""
        traces = [SentenceTrace(s, records, question, context, *rest) for sentences, records, question, context, *rest
                  in groups for s in sentences]
        if not traces:
            return [[] for _ in groups]
        values = signal_values(self.signals, traces)
        out, at = [], 0
        for sentences, _records, _question, context, *_ in groups:
            out.append(sentence_reports(sentences, values[at : at + len(sentences)], context, detector=self.detector,
                                        threshold=self.threshold, alignment=self.alignment))
            at += len(sentences)
        return out

    def _reports_each(self, groups: Sequence[tuple], errors: type[BaseException] | tuple = Exception) -> list:
        """:meth:`_reports_many` of the groups together; if that raises one of ``errors``, each group alone, so
        that a failure stays with its group (its exception in its place)."""
        try:
            return self._reports_many(groups)
        except errors:
            out: list = []
            for group in groups:
                try:
                    out.append(self._reports_many([group])[0])
                except errors as exc:
                    out.append(exc)
            return out

    def _result(self, question, context, tracker, reports, prompts, mode, stop, records) -> MonitorResult:
        return MonitorResult(
            question=question, context=context, response=tracker.text, sentences=reports,
            model_id=self.model_id, detector=self.detector.name,
            alignment=None if self.alignment is None else self.alignment.name, mode=mode,
            num_tokens=len(tracker.ids), stop_reason=stop, context_tokens_cut=prompts.context_tokens_cut,
            records=records, token_ends=list(tracker.token_ends),
        )
