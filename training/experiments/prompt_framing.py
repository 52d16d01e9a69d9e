"""Issue 12, decoding: does a context-faithful prompt move greedy's answers to the context? (scratch screen)

Every strategy asks the model with one prompt: the instruction "Answer the question using only the information in
the context.", the context, the question (``models.prompts``). Zhou et al. (Findings of EMNLP 2023,
"Context-faithful Prompting for Large Language Models") report large gains on counterfactual QA from two prompt
changes alone: an instruction that says the context may contradict what the model knows, and an *opinion-based*
framing ("Bob said ...; Q: ... in Bob's opinion?"), which makes the context's answer the asked one. Neither was
tried here. Three prompts, each with greedy decoding (``--max-new-tokens 64``, every other parameter the default):

* ``shipped``: the instruction and question as they are;
* ``trust``: the instruction ``TRUST``, which adds that the context wins where it disagrees with what the model
  knows;
* ``opinion``: the instruction ``OPINION`` (the context is what Bob wrote), and the question ends "in Bob's
  opinion?".

**The rule, written before any run** (this commit): a prompt is worth building (a prompt option that every
strategy reads) and worth the reserved fresh37–40 (for the out-of-sample figure of the best strategy with it, against
greedy with the shipped prompt) only if, on fresh25–28 and fresh33–36 (192 counterfactual / 128 agreeing items, read
before: in-sample), its greedy answers win at least 10 more counterfactual items than the shipped prompt's greedy
answers in the same run, and lose at most 2 agreeing items. Otherwise nothing is built and the reserve stays unread.

**Step 2, written while the screen ran and before any of its results were read** (this later commit): for the
passing prompt (if both pass, the one with the larger counterfactual gain; on a tie, ``trust``, which leaves the
question as it is), the reserved fresh37–40 (96 counterfactual / 64 agreeing items, read by no model) are run once:
``faithwatch eval-decoding --strategies greedy,rerank-coverage --max-new-tokens 64`` with the shipped instruction
and again with ``--instruction`` set to the prompt's (``opinion`` cannot be told by ``--instruction`` alone, since
it rewrites the question; it would be run by this script on the same items). The out-of-sample figure is each
strategy's counterfactual success with the prompt minus greedy's with the shipped prompt, on the same items. The
decoding target is met out of sample if one of them is at least +15 points with at most 2 points lost on the
agreeing items. The default instruction does not change this session whatever the figure (a change of every
strategy's prompt, the demo's included, wants its own rule); the prompt is offered through ``--instruction`` and
documented.

    PYTHONPATH=src python training/experiments/prompt_framing.py   # 3 prompts x 320 items
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from faithwatch.decoding.counterfactual import judge, load_items
from faithwatch.eval.decoding import DEFAULT_PARAMS, generate
from faithwatch.models.prompts import DEFAULT_INSTRUCTION
from faithwatch.monitor import Monitor

SETS = (25, 26, 27, 28, 33, 34, 35, 36)
TRUST = ("Answer the question using only the information in the context. The context may disagree with what you "
         "know; where it does, answer as the context says.")
OPINION = "Bob wrote the context below. Answer the question with Bob's opinion, using only what Bob wrote."


def opinion_question(question: str) -> str:
    """``question`` asked for Bob's opinion: "When was it built?" -> "When was it built, in Bob's opinion?"."""
    return question.rstrip().rstrip("?").rstrip() + ", in Bob's opinion?"


PROMPTS = {"shipped": (DEFAULT_INSTRUCTION, str), "trust": (TRUST, str), "opinion": (OPINION, opinion_question)}


def main(out: str = "/tmp/prompt_framing.jsonl") -> None:
    done = set()
    if Path(out).exists():
        done = {(r["prompt"], r["id"]) for r in map(json.loads, Path(out).read_text().splitlines())}
    params = {**DEFAULT_PARAMS, "max_new_tokens": 64}
    items = [(n, item) for n in SETS for item in load_items(f"training/data/counterfactual-qa-fresh{n}.jsonl")]
    monitor = None  # one model for every prompt (each prompt is read when a run starts), none when all is done
    with open(out, "a") as sink:
        for name, (instruction, ask) in PROMPTS.items():
            start = time.perf_counter()
            for n, item in items:
                if (name, item.id) in done:
                    continue
                monitor = monitor or Monitor()
                monitor.instruction = instruction
                res = generate(monitor, ask(item.question), item.context, strategy="greedy", **params)
                outcome = judge(res.answer, item, refused=res.refused)
                sink.write(json.dumps({"prompt": name, "set": n, "id": item.id, "agrees": item.agrees,
                                       "success": outcome.success, "common": outcome.common_hit,
                                       "answer": res.answer}) + "\n")
                sink.flush()
            print(f"{name}: {time.perf_counter() - start:.0f} s", file=sys.stderr)
    tally(out)


def tally(out: str) -> None:
    """Successes per prompt, counterfactual and agreeing, and the rule's verdict."""
    rows = [json.loads(line) for line in Path(out).read_text().splitlines()]
    wins = {p: {a: sum(r["success"] for r in rows if r["prompt"] == p and r["agrees"] == a) for a in (False, True)}
            for p in PROMPTS}
    counts = {a: sum(1 for r in rows if r["prompt"] == "shipped" and r["agrees"] == a) for a in (False, True)}
    print(f"items: {counts[False]} counterfactual, {counts[True]} agreeing")
    for p, w in wins.items():
        gain, loss = w[False] - wins["shipped"][False], wins["shipped"][True] - w[True]
        verdict = "" if p == "shipped" else ("passes" if gain >= 10 and loss <= 2 else "fails")
        print(f"{p:8s} counterfactual {w[False]:3d}  agreeing {w[True]:3d}  {verdict}")


if __name__ == "__main__":
    main(*sys.argv[1:])
