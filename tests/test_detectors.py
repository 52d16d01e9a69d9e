"""Trained detectors on synthetic data: SynCheck aggregators, Lookback Lens, head mapping, artifacts."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from faithwatch.detectors import (
    ArtifactError,
    HeadMapping,
    HeuristicDetector,
    LookbackLens,
    SynCheckDetector,
    get_detector,
    load_detector,
)
from faithwatch.detectors.calibration import weighted_balanced_accuracy as balanced_accuracy
from faithwatch.errors import InputError
from faithwatch.signals.lid import LIDBank

FEATURES = ["align_score", "mean_prob", "noise", "const"]
MODEL = "org/model-a"
KINDS = ["lr", "xgb", "mlp"]


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray]:
    """y = 1 (unfaithful) iff 2*x0 - x1 + noise > 0; one pure-noise column, one constant column."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4))
    X[:, 3] = 0.7
    y = (2 * X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=400) > 0).astype(int)
    return X, y


@pytest.fixture(scope="module")
def fitted(data: tuple[np.ndarray, np.ndarray]) -> dict[str, SynCheckDetector]:
    X, y = data
    return {k: SynCheckDetector.fit(X, y, FEATURES, k, model_id=MODEL, training_data=["synthetic: 400"]) for k in KINDS}


def _no_pickle(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("pickle used while loading a detector")

    for attr in ("load", "loads", "Unpickler"):
        monkeypatch.setattr(pickle, attr, refuse)


def _assert_pickle_free(directory: Path) -> None:
    for file in directory.iterdir():
        head = file.read_bytes()
        assert not head.startswith(b"\x80"), f"{file.name} starts with the pickle protocol byte"
        if file.suffix == ".json":
            json.loads(head)
        else:  # safetensors: u64 header length, then a JSON header
            n = int.from_bytes(head[:8], "little")
            json.loads(head[8 : 8 + n])


@pytest.mark.parametrize("kind", KINDS)
def test_fit_quality_threshold_and_roundtrip(kind, data, fitted, tmp_path, monkeypatch) -> None:
    X, y = data
    det = fitted[kind]
    assert det.name == f"syncheck-{kind}"
    p = det.predict_proba_faithful(X)
    assert p.shape == (400,) and np.all((p >= 0) & (p <= 1))
    assert roc_auc_score(y, 1 - p) > 0.9
    assert 0 < det.threshold < 1
    assert balanced_accuracy(p, y == 1, det.threshold) > 0.8
    assert det.meta.metrics["train_auroc"] > 0.9

    det.save(tmp_path / kind)
    _assert_pickle_free(tmp_path / kind)
    _no_pickle(monkeypatch)
    loaded = SynCheckDetector.load(tmp_path / kind, expect_model_id=MODEL, expect_features=FEATURES + ["extra"])
    np.testing.assert_allclose(loaded.predict_proba_faithful(X), p, atol=1e-6)
    assert loaded.threshold == det.threshold and loaded.name == det.name
    via_registry = get_detector(str(tmp_path / kind), expect_model_id=MODEL)
    assert isinstance(via_registry, SynCheckDetector)
    row = dict(zip(FEATURES, X[0], strict=True))
    assert loaded.score(row) == pytest.approx(p[0], abs=1e-6)


@pytest.mark.parametrize("kind", KINDS)
def test_deterministic_under_seed(kind, data, fitted) -> None:
    X, y = data
    again = SynCheckDetector.fit(X, y, FEATURES, kind, model_id=MODEL, seed=0)
    np.testing.assert_array_equal(again.predict_proba_faithful(X), fitted[kind].predict_proba_faithful(X))


def test_artifact_refusals(data, fitted, tmp_path) -> None:
    X, _ = data
    directory = fitted["lr"].save(tmp_path / "lr")
    layout = json.loads((directory / "detector.json").read_text())
    assert layout["format"] == "faithwatch-detector" and len(layout["schema_hash"]) == 64

    with pytest.raises(InputError, match=r"model 'org/model-a'.*model 'org/model-b'"):
        load_detector(directory, expect_model_id="org/model-b")
    with pytest.raises(InputError, match=r"align_score.*mean_prob.*missing"):
        SynCheckDetector.load(directory, expect_features=["align_score", "noise", "const"])

    # the feature list edited without updating the hash
    tampered = tmp_path / "tampered"
    fitted["lr"].save(tampered)
    meta = json.loads((tampered / "detector.json").read_text())
    meta["feature_names"] = ["align_score", "min_prob", "noise", "const"]
    (tampered / "detector.json").write_text(json.dumps(meta))
    with pytest.raises(ArtifactError, match="schema"):
        load_detector(tampered)

    # a newer major version, a corrupted weight file, a missing artifact
    meta = json.loads((directory / "detector.json").read_text())
    (directory / "detector.json").write_text(json.dumps({**meta, "faithwatch_version": "99.0.0"}))
    with pytest.raises(ArtifactError, match="newer"):
        load_detector(directory)
    (directory / "detector.json").write_text(json.dumps(meta))
    weights = directory / "weights.safetensors"
    weights.write_bytes(weights.read_bytes()[:-8] + b"\x00" * 8)
    with pytest.raises(ArtifactError, match="checksum"):
        load_detector(directory)
    with pytest.raises(ArtifactError, match="not found"):
        load_detector(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="heuristic"):
        get_detector("no-such-detector")
    assert isinstance(get_detector("heuristic"), HeuristicDetector)


def test_input_validation(data, fitted) -> None:
    X, y = data
    det = fitted["lr"]
    row = dict(zip(FEATURES, X[0], strict=True))
    with pytest.raises(InputError, match="mean_prob"):
        det.score({**row, "mean_prob": None})
    with pytest.raises(InputError, match="align_score"):
        det.score({k: v for k, v in row.items() if k != "align_score"})
    bad = X.copy()
    bad[3, 2] = np.nan
    with pytest.raises(InputError, match="'noise'"):
        SynCheckDetector.fit(bad, y, FEATURES, "lr", model_id=MODEL)
    with pytest.raises(InputError, match="'noise'"):
        det.predict_proba_faithful(bad)
    with pytest.raises(InputError, match="single class"):
        SynCheckDetector.fit(X, np.zeros(400), FEATURES, "lr", model_id=MODEL)
    with pytest.raises(InputError, match="unknown SynCheck kind"):
        SynCheckDetector.fit(X, y, FEATURES, "svm", model_id=MODEL)


def test_lid_bank_travels_with_detector(tmp_path) -> None:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] > 0).astype(int)
    bank = LIDBank(model_id=MODEL, layers={3: rng.normal(size=(30, 8)).astype(np.float32)}, k=5)
    det = SynCheckDetector.fit(X, y, ["lid_layer_3", "mean_prob"], "lr", model_id=MODEL, lid_bank=bank)
    assert det.meta.layers == {"lid": [3]}
    det.save(tmp_path / "d")
    _assert_pickle_free(tmp_path / "d")
    loaded = SynCheckDetector.load(tmp_path / "d")
    assert loaded.lid_bank is not None and loaded.lid_bank.k == 5
    np.testing.assert_array_equal(loaded.lid_bank.layers[3], bank.layers[3])
    other = LIDBank(model_id="org/other", layers=bank.layers)
    with pytest.raises(InputError, match="org/other"):
        SynCheckDetector.fit(X, y, ["lid_layer_3", "mean_prob"], "lr", model_id=MODEL, lid_bank=other)


def _lens_data(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """3 layers x 4 heads; unfaithful when head (0, 1) looks back less than head (2, 3)."""
    v = rng.uniform(size=(n, 3, 4))
    y = (v[:, 0, 1] - v[:, 2, 3] + 0.1 * rng.normal(size=n) < 0).astype(int)
    return v, y


def test_lookback_lens(tmp_path, monkeypatch) -> None:
    v, y = _lens_data(np.random.default_rng(2), 400)
    lens = LookbackLens.fit(v, y, num_layers=3, num_heads=4, model_id=MODEL, mode="window", window_size=8)
    p = lens.predict_proba_faithful(v)
    assert roc_auc_score(y, 1 - p) > 0.9 and 0 < lens.threshold < 1
    lens.save(tmp_path / "lens")
    _assert_pickle_free(tmp_path / "lens")
    _no_pickle(monkeypatch)
    loaded = load_detector(tmp_path / "lens", expect_model_id=MODEL)
    assert isinstance(loaded, LookbackLens) and loaded.meta.params["mode"] == "window"
    np.testing.assert_allclose(loaded.predict_proba_faithful(v.reshape(400, 12)), p, atol=1e-6)
    assert loaded.score({"lookback_ratio": v[0].tolist()}) == pytest.approx(p[0], abs=1e-6)
    assert loaded.score({"lookback_ratio": v[0].reshape(-1)}) == pytest.approx(p[0], abs=1e-6)
    with pytest.raises(InputError, match="12 values"):
        loaded.score({"lookback_ratio": np.zeros((4, 4))})
    with pytest.raises(InputError, match="lookback_ratio"):
        loaded.score({"lookback_mean": 0.5})


def test_head_mapping_transfer(tmp_path) -> None:
    rng = np.random.default_rng(3)
    # a known map: source vectors are a linear function of target vectors (plus small noise)
    t = rng.uniform(size=(300, 20))
    w, b = rng.normal(size=(20, 12)), rng.normal(size=12)
    s = t @ w + b + 0.001 * rng.normal(size=(300, 12))
    mapping = HeadMapping.fit(t, s, target_model_id="B", source_model_id="A", target_shape=(4, 5), source_shape=(3, 4))
    np.testing.assert_allclose(mapping.weight, w, atol=0.01)
    np.testing.assert_allclose(mapping.bias, b, atol=0.01)

    # paper 003 §4: target = random linear transform of source; map target back, score with the source lens
    src, y = _lens_data(rng, 800)
    src = src.reshape(800, 12)
    a = rng.normal(size=(12, 20))
    tgt = src @ a + 0.01 * rng.normal(size=(800, 20))
    lens = LookbackLens.fit(src[:400], y[:400], num_layers=3, num_heads=4, model_id="A")
    mapping = HeadMapping.fit(
        tgt[:400], src[:400], target_model_id="B", source_model_id="A", target_shape=(4, 5), source_shape=(3, 4)
    )
    assert mapping.r2 is not None and mapping.r2 > 0.95
    assert np.abs(mapping.transform(tgt[400:]) - src[400:]).max() < 0.1
    mapping.save(tmp_path / "map.safetensors")
    mapping = HeadMapping.load(tmp_path / "map.safetensors", expect_source_model_id="A", expect_target_model_id="B")
    mapped = lens.with_mapping(mapping)
    p = mapped.predict_proba_faithful(tgt[400:])
    assert roc_auc_score(y[400:], 1 - p) > 0.85

    mapped.save(tmp_path / "mapped")
    _assert_pickle_free(tmp_path / "mapped")
    loaded = load_detector(tmp_path / "mapped", expect_model_id="B")
    assert loaded.meta.layers["lens_source"]["model_id"] == "A" and loaded.model_id == "B"
    np.testing.assert_allclose(loaded.predict_proba_faithful(tgt[400:]), p, atol=1e-6)
    assert loaded.score({"lookback_ratio": tgt[400].reshape(4, 5)}) == pytest.approx(p[0], abs=1e-6)
    with pytest.raises(InputError, match="20 values"):
        loaded.score({"lookback_ratio": src[400].reshape(3, 4)})  # a source-model vector
    with pytest.raises(InputError, match="'B'.*'A'"):
        load_detector(tmp_path / "mapped", expect_model_id="A")
    with pytest.raises(InputError, match="trained on 'B'"):
        LookbackLens.fit(tgt[:400], y[:400], num_layers=4, num_heads=5, model_id="B").with_mapping(
            HeadMapping.fit(
                src[:400], tgt[:400], target_model_id="A", source_model_id="C", target_shape=(3, 4), source_shape=(4, 5)
            )
        )


def test_safetensors_never_look_like_pickle(tmp_path) -> None:
    from safetensors.numpy import load_file, save_file

    from faithwatch.detectors.artifact import avoid_pickle_magic

    path = tmp_path / "w.safetensors"
    arrays = {"w": np.arange(3.0)}
    for width in range(64):  # find metadata whose header length makes the file start with 0x80
        save_file(arrays, str(path), metadata={"x": "a" * width})
        if path.read_bytes()[:1] == b"\x80":
            break
    assert path.read_bytes()[:1] == b"\x80"
    avoid_pickle_magic(path)
    assert path.read_bytes()[:1] != b"\x80"
    np.testing.assert_array_equal(load_file(str(path))["w"], arrays["w"])


@pytest.mark.parametrize("transform", ["robust", "quantile"])
def test_features_are_bounded_no_unbounded_extrapolation(transform):
    """A feature far outside the training range scores like the transform's bound, never beyond."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = (X[:, 0] + 0.3 * rng.normal(size=300) > 0).astype(int)
    det = SynCheckDetector.fit(X, y, ["a", "b"], "lr", model_id="m", transform=transform)
    edge = 10 * np.abs(X[:, 0]).max()  # beyond both bounds
    far = det.predict_proba_faithful(np.array([[edge, 0.0], [1e6, 0.0], [-edge, 0.0], [-1e6, 0.0]]))
    assert far[0] == pytest.approx(far[1]) and far[2] == pytest.approx(far[3])
    inside = det.predict_proba_faithful(np.array([[0.0, 0.0]]))
    assert far[0] < inside[0] < far[2]  # still monotone in the feature


def test_default_names_the_shipped_detector(tmp_path, monkeypatch):
    """``--detector default`` works where faithwatch is installed (no repository path); a folder of that name in
    the working directory is still the folder."""
    from faithwatch.detectors.shipped import SHIPPED_DIR, detector_dir

    monkeypatch.chdir(tmp_path)
    assert detector_dir("default") == SHIPPED_DIR and detector_dir("my-det") == Path("my-det")
    assert get_detector("default").meta.kind == json.loads((SHIPPED_DIR / "detector.json").read_text())["kind"]
    with pytest.raises(InputError, match="trained on features of model"):
        get_detector("default", expect_model_id="some/other-model")
    (tmp_path / "default").mkdir()
    assert detector_dir("default") == Path("default")


def test_the_shipped_detector_was_trained_on_the_recorded_recipe():
    """training/recipe.json is what training/default_detector.sh trains: the shipped artifact must carry it."""
    from faithwatch.detectors.shipped import SHIPPED_DIR
    from faithwatch.eval.training import Recipe, syncheck_features

    recorded = Path(__file__).resolve().parents[1] / "training" / "recipe.json"
    recipe = Recipe.from_dict(json.loads(recorded.read_text(encoding="utf-8"))["recipe"])
    shipped = json.loads((SHIPPED_DIR / "detector.json").read_text(encoding="utf-8"))
    assert Recipe.from_dict(shipped["params"]["recipe"]) == recipe
    assert shipped["feature_names"] == syncheck_features([], recipe.families)


def test_the_detectors_package_loads_its_trained_classes_on_first_use() -> None:
    # it imported torch and scikit-learn (seconds) for commands that only check a detector folder
    import subprocess
    import sys

    code = ("import sys\nimport faithwatch.detectors as d\nd.detector_path('default')\n"
            "print('torch' in sys.modules, 'sklearn' in sys.modules)\n"
            "from faithwatch.detectors.aggregator import SynCheckDetector\n"
            "from faithwatch.detectors.lookback_lens import HeadMapping, LookbackLens\n"
            "print(d.SynCheckDetector is SynCheckDetector, d.LookbackLens is LookbackLens,\n"
            "      d.HeadMapping is HeadMapping)\n"
            "print(type(d.get_detector('default')).__name__)\n"
            "try:\n    d.NoSuchThing\nexcept AttributeError as exc:\n    print('AttributeError', exc)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.splitlines() == ["False False", "True True True", "SynCheckDetector",
                                        "AttributeError module 'faithwatch.detectors' has no attribute "
                                        "'NoSuchThing'"], (done.stdout, done.stderr)
