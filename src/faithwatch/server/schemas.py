"""Request bodies of the HTTP API (pydantic); responses are the library's ``to_dict`` payloads."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from faithwatch.decoding.strategies import STRATEGIES


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MonitorRequest(_Body):
    """Generate an answer and stream each sentence, scored, as it completes."""

    question: str
    context: str
    max_new_tokens: int | None = Field(None, ge=1, description="Default: the server's monitor setting.")
    temperature: float = Field(0.0, ge=0.0, le=5.0, description="0 = greedy; above 0 = sampling.")
    seed: int = Field(0, description="Seed of the sampler (temperature > 0).")


class ScoreRecord(_Body):
    """One (question, context, response) to score by teacher forcing."""

    id: str | int | None = None
    question: str = ""
    context: str = ""
    response: str = ""


class ScoreRequest(_Body):
    """A batch of records; each gets a result or its own error."""

    records: list[ScoreRecord] = Field(..., min_length=1)


class GenerateRequest(_Body):
    """Answer with a decoding strategy; the response holds the answer, its sentences and the trace."""

    question: str
    context: str
    strategy: Literal[STRATEGIES] = "fod"  # type: ignore[valid-type]
    tau1: float = Field(0.7, ge=0.0, le=1.0)
    tau2: float = Field(0.85, ge=0.0, le=1.0)
    beams: int = Field(2, ge=1, le=8)
    samples: int = Field(6, ge=1, le=16)
    temperature: float = Field(0.7, ge=0.0, le=5.0)
    alpha: float = Field(0.5, ge=0.0, le=10.0)
    abstain_threshold: float = Field(0.7, ge=0.0, le=1.0)
    max_new_tokens: int = Field(128, ge=1)
    max_sentence_tokens: int = Field(96, ge=1)
    chunk_tokens: int = Field(8, ge=1, le=64)
    seed: int = 0


class CheckRequest(_Body):
    """Extract the claims of a response and check each against the context passage(s)."""

    response: str
    contexts: list[str] | str = Field(..., description="One reference passage or several.")
    question: str | None = None
    extractor: Literal["response", "sentence", "subsentence"] = "sentence"
    checker: Literal["alignment"] = "alignment"
    alignment: str | None = Field(None, description="nli-minilm | lexical | embedding | lexical+embedding | "
                                  "nli-minilm+lexical+embedding (server "
                                  "default if absent; the server may restrict the choice).")
    aggregation: Literal["strict", "soft", "majority"] = "strict"
    entail_threshold: float = Field(0.7, ge=0.0, le=1.0)
    contradict_threshold: float = Field(0.2, ge=0.0, le=1.0)
