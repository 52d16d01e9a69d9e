"""The claims route of the HTTP API: ``/v1/check`` (claims extracted and checked against the context(s), by the
served detector or by an alignment scorer)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from faithwatch.alignment import plain_specs
from faithwatch.errors import InputError
from faithwatch.server.pool import CancelToken
from faithwatch.server.problems import HTTPProblem
from faithwatch.server.schemas import CheckRequest
from faithwatch.server.state import ServerState

#: the checkers /v1/check offers
CHECKERS = ("detector", "alignment")


def default_checker(monitor: Any, check_checker: str | None) -> str:
    """The default checker of /v1/check (see :func:`~faithwatch.server.app.create_app`), refused where the served
    detector cannot do it."""
    text_only = not getattr(monitor, "detector_reads_model", True)
    if check_checker is None:
        return "detector" if text_only else "alignment"
    if check_checker not in CHECKERS:
        raise InputError(f"check_checker must be one of {', '.join(CHECKERS)}, got {check_checker!r}")
    if check_checker == "detector" and not text_only:
        raise InputError(f"the detector checker needs a detector that reads text only; the served detector "
                         f"{getattr(monitor.detector, 'name', '?')!r} reads the language model")
    return check_checker


def add_claims_routes(app: FastAPI, state: ServerState, v1: dict[str, Any]) -> None:
    """Add ``/v1/check`` to ``app`` (``v1``: the routes' common options)."""
    monitor, recent, guard, jobs, check_lock = state.monitor, state.recent, state.guard, state.jobs, state.check_lock
    scorers, text_checker = state.scorers, state.text_checker
    check_default, check_alignment = state.check_default, state.check_alignment

    def scorer_for(alignment: str) -> Any:
        """The one alignment scorer of a spec, built on first use (call under ``check_lock``)."""
        if alignment not in scorers:
            from faithwatch import alignment as scorers_module

            device = str(getattr(monitor.lm, "device", "cpu"))
            try:
                scorer = scorers_module.get_scorer(alignment, device=device)
            except ValueError as exc:
                raise InputError(str(exc)) from None
            if scorer is None:
                raise InputError("the alignment checker needs an alignment scorer, not 'none'")
            scorers[alignment] = scorer
        return scorers[alignment]

    def detector_checker() -> Any:
        """The served detector as a claim checker, text only (call under ``check_lock``): its own model-free
        signals and alignment scorer, the served monitor's flag threshold."""
        if not text_checker:
            from faithwatch.claims.checking import DEFAULT_COMBINE
            from faithwatch.claims.detector_check import DetectorChecker
            from faithwatch.monitor import NO_MODEL, Monitor
            from faithwatch.signals import is_model_free

            scorer = getattr(monitor, "alignment", None)
            text = Monitor(NO_MODEL, detector=monitor.detector, alignment=scorer.name if scorer else "none",
                           signals=[s.name for s in monitor.signals if is_model_free(s.name)] or None,
                           device=str(getattr(monitor.lm, "device", "cpu")))
            text.threshold = monitor.threshold
            text_checker.append(DetectorChecker(text, DEFAULT_COMBINE))
        return text_checker[0]

    @app.post("/v1/check", summary="Extract claims and check each against the context(s)", **v1)
    async def check(body: CheckRequest) -> dict[str, Any]:
        from faithwatch.claims.checking import AlignmentChecker
        from faithwatch.claims.extraction import get_extractor
        from faithwatch.claims.pipeline import check_response
        from faithwatch.results import check_notes

        kind = body.checker or check_default
        given = body.model_fields_set
        if kind == "detector":
            if getattr(monitor, "detector_reads_model", True):
                raise HTTPProblem(422, "invalid_input", f"the served detector {monitor.detector.name!r} reads the "
                                  "language model, so it cannot check text alone; use checker 'alignment'")
            stray = sorted({"alignment", "entail_threshold", "contradict_threshold"} & given)
            if stray:
                raise HTTPProblem(422, "invalid_input", f"{', '.join(stray)} {'apply' if len(stray) > 1 else 'applies'}"
                                  " to checker 'alignment' only; the detector checker flags at the served detector's "
                                  "threshold")
        alignment = body.alignment or check_alignment
        if kind == "alignment" and alignment not in plain_specs():  # no arbitrary model ids from clients
            raise HTTPProblem(422, "invalid_input", f"alignment must be one of {', '.join(plain_specs())}")
        if not body.contradict_threshold < body.entail_threshold:
            raise HTTPProblem(422, "invalid_input", "thresholds must satisfy contradict_threshold < "
                              f"entail_threshold, got {body.contradict_threshold} and {body.entail_threshold}")
        single = isinstance(body.contexts, str)
        passages, chars_cut = guard.fit_passages([body.contexts] if single else list(body.contexts))
        contexts: str | list[str] = passages[0] if single and passages else passages

        def job(tok: CancelToken) -> dict[str, Any]:
            with check_lock:
                tok.check()
                # alignment thresholds are parameters of the call: a light wrapper around the cached scorer
                checker = (detector_checker() if kind == "detector" else
                           AlignmentChecker(scorer_for(alignment), body.entail_threshold, body.contradict_threshold))
                result = check_response(body.response, contexts, get_extractor(body.extractor), checker,
                                        question=body.question, aggregation=body.aggregation)
            out = {**result.to_dict(), "context_chars_cut": chars_cut,
                   "notes": check_notes(passages, body.response, detector=kind == "detector")}
            if kind == "detector":  # the served detector's scores: /healthz's domain, as `faithwatch check` notes
                recent.add((c.get("scores") or {}).get("detector_score") for c in out.get("claims") or [])
                recent.add_context(passages)
            return out

        return await jobs.run(job)
