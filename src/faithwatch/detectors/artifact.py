"""Trained-detector artifacts: a directory with a human-readable ``detector.json`` and pickle-free weights.

Layout of an artifact directory::

    detector.json          ArtifactMeta (indented JSON): kind, features, model, threshold, provenance, checksums
    weights.safetensors    numpy arrays (scaler, coefficients, MLP layers, lookback head map), float64
    booster.json           xgboost's native JSON model (kind "xgb" only)
    lid_bank.safetensors   optional LID reference bank (see faithwatch.signals.lid.LIDBank)
    probe.safetensors      optional hidden-state probe (see faithwatch.signals.probe.HiddenProbe)

Nothing is ever pickled: arrays go through ``safetensors.numpy`` and xgboost through its own JSON format, so
loading an artifact cannot execute code. Loading verifies the format tag and version, the faithwatch major version,
the ``schema_hash`` (sha256 over kind + feature_names + model_id + layers), the ``content_hash`` (sha256 over every
other field a score depends on: threshold, params, metrics and the files' checksums), that every listed file lies
inside the artifact and matches its sha256, and that thresholds and weights are finite and in range.

This module also holds the pieces of training shared by every trained detector (input validation, training
metrics); thresholds and calibration live in :mod:`faithwatch.detectors.calibration`.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
from safetensors.numpy import load_file

from faithwatch._version import __version__
from faithwatch.checksums import file_sha256, save_safetensors, shareable
from faithwatch.errors import InputError

#: tag written into every detector.json
ARTIFACT_FORMAT = "faithwatch-detector"
#: bumped when the on-disk layout changes incompatibly
FORMAT_VERSION = 2
#: the largest magnitude a stored weight may have (a larger one is a damaged or tampered artifact)
MAX_WEIGHT = 1e6
META_FILE = "detector.json"
WEIGHTS_FILE = "weights.safetensors"
BOOSTER_FILE = "booster.json"
LID_BANK_FILE = "lid_bank.safetensors"
PROBE_FILE = "probe.safetensors"
#: the kinds of a SynCheck aggregator (paper 000: SynCheckLR, SynCheckXGB, SynCheckMLP), and of a Lookback Lens
SYNCHECK_KINDS = ("lr", "xgb", "mlp")
LENS_KIND = "lookback-lens"
#: every value ``ArtifactMeta.kind`` may take
KINDS = (*SYNCHECK_KINDS, LENS_KIND)


class ArtifactError(InputError):
    """A detector artifact is missing, corrupted, tampered with, or incompatible with this faithwatch."""


# --- metadata -------------------------------------------------------------------------------------------------
def _json_normal(value: Any) -> Any:
    """``value`` as it reads back from JSON (tuples -> lists, int keys -> str keys), so hashes are stable."""
    return json.loads(json.dumps(value, allow_nan=False))


def compute_schema_hash(kind: str, feature_names: Sequence[str], model_id: str, layers: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of what fixes a detector's input schema."""
    payload = {"kind": kind, "feature_names": list(feature_names), "model_id": model_id, "layers": layers}
    text = json.dumps(_json_normal(payload), sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _major(version: str) -> int:
    try:
        return int(str(version).split(".")[0])
    except ValueError as exc:
        raise ArtifactError(f"unreadable faithwatch version '{version}' in a detector artifact") from exc


def check_version(found: str, what: str) -> None:
    """Refuse an artifact written by a newer major version of faithwatch than the one running."""
    if _major(found) > _major(__version__):
        raise ArtifactError(
            f"{what} was written by faithwatch {found}, newer than the installed {__version__} "
            f"(major {_major(found)} > {_major(__version__)}); upgrade faithwatch to load it."
        )


@dataclass
class ArtifactMeta:
    """Everything ``detector.json`` records about a trained detector."""

    kind: str  # one of KINDS
    feature_names: list[str]
    model_id: str
    model_revision: str | None = None
    layers: dict[str, Any] = field(default_factory=dict)  # {"lid": [14, 15, 16]} or {"num_layers": L, "num_heads": H}
    threshold: float = 0.5  # on the P(faithful) scale: flagged when score < threshold
    training_data: list[str] = field(default_factory=list)  # e.g. ["ragtruth-qa: 400"]
    n_train: int = 0
    seed: int = 0
    faithwatch_version: str = __version__
    created: str = ""
    schema_hash: str = ""
    metrics: dict[str, Any] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)  # hyper-parameters and kind-specific settings
    files: dict[str, str] = field(default_factory=dict)  # file name -> sha256
    content_hash: str = ""  # sha256 of every other field (threshold, params, metrics, files, ...): edits are refused

    def compute_schema_hash(self) -> str:
        """The schema hash of this metadata's current kind, features, model and layers."""
        return compute_schema_hash(self.kind, self.feature_names, self.model_id, self.layers)

    def compute_content_hash(self) -> str:
        """sha256 of the canonical JSON of every field but ``content_hash`` and ``created``: what scores depend on
        (threshold, feature list, params such as the transform, metrics such as the alignment scorer, and the
        files' checksums, which cover the weights)."""
        body = {k: v for k, v in asdict(self).items() if k not in ("content_hash", "created")}
        text = json.dumps(_json_normal(body), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def save(self, directory: str | Path) -> Path:
        """Write ``detector.json`` (after the weight files, whose checksums must already be in ``files``)."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        if self.kind not in KINDS:
            raise InputError(f"unknown detector kind '{self.kind}'; expected one of {', '.join(KINDS)}")
        self.layers = _json_normal(self.layers)
        self.created = self.created or datetime.now(timezone.utc).isoformat(timespec="seconds")
        self.schema_hash = self.compute_schema_hash()
        self.threshold = float(self.threshold)
        self.content_hash = self.compute_content_hash()
        payload = {"format": ARTIFACT_FORMAT, "format_version": FORMAT_VERSION, **asdict(self)}
        path = directory / META_FILE
        path.write_text(json.dumps(payload, indent=2, allow_nan=False) + "\n", encoding="utf-8")
        return path

    @classmethod
    def load(
        cls,
        directory: str | Path,
        *,
        expect_model_id: str | None = None,
        expect_features: Sequence[str] | None = None,
        expect_kinds: Sequence[str] | None = None,
    ) -> ArtifactMeta:
        """Read and verify ``directory/detector.json``.

        Raises :class:`ArtifactError` when the file is missing, not a faithwatch artifact, written by a newer
        major version, or fails its schema hash or a weight-file checksum; :class:`InputError` when the
        artifact's model differs from ``expect_model_id`` or needs features absent from ``expect_features``
        (the features the caller can supply), or its kind is not in ``expect_kinds``.
        """
        directory = Path(directory)
        path = directory / META_FILE
        if not directory.exists():
            raise ArtifactError(f"folder not found: {directory} (give a detector artifact: a folder holding "
                                f"{META_FILE})")
        if not path.is_file():
            raise ArtifactError(f"{directory} is not a detector artifact: {META_FILE} not found")
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ArtifactError(f"{path} is not valid JSON ({exc}); the artifact is corrupted") from exc
        if not isinstance(raw, dict) or raw.get("format") != ARTIFACT_FORMAT:
            raise ArtifactError(f'{path} is not a faithwatch detector artifact (no "format": "{ARTIFACT_FORMAT}")')
        check_version(str(raw.get("faithwatch_version", "0")), f"detector {directory}")
        version = raw.get("format_version", 0)
        if not isinstance(version, int) or version > FORMAT_VERSION:
            raise ArtifactError(
                f"detector {directory} uses artifact format {version!r}, this faithwatch reads up to "
                f"{FORMAT_VERSION}; upgrade faithwatch."
            )
        if version < FORMAT_VERSION:
            raise ArtifactError(
                f"detector {directory} uses artifact format {version}, which records no hash of its threshold and "
                "settings; re-save it (faithwatch.detectors.artifact.upgrade_artifact) or retrain it."
            )
        known = {f.name for f in fields(cls)}
        missing = sorted({"kind", "feature_names", "model_id", "schema_hash", "threshold", "files", "content_hash"}
                         - raw.keys())
        if missing:
            raise ArtifactError(f"{path} lacks required fields {missing}; the artifact is corrupted")
        meta = cls(**{k: v for k, v in raw.items() if k in known})
        meta._check_values(path)
        if meta.compute_schema_hash() != meta.schema_hash:
            raise ArtifactError(
                f"{path} fails its schema check: kind, feature_names, model_id or layers were changed after "
                "training (schema_hash mismatch). The artifact is corrupted or was edited; retrain or restore it."
            )
        if meta.compute_content_hash() != meta.content_hash:
            raise ArtifactError(
                f"{path} fails its content check: the threshold, settings, metrics or file checksums were changed "
                "after training (content_hash mismatch). The artifact was edited; retrain or restore it."
            )
        meta._check_files(directory)
        if expect_kinds is not None and meta.kind not in expect_kinds:
            raise InputError(
                f"detector {directory} is of kind '{meta.kind}', expected one of {', '.join(expect_kinds)}"
            )
        meta.check_compatible(expect_model_id=expect_model_id, expect_features=expect_features, where=str(directory))
        return meta

    def _check_values(self, path: Path) -> None:
        """Types and ranges of the fields a score depends on."""
        if self.kind not in KINDS:
            raise ArtifactError(f"{path} has unknown kind '{self.kind}'; expected one of {', '.join(KINDS)}")
        t = self.threshold
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or not 0.0 <= t <= 1.0:
            raise ArtifactError(f"{path}: threshold {t!r} is not a number in [0, 1]; the artifact is corrupted")
        if not isinstance(self.feature_names, list) or not all(isinstance(f, str) for f in self.feature_names):
            raise ArtifactError(f"{path}: feature_names must be a list of names")
        if not isinstance(self.files, dict) or WEIGHTS_FILE not in self.files:
            raise ArtifactError(f"{path} lists no {WEIGHTS_FILE} in its files; the artifact is corrupted")

    def _check_files(self, directory: Path) -> None:
        """Every listed file lies inside the artifact folder and matches its checksum."""
        root = directory.resolve()
        for name, digest in self.files.items():
            relative = Path(str(name))
            if relative.is_absolute() or ".." in relative.parts or not isinstance(digest, str):
                raise ArtifactError(f"detector {directory} lists {name!r}, which is not a file inside it")
            file = (directory / relative).resolve()
            if root not in file.parents:
                raise ArtifactError(f"detector {directory} lists {name!r}, which is not a file inside it")
            if not file.is_file():
                raise ArtifactError(f"detector {directory} is incomplete: {name} is missing")
            if file_sha256(file) != digest:
                raise ArtifactError(
                    f"{file} does not match the checksum recorded in {META_FILE}: it is corrupted or was replaced"
                )

    def check_compatible(
        self,
        *,
        expect_model_id: str | None = None,
        expect_features: Sequence[str] | None = None,
        where: str = "",
    ) -> None:
        """Refuse a model or feature mismatch with a message naming both sides."""
        label = f"detector {where}".rstrip() if where else f"detector '{self.kind}'"
        if expect_model_id is not None and expect_model_id != self.model_id:
            raise InputError(
                f"{label} was trained on features of model '{self.model_id}'; the monitor runs model "
                f"'{expect_model_id}'. Signals of different models are not comparable: use a detector trained "
                f"for '{expect_model_id}'."
            )
        if expect_features is not None:
            absent = [name for name in self.feature_names if name not in set(expect_features)]
            if absent:
                raise InputError(
                    f"{label} needs features {self.feature_names}, but the monitor provides "
                    f"{list(expect_features)} (missing: {absent})."
                )


# --- weight files ---------------------------------------------------------------------------------------------
def avoid_pickle_magic(path: str | Path) -> None:
    """Re-save a safetensors file whose first byte happens to be 0x80 (the pickle protocol opcode).

    A safetensors file starts with its little-endian header length; when that length is 128 mod 256 the file
    would look like a pickle to naive scanners. Padding the metadata shifts the length (headers are 8-aligned).
    """
    path = Path(path)
    with open(path, "rb") as f:
        if f.read(1) != b"\x80":
            return
    from safetensors import safe_open

    with safe_open(str(path), framework="numpy") as f:
        metadata = dict(f.metadata() or {})
    arrays = load_file(str(path))
    for width in range(1, 64):
        metadata["_pad"] = " " * width
        save_safetensors(arrays, path, metadata)
        with open(path, "rb") as f:
            if f.read(1) != b"\x80":
                return


def save_arrays(path: str | Path, arrays: Mapping[str, np.ndarray], metadata: Mapping[str, str] | None = None) -> str:
    """Save float64 arrays with safetensors; returns the file's sha256."""
    tensors = {name: np.ascontiguousarray(value, dtype=np.float64) for name, value in arrays.items()}
    meta = {"format": ARTIFACT_FORMAT, "faithwatch_version": __version__, **(metadata or {})}
    save_safetensors(tensors, path, meta)
    avoid_pickle_magic(path)
    shareable(path)
    return file_sha256(path)


def load_arrays(path: str | Path, required: Sequence[str] = ()) -> dict[str, np.ndarray]:
    """Load a safetensors file, checking that ``required`` arrays are present and finite."""
    try:
        arrays = load_file(str(path))
    except Exception as exc:  # safetensors raises its own error types for a damaged header
        raise ArtifactError(f"{path} is not a readable safetensors file ({exc})") from exc
    missing = [name for name in required if name not in arrays]
    if missing:
        raise ArtifactError(f"{path} lacks arrays {missing}; the artifact is corrupted")
    for name, value in arrays.items():
        if not np.all(np.isfinite(value)):
            raise ArtifactError(f"{path}: array '{name}' holds NaN or infinite values; the artifact is corrupted")
        if value.size and float(np.abs(value).max()) > MAX_WEIGHT:
            raise ArtifactError(f"{path}: array '{name}' holds values beyond {MAX_WEIGHT:g}; the artifact is "
                                "corrupted or was tampered with")
    return arrays


def check_loadable(directory: Path, predict: Any, n_inputs: int) -> None:
    """Score one all-zero input with a freshly loaded detector: weights of the wrong shape or kind become a clear
    refusal here, not an internal error at the first sentence."""
    try:
        p = np.asarray(predict(np.zeros((1, n_inputs))), dtype=np.float64)
    except (ValueError, IndexError, TypeError, KeyError, RuntimeError, InputError) as exc:
        raise ArtifactError(f"detector {directory}: its weights do not fit its {n_inputs} inputs ({exc}); the "
                            "artifact is corrupted or was tampered with") from None
    if p.shape != (1,) or not np.all(np.isfinite(p)) or not 0.0 <= float(p[0]) <= 1.0:
        raise ArtifactError(f"detector {directory} gives no probability for a plain input; the artifact is "
                            "corrupted or was tampered with")


def upgrade_artifact(directory: str | Path) -> Path:
    """Re-save an artifact of format 1 (verified with that format's checks) in the current format, which adds the
    content hash. Returns the rewritten ``detector.json``."""
    directory = Path(directory)
    raw = json.loads((directory / META_FILE).read_text(encoding="utf-8"))
    if raw.get("format_version") != 1:
        raise ArtifactError(f"{directory} is not a format-1 artifact")
    known = {f.name for f in fields(ArtifactMeta)}
    meta = ArtifactMeta(**{k: v for k, v in raw.items() if k in known})
    if meta.compute_schema_hash() != meta.schema_hash:
        raise ArtifactError(f"{directory} fails its schema check; it cannot be upgraded")
    meta._check_values(directory / META_FILE)
    meta._check_files(directory)
    return meta.save(directory)


# --- shared training pieces -----------------------------------------------------------------------------------
def as_matrix(X: Any, feature_names: Sequence[str], what: str = "X") -> np.ndarray:
    """``X`` as a finite float64 [n, len(feature_names)] array; InputError naming the first bad column."""
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{what} must be a numeric array ({exc})") from exc
    if arr.ndim != 2:
        raise InputError(f"{what} must be 2-D [n_samples, n_features], got shape {arr.shape}")
    if arr.shape[1] != len(feature_names):
        raise InputError(
            f"{what} has {arr.shape[1]} columns but {len(feature_names)} feature names were given: "
            f"{list(feature_names)}"
        )
    if arr.shape[0] == 0:
        raise InputError(f"{what} has no rows")
    bad = ~np.isfinite(arr)
    if bad.any():
        col = int(np.flatnonzero(bad.any(axis=0))[0])
        rows = int(bad[:, col].sum())
        raise InputError(f"{what} column '{feature_names[col]}' has {rows} NaN or infinite value(s); clean it first")
    return arr


def as_labels(y: Any, n: int) -> np.ndarray:
    """Labels as a bool array (True = unfaithful); both classes must be present."""
    arr = np.asarray(y)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise InputError(f"y must be 1-D with one label per row ({n}), got shape {arr.shape}")
    try:
        values = arr.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"y must hold 0 (faithful) / 1 (unfaithful) labels ({exc})") from exc
    if not np.all((values == 0) | (values == 1)):
        raise InputError("y must hold only 0 (faithful) and 1 (unfaithful)")
    labels = values == 1
    if labels.all() or not labels.any():
        only = "unfaithful (1)" if labels.all() else "faithful (0)"
        raise InputError(f"y holds a single class ({only}); a detector needs both faithful and unfaithful examples")
    return labels


def training_metrics(p_faithful: np.ndarray, unfaithful: np.ndarray, threshold: float) -> dict[str, Any]:
    """AUROC (unfaithful as positive, scored by 1 - P(faithful)), balanced accuracy and class counts."""
    from sklearn.metrics import roc_auc_score

    from faithwatch.detectors.calibration import weighted_balanced_accuracy

    return {
        "train_auroc": round(float(roc_auc_score(unfaithful, 1.0 - p_faithful)), 6),
        "train_balanced_accuracy": round(weighted_balanced_accuracy(p_faithful, unfaithful, threshold), 6),
        "n_faithful": int((~unfaithful).sum()),
        "n_unfaithful": int(unfaithful.sum()),
    }


def check_probabilities(p: np.ndarray, what: str) -> np.ndarray:
    """Clip to [0, 1]; refuse NaN (never emitted silently)."""
    from faithwatch.errors import NonFiniteError

    if not np.all(np.isfinite(p)):
        raise NonFiniteError(f"{what} produced a NaN or infinite probability")
    return np.clip(p, 0.0, 1.0)
