"""Training SynCheck aggregators and Lookback Lenses on cached, labelled features.

A :class:`Recipe` says how: which feature families, which aggregator, its scaling, constraints and weighting,
and whether a hidden-state probe feeds it. :func:`fit_syncheck` trains a recipe so that its verdicts carry over
to data it never saw:

* every data set weighs the same, and within it both classes (``weighting="dataset"``);
* features whose meaning is known are sign-constrained (:data:`DIRECTIONS`);
* the hidden-state probe's output enters the aggregator *cross-fitted*: each training data set gets the probe's
  predictions from a probe trained on the other data sets, so the aggregator learns how much a probe is worth
  on a data set it did not see;
* calibration and the threshold come from out-of-fold predictions (each data set predicted by the recipe trained
  on the others), never from the training fit (:meth:`SynCheckDetector.calibrate`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

from faithwatch.alignment.edits import EDIT_FEATURES
from faithwatch.alignment.lexical import EVIDENCE_FEATURES
from faithwatch.detectors.aggregator import SYNCHECK_KINDS, SynCheckDetector
from faithwatch.detectors.calibration import group_weights
from faithwatch.detectors.ceiling import cap_table
from faithwatch.detectors.framing import floor_table
from faithwatch.detectors.lookback_lens import LookbackLens
from faithwatch.detectors.preprocess import TRANSFORMS
from faithwatch.errors import InputError
from faithwatch.eval.lid_features import add_lid, build_bank, hidden_layers_in
from faithwatch.eval.metrics import auroc_by_column
from faithwatch.signals.probe import HiddenProbe, probe_inputs, stack_inputs

#: SynCheck feature families; "lid" stands for every lid_layer_<l> column
FAMILIES: dict[str, tuple[str, ...]] = {
    "likelihood": ("min_logprob", "mean_logprob"),
    "likelihood-raw": ("min_prob", "mean_prob"),
    "uncertainty": ("max_entropy", "mean_entropy"),
    "lid": ("lid",),
    "contrastive": ("mean_contrastive_kl", "large_kl_pos"),
    "influence": ("min_pci", "mean_pci", "neg_pci_pos"),
    "alignment": ("align_score",),
    "lexical": EVIDENCE_FEATURES,
    "edits": EDIT_FEATURES,
    "tagger": ("tag_min_content",),  # the LSS tagger's weakest content word (its other features: no LOO gain)
    "probe": ("probe_logit",),
}
#: families computed from the sentence text and context alone (``--text-only`` tables suffice)
TEXT_FAMILIES = ("alignment", "lexical", "edits", "tagger")


def check_text_only(families: Sequence[str]) -> None:
    """Refuse, with a clear message, a recipe that needs more than text-only tables hold."""
    needs_model = [f for f in families if f not in TEXT_FAMILIES]
    if needs_model:
        raise InputError(f"--text-only covers the families {', '.join(TEXT_FAMILIES)}; this recipe also needs "
                         f"{', '.join(needs_model)} (teacher forcing): drop --text-only")
#: the families of paper 000 Table 4 (raw probabilities, no signed influence, no probe)
PAPER_FAMILIES = ("likelihood-raw", "uncertainty", "contrastive", "alignment")
#: directions known from what a feature means (+1: higher is more faithful); KL and LID are unsigned
DIRECTIONS: dict[str, int] = {
    "min_prob": 1, "mean_prob": 1, "min_logprob": 1, "mean_logprob": 1,
    "max_entropy": -1, "mean_entropy": -1,
    "min_pci": 1, "mean_pci": 1, "neg_pci_pos": -1,
    "align_score": 1, "probe_logit": 1,
    "lex_content": 1, "lex_bigrams": 1, "novel_content": -1, "novel_numbers": -1, "novel_entities": -1,
    "edit_match": 1, "edit_swap_num": -1, "edit_swap_word": -1, "edit_neg_flip": -1,
    "tag_min_content": 1,
}
#: what a trained detector predicts: rows with a label, grouped by ``dataset``
WEIGHTINGS = ("dataset", "pooled")
#: how the training data sets make one model: ``pooled`` fits one model on all rows; ``averaged`` fits one
#: logistic regression per real data set (the training-only sets join each) on the pooled feature scaling and
#: averages their coefficients, which is the mean of their log-odds and itself one linear model; ``blended`` is
#: half the pooled regression and half the averaged one (lr only)
POOLINGS = ("pooled", "averaged", "blended")
#: ``dataset``: before the fit, every training data set's features are moved so that their medians sit at the
#: mean of the real sets' medians. The weights then learn what separates sentences *within* a data set, not the
#: offsets between sets (a fixed effect per set); a new sentence is scored as it is, with no centring
CENTERINGS = ("none", "dataset")
#: `faithwatch train` warns when either class has fewer training sentences than this (noisy weights, threshold)
FEW_TRAINING_PER_CLASS = 50


def check_strength(name: str, value: float) -> None:
    """An inverse L2 strength (``C``, ``probe_C``) must be positive and finite (NaN fails; inf cannot be stored)."""
    if not 0 < value < math.inf:
        raise InputError(f"{name} must be positive and finite, got {value:g}")


@dataclass(frozen=True)
class Recipe:
    """How a SynCheck detector is trained (the defaults are the shipped detector's recipe)."""

    kind: str = "lr"
    families: tuple[str, ...] = ("likelihood", "uncertainty", "influence", "alignment")
    transform: str = "robust"
    C: float = 1.0
    monotone: bool = True
    weighting: str = "dataset"
    probe_layers: tuple[int, ...] = ()  # empty: no probe
    probe_C: float = 0.01
    pooling: str = "pooled"  # see POOLINGS
    centering: str = "none"  # see CENTERINGS
    extra: dict = field(default_factory=dict, compare=False, hash=False)  # free-form notes kept in the artifact

    def __post_init__(self) -> None:
        if self.kind not in SYNCHECK_KINDS:
            raise InputError(f"unknown aggregator kind {self.kind!r}; choose one of {', '.join(SYNCHECK_KINDS)}")
        if self.transform not in TRANSFORMS:
            raise InputError(f"transform must be one of {', '.join(TRANSFORMS)}, got {self.transform!r}",
                             names=("transform",))
        check_strength("C", self.C)
        check_strength("probe_C", self.probe_C)
        if not self.families:
            raise InputError("a recipe needs at least one feature family")
        unknown = [f for f in self.families if f not in FAMILIES]
        if unknown:
            raise InputError(f"unknown feature families {unknown}; available: {', '.join(FAMILIES)}")
        if self.weighting not in WEIGHTINGS:
            raise InputError(f"weighting must be one of {', '.join(WEIGHTINGS)}, got {self.weighting!r}",
                             names=("weighting",))
        if self.pooling not in POOLINGS:
            raise InputError(f"pooling must be one of {', '.join(POOLINGS)}, got {self.pooling!r}",
                             names=("pooling",))
        if self.centering not in CENTERINGS:
            raise InputError(f"centering must be one of {', '.join(CENTERINGS)}, got {self.centering!r}",
                             names=("centering",))
        if self.kind == "mlp" and self.monotone:  # found by the fit, after every feature had been computed
            raise InputError("kind mlp cannot keep monotone constraints: set monotone to false (train --free)")
        if self.pooling != "pooled" and self.kind != "lr":
            raise InputError(f"{self.pooling} pooling averages logistic regressions: it needs kind lr")
        if ("probe" in self.families) != bool(self.probe_layers):
            raise InputError("the probe family needs probe_layers, and probe_layers need the probe family")

    def to_dict(self) -> dict:
        """JSON-ready (tuples as lists)."""
        out = asdict(self)
        return {k: list(v) if isinstance(v, tuple) else v for k, v in out.items()}

    @classmethod
    def from_dict(cls, data: dict) -> Recipe:
        """The inverse of :meth:`to_dict`; unknown keys are refused."""
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise InputError(f"unknown recipe fields {unknown}; known: {sorted(known)}")
        args = {k: tuple(v) if k in ("families", "probe_layers") else v for k, v in data.items()}
        return cls(**args)


def syncheck_features(layers: Sequence[int], families: Sequence[str] | None = None) -> list[str]:
    """Feature names of the chosen families, LID expanded to the given layers."""
    names: list[str] = []
    for family in families or Recipe().families:
        for f in FAMILIES[family]:
            names += [f"lid_layer_{layer}" for layer in layers] if f == "lid" else [f]
    return names


def training_summary(train: pd.DataFrame) -> list[str]:
    """'dataset: n sentences (k unfaithful)' lines recorded in artifacts."""
    return [f"{ds}: {len(g)} sentences ({int(g.label.sum())} unfaithful)" for ds, g in train.groupby("dataset")]


def feature_directions(table: pd.DataFrame, names: Sequence[str]) -> dict[str, int]:
    """+1 where a higher value means more faithful on this (training) table, else -1."""
    aurocs = auroc_by_column(table.label.to_numpy(), table[list(names)].to_numpy(dtype=np.float64))
    return {name: -1 if auroc > 0.5 else 1 for name, auroc in zip(names, aurocs, strict=True)}


def sample_weights(table: pd.DataFrame, weighting: str) -> np.ndarray:
    """``dataset``: every data set the same total weight, split equally between its classes; ``pooled``:
    class-balanced over the pooled rows."""
    groups = table.dataset.to_numpy() if weighting == "dataset" else np.zeros(len(table))
    return group_weights(groups, table.label.to_numpy() == 1)


def members_of(table: pd.DataFrame, weighting: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """The rows and sample weights of each member model of ``averaged`` pooling: one per real data set, the
    training-only sets with each (weighted within the member as :func:`sample_weights` weighs a table); all rows
    as one member when every set is training-only."""
    extra = train_only(table)
    if extra.all():  # training-only data alone (e.g. a row of the transfer matrix): one member of all of it
        return [(np.arange(len(table)), sample_weights(table, weighting))]
    out = []
    for name in table.dataset[~extra].unique():
        rows = np.flatnonzero((table.dataset.to_numpy() == name) | extra)
        out.append((rows, sample_weights(table.iloc[rows], weighting)))
    return out


def centred_by_dataset(table: pd.DataFrame, names: Sequence[str]) -> pd.DataFrame:
    """``table`` with each data set's feature medians moved onto the mean of the real sets' medians (see
    ``CENTERINGS``); a single data set is returned unchanged."""
    if table.dataset.nunique() < 2:
        return table
    medians = table.groupby("dataset")[list(names)].median()
    real = table.loc[~train_only(table), "dataset"].unique()
    reference = medians.loc[real if len(real) else medians.index].mean()
    offsets = medians.loc[table.dataset].to_numpy() - reference.to_numpy()
    return table.assign(**{n: table[n].to_numpy(dtype=np.float64) - offsets[:, j] for j, n in enumerate(names)})


def train_only(table: pd.DataFrame) -> np.ndarray:
    """Rows of training-only (augmentation) sets: never held out, never used for calibration."""
    if "train_only" not in table.columns:
        return np.zeros(len(table), dtype=bool)
    return table["train_only"].fillna(False).to_numpy(dtype=bool)


def _folds(table: pd.DataFrame, k: int = 5, seed: int = 0) -> np.ndarray:
    """Fold per row: by data set when there are several, else ``k`` folds of whole examples."""
    datasets = table.dataset.unique()
    if len(datasets) >= 2:
        return table.dataset.map({d: i for i, d in enumerate(datasets)}).to_numpy()
    ids = table.example_id.unique()
    order = np.random.default_rng(seed).permutation(len(ids))
    return table.example_id.map(dict(zip(ids, order % k, strict=True))).to_numpy()


def probe_matrix(table: pd.DataFrame, layers: Sequence[int]) -> np.ndarray:
    """[n, D] probe inputs of a table (its ``hidden_mean_layer_<l>`` columns)."""
    cols = probe_inputs(layers)
    missing = [c for c in cols if c not in table.columns]
    if missing:
        raise InputError(f"the cached features lack {missing}: re-extract them (the cache schema changed)")
    return stack_inputs(table[cols].itertuples(index=False, name=None))


def _probe_on(X: np.ndarray, table: pd.DataFrame, recipe: Recipe, model_id: str, seed: int) -> HiddenProbe:
    return HiddenProbe.fit(X, table.label.to_numpy(), model_id=model_id, layers=recipe.probe_layers,
                           C=recipe.probe_C, sample_weight=sample_weights(table, recipe.weighting), seed=seed)


def fit_probe(train: pd.DataFrame, recipe: Recipe, model_id: str, seed: int = 0) -> HiddenProbe:
    """A hidden-state probe on every row of ``train``."""
    return _probe_on(probe_matrix(train, recipe.probe_layers), train, recipe, model_id, seed)


def cross_fitted_probe(train: pd.DataFrame, recipe: Recipe, model_id: str, seed: int = 0) -> np.ndarray:
    """Out-of-fold probe logits for every row of ``train`` (see the module doc)."""
    folds = _folds(train, seed=seed)
    out = np.zeros(len(train))
    X = probe_matrix(train, recipe.probe_layers)
    for f in np.unique(folds):
        inside = folds != f
        part = train[inside]
        if part.label.nunique() < 2:
            raise InputError("a probe fold has a single class; add labelled data of both classes")
        probe = _probe_on(X[inside], part, recipe, model_id, seed)
        out[~inside] = probe.logit(X[~inside])
    return out


def with_derived(table: pd.DataFrame, detector: SynCheckDetector) -> pd.DataFrame:
    """The table plus the columns a detector computes from cached vectors (LID, probe)."""
    out = table
    if detector.lid_bank is not None:
        out = add_lid(out, detector.lid_bank, detector.meta.layers.get("lid"))
    if detector.probe is not None:
        out = out.assign(probe_logit=detector.probe.logit(probe_matrix(out, detector.probe.layers)))
    return out


def _fit_raw(train: pd.DataFrame, recipe: Recipe, model_id: str, seed: int) -> SynCheckDetector:
    """The recipe fitted on ``train`` without calibration (the threshold is the in-sample one)."""
    if train.label.nunique() < 2:
        raise InputError("training data must hold both faithful and unfaithful sentences")
    use_lid = "lid" in recipe.families
    layers = hidden_layers_in(train) if use_lid else []
    if use_lid and not layers:
        raise InputError("the lid family needs cached hidden states (hidden_layer_<l> columns)")
    bank = build_bank(train, model_id, seed=seed) if use_lid else None
    table = add_lid(train, bank) if bank else train
    probe = None
    if recipe.probe_layers:
        table = table.assign(probe_logit=cross_fitted_probe(train, recipe, model_id, seed))
        probe = fit_probe(train, recipe, model_id, seed)
    names = syncheck_features(layers, recipe.families)
    if recipe.centering == "dataset":
        table = centred_by_dataset(table, names)
    monotone = {n: DIRECTIONS[n] for n in names if n in DIRECTIONS} if recipe.monotone else {}
    detector = SynCheckDetector.fit(
        table[names].to_numpy(dtype=np.float64), table.label.to_numpy(), names, recipe.kind,
        model_id=model_id, layers={"lid": list(layers)}, training_data=training_summary(train), seed=seed,
        lid_bank=bank, probe=probe, transform=recipe.transform, monotone=monotone, C=recipe.C,
        sample_weight=sample_weights(train, recipe.weighting),
        members=members_of(train, recipe.weighting) if recipe.pooling != "pooled" else None,
        member_share=0.5 if recipe.pooling == "blended" else 1.0,
    )
    detector.meta.metrics["feature_directions"] = feature_directions(table, names)
    return detector


def out_of_fold_logits(train: pd.DataFrame, recipe: Recipe, model_id: str, seed: int = 0) -> np.ndarray:
    """Raw log-odds of every training row from the recipe trained without that row's data set (or fold)."""
    folds = _folds(train, seed=seed)
    out = np.zeros(len(train))
    augment = train_only(train)
    for f in np.unique(folds):
        inside = folds != f
        if augment[~inside].all():  # a training-only set is never predicted out of fold
            continue
        det = _fit_raw(train[inside].reset_index(drop=True), recipe, model_id, seed)
        out[~inside] = raw_scores(det, train[~inside])
    return out


def fit_syncheck(train: pd.DataFrame, recipe: Recipe | str | None = None, *, model_id: str, seed: int = 0,
                 calibrate: bool = True) -> SynCheckDetector:
    """Train ``recipe`` (default :class:`Recipe`; a string is read as the aggregator kind) on labelled rows.

    With ``calibrate``, the probability map and the threshold are fitted on out-of-fold predictions (see the
    module doc), and the artifact records the recipe and those out-of-fold figures.
    """
    recipe = Recipe(kind=recipe) if isinstance(recipe, str) else (recipe or Recipe())
    train = train.reset_index(drop=True)
    detector = _fit_raw(train, recipe, model_id, seed)
    detector.meta.params["recipe"] = recipe.to_dict()
    if calibrate:
        real = ~train_only(train)
        if not real.any():
            raise InputError("calibration needs at least one data set that is not training-only")
        oof = out_of_fold_logits(train, recipe, model_id, seed)[real]
        held = train[real].reset_index(drop=True)
        per_set = 1.0 / held.groupby("dataset").label.transform("size").to_numpy()  # every data set alike
        detector.calibrate(oof, held.label.to_numpy(), sample_weights(held, recipe.weighting), per_set)
        p = detector.calibration(oof)
        detector.meta.metrics["out_of_fold_auroc"] = {
            str(ds): round(float(roc_auc_score(g.label, -oof[g.index])), 6)
            for ds, g in held.groupby("dataset") if g.label.nunique() == 2}
        if not real.all():
            detector.meta.metrics["training_only"] = sorted(train[~real].dataset.unique().tolist())
        detector.meta.metrics["out_of_fold_threshold"] = detector.threshold
        detector.meta.metrics["out_of_fold_mean_p_faithful"] = round(float(p.mean()), 6)
    return detector


def raw_scores(detector: SynCheckDetector, table: pd.DataFrame) -> np.ndarray:
    """Raw faithfulness log-odds per row (LID and probe computed from the cached vectors)."""
    table = with_derived(table, detector)
    return detector.decision_function(table[detector.meta.feature_names].to_numpy(dtype=np.float64))


def syncheck_scores(detector: SynCheckDetector, table: pd.DataFrame) -> np.ndarray:
    """P(faithful) per row (LID and probe computed from the cached vectors), as the monitor gives it
    (:func:`monitor_scores`)."""
    derived = with_derived(table, detector)
    p = detector.predict_proba_faithful(derived[detector.meta.feature_names].to_numpy(dtype=np.float64))
    return monitor_scores(detector, p, table)


def monitor_scores(detector: SynCheckDetector, p: np.ndarray | Sequence[float], table: pd.DataFrame) -> np.ndarray:
    """``detector``'s P(faithful) ``p`` of ``table``'s rows as the monitor gives it: a sentence counting a swapped
    number capped below the threshold (:mod:`faithwatch.detectors.ceiling`), then framing lines and borne-out
    absence notes raised to it (:mod:`faithwatch.detectors.framing`)."""
    capped = cap_table(p, table, detector.threshold, detector.meta.feature_names)
    return floor_table(capped, table, detector.threshold)


def with_recipe(recipe: Recipe, **changes) -> Recipe:
    """A copy of ``recipe`` with some fields changed."""
    return replace(recipe, **changes)


def lookback_matrix(table: pd.DataFrame) -> np.ndarray:
    """Stack the flattened lookback-ratio vectors of a table."""
    return np.stack(table.lookback_ratio.to_numpy()).astype(np.float64)


def fit_lookback_lens(
    train: pd.DataFrame, *, model_id: str, num_layers: int, num_heads: int, mode: str = "span", seed: int = 0
) -> LookbackLens:
    """Lookback Lens (paper 003): logistic regression on averaged lookback ratios of spans or 8-token windows."""
    return LookbackLens.fit(
        lookback_matrix(train), train.label.to_numpy(), num_layers=num_layers, num_heads=num_heads,
        model_id=model_id, mode=mode, training_data=training_summary(train), seed=seed,
    )
