"""The one set of decoding defaults: :class:`DecodingParams`, used by the strategies, the CLI, the server and eval.

K 2 beams and S 6 samples follow paper 000 Table 2, α 0.5 Shi et al. (CAD). The score thresholds are set for the
shipped detector, whose scores are calibrated probabilities (flag threshold about 0.5): τ1 0.5 and τ2 0.6 were chosen
by 4-fold cross-validation on the packaged counterfactual set (every fold, for ``fod`` and ``fod-adacad``; for
``fod-fallback`` the folds chose τ1 0.6 / τ2 0.6, not adopted), and
abstention refuses below 0.5 like FOD's backtracking. The paper's τ1 0.7 / τ2 0.85 refused 58% of those answers
(docs/decoding_eval.md). A detector of another score scale needs its own thresholds.
A strategy may declare its own default for a field (``lookback`` samples 8 chunks, paper 003); it applies only
where the caller did not set the field.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, ValidationError

from faithwatch.errors import InputError

#: the strategy used when the caller names none: plain FOD, which searches once more over AdaCAD's distribution before
#: it refuses. Chosen by a rule fixed before its test set ran (training/data/README.md, fresh7): on that set 38 of 40
#: successes (fod-adacad 37, greedy 31); on the packaged set, τ cross-validated, +17.6 points over greedy with 5.6
#: points more of the agreeing items, where plain FOD lost 8.3 by refusing (docs/decoding_eval.md)
DEFAULT_STRATEGY = "fod-fallback"


def _number(value: Any) -> Any:
    """A number field takes a number: pydantic's lax mode reads ``"2"`` as 2 and ``true`` as 1 (OpenAI's API and
    the proxy refuse both)."""
    if isinstance(value, bool | str | bytes):
        raise ValueError(f"must be a number, not {'a boolean' if isinstance(value, bool) else 'a string'}")
    return value


#: an integer or a float field of a request body: a JSON number (an integral float such as 2.0 is an integer)
JsonInt = Annotated[int, BeforeValidator(_number)]
JsonFloat = Annotated[float, BeforeValidator(_number)]


class DecodingParams(BaseModel):
    """Generation parameters of every decoding strategy (unused ones are ignored by a strategy)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    tau1: JsonFloat = Field(0.5, ge=0.0, le=1.0, description="FOD: greedy sentences below this trigger backtracking.")
    tau2: JsonFloat = Field(0.6, ge=0.0, le=1.0, description="FOD: candidate sentences below this are pruned.")
    beams: JsonInt = Field(2, ge=1, description="FOD: beams kept (K).")
    samples: JsonInt = Field(6, ge=1, description="FOD/rerank: sampled candidates per step (S); lookback: "
                         "chunks per step (default 8).")
    temperature: JsonFloat = Field(0.7, ge=0.0, description="Sampling temperature.")
    alpha: JsonFloat = Field(0.5, ge=0.0, description="CAD: weight of the context contrast (0: plain decoding; below "
                             "0 would steer away from the context).")
    abstain_threshold: JsonFloat = Field(0.5, ge=0.0, le=1.0, description="Abstain: refuse below this sentence score.")
    max_new_tokens: JsonInt = Field(128, ge=1, description="Generation budget in tokens.")
    max_sentence_tokens: JsonInt = Field(96, ge=1, description="Longest sentence before it is cut.")
    chunk_tokens: JsonInt = Field(8, ge=1, description="Lookback: tokens per candidate chunk.")
    coverage: StrictBool = Field(True, description="FOD: read the question's parts (wh-clauses) and search on while an "
                           "answer leaves one unfilled (see faithwatch.decoding.coverage).")
    last_resort: StrictBool = Field(False, description="fod-fallback: before refusing, search a last time with tau2 "
                              "lowered to the detector's flag threshold, and answer with what the detector does not "
                              "flag (off by default: where the context lacks the answer, it answers wrongly).")
    trim: StrictBool = Field(False, description="FOD: before backtracking from a greedy sentence below tau1, try it "
                       "cut at one of its last two commas (what follows dropped) and keep the longest cut that passes "
                       "(off by default: where the context lacks the answer, it keeps a distractor instead of "
                       "refusing).")
    no_repeat: StrictBool = Field(True, description="FOD: a sentence that says again, word for word, one already in "
                                  "its answer (case, punctuation and leading list numbers aside) counts as a low "
                                  "score: stage 1 backtracks from it and the search prunes it (small models loop: "
                                  "'The answer is: … The answer is: …'); rerank, rerank-coverage: each answer of the "
                                  "pool ends before such a sentence.")
    seed: JsonInt = Field(0, ge=0, le=2**64 - 1, description="Seed of the sampler.")

    def for_strategy(self, defaults: dict[str, Any]) -> DecodingParams:
        """A copy with a strategy's own ``defaults`` applied to the fields the caller did not set."""
        unset = {k: v for k, v in defaults.items() if k not in self.model_fields_set}
        return self.model_copy(update=unset) if unset else self


def checked_params(**values: Any) -> DecodingParams:
    """``DecodingParams(**values)``, a bad value an :class:`InputError` that names the first field at fault."""
    try:
        return DecodingParams(**values)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = str(first["loc"][0])
        raise InputError(f"bad decoding parameters: {field}: {first['msg']}", names=(field,)) from None


def default(name: str) -> Any:
    """The default of one field (for CLI option defaults)."""
    return DecodingParams.model_fields[name].default


def bounds(name: str) -> dict[str, Any]:
    """The bounds of one numeric field as CLI option limits (``min`` / ``max``), so that a value out of range is a
    usage error before any model loads."""
    out: dict[str, Any] = {}
    for rule in DecodingParams.model_fields[name].metadata:
        if getattr(rule, "ge", None) is not None:
            out["min"] = rule.ge
        if getattr(rule, "le", None) is not None:
            out["max"] = rule.le
    return out


def help_of(name: str) -> str:
    """The description of one field (for CLI help texts)."""
    return DecodingParams.model_fields[name].description or ""
