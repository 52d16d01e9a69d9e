"""Many records per forward pass: Monitor.score_many equals Monitor.score record by record, for every signal."""

from __future__ import annotations

import pytest

from faithwatch.errors import FaithwatchError
from same import TOL, assert_same_results

CONTEXT = ("The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. It was built "
           "from 1887 to 1889 by the company of Gustave Eiffel. It is 330 metres tall.")
RECORDS = [
    ("Who built it?", CONTEXT, "Gustave Eiffel's company built it. It took two years."),
    ("Where?", "Paris is in France.", "In France."),
    ("How tall is it?", CONTEXT + " " + CONTEXT, "It is 330 metres tall. It is made of iron. It is in Paris. "
     "Many people visit it every year, and it was the tallest structure in the world for decades."),
    ("When?", "It opened in 1889.", "It opened in 1889"),
    ("Empty?", "Some context.", "   "),  # a bad record: reported in its place, the others go on
]


@pytest.mark.parametrize("batch_size", [1, 2, 8])
def test_score_many_equals_score(full_monitor, batch_size, one_thread):
    many = full_monitor.score_many(RECORDS, batch_size=batch_size)
    assert isinstance(many[-1], FaithwatchError) and "empty" in str(many[-1])
    for record, got in zip(RECORDS[:-1], many[:-1], strict=True):
        want = full_monitor.score(*record)
        assert_same_results(got, want)


def test_score_batch_size_writes_the_same_rows(tiny_model_dir, tmp_path, one_thread):
    import json

    from typer.testing import CliRunner

    from faithwatch.cli import app

    src = tmp_path / "in.jsonl"
    lines = [json.dumps({"id": f"r{i}", "question": q, "context": c, "response": r}) for i, (q, c, r) in
             enumerate(RECORDS)]
    src.write_text("\n".join([*lines, lines[0]]) + "\n")  # the last one repeats an id
    base = ["score", "-i", str(src), "-m", str(tiny_model_dir), "--alignment", "lexical", "--detector", "heuristic",
            "--no-vectors"]
    outs = {}
    for size in (1, 3):
        out = tmp_path / f"out{size}.jsonl"
        result = CliRunner().invoke(app, [*base, "-o", str(out), "--batch-size", str(size)])
        assert result.exit_code == 1, result.output  # the blank response and the repeated id are bad records
        assert "4 scored" in result.output and "2 bad" in result.output
        outs[size] = {row["id"]: row for row in map(json.loads, out.read_text().splitlines())}
    assert set(outs[1]) == set(outs[3]) == {"r0", "r1", "r2", "r3"}
    for rid, row in outs[1].items():
        other = outs[3][rid]
        assert [s["text"] for s in row["sentences"]] == [s["text"] for s in other["sentences"]]
        for a, b in zip(row["sentences"], other["sentences"], strict=True):
            assert a["score"] == pytest.approx(b["score"], abs=TOL)


SHARED = [  # several answers to one prompt, as in FaithBench or RAGTruth
    ("Who built it?", CONTEXT, "Gustave Eiffel's company built it."),
    ("Who built it?", CONTEXT, "It was built by the company of Gustave Eiffel. It took two years."),
    ("Where?", "Paris is in France.", "In France."),
    ("Who built it?", CONTEXT, "Nobody knows. It is in Paris."),
]


def _count_prefills(monkeypatch) -> list[int]:
    """Patch the engine's prefills to log how many prompts each one runs."""
    from faithwatch.models.engine import EngineSession

    runs: list[int] = []
    one, many = EngineSession._prefill_one, EngineSession._prefill_many
    monkeypatch.setattr(EngineSession, "_prefill_one", lambda self, p: (runs.append(1), one(self, p))[1])
    monkeypatch.setattr(EngineSession, "_prefill_many", lambda self, m: (runs.append(len(m)), many(self, m))[1])
    return runs


def test_one_at_a_time_the_last_prompt_is_not_prefilled_again(full_monitor, make_chooser, monkeypatch, one_thread):
    engine = full_monitor.engine
    runs = _count_prefills(monkeypatch)
    full_monitor.score(*SHARED[0])
    monkeypatch.setattr(engine, "reuse_prompts", False)  # the reference: every record prefilled
    want = [full_monitor.score(*r) for r in SHARED]
    assert len(runs) == 5
    engine.reuse_prompts = True
    runs.clear()
    got = [full_monitor.score(*r) for r in SHARED]
    assert len(runs) == 3  # the second record rewinds the first one's session; the fourth follows another prompt
    again = full_monitor.score(*SHARED[3])
    assert len(runs) == 3
    for g, w in zip([*got, again], [*want, want[3]], strict=True):
        assert_same_results(g, w, 0)  # exactly equal; the earlier results' records were not cut by the rewinds
    full_monitor.generate(SHARED[3][0], SHARED[3][1], max_new_tokens=3, choose=make_chooser())
    assert_same_results(full_monitor.score(*SHARED[3]), want[3], 0)
    assert len(runs) == 5  # another session started in between: the prompt is prefilled again


def test_score_many_prefills_a_shared_prompt_once(full_monitor, monkeypatch, one_thread):
    monkeypatch.setattr(full_monitor.engine, "reuse_prompts", False)
    want = [full_monitor.score(*r) for r in SHARED]
    full_monitor.engine.reuse_prompts = True
    runs = _count_prefills(monkeypatch)
    many = full_monitor.score_many(SHARED, batch_size=4)
    assert runs == [2]  # two distinct prompts for four records
    for got, w in zip(many, want, strict=True):
        assert_same_results(got, w)


def test_sentences_tracked_in_worker_processes_are_the_same(full_monitor, one_thread):
    """score_many(host_workers=2) tracks the responses in spawned processes while the forward passes run."""
    records = RECORDS[:-1] + SHARED
    want = full_monitor.score_many(records, batch_size=3)
    got = full_monitor.score_many(records, batch_size=3, host_workers=2)
    pool = full_monitor._pool
    assert pool is not None and pool.workers == 2
    assert full_monitor.score_many(records[:2], batch_size=3, host_workers=2)[0].response == records[0][2]
    assert full_monitor._pool is pool  # kept for later calls
    for a, b in zip(got, want, strict=True):
        assert a.response == b.response and a.token_ends == b.token_ends and a.num_tokens == b.num_tokens
        assert [(s.text, s.start, s.end, s.token_start, s.token_end) for s in a.sentences] == \
            [(s.text, s.start, s.end, s.token_start, s.token_end) for s in b.sentences]
        assert [s.score for s in a.sentences] == [s.score for s in b.sentences]
    full_monitor.close()
    assert full_monitor._pool is None
    with pytest.raises(RuntimeError, match="shutdown"):  # the closed pool's processes take no more work
        pool.submit([1, 2])
    with pytest.raises(FaithwatchError, match="host_workers"):
        full_monitor.score_many(records, host_workers=-1)


def test_a_tracking_worker_that_cannot_start_is_reported(lm, one_thread):
    """A tokenizer the workers cannot load breaks the pool: a clear error, not a hang."""
    from faithwatch.hostpool import TrackingPool

    pool = TrackingPool(_Unloadable(), 1)
    try:
        with pytest.raises(FaithwatchError, match="host workers"):
            pool.result(pool.submit([1, 2, 3]))
    finally:
        pool.close()


class _Unloadable:
    """Pickles, but fails to unpickle in the worker."""

    def __reduce__(self):
        return (_fail, ())


def _fail():
    raise RuntimeError("no tokenizer here")
