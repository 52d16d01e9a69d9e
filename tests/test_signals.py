"""Signals on hand-built records, LID-MLE and its reference bank, and the heuristic detector."""

from __future__ import annotations

import math

import numpy as np
import pytest

from faithwatch.detectors import HeuristicDetector, get_detector
from faithwatch.errors import InputError, NonFiniteError
from faithwatch.models.engine import Needs, TokenRecords
from faithwatch.sentences import Sentence
from faithwatch.signals import (
    ContrastiveSignal,
    EntropySignal,
    HiddenProbe,
    HiddenStateSignal,
    InfluenceSignal,
    LIDBank,
    LIDSignal,
    LikelihoodSignal,
    LookbackSignal,
    SentenceTrace,
    Signal,
    default_lid_layers,
    lid_mle,
)

PROBS = [0.5, 0.25, 0.8, 0.1, 0.9]
ENTROPY = [0.2, 0.4, 0.6, 0.1, 0.3]
KL = [0.5, 3.5, 3.0, 4.0, 1.0]
TWIN_PROBS = [0.5, 0.5, 0.1, 0.4, 0.9]  # the sentence's tokens: context moves them by log 0.5, log 8, log 0.25
# the sentence holds tokens 1..3: probs [0.25, 0.8, 0.1], entropy [0.4, 0.6, 0.1], KL [3.5, 3.0, 4.0]
SENTENCE = Sentence(index=0, text="It was tall.", start=0, end=12, token_start=1, token_end=4)


@pytest.fixture
def records():
    rng = np.random.default_rng(0)
    return TokenRecords(
        token_ids=[10, 11, 12, 13, 14],
        logprob=[math.log(p) for p in PROBS],
        entropy=list(ENTROPY),
        kl=list(KL),
        twin_logprob=[math.log(p) for p in TWIN_PROBS],
        hidden=[rng.standard_normal((2, 8)) for _ in PROBS],
        lookback=[np.full((2, 3), v) for v in (1.0, 0.2, 0.4, 0.9, 0.0)],
        hidden_layers=(2, 5),
    )


@pytest.fixture
def trace(records):
    return SentenceTrace(SENTENCE, records, "Q?", "C.")


def test_trace_picks_the_sentence_tokens(trace, records):
    np.testing.assert_allclose(np.exp(trace.logprob), [0.25, 0.8, 0.1])
    np.testing.assert_allclose(trace.kl, [3.5, 3.0, 4.0])
    np.testing.assert_array_equal(trace.last_hidden, records.hidden[3])


def test_likelihood_features(trace):
    out = LikelihoodSignal().compute(trace)
    assert set(out) == set(LikelihoodSignal().feature_names) == {"min_prob", "mean_prob", "min_logprob",
                                                                 "mean_logprob"}
    assert out["min_prob"] == pytest.approx(0.1)
    assert out["mean_prob"] == pytest.approx((0.25 + 0.8 + 0.1) / 3)
    assert out["min_logprob"] == pytest.approx(math.log(0.1))
    assert out["mean_logprob"] == pytest.approx((math.log(0.25) + math.log(0.8) + math.log(0.1)) / 3)
    assert LikelihoodSignal().needs == Needs()


def test_entropy_features(trace):
    out = EntropySignal().compute(trace)
    assert out == pytest.approx({"max_entropy": 0.6, "mean_entropy": (0.4 + 0.6 + 0.1) / 3})


def test_contrastive_features(trace):
    signal = ContrastiveSignal()
    out = signal.compute(trace)
    assert out["mean_contrastive_kl"] == pytest.approx(3.5)
    assert out["large_kl_pos"] == 2.0  # 3.5 and 4.0; 3.0 is not > 3.0
    assert ContrastiveSignal(large_kl_threshold=3.6).compute(trace)["large_kl_pos"] == 1.0
    assert signal.needs == Needs(twin=True)


def test_influence_is_signed(trace):
    signal = InfluenceSignal()
    out = signal.compute(trace)
    pci = [math.log(0.25 / 0.5), math.log(0.8 / 0.1), math.log(0.1 / 0.4)]
    assert out["min_pci"] == pytest.approx(min(pci))
    assert out["mean_pci"] == pytest.approx(sum(pci) / 3)
    assert out["neg_pci_pos"] == 1.0  # only log 0.25 = -1.39 is below -1
    assert InfluenceSignal(threshold=0.5).compute(trace)["neg_pci_pos"] == 2.0
    assert signal.needs == Needs(twin=True)


def test_hidden_signal_last_and_mean(trace, records):
    signal = HiddenStateSignal(layers=(5,), mean_layers=(2, 5))
    out = signal.compute(trace)
    assert set(out) == {"hidden_layer_5", "hidden_mean_layer_2", "hidden_mean_layer_5"}
    np.testing.assert_allclose(out["hidden_layer_5"], records.hidden[3][1])
    np.testing.assert_allclose(out["hidden_mean_layer_2"], np.mean([records.hidden[i][0] for i in (1, 2, 3)], 0),
                               rtol=1e-6)
    assert signal.needs == Needs(hidden_layers=(2, 5))


def test_lookback_features(trace):
    out = LookbackSignal().compute(trace)
    assert out["lookback_ratio"].shape == (2, 3)
    np.testing.assert_allclose(out["lookback_ratio"], np.full((2, 3), 0.5))
    assert out["lookback_mean"] == pytest.approx(0.5)
    assert LookbackSignal().needs == Needs(lookback=True)


CONTEXT_A = "The bridge in Lyon opened in 1887. Masons from Lyon built it. It is 40 metres long."
CONTEXT_B = "The museum opens at nine in the morning. It closes at six every day."
#: (token range, text, context) of four sentences: different tokens, texts and two interleaved contexts
MANY = [
    ((0, 2), "The bridge in Lyon opened in 1887.", CONTEXT_A),
    ((1, 4), "Masons from Paris built it in 1890.", CONTEXT_A),
    ((3, 5), "The museum opens at ten at night.", CONTEXT_B),
    ((2, 3), "It is not 40 metres long.", CONTEXT_A),
]


@pytest.fixture
def many_traces(records):
    return [SentenceTrace(Sentence(i, text, 0, len(text), start, end), records, "Q?", context)
            for i, ((start, end), text, context) in enumerate(MANY)]


def _equal(a: dict, b: dict) -> bool:
    if a.keys() != b.keys():
        return False
    return all(np.array_equal(a[k], b[k]) if isinstance(a[k], np.ndarray) or isinstance(b[k], np.ndarray)
               else a[k] == b[k] for k in a)


SIGNAL_CLASSES = ("LikelihoodSignal", "EntropySignal", "ContrastiveSignal", "InfluenceSignal", "LookbackSignal",
                  "HiddenStateSignal", "LIDSignal", "ProbeSignal", "AlignmentSignal", "LexicalSignal", "EditSignal",
                  "TaggerSignal")


class HashTagger:
    """A stand-in LSS tagger: a fixed pseudo-random support per (word, reference)."""

    threshold = 0.5
    version = "hash-1"

    def word_probabilities(self, claims, references, split_long=False):
        import zlib

        return [np.array([zlib.crc32(f"{w}|{r}".encode()) % 1000 / 1000 for w in words])
                for words, r in zip(claims, references, strict=True)]


def _every_signal(records) -> dict:
    """One configured instance of every concrete signal class exported by faithwatch.signals, by class name."""
    from faithwatch.alignment import get_scorer
    from faithwatch.signals import AlignmentSignal, EditSignal, HiddenProbe, LexicalSignal, ProbeSignal, TaggerSignal

    rng = np.random.default_rng(5)
    dim = records.hidden[0].shape[1]
    bank = LIDBank(model_id="m", layers={2: rng.standard_normal((300, dim)), 5: rng.standard_normal((300, dim))},
                   k=10)
    probe = HiddenProbe(model_id="m", layers=(2, 5), mean=np.zeros(2 * dim), scale=np.ones(2 * dim),
                        coef=rng.standard_normal(2 * dim), intercept=0.1)
    made = [LikelihoodSignal(), EntropySignal(), ContrastiveSignal(), InfluenceSignal(), LookbackSignal(),
            HiddenStateSignal(layers=(5,), mean_layers=(2, 5)), LIDSignal((2, 5), bank), ProbeSignal(probe),
            AlignmentSignal(get_scorer("lexical")), LexicalSignal(), EditSignal(), TaggerSignal(tagger=HashTagger())]
    return {type(s).__name__: s for s in made}


def test_every_signal_class_is_checked_by_compute_many(records):
    import inspect

    import faithwatch.signals as signals

    exported = {obj for name in signals.__all__ if inspect.isclass(obj := getattr(signals, name))
                and issubclass(obj, Signal) and not inspect.isabstract(obj)}
    made = _every_signal(records)
    assert exported == {type(s) for s in made.values()}
    assert set(SIGNAL_CLASSES) == set(made)


@pytest.mark.parametrize("name", SIGNAL_CLASSES)
def test_compute_many_matches_compute(name, records, many_traces):
    signal = _every_signal(records)[name]
    one_by_one = [signal.compute(t) for t in many_traces]
    # the sentences differ in every signal, so a batch in the wrong order or of the wrong sentences is caught
    assert not any(_equal(a, b) for i, a in enumerate(one_by_one) for b in one_by_one[i + 1 :]), type(signal)
    batched = signal.compute_many(many_traces)
    assert len(batched) == len(many_traces)
    for i, (got, want) in enumerate(zip(batched, one_by_one, strict=True)):
        assert _equal(got, want), (type(signal).__name__, i, got, want)
    assert signal.compute_many([]) == []


class CountingScorer:
    """Wraps a real alignment scorer, recording each ``score_many`` call (sentences, context)."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name = inner.name
        self.calls: list[tuple[list[str], str]] = []

    def score_many(self, sentences, context):
        self.calls.append((list(sentences), context))
        return self.inner.score_many(sentences, context)


def test_alignment_compute_many_batches_each_context_once(many_traces):
    from faithwatch.alignment import get_scorer
    from faithwatch.signals import AlignmentSignal

    lexical = get_scorer("lexical")
    # the reference: the real scorer on one sentence at a time
    expected = [lexical.score(t.sentence.text, t.context) for t in many_traces]
    assert len(set(expected)) == len(expected)  # distinct scores, so a mix-up of sentences shows
    scorer = CountingScorer(lexical)
    batched = AlignmentSignal(scorer).compute_many(many_traces)
    assert [out["align_score"] for out in batched] == pytest.approx(expected, abs=1e-12)
    assert all(set(out) == {"align_score"} and isinstance(out["align_score"], float) for out in batched)
    # one batched call per distinct context, holding its sentences in order (not one call per sentence)
    assert scorer.calls == [([MANY[i][1] for i in (0, 1, 3)], CONTEXT_A), ([MANY[2][1]], CONTEXT_B)]
    scorer.calls.clear()
    same_context = [t for t in many_traces if t.context == CONTEXT_A]
    assert AlignmentSignal(scorer).compute_many(same_context) == [{"align_score": expected[i]} for i in (0, 1, 3)]
    assert len(scorer.calls) == 1 and len(scorer.calls[0][0]) == 3
    # compute on one sentence agrees with the batch
    assert [AlignmentSignal(lexical).compute(t) for t in many_traces] == batched


def test_alignment_without_scorer_or_sentences(many_traces):
    from faithwatch.alignment import get_scorer
    from faithwatch.signals import AlignmentSignal

    assert AlignmentSignal(None).compute_many(many_traces) == [{"align_score": None}] * len(many_traces)
    scorer = CountingScorer(get_scorer("lexical"))
    assert AlignmentSignal(scorer).compute_many([]) == [] and scorer.calls == []


def subspace_points(rng, dim: int, ambient: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    basis, _ = np.linalg.qr(rng.standard_normal((ambient, dim)))
    return rng.standard_normal((n, dim)) @ basis.T, basis


@pytest.mark.parametrize("dim, low, high", [(2, 1.5, 3.0), (10, 6.0, 14.0)])
def test_lid_mle_estimates_the_dimension_of_a_subspace(dim, low, high):
    rng = np.random.default_rng(7)
    bank, basis = subspace_points(rng, dim, 50, 2000)
    queries = (rng.standard_normal((30, dim)) * 0.5) @ basis.T
    estimate = float(np.mean([lid_mle(q, bank, 20) for q in queries]))
    assert low <= estimate <= high


def test_lid_mle_grows_with_the_dimension():
    rng = np.random.default_rng(3)
    estimates = []
    for dim in (2, 10):
        bank, basis = subspace_points(rng, dim, 50, 1500)
        queries = (rng.standard_normal((20, dim)) * 0.5) @ basis.T
        estimates.append(np.mean([lid_mle(q, bank, 20) for q in queries]))
    assert estimates[1] > 2 * estimates[0]


def test_lid_mle_skips_duplicates_and_rejects_degenerate_banks():
    rng = np.random.default_rng(1)
    bank = rng.standard_normal((100, 5))
    point = bank[0]
    assert lid_mle(point, bank, 10) == pytest.approx(lid_mle(point, bank[1:], 10))
    with pytest.raises(InputError, match="at least 2"):
        lid_mle(point, np.stack([point, point, bank[1]]), 10)
    with pytest.raises(NonFiniteError):  # all neighbours equidistant
        lid_mle(np.zeros(4), np.eye(4), 3)


def test_lid_without_bank_is_absent(trace):
    signal = LIDSignal((2, 5))
    assert signal.needs == Needs(hidden_layers=(2, 5))
    out = signal.compute(trace)
    assert out == {"lid_layer_2": None, "lid_layer_5": None}


def test_lid_with_bank(trace):
    rng = np.random.default_rng(2)
    bank = LIDBank(model_id="m", layers={5: rng.standard_normal((300, 8))}, k=10)
    out = LIDSignal((2, 5), bank).compute(trace)
    assert out["lid_layer_2"] is None  # the bank lacks layer 2
    expected = lid_mle(trace.last_hidden[1], bank.layers[5], 10)
    assert out["lid_layer_5"] == pytest.approx(expected) and out["lid_layer_5"] > 0
    wrong = LIDBank(model_id="m", layers={5: rng.standard_normal((300, 7))})
    with pytest.raises(InputError, match="dimension"):
        LIDSignal((5,), wrong).compute(trace)
    with pytest.raises(InputError, match="2-D"):
        LIDSignal((5,), LIDBank(model_id="m", layers={5: np.zeros(8)}))


def test_lid_bank_round_trip(tmp_path):
    rng = np.random.default_rng(4)
    bank = LIDBank(model_id="org/model-a", layers={3: rng.standard_normal((50, 16)), 7: rng.random((20, 16))}, k=12)
    path = tmp_path / "bank.safetensors"
    bank.save(path)
    loaded = LIDBank.load(path, expect_model_id="org/model-a")
    assert loaded.model_id == "org/model-a" and loaded.k == 12
    assert sorted(loaded.layers) == [3, 7]
    for layer, values in bank.layers.items():
        assert loaded.layers[layer].dtype == np.float32
        np.testing.assert_allclose(loaded.layers[layer], values, rtol=1e-6, atol=1e-6)
    assert LIDBank.load(str(path)).model_id == "org/model-a"  # no expectation: any model


def test_lid_bank_of_another_model_is_refused(tmp_path):
    path = tmp_path / "bank.safetensors"
    LIDBank(model_id="org/model-a", layers={1: np.ones((3, 2))}).save(path)
    with pytest.raises(InputError) as info:
        LIDBank.load(path, expect_model_id="org/model-b")
    assert "org/model-a" in str(info.value) and "org/model-b" in str(info.value)


def test_non_bank_file_is_refused(tmp_path):
    from safetensors.numpy import save_file

    path = tmp_path / "other.safetensors"
    save_file({"x": np.ones(3, dtype=np.float32)}, str(path))
    with pytest.raises(InputError, match="not a faithwatch LID bank"):
        LIDBank.load(path)
    (tmp_path / "text.safetensors").write_text("x")  # these were a SafetensorError, FileNotFoundError, OSError
    for where, said in (("text.safetensors", "is not a .safetensors file"), ("none.safetensors", "not found"),
                        (".", "is a folder")):
        for kind in (LIDBank, HiddenProbe):
            with pytest.raises(InputError, match=said):
                kind.load(tmp_path / where)


def test_default_lid_layers():
    assert default_lid_layers(30) == (14, 15, 16)
    assert default_lid_layers(32) == (15, 16, 17)  # the paper's layers 15-17 of 32
    for n in range(1, 61):
        layers = default_lid_layers(n)
        assert layers, n
        assert list(layers) == sorted(set(layers))
        assert all(1 <= layer <= n for layer in layers), (n, layers)
        if n >= 10:
            assert all(n / 3 <= layer <= 2 * n / 3 for layer in layers), (n, layers)


def test_heuristic_detector_known_value():
    det = HeuristicDetector()
    feats = {"align_score": 1.0, "mean_prob": 0.5, "min_prob": 0.1, "mean_entropy": 0.2}
    assert det.score(feats) == pytest.approx(0.5 * 1.0 + 0.2 * 0.5 + 0.1 * 0.1 + 0.2 * 0.8)
    assert det.name == "heuristic-v1" and det.threshold == 0.5


def test_heuristic_detector_ignores_absent_and_unknown_features():
    det = HeuristicDetector()
    assert det.score({"align_score": None, "mean_prob": 0.4, "lid_layer_2": 17.0}) == pytest.approx(0.4)
    assert det.score({"mean_entropy": 0.25, "lid_layer_2": None}) == pytest.approx(0.75)


@pytest.mark.parametrize("feats", [
    {"align_score": 1.0, "mean_prob": 1.0, "min_prob": 1.0, "mean_entropy": 0.0},
    {"align_score": 0.0, "mean_prob": 0.0, "min_prob": 0.0, "mean_entropy": 1.0},
    {"align_score": 0.3, "mean_prob": 0.9, "min_prob": 0.01, "mean_entropy": 0.7},
    {"mean_prob": 2.0},  # out-of-range inputs are clamped
    {"mean_entropy": 3.0},
])
def test_heuristic_detector_in_unit_interval(feats):
    assert 0.0 <= HeuristicDetector().score(feats) <= 1.0


def test_heuristic_detector_needs_a_feature():
    with pytest.raises(InputError, match="at least one"):
        HeuristicDetector().score({"lid_layer_2": 3.0, "align_score": None})
    with pytest.raises(InputError):
        HeuristicDetector().score({})


def test_get_detector():
    assert isinstance(get_detector(None), HeuristicDetector)
    assert isinstance(get_detector("heuristic-v1"), HeuristicDetector)
    with pytest.raises(ValueError, match="detector folder not found: trained-xyz"):
        get_detector("trained-xyz")


def test_lexical_evidence_counts_what_the_context_lacks(records):
    from faithwatch.signals import LexicalSignal

    context = "The bridge in Lyon opened in 1887. Masons from Lyon built it."
    sentence = Sentence(index=0, text="The bridge opened in 1890 in Paris.", start=0, end=35, token_start=1,
                        token_end=4)
    feats = LexicalSignal().compute(SentenceTrace(sentence, records, "Q?", context))
    assert feats["novel_numbers"] == 1.0 and feats["novel_entities"] == 1.0
    assert feats["novel_content"] == 1.0  # "Paris"; bridge/opened are in the context
    assert 0.0 < feats["lex_content"] < 1.0
    copied = Sentence(index=0, text="Masons from Lyon built it.", start=0, end=26, token_start=1, token_end=4)
    same = LexicalSignal().compute(SentenceTrace(copied, records, "Q?", context))
    assert same == {"lex_content": 1.0, "lex_bigrams": 1.0, "novel_content": 0.0, "novel_numbers": 0.0,
                    "novel_entities": 0.0}
    # the trace's question: what it asks is given ("stone" is the user's word), live and from text alike
    stone = Sentence(index=0, text="The stone bridge opened in 1887.", start=0, end=32, token_start=1, token_end=4)
    question = "When did the stone bridge open?"
    asked = LexicalSignal().compute(SentenceTrace(stone, records, question, context))
    assert asked["novel_content"] == 0.0
    assert LexicalSignal().compute(SentenceTrace(stone, records, "Q?", context))["novel_content"] == 1.0
    assert LexicalSignal().from_pairs([stone.text], [context], [question]) == [asked]
