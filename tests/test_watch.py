"""Streamed text (Monitor.watch): fed in any pieces, the sentences and every feature equal Monitor.score of the
whole text; without a model, model-free signals still score; upstream log-probabilities feed the api signal."""

from __future__ import annotations

import math

import numpy as np
import pytest

from faithwatch.errors import InputError
from faithwatch.monitor import Monitor
from faithwatch.watch import stable_end
from same import assert_same_sentences

CONTEXT = ("The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. It was built "
           "from 1887 to 1889 by the company of Gustave Eiffel. It is 330 metres tall.")
RESPONSE = ("The tower is in Paris. It was built from 1887 to 1889 by Dr. Smith's company. It is 500 metres tall, "
            "and it is  made of iron. Many people visit it")


def _pieces(text: str, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    cuts = sorted(set(rng.integers(1, len(text), size=25).tolist()))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


@pytest.mark.parametrize("seed", [0, 1])
def test_streamed_pieces_score_as_the_whole_text(full_monitor, seed, one_thread):
    want = full_monitor.score("What is the tower?", CONTEXT, RESPONSE)
    watch = full_monitor.watch("What is the tower?", CONTEXT)
    seen = []
    for piece in _pieces(RESPONSE, seed):
        seen += watch.add(piece)
    assert len(seen) >= 2  # sentences are scored while the text still streams in
    seen += watch.finish()
    got = watch.result()
    assert got.response == RESPONSE and [s.text for s in seen] == [s.text for s in got.sentences]
    assert_same_sentences(got, want)
    assert len(watch.latencies) == len(got.sentences)


def test_a_finished_watch_refuses_more_text(full_monitor):
    watch = full_monitor.watch("Q?", CONTEXT)
    watch.add("It is tall.")
    watch.finish()
    assert watch.finish() == []
    with pytest.raises(InputError, match="finished"):
        watch.add("More.")


def test_stable_end_stops_before_the_last_word():
    assert stable_end("It is tall. The") == len("It is tall.")
    assert stable_end("a.  Foo") == len("a. ")
    assert stable_end("word") == 0
    assert stable_end("It ends. ") == len("It ends.")


def test_without_a_model_model_free_signals_score_given_text():
    monitor = Monitor("none", alignment="lexical", signals=["alignment", "lexical", "edits", "api"],
                      detector="heuristic")
    text = "The tower is 330 metres tall. It was built in 1950."
    whole = monitor.score("How tall?", CONTEXT, text)
    watch = monitor.watch("How tall?", CONTEXT)
    tokens = [("The", -0.1, [-0.1, -2.5]), (" tower is 330 metres tall.", -0.2, [-0.2, -1.9]),
              (" It was built in", -0.3, []), (" 1950.", -3.0, [-3.0, -0.1, -4.0])]
    for token, lp, top in tokens:
        watch.add(token, [(token, lp, top)])
    watch.finish()
    got = watch.result()
    assert [s.text for s in got.sentences] == [s.text for s in whole.sentences] == [
        "The tower is 330 metres tall.", "It was built in 1950."]
    for a, b in zip(got.sentences, whole.sentences, strict=True):
        assert a.features["align_score"] == pytest.approx(b.features["align_score"])
    first, second = got.sentences
    assert first.features["api_min_prob"] == pytest.approx(math.exp(-0.2))
    assert second.features["api_min_prob"] == pytest.approx(math.exp(-3.0))
    assert second.features["api_mean_logprob"] == pytest.approx(-1.65)
    assert second.features["api_max_topk_entropy"] > 0.1  # the only sentence token with alternatives
    assert whole.sentences[0].features["api_min_prob"] is None  # no upstream log-probabilities: absent
    with pytest.raises(InputError, match="no model"):
        monitor.generate("How tall?", CONTEXT)


def test_model_none_refuses_signals_that_need_a_model():
    with pytest.raises(InputError, match="need a language model"):
        Monitor("none", signals=["likelihood", "alignment"], alignment="lexical", detector="heuristic")


def test_model_none_scores_as_the_model_free_features_of_a_model(lm):
    text = "The tower is 330 metres tall. It was built in 1950 by Dr. Smith. It is in Paris."
    none = Monitor("none", alignment="lexical", detector="heuristic").score("How tall?", CONTEXT, text)
    with_model = Monitor(lm, alignment="lexical", detector="heuristic",
                         signals=["alignment", "lexical", "edits", "tagger"]
                         ).score("How tall?", CONTEXT, text)
    assert [s.text for s in none.sentences] == [s.text for s in with_model.sentences]
    assert [s.features for s in none.sentences] == [s.features for s in with_model.sentences]
    assert none.model_id == "none" and [s.score for s in none.sentences] == [s.score for s in with_model.sentences]
