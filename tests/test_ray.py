"""Batch scoring on Ray Data (a local 2-CPU cluster, the tiny random model): the same rows as `faithwatch score`,
every id exactly once even when a worker dies mid-run, and a re-run resumes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
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
    from faithwatch.errors import InputError
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
    with pytest.raises(InputError, match="another configuration.*alignment 'lexical' → 'lexical\\+embedding'"):
        score_with_ray({**kwargs, "alignment": "lexical+embedding"}, src, out, RaySettings(workers=1, batch_size=4))
    with pytest.raises(InputError, match="detector folder not found") as bad:  # the monitor's own error, not Ray's
        score_with_ray({**kwargs, "detector": str(tmp_path / "nowhere")}, src, tmp_path / "o2.jsonl",
                       RaySettings(workers=1, batch_size=4))
    assert type(bad.value) is InputError
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


# --- Parquet input, output shards, resume ---------------------------------------------------------------------

KWARGS = {"alignment": "lexical", "detector": "heuristic"}


def _write_parquet(path: Path, records: list[dict]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(records), path)


def _shard_ids(folder: Path) -> list[str]:
    """Every id in the part files of ``folder`` (duplicates kept, so that a test can see them)."""
    ids = [json.loads(line)["id"] for p in folder.glob("part-*.jsonl") for line in p.read_text().splitlines()]
    if any(folder.glob("part-*.parquet")):
        import pyarrow.parquet as pq

        ids += pq.read_table(folder, columns=["id"]).column("id").to_pylist()
    return ids


def test_parquet_folder_in_parquet_shards_out_with_an_errors_dataset(cluster, tiny_model_dir, tmp_path):
    import pyarrow.parquet as pq

    from faithwatch.monitor import Monitor

    good = _records(24)
    bad = [{"id": "blank", "question": "q?", "context": "Paris is in France.", "response": "  "},
           {"id": None, "question": "q?", "context": "Paris is in France.", "response": "It is."},
           {"id": "noctx", "question": "q?", "context": None, "response": "It is."},
           {**good[3], "response": "A second copy of r3."}]
    src = tmp_path / "in"
    src.mkdir()
    _write_parquet(src / "a.parquet", good[:14] + bad[:2])
    _write_parquet(src / "b.parquet", good[14:] + bad[2:])
    out = tmp_path / "out"
    kwargs = {"model": str(tiny_model_dir), **KWARGS}
    summary = score_with_ray(kwargs, src, out, RaySettings(workers=2, batch_size=4), output_format="parquet",
                             shard_rows=6)
    assert (summary.total, summary.scored, summary.skipped_done, len(summary.bad)) == (28, 24, 0, 4)
    assert summary.errors == out / "_errors"
    table = pq.read_table(out).to_pandas()  # the folder reads as one table: _errors and _meta.json are skipped
    assert sorted(table["id"]) == sorted(r["id"] for r in good)  # one row per good id
    assert len(list(out.glob("part-*.parquet"))) >= 4 and not list(out.glob(".*.tmp"))
    errors = pq.read_table(out / "_errors").to_pylist()
    assert {(e["id"], e["error"].split(" (")[0]) for e in errors} == {
        ("blank", "'response' must be a non-empty string"), (None, "'id' is missing"),
        ("noctx", "'context' is missing"), ("r3", "duplicate id 'r3'")}
    assert all(e["path"].endswith(".parquet") and e["line"] is None for e in errors)  # the file of each bad one
    # the columns are those of a JSONL row; nested values are JSON text; scores are those of local scoring
    mon = Monitor(**kwargs)
    r5 = good[5]
    want = mon.score(r5["question"], r5["context"], r5["response"]).to_dict(vectors=False)
    row = table.set_index("id").loc["r5"]
    assert set(table.columns) == {"id", "line", *want} - {"context"}
    sentences = json.loads(row["sentences"])
    assert [s["text"] for s in sentences] == [s["text"] for s in want["sentences"]]
    assert row["score"] == pytest.approx(want["score"], abs=1e-4)
    assert row["score"] == pytest.approx(min(s["score"] for s in sentences))
    # resume: the ids of the kept shards are left out on the cluster; the lost shard's ids are scored again
    lost = sorted(out.glob("part-*.parquet"))[0]
    n_lost = pq.read_metadata(lost).num_rows
    lost.unlink()
    again = score_with_ray(kwargs, src, out, RaySettings(workers=2, batch_size=4), output_format="parquet")
    assert (again.scored, again.skipped_done, len(again.bad)) == (n_lost, 24 - n_lost, 4)
    assert sorted(pq.read_table(out, columns=["id"]).column("id").to_pylist()) == sorted(r["id"] for r in good)


def test_shards_resume_after_an_interrupted_run_with_every_id_once(cluster, tiny_model_dir, tmp_path):
    from faithwatch.errors import InputError

    class Stop(Exception):
        pass

    src = tmp_path / "in.jsonl"
    lines = [json.dumps(r) for r in _records(30)]
    src.write_text("\n".join(lines[:7] + ["{broken"] + lines[7:]) + "\n")
    out = tmp_path / "out"
    kwargs = {"model": str(tiny_model_dir), **KWARGS}
    settings = RaySettings(workers=1, batch_size=3)

    def stop_at_12(n: int, total: int) -> None:
        if n >= 12:
            raise Stop

    with pytest.raises(Stop):  # the job stops mid-run; the finished rows are kept in whole shards
        score_with_ray(kwargs, src, out, settings, output_format="jsonl", shard_rows=4, on_progress=stop_at_12)
    first = _shard_ids(out)
    assert 0 < len(first) < 30 and len(set(first)) == len(first)
    # as a killed job would leave it: the last shard never written, the temporary file of a shard half written
    parts = sorted(out.glob("part-*.jsonl"))
    lost = parts[-1]
    lost.rename(out / f".{lost.name}.tmp")
    kept = _shard_ids(out)
    again = score_with_ray(kwargs, src, out, settings, output_format="jsonl", shard_rows=4)
    assert again.skipped_done == len(kept) and again.scored == 30 - len(kept) and len(again.bad) == 1
    assert again.bad[0].line == 8 and (out / "_errors").is_dir() and len(list((out / "_errors").iterdir())) == 1
    ids = _shard_ids(out)
    assert sorted(ids) == sorted(r["id"] for r in _records(30))  # nothing lost, nothing twice
    assert not list(out.glob(".*.tmp"))
    rows = [json.loads(line) for p in out.glob("part-*.jsonl") for line in p.read_text().splitlines()]
    assert {r["id"]: r["line"] for r in rows}["r7"] == 9  # JSONL input: line numbers are kept
    done = score_with_ray(kwargs, src, out, settings, output_format="jsonl")
    assert (done.scored, done.skipped_done) == (0, 30) and sorted(_shard_ids(out)) == sorted(ids)
    other = tmp_path / "other.jsonl"
    other.write_text(lines[0] + "\n")
    with pytest.raises(InputError, match="another input"):
        score_with_ray(kwargs, other, out, settings, output_format="jsonl")
    with pytest.raises(InputError, match="jsonl shards"):
        score_with_ray(kwargs, src, out, settings, output_format="parquet")
    with pytest.raises(InputError, match="another configuration"):  # a resume under another scorer is refused
        score_with_ray({**kwargs, "alignment": "lexical+embedding"}, src, out, settings, output_format="jsonl")


def test_cli_score_ray_parquet_to_a_folder(cluster, tiny_model_dir, tmp_path):
    from typer.testing import CliRunner

    from faithwatch.cli import app

    src = tmp_path / "in.parquet"
    _write_parquet(src, _records(6) + [{"id": "x", "question": "q?", "context": "c.", "response": ""}])
    model = ["-m", str(tiny_model_dir), "--alignment", "lexical", "--detector", "heuristic", "--no-vectors"]
    runner = CliRunner()
    refused = runner.invoke(app, ["score", "-i", str(src), "-o", str(tmp_path / "out.jsonl"), *model])
    assert refused.exit_code == 2 and "needs --ray" in refused.output
    refused = runner.invoke(app, ["score", "-i", str(src), "-o", str(tmp_path / "out.jsonl"), "--ray", *model])
    assert refused.exit_code == 2 and "written as shards" in refused.output
    result = runner.invoke(app, ["score", "-i", str(src), "-o", f"{tmp_path / 'out'}/", "--ray", "--batch-size", "2",
                                 *model])
    assert result.exit_code == 1, result.output  # partial: one bad record
    assert "6 scored" in result.output and "records/s" in result.output and "1 bad" in result.output
    assert "_errors" in result.output and "(id x)" in result.output
    assert sorted(_shard_ids(tmp_path / "out")) == sorted(f"r{i}" for i in range(6))


# --- feature caches of train / eval on Ray -----------------------------------------------------------------------

def _labelled(path: Path, n: int = 10) -> None:
    """A tiny generic labelled set: odd responses end with an invented sentence (marked as a span)."""
    rows = []
    for i in range(n):
        context = f"The bridge in Lyon opened in {1800 + i}. It was designed by local masons. Visitors come by tram."
        good = f"The bridge in Lyon opened in {1800 + i}."
        bad = f"It was moved to Porto in {1900 + i}."
        response = f"{good} {bad}" if i % 2 else f"{good} Visitors come by tram."
        spans = [{"start": len(good) + 1, "end": len(response)}] if i % 2 else []
        rows.append({"id": f"t{i}", "context": context, "question": "What about the bridge?", "response": response,
                     "spans": spans})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _same_tables(a, b, key: list[str]) -> None:
    import pandas as pd

    a, b = (t.sort_values(key).reset_index(drop=True) for t in (a, b))
    assert list(a.columns) == list(b.columns) and len(a) == len(b) > 0
    for col in a.columns:
        x, y = a[col], b[col]
        if x.dtype == object and len(x) and isinstance(x.dropna().iloc[0], np.ndarray):
            for u, v in zip(x, y, strict=True):
                assert (u is None) == (v is None) and (u is None or np.allclose(u, v, atol=1e-6, rtol=0))
        elif pd.api.types.is_numeric_dtype(x):
            assert np.allclose(x.to_numpy(float), y.to_numpy(float), atol=1e-6, rtol=0, equal_nan=True), col
        else:
            assert x.tolist() == y.tolist(), col


def test_feature_cache_on_ray_equals_the_local_one(cluster, tiny_model_dir, lm, tmp_path, one_thread):
    from faithwatch.data.loaders import load_dataset
    from faithwatch.eval.features import RayExtraction, extract_features
    from faithwatch.eval.pipeline import extraction_kwargs, extraction_monitor

    _labelled(tmp_path / "towns.jsonl")
    examples = load_dataset(str(tmp_path / "towns.jsonl"))
    monitor = extraction_monitor(lm, "lexical")
    local = extract_features(monitor, "towns", examples, root=tmp_path / "local")
    ray_run = RayExtraction(extraction_kwargs(str(tiny_model_dir), lm.num_layers, "lexical"),
                            RaySettings(workers=2, batch_size=1, threads=1))
    remote = extract_features(monitor, "towns", examples, root=tmp_path / "ray", ray=ray_run)
    folders = [[p.name for p in (tmp_path / side).iterdir()] for side in ("local", "ray")]
    assert folders[0] == folders[1] and len(folders[0]) == 1  # the same cache key
    assert list((tmp_path / "ray" / folders[0][0]).glob("examples-*.parquet"))
    assert local.failed == remote.failed == {}
    assert {"lookback_ratio", "tok_logprob"} <= set(local.sentences.columns)
    _same_tables(local.sentences, remote.sentences, ["example_id", "sentence_index"])
    _same_tables(local.windows, remote.windows, ["example_id", "window_index"])
    again = extract_features(monitor, "towns", examples, root=tmp_path / "ray", ray=ray_run)  # cached: no Ray
    _same_tables(again.sentences, remote.sentences, ["example_id", "sentence_index"])


def test_cli_train_ray(cluster, tiny_model_dir, tmp_path, monkeypatch, one_thread):
    from typer.testing import CliRunner

    from faithwatch.cli import app

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    _labelled(tmp_path / "towns.jsonl", 12)
    args = ["train", "--data", str(tmp_path / "towns.jsonl"), "--alignment", "lexical", "--lens", "none", "--model",
            str(tiny_model_dir), "--ray", "--workers", "2"]
    runner = CliRunner()
    refused = runner.invoke(app, [*args, "--features", "alignment", "--out", str(tmp_path / "no"), "--text-only"])
    assert refused.exit_code == 2 and "drop --ray" in refused.output
    trained = runner.invoke(app, [*args, "--features", "likelihood,alignment", "--out", str(tmp_path / "det")])
    assert trained.exit_code == 0, trained.output
    assert (tmp_path / "det" / "detector.json").is_file()
    shards = sorted((tmp_path / "cache" / "faithwatch" / "features").glob("*/examples-*.parquet"))
    assert shards, "features were not cached"
