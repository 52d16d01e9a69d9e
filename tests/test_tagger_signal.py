"""The LSS tagger as a signal: its features, its registry entry, and the resumable cache of labelled tables.

A word-overlap stand-in plays the tagger (the shipped one is exercised by the blatant suite and the monitor test).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import faithwatch.eval.text_features as text_features
import faithwatch.signals.tagger as tagger_module
from faithwatch.claims.lss import split_words
from faithwatch.data.schema import LabelledExample
from faithwatch.eval.text_features import add_text_features, text_cache_folder
from faithwatch.eval.training import FAMILIES, TEXT_FAMILIES
from faithwatch.signals import default_signals, text_signals
from faithwatch.signals.tagger import TAGGER_FEATURES, TaggerSignal, tagger_features
from faithwatch.text import MARKUP_RULE, SPELLED_RULE

CONTEXT = "The Eiffel Tower was completed in 1889. It stands in Paris and is 330 metres tall."


class OverlapTagger:
    """Support 0.9 for a word found in the reference, 0.1 otherwise; counts the words it reads."""

    threshold = 0.5
    version = "overlap-1"

    def __init__(self) -> None:
        self.words_read = 0

    def word_probabilities(self, claims, references, split_long=False):
        self.words_read += sum(len(c) for c in claims)
        out = []
        for words, ref in zip(claims, references, strict=True):
            known = {w.strip(".,").lower() for w in ref.split()}
            out.append(np.array([0.9 if w.strip(".,").lower() in known else 0.1 for w in words]))
        return out


def test_features_read_the_weakest_content_word():
    words = ["The", "tower", "was", "built", "in", "1890."]
    probs = np.array([0.05, 0.9, 0.02, 0.8, 0.01, 0.3])  # stop words are weakest, but only content words count
    f = tagger_features(probs, words, 0.5)
    assert f["tag_min_content"] == pytest.approx(0.3)
    assert f["tag_mean"] == pytest.approx(probs.mean()) and f["tag_lss"] == pytest.approx(2 / 6)
    only_stop = tagger_features(np.array([0.4, 0.7]), ["It", "was"], 0.5)
    assert only_stop["tag_min_content"] == pytest.approx(0.4)  # no content word: the weakest word


def test_signal_flags_the_changed_word_and_batches_contexts():
    signal = TaggerSignal(tagger=OverlapTagger())
    right, wrong = "It was completed in 1889.", "It was completed in 1925."
    got = signal.from_text([right, wrong], CONTEXT)
    assert got[0]["tag_min_content"] == pytest.approx(0.9) and got[1]["tag_min_content"] == pytest.approx(0.1)
    assert got[1]["tag_lss"] == pytest.approx(4 / 5)
    assert list(got[0]) == list(TAGGER_FEATURES) == signal.feature_names
    assert signal.from_text([], CONTEXT) == []


def test_an_answer_preamble_is_not_tagged():
    tagger = OverlapTagger()
    signal = TaggerSignal(tagger=tagger)
    plain, framed = signal.from_text(["Paris.", "The answer is Paris."], CONTEXT)
    assert framed == plain and plain["tag_min_content"] == pytest.approx(0.9)  # "answer" is not in the context
    assert tagger.words_read == 2 and signal.version.endswith(f"+preamble1+{MARKUP_RULE}+{SPELLED_RULE}")


def test_numbers_in_words_are_tagged_in_digits():
    signal = TaggerSignal(tagger=OverlapTagger())
    context = "The school has three hundred pupils and a small library."
    same, other = signal.from_text(["It has 300 pupils.", "It has 350 pupils."], context)
    assert same["tag_min_content"] == pytest.approx(0.9)  # "300" is found in the context read in digits
    assert other["tag_min_content"] == pytest.approx(0.1)
    written = signal.from_text(["The school has three hundred pupils."], "The school has 300 pupils.")[0]
    assert written["tag_min_content"] == pytest.approx(0.9)


def test_list_markers_and_citations_are_not_tagged():
    signal = TaggerSignal(tagger=OverlapTagger())
    plain, listed, cited = signal.from_text(["Paris.", "1. Paris.", "Paris [2]."], CONTEXT)
    assert listed == cited == plain


def test_registered_as_a_default_text_family():
    assert "tagger" in default_signals() and "tagger" in text_signals()
    assert "tagger" in TEXT_FAMILIES and set(FAMILIES["tagger"]) <= set(TAGGER_FEATURES)


def _examples(n: int) -> list[LabelledExample]:
    return [LabelledExample(dataset="d", id=f"e{i}", context=CONTEXT, question="When?",
                            response=f"It was completed in {1880 + i}. It stands in Paris.") for i in range(n)]


def _table(examples: list[LabelledExample]) -> pd.DataFrame:
    rows = [{"example_id": e.id, "sentence_index": k, "text": s}
            for e in examples for k, s in enumerate(e.response.split(". ", 1))]
    return pd.DataFrame(rows)


@pytest.fixture
def overlap(monkeypatch):
    fake = OverlapTagger()
    monkeypatch.setattr(tagger_module, "shared_tagger", lambda device="cpu": fake)
    monkeypatch.setattr(text_features, "SHARD_EXAMPLES", 2)
    return fake


def test_cache_is_reused_resumed_and_refreshed(overlap, tmp_path, monkeypatch):
    examples = _examples(7)
    table = _table(examples)
    plain = add_text_features(examples, table)  # no data set named: computed, not cached
    words = sum(len(split_words(t)) for t in table.text)
    assert overlap.words_read == words

    # an interrupted run: the third shard fails after two shards (four examples) were written
    calls = {"n": 0}
    original = TaggerSignal.from_pairs

    def failing(self, texts, contexts, questions=None):
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("killed")
        return original(self, texts, contexts, questions)

    monkeypatch.setattr(TaggerSignal, "from_pairs", failing)
    with pytest.raises(RuntimeError):
        add_text_features(examples, table, "towns", root=tmp_path)
    monkeypatch.setattr(TaggerSignal, "from_pairs", original)
    overlap.words_read = 0
    seen: list[tuple[str, int, int]] = []
    resumed = add_text_features(examples, table, "towns", root=tmp_path, on_progress=lambda *a: seen.append(a))
    assert overlap.words_read == sum(len(split_words(t)) for t in table.text[table.example_id.isin(
        [e.id for e in examples[4:]])])  # only the three unfinished examples
    assert seen[0] == ("towns: tagger", 4, 7) and seen[-1] == ("towns: tagger", 7, 7)
    pd.testing.assert_frame_equal(resumed, plain)
    rows = text_features._read(text_cache_folder(TaggerSignal(tagger=overlap), "towns", tmp_path))
    assert len(rows) == len(table)  # one row per sentence: nothing lost, nothing twice

    overlap.words_read = 0
    again = add_text_features(examples, table, "towns", root=tmp_path)
    assert overlap.words_read == 0
    pd.testing.assert_frame_equal(again, plain)

    # an example whose context changed is recomputed under the same id
    edited = [*examples[:6], LabelledExample(dataset="d", id="e6", context="Nothing here.", question="When?",
                                             response=examples[6].response)]
    fresh = add_text_features(edited, table, "towns", root=tmp_path)
    assert overlap.words_read == sum(len(split_words(t)) for t in table.text[table.example_id == "e6"])
    assert (fresh[fresh.example_id == "e6"].tag_min_content < 0.5).all()


def test_chosen_signals_only_and_cached_under_their_own_version(overlap, tmp_path):
    """``signals=``: only those signals' columns are added; another tagger's features are cached apart."""
    examples = _examples(3)
    table = _table(examples)
    other = OverlapTagger()
    other.version = "overlap-2"
    added = add_text_features(examples, table, "towns", root=tmp_path, signals=[TaggerSignal(tagger=other)])
    assert list(added.columns) == [*table.columns, *TAGGER_FEATURES]
    assert other.words_read > 0 and overlap.words_read == 0
    default = add_text_features(examples, table, "towns", root=tmp_path)
    assert overlap.words_read > 0  # the shipped tagger's cache is not the other one's
    assert text_cache_folder(TaggerSignal(tagger=other), "towns", tmp_path) != \
        text_cache_folder(TaggerSignal(tagger=overlap), "towns", tmp_path)
    pd.testing.assert_frame_equal(added[list(TAGGER_FEATURES)], default[list(TAGGER_FEATURES)])


def test_pairs_of_several_contexts_match_one_context_at_a_time():
    from faithwatch.signals import EditSignal

    other = "Paris is the capital of France."
    texts = ["It was completed in 1925.", "Paris is the capital of Spain.", "It stands in Paris."]
    contexts = [CONTEXT, other, CONTEXT]
    for signal in (EditSignal(), TaggerSignal(tagger=OverlapTagger())):
        pairs = signal.from_pairs(texts, contexts)
        one = signal.from_text([texts[0], texts[2]], CONTEXT)
        assert pairs[0] == one[0] and pairs[2] == one[1] and pairs[1] == signal.from_text([texts[1]], other)[0]


def test_a_detector_trained_with_another_tagger_is_refused(overlap):
    from faithwatch.detectors import load_detector
    from faithwatch.detectors.shipped import SHIPPED_DIR
    from faithwatch.errors import InputError
    from faithwatch.monitor import Monitor

    detector = load_detector(SHIPPED_DIR)
    assert "tag_min_content" in detector.meta.feature_names and detector.meta.metrics["tagger_version"]
    with pytest.raises(InputError, match="trained with tagger version"):  # the stand-in is not the shipped tagger
        Monitor("none", detector=detector, alignment=detector.meta.metrics["alignment"])
    detector.meta.metrics["tagger_version"] = TaggerSignal(tagger=overlap).version  # the stand-in, as a signal
    monitor = Monitor("none", detector=detector, alignment=detector.meta.metrics["alignment"])
    assert "tagger" in [s.name for s in monitor.signals]


def test_a_detector_trained_with_other_edit_rules_is_refused(overlap):
    from faithwatch.alignment.edits import EDITS_VERSION
    from faithwatch.detectors import load_detector
    from faithwatch.detectors.shipped import SHIPPED_DIR
    from faithwatch.errors import InputError
    from faithwatch.monitor import Monitor
    from faithwatch.signals import signal_versions

    # what training records: the rules' version and the markup rule
    assert signal_versions(["edits", "lexical"]) == {"edits_version": f"{EDITS_VERSION}+{MARKUP_RULE}"}
    detector = load_detector(SHIPPED_DIR)
    detector.meta.metrics["tagger_version"] = TaggerSignal(tagger=overlap).version
    detector.meta.metrics["edits_version"] = "1"
    with pytest.raises(InputError, match="trained with edits version '1'"):
        Monitor("none", detector=detector, alignment=detector.meta.metrics["alignment"])
    detector.meta.metrics["edits_version"] = f"{EDITS_VERSION}+{MARKUP_RULE}"
    assert "edits" in [s.name for s in Monitor("none", detector=detector,
                                               alignment=detector.meta.metrics["alignment"]).signals]


def test_a_sentence_too_long_for_one_input_is_read_in_parts():
    """The shipped tagger reads at most ~220 claim tokens at once; a run-on sentence is read in parts, not refused."""
    long = " ".join(["the tower was built in Paris and it is 330 metres tall"] * 25)
    (row,) = TaggerSignal().from_text([long], CONTEXT)
    assert all(np.isfinite(row[f]) for f in TAGGER_FEATURES) and row["tag_mean"] > 0.5


def test_a_damaged_cache_is_an_error_not_a_nan(overlap, tmp_path):
    import pyarrow.parquet as pq

    from faithwatch.errors import FaithwatchError

    examples = _examples(2)
    table = _table(examples)
    add_text_features(examples, table, "towns", root=tmp_path)
    shard = next(text_cache_folder(TaggerSignal(tagger=overlap), "towns", tmp_path).glob("rows-*.parquet"))
    rows = pq.read_table(shard).to_pandas()
    rows.loc[0, "tag_mean"] = np.nan
    rows.to_parquet(shard)
    with pytest.raises(FaithwatchError, match="features missing"):
        add_text_features(examples, table, "towns", root=tmp_path)


def test_a_bf16_tagger_is_cached_apart_and_fp32_keeps_its_key(tmp_path):
    """bf16 features differ slightly from fp32 ones: their caches must not be shared; fp32 keys stay as before."""
    from faithwatch.eval.features import safe_name, spec_digest

    fp32, bf16 = OverlapTagger(), OverlapTagger()
    fp32.precision, bf16.precision = "fp32", "bf16"
    signal = TaggerSignal(tagger=fp32)
    old = {"signal": signal.name, "version": signal.version, "features": signal.feature_names}
    assert text_cache_folder(signal, "towns", tmp_path).name == f"tagger-{safe_name('towns')}-{spec_digest(old)}"
    assert TaggerSignal(tagger=bf16).precision == "bf16" and signal.precision is None
    assert text_cache_folder(TaggerSignal(tagger=bf16), "towns", tmp_path) != text_cache_folder(signal, "towns",
                                                                                                 tmp_path)
