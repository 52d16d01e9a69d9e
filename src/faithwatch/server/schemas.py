"""Request bodies of the HTTP API (pydantic); responses are the library's ``to_dict`` payloads."""

from __future__ import annotations

from typing import Any, Literal

from annotated_types import Ge, Le
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

from faithwatch import records, registry
from faithwatch.alignment import plain_specs
from faithwatch.params import DEFAULT_STRATEGY, DecodingParams, JsonFloat, JsonInt, default
from faithwatch.text.visible import is_blank, require_text_within


def _bound(name: str, kind: type) -> Any:
    """A bound (``annotated_types.Ge`` / ``Le``) of a :class:`DecodingParams` field, so that both agree."""
    found = [m for m in DecodingParams.model_fields[name].metadata if isinstance(m, kind)]
    if len(found) != 1:
        raise AssertionError(f"DecodingParams.{name} has no single {kind.__name__} bound")
    return found[0].ge if kind is Ge else found[0].le


#: the seeds a sampler accepts (torch.Generator.manual_seed): 0 to 2**64 - 1, as in DecodingParams
SEED_MIN, SEED_MAX = _bound("seed", Ge), _bound("seed", Le)


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


_INSTRUCTION = Field(None, description="The task instruction before the context and question (default: the "
                     "server's, as in faithwatch.tasks.DEFAULT_INSTRUCTION).")


def _all_text(cls: type, data: Any) -> Any:
    """A body's strings are Unicode text (JSON's unpaired "\\ud800" is not): a 422 before any work or stream."""
    require_text_within(data, "the request")  # an InputError is a ValueError: pydantic reports it
    return data


def _instruction(value: str | None) -> str | None:
    """A given instruction must say something (leave it out for the default)."""
    if value is not None and is_blank(value):
        raise ValueError("the instruction is blank: give its text, or leave it out for the default")
    return value


class MonitorRequest(_Body):
    """Generate an answer and stream each sentence, scored, as it completes."""

    question: str
    context: str
    max_new_tokens: JsonInt | None = Field(None, ge=1, description="Default: the server's monitor setting.")
    temperature: JsonFloat = Field(0.0, ge=0.0, le=5.0, description="0 = greedy; above 0 = sampling.")
    seed: JsonInt = Field(default("seed"), ge=SEED_MIN, le=SEED_MAX,
                      description=f"Seed of the sampler (temperature > 0), {SEED_MIN} to {SEED_MAX}.")
    instruction: str | None = _INSTRUCTION

    _check_instruction = field_validator("instruction")(_instruction)
    _check_text = model_validator(mode="before")(_all_text)

    @model_validator(mode="after")
    def _seed_samples(self) -> MonitorRequest:
        """A seed at temperature 0 is refused, as /v1/generate refuses it for greedy: greedy decoding ignored it."""
        if "seed" in self.model_fields_set and self.temperature == 0:
            raise ValueError("seed seeds the sampler, and temperature 0 decodes greedily: leave it out, or set a "
                             "temperature above 0")
        return self


class ScoreRecord(records.ScoreRecord):
    """One (question, context, response) to score by teacher forcing (the record of ``faithwatch score``; blank
    text is that record's own 422 in the results)."""

    model_config = ConfigDict(extra="forbid")


class ScoreRequest(_Body):
    """A batch of records; each gets a result or its own error."""

    records: list[ScoreRecord] = Field(..., min_length=1)


class GenerateRequest(DecodingParams):
    """Answer with a decoding strategy; the response holds the answer, its sentences and the trace."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    question: str
    context: str
    # what one request may cost the server (the library itself has no upper bounds)
    tau1: JsonFloat = Field(default("tau1"), ge=0.0, le=1.0)
    tau2: JsonFloat = Field(default("tau2"), ge=0.0, le=1.0)
    beams: JsonInt = Field(default("beams"), ge=1, le=8)
    samples: JsonInt = Field(default("samples"), ge=1, le=16)
    temperature: JsonFloat = Field(default("temperature"), ge=0.0, le=5.0)
    alpha: JsonFloat = Field(default("alpha"), ge=0.0, le=10.0)
    abstain_threshold: JsonFloat = Field(default("abstain_threshold"), ge=0.0, le=1.0)
    chunk_tokens: JsonInt = Field(default("chunk_tokens"), ge=1, le=64)
    strategy: str = Field(DEFAULT_STRATEGY, description=" | ".join(registry.strategies.names()),
                          json_schema_extra={"enum": list(registry.strategies.names())})
    instruction: str | None = _INSTRUCTION

    _check_instruction = field_validator("instruction")(_instruction)
    _check_text = model_validator(mode="before")(_all_text)

    @field_validator("strategy")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in registry.strategies:
            raise ValueError(f"unknown strategy {value!r}; choose one of {', '.join(registry.strategies)}")
        return value

    @model_validator(mode="after")
    def _read(self) -> GenerateRequest:
        """A parameter the strategy does not read is refused, as on the command line: it was ignored."""
        from faithwatch.decoding import params_read

        reads = params_read(self.strategy)
        stray = sorted(set(DecodingParams.model_fields) & self.model_fields_set - set(reads or ()))
        if reads is not None and stray:
            raise ValueError(f"strategy {self.strategy} does not read {', '.join(stray)} (it reads "
                             f"{', '.join(reads)}): leave {'it' if len(stray) == 1 else 'them'} out, or choose a "
                             "strategy that reads them")
        return self


class CheckRequest(_Body):
    """Extract the claims of a response and check each against the context passage(s)."""

    response: str
    contexts: list[str] | str = Field(..., description="One reference passage or several. Also taken as "
                                      "`context`, the key of `faithwatch check --input` records and of /v1/score.",
                                      validation_alias=AliasChoices("contexts", "context"))
    question: str | None = None
    extractor: Literal["response", "sentence", "subsentence"] = "sentence"
    checker: Literal["detector", "alignment"] | None = Field(
        None, description="detector: the served detector's verdict, as /v1/monitor gives it (a detector that reads "
        "text only); alignment: an alignment scorer, thresholded. Absent: the server's default (/healthz "
        "check_checker).")
    alignment: str | None = Field(None, description=f"checker alignment: {' | '.join(plain_specs())} (the "
                                  "server's default if absent).", json_schema_extra={"examples": list(plain_specs())})
    aggregation: Literal["strict", "soft", "majority"] = "strict"
    entail_threshold: JsonFloat = Field(0.7, ge=0.0, le=1.0, description="checker alignment only")
    contradict_threshold: JsonFloat = Field(0.2, ge=0.0, le=1.0, description="checker alignment only")

    _check_text = model_validator(mode="before")(_all_text)
