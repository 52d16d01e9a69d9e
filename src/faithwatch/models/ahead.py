"""Decoding that runs ahead of the host: the token is chosen on the device, no sync per token.

``EngineSession.feed([token])`` needs the chosen token on the host, and brings the step's statistics back at once:
one device sync per token. On a GPU that sync leaves the device idle while the host tracks sentences and scores
them. :func:`launch` instead picks each token on the device (:class:`OnDevice`; by default :data:`GREEDY`, the
argmax of the pending distribution) and feeds it through the same step (:meth:`EngineSession._forward`, replayed
as a CUDA graph where captured) for ``n`` tokens; the chosen ids and every statistic go to the host in one
non-blocking copy. :func:`collect` waits for that copy and records the tokens exactly as ``n`` calls of ``feed``
would (``tests/test_ahead.py``). Launching the next chunk before collecting the last lets the device decode while
the host works.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from faithwatch.errors import ContextTooLongError
from faithwatch.models.records import Step, gather_chosen, unflatten

if TYPE_CHECKING:
    from faithwatch.models.engine import EngineSession

#: a float32 copy holds token ids exactly below this
_EXACT_IDS = 2**24


@dataclass(frozen=True)
class OnDevice:
    """A token chooser that runs on the device: ``pick(logp, step)`` maps the pending log-probabilities [1, V] and
    the token's index in the answer to its id as a [1, 1] tensor on the same device, without a host sync."""

    pick: Callable[[torch.Tensor, int], torch.Tensor]

    def host(self, logp: torch.Tensor, step: int) -> int:
        """The same choice as a host integer (one sync), for token-by-token decoding."""
        return int(self.pick(logp[None], step)[0, 0])


#: the most likely token
GREEDY = OnDevice(lambda logp, _step: logp.argmax(-1, keepdim=True))


@dataclass
class Ahead:
    """Steps launched on the device whose tokens and statistics are not yet on the host."""

    n: int
    given: Step  # the pending step before the first token
    last: Step  # the pending step after the last token (statistics still on the device)
    flat: torch.Tensor  # every token id and statistic, flattened (on the host once ``ready`` is done)
    shapes: list[tuple[int, ...] | None]  # the pieces of ``flat``, in order
    ready: torch.cuda.Event | None  # recorded after the copy to the host (None: the copy was synchronous)


def _stats(step: Step) -> list:
    return [step.entropy, step.kl, step.hidden, step.lookback]


#: pieces of ``Ahead.flat`` per step: the token, its log-probabilities (main and twin), the step's statistics
_PER_STEP = 2 + 4


@torch.inference_mode()
def launch(session: EngineSession, n: int, choose: OnDevice = GREEDY) -> Ahead:
    """Choose (on the device) and feed ``n`` tokens (see the module); :func:`collect` records them."""
    session._single("launch")
    if n < 1:
        raise ValueError(f"launch needs n >= 1, got {n}")
    if session._main_lens[0] + n > session.lm.max_length:
        raise ContextTooLongError(f"{session._main_lens[0] + n} tokens exceed the model window of "
                                  f"{session.lm.max_length}")
    if session.lm.vocab_size >= _EXACT_IDS:
        raise ValueError("launch copies token ids as float32; this vocabulary is too large")
    device, twin = session.lm.device, session.needs.twin
    steps = torch.arange(n, device=device)  # positions made on the device: no host-to-device copy to wait for
    pos = torch.stack([steps + session._main_lens[0]] + ([steps + session._twin_lens[0]] if twin else []))
    keep = torch.ones(len(pos), 1, dtype=session._mask.dtype, device=device)
    given = cur = session._pending
    start = session._main_lens[0] - session.prompt_len  # tokens fed (or launched) so far
    pieces = [None if isinstance(x, np.ndarray) else x for x in _stats(given)]  # device stats of a chained launch
    for i in range(n):
        if session.engine.before_step is not None:
            session.engine.before_step()
        token = choose.pick(cur.logp[:, 0], start + i)  # [1, 1]
        ids = torch.cat([token, token]) if twin else token
        session._mask = torch.cat([session._mask, keep], 1)
        chosen = gather_chosen(cur.logp, cur.twin_logp, token)  # before the step: a graph reuses its buffers
        logp, twin_logp, *stats = session._forward(ids, pos[:, i : i + 1], rows=1)
        if session.engine.graphs is not None:  # a graph's outputs are overwritten at its next replay
            stats = [None if x is None else x.clone() for x in stats]
        cur = Step(logp, twin_logp, *stats)
        session._cache_len += 1
        session._main_lens[0] += 1
        session._twin_lens[0] += 1
        pieces += [token, chosen, *_stats(cur)]
    session._pending = cur
    present = [p for p in pieces if p is not None]
    flat = torch.cat([p.float().flatten() for p in present])
    ready = None
    if flat.is_cuda:
        flat = flat.to("cpu", non_blocking=True)
        ready = torch.cuda.Event()
        ready.record()
    return Ahead(n, given, cur, flat, [None if p is None else tuple(p.shape) for p in pieces], ready)


def collect(session: EngineSession, ahead: Ahead) -> list[int]:
    """Wait for ``ahead``'s copy, record its tokens as ``feed`` would, and return them (launch order)."""
    if ahead.ready is not None:
        ahead.ready.synchronize()
    parts = unflatten(ahead.flat.numpy(), ahead.shapes)
    given = _stats(ahead.given)
    stats = [x if isinstance(x, np.ndarray) else p for x, p in zip(given, parts[: len(given)], strict=True)]
    tokens = []
    for i in range(ahead.n):
        at = len(given) + _PER_STEP * i
        token, chosen, *after = parts[at : at + _PER_STEP]
        tokens.append(int(token[0, 0]))
        session._record(Step(None, None, *stats), [[tokens[-1]]], [True], chosen)
        stats = after
    if session._pending is ahead.last:  # no launch since: the pending step's statistics are now on the host
        session._pending = Step(ahead.last.logp, ahead.last.twin_logp, *stats)
    return tokens
