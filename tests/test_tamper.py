"""Tampered or damaged detector artifacts are refused with a clear error (exit 2 in the CLI), never loaded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

from faithwatch.checksums import file_sha256
from faithwatch.detectors import ArtifactError, LookbackLens, SynCheckDetector, load_detector
from faithwatch.detectors.artifact import ArtifactMeta, upgrade_artifact
from faithwatch.errors import InputError

FEATURES = ["align_score", "mean_prob", "noise"]


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = (2 * X[:, 0] - X[:, 1] > 0).astype(int)
    det = SynCheckDetector.fit(X, y, FEATURES, "lr", model_id="m", training_data=["synthetic: 300"])
    root = tmp_path_factory.mktemp("det")
    det.save(root / "lr")
    v = rng.uniform(size=(200, 2, 3))
    lens = LookbackLens.fit(v, (v[:, 0, 0] > 0.5).astype(int), num_layers=2, num_heads=3, model_id="m")
    lens.save(root / "lr" / "lookback-lens")
    return root / "lr"


def _copy(saved: Path, tmp_path: Path) -> Path:
    target = tmp_path / "copy"
    shutil.copytree(saved, target)
    return target


def _edit(directory: Path, rehash: bool = False, **changes) -> None:
    """Change fields of detector.json; with ``rehash`` also recompute both hashes (a careful forger)."""
    path = directory / "detector.json"
    raw = {**json.loads(path.read_text()), **changes}
    if rehash:
        meta = ArtifactMeta(**{k: v for k, v in raw.items() if k in ArtifactMeta.__dataclass_fields__})
        raw["schema_hash"], raw["content_hash"] = meta.compute_schema_hash(), meta.compute_content_hash()
    path.write_text(json.dumps(raw))


def _replace_weights(directory: Path, transform) -> None:
    """Rewrite weights.safetensors through ``transform`` and record its new checksum everywhere (a careful forger)."""
    file = directory / "weights.safetensors"
    arrays = {k: transform(k, v) for k, v in load_file(str(file)).items()}
    save_file(arrays, str(file))
    files = {**json.loads((directory / "detector.json").read_text())["files"], "weights.safetensors":
             file_sha256(file)}
    _edit(directory, rehash=True, files=files)


def test_an_untouched_artifact_loads_and_scores_as_saved(saved) -> None:
    det = load_detector(saved, expect_model_id="m")
    x = np.array([[0.5, -0.2, 0.1]])
    assert det.predict_proba_faithful(x)[0] == pytest.approx(SynCheckDetector.load(saved).predict_proba_faithful(x)[0])
    assert isinstance(load_detector(saved / "lookback-lens"), LookbackLens)


@pytest.mark.parametrize("threshold", [0.0, 0.99, "0.5", float("nan")])
def test_an_edited_threshold_is_refused(saved, tmp_path, threshold) -> None:
    d = _copy(saved, tmp_path)
    raw = json.loads((d / "detector.json").read_text())
    text = json.dumps({**raw, "threshold": threshold}) if threshold == threshold else \
        json.dumps(raw).replace(f'"threshold": {raw["threshold"]}', '"threshold": NaN')
    (d / "detector.json").write_text(text)
    with pytest.raises(ArtifactError, match="content check|not a number"):
        load_detector(d)


@pytest.mark.parametrize("threshold", [1.5, "high"])
def test_a_rehashed_out_of_range_threshold_is_refused(saved, tmp_path, threshold) -> None:
    d = _copy(saved, tmp_path)
    _edit(d, rehash=True, threshold=threshold)
    with pytest.raises(ArtifactError, match="not a number in"):
        load_detector(d)


@pytest.mark.parametrize("files", [{}, {"weights.safetensors": "0" * 64, "../../etc/passwd": "0" * 64},
                                   {"weights.safetensors": "0" * 64, "/etc/passwd": "0" * 64}])
def test_the_file_map_is_required_and_stays_inside(saved, tmp_path, files) -> None:
    d = _copy(saved, tmp_path)
    if files:
        files = {**files, "weights.safetensors": json.loads((d / "detector.json").read_text())["files"][
            "weights.safetensors"]}
    _edit(d, rehash=True, files=files)
    with pytest.raises(ArtifactError, match="lists no weights|not a file inside"):
        load_detector(d)


def test_huge_weights_are_refused(saved, tmp_path) -> None:
    d = _copy(saved, tmp_path)
    _replace_weights(d, lambda k, v: v * 1e300 if k == "lr.coef" else v)
    with pytest.raises(ArtifactError, match="NaN or infinite|beyond"):
        load_detector(d)


def test_wrong_shape_weights_are_refused(saved, tmp_path) -> None:
    d = _copy(saved, tmp_path)
    _replace_weights(d, lambda k, v: np.concatenate([v, v]) if k == "lr.coef" else v)
    with pytest.raises(ArtifactError, match="do not match|do not fit"):
        load_detector(d)


def test_the_lens_subfolder_is_verified(saved, tmp_path) -> None:
    d = _copy(saved, tmp_path)
    lens = d / "lookback-lens"
    weights = lens / "weights.safetensors"
    arrays = load_file(str(weights))
    arrays["lens.coef"] = arrays["lens.coef"] * 3
    save_file(arrays, str(weights))
    with pytest.raises(ArtifactError, match="checksum"):
        load_detector(lens)
    d2 = tmp_path / "again"
    shutil.copytree(saved, d2)
    _edit(d2 / "lookback-lens", threshold=0.01)
    with pytest.raises(ArtifactError, match="content check"):
        load_detector(d2 / "lookback-lens")


def test_an_edited_feature_list_is_refused(saved, tmp_path) -> None:
    d = _copy(saved, tmp_path)
    _edit(d, feature_names=["align_score", "min_prob", "noise"])
    with pytest.raises(ArtifactError, match="schema"):
        load_detector(d)


def test_an_old_format_is_refused_and_can_be_upgraded(saved, tmp_path) -> None:
    d = _copy(saved, tmp_path)
    raw = json.loads((d / "detector.json").read_text())
    raw.pop("content_hash")
    (d / "detector.json").write_text(json.dumps({**raw, "format_version": 1}))
    with pytest.raises(ArtifactError, match="re-save it"):
        load_detector(d)
    upgrade_artifact(d)
    assert isinstance(load_detector(d), SynCheckDetector)


def test_the_cli_exits_2_on_a_tampered_detector(saved, tmp_path, tiny_model_dir) -> None:
    from typer.testing import CliRunner

    from faithwatch.cli import app

    d = _copy(saved, tmp_path)
    _edit(d, threshold=0.01)
    (tmp_path / "ctx.txt").write_text("Paris is in France.")
    result = CliRunner().invoke(app, ["monitor", "-c", str(tmp_path / "ctx.txt"), "-q", "Where?", "-m",
                                      str(tiny_model_dir), "--detector", str(d), "--max-new-tokens", "2"])
    assert result.exit_code == 2 and "content check" in result.output
    assert issubclass(ArtifactError, InputError)


def test_saved_weights_are_as_readable_as_the_manifest(tmp_path) -> None:
    import os

    import numpy as np

    from faithwatch.detectors.artifact import save_arrays

    path = tmp_path / "w.safetensors"
    save_arrays(path, {"a": np.ones(3)})
    (tmp_path / "m.json").write_text("{}")
    assert os.stat(path).st_mode & 0o777 == os.stat(tmp_path / "m.json").st_mode & 0o777


def test_equal_weights_and_metadata_save_to_equal_bytes(tmp_path) -> None:
    """safetensors writes metadata in hash order; a retrain that gives equal tensors must give an equal file (and
    so an equal checksum in the manifest), and the file must still load with its metadata."""
    from safetensors import safe_open

    from faithwatch.detectors.artifact import save_arrays

    meta = {f"key_{i}": f"value {i}" for i in range(8)}
    digests = {save_arrays(tmp_path / f"w{i}.safetensors", {"b": np.arange(4.0), "a": np.ones(3)}, meta)
               for i in range(12)}
    assert len(digests) == 1
    with safe_open(str(tmp_path / "w0.safetensors"), framework="numpy") as f:
        assert {k: v for k, v in (f.metadata() or {}).items() if k in meta} == meta
    assert np.array_equal(load_file(str(tmp_path / "w0.safetensors"))["b"], np.arange(4.0))
    raw = (tmp_path / "w0.safetensors").read_bytes()
    header = json.loads(raw[8:8 + int.from_bytes(raw[:8], "little")])
    assert list(header["__metadata__"]) == sorted(header["__metadata__"])
