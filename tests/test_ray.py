"""Batch scoring on Ray Data (a local 2-CPU cluster, the tiny random model): the same rows as `faithwatch score`,
every id exactly once even when a worker dies mid-run, and a re-run resumes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from faithwatch.scale import RayScorer, RaySettings, score_with_ray  # noqa: E402


class DiesOnce(RayScorer):
    """Kills its worker process on its second batch, once per test (a marker file remembers)."""

    marker: str = ""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.calls = 0

    def __call__(self, batch):
        self.calls += 1
        if self.calls == 2 and not Path(self.marker).exists():
            Path(self.marker).write_text("died")
            os._exit(1)
        return super().__call__(batch)


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"OMP_NUM_THREADS": "1"}})
    ray.cloudpickle.register_pickle_by_value(__import__(__name__))
    yield
    ray.shutdown()


def _records(n: int) -> list[dict]:
    return [{"id": f"r{i}", "question": "Where is Paris?", "context": "Paris is in France. " * (1 + i % 7),
             "response": "Paris is in France. It is big."} for i in range(n)]


def test_ray_rows_equal_local_scoring_and_survive_a_dying_worker(cluster, tiny_model_dir, tmp_path):
    from faithwatch.batch import score_file
    from faithwatch.monitor import Monitor

    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in _records(24)) + "\n{broken\n")
    kwargs = {"model": str(tiny_model_dir), "alignment": "lexical", "detector": "heuristic"}
    DiesOnce.marker = str(tmp_path / "died")
    out = tmp_path / "ray.jsonl"
    summary = score_with_ray(kwargs, src, out, RaySettings(workers=2, batch_size=4), scorer=DiesOnce)
    assert (tmp_path / "died").exists()  # a worker did die mid-run
    assert summary.scored == 24 and len(summary.bad) == 1 and summary.bad[0].line == 25
    ids = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    assert sorted(ids) == sorted(r["id"] for r in _records(24))  # nothing lost, nothing duplicated
    again = score_with_ray(kwargs, src, out, RaySettings(workers=2, batch_size=4))
    assert again.scored == 0 and again.skipped_done == 24 and len(out.read_text().splitlines()) == 24
    local = tmp_path / "local.jsonl"
    score_file(Monitor(**kwargs), src, local, vectors=False)
    rows = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    for want in map(json.loads, local.read_text().splitlines()):
        got = rows[want["id"]]
        assert [s["text"] for s in got["sentences"]] == [s["text"] for s in want["sentences"]]
        for a, b in zip(got["sentences"], want["sentences"], strict=True):
            assert a["score"] == pytest.approx(b["score"], abs=1e-4)


def test_cli_score_ray(cluster, tiny_model_dir, tmp_path):
    from typer.testing import CliRunner

    from faithwatch.cli import app

    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in _records(6)) + "\n")
    result = CliRunner().invoke(app, ["score", "-i", str(src), "-o", str(out), "-m", str(tiny_model_dir),
                                      "--alignment", "lexical", "--detector", "heuristic", "--ray", "--workers", "2",
                                      "--batch-size", "2", "--no-vectors"])
    assert result.exit_code == 0, result.output
    assert "6 scored" in result.output and "records/s" in result.output
    assert sorted(json.loads(x)["id"] for x in out.read_text().splitlines()) == sorted(f"r{i}" for i in range(6))
