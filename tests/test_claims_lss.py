"""Longest Supported Subsequence (paper 004): the search on hand-made cases with known answers, ROUGE, the lss-dev
evaluation on a tiny CSV in the real column layout, the refchecker summary, and the `lss` / `eval-lss` commands.

All scorers here are deterministic fakes (or the model-free lexical scorer): no model is loaded.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

from faithwatch.alignment import LexicalScorer
from faithwatch.alignment.base import AlignmentScorer
from faithwatch.claims.lss import (
    ABSENT_NUMBER_CAP,
    absent_words,
    cap_absent_numbers,
    content_words,
    lss,
    number_absent_words,
    split_words,
)
from faithwatch.claims.rouge import RougeScore, align_to_claim, lss_rouge_l, rouge_l, rouge_n, rouge_tokens, word_prf
from faithwatch.errors import FaithwatchError, InputError, NonFiniteError
from faithwatch.eval.lss import (
    REFCHECKER_NOT_EVALUABLE,
    LSSConfig,
    correlate,
    load_lss_dev,
    load_refchecker,
    run_lss_eval,
    summarize_refchecker,
)

REFERENCE = "The Eiffel Tower was built in 1889 in Paris by the company of Gustave Eiffel."


def _norm(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


class FakeScorer(AlignmentScorer):
    """Deterministic fake: ``all`` = 1 if every word is in the reference else 0; ``fraction`` = share of words in it.

    Records every batch it was asked to score.
    """

    def __init__(self, mode: str = "all") -> None:
        self.mode = mode
        self.name = f"fake-{mode}"
        self.batches: list[list[str]] = []

    def score_many(self, sentences: Sequence[str], context: str) -> list[float]:
        self.batches.append(list(sentences))
        ref = set(_norm(context))
        out = []
        for s in sentences:
            words = _norm(s)
            inside = [w in ref for w in words]
            if self.mode == "all":
                out.append(1.0 if all(inside) else 0.0)
            else:
                out.append(sum(inside) / len(words) if words else 0.0)
        return out

    @property
    def texts(self) -> list[str]:
        return [t for b in self.batches for t in b]


class LengthScorer(AlignmentScorer):
    """Supported iff the text has at most ``k`` words: every same-size deletion ties."""

    name = "fake-length"

    def __init__(self, k: int) -> None:
        self.k = k

    def score_many(self, sentences: Sequence[str], context: str) -> list[float]:
        return [1.0 if len(s.split()) <= self.k else 0.0 for s in sentences]


class NaNScorer(AlignmentScorer):
    name = "fake-nan"

    def score_many(self, sentences: Sequence[str], context: str) -> list[float]:
        return [math.nan for _ in sentences]


# ---- the search on hand-made cases ----------------------------------------------------------------


def test_fully_supported_claim_scores_one_with_one_evaluation() -> None:
    scorer = FakeScorer("all")
    res = lss("The Eiffel Tower was built in Paris.", REFERENCE, scorer)
    assert res.score == 1.0 and res.kept_indices == tuple(range(7))
    assert res.evaluations == 1 and not res.truncated_search
    assert res.support_of_subsequence == 1.0 and res.support_of_claim == 1.0
    assert res.text == "The Eiffel Tower was built in Paris."


@pytest.mark.parametrize("prefilter", [True, False])
@pytest.mark.parametrize("mode", ["all", "fraction"])
def test_one_unsupported_word_is_removed(prefilter: bool, mode: str) -> None:
    claim = "The Eiffel Tower was quickly built in Paris."  # "quickly" is not in the reference
    res = lss(claim, REFERENCE, FakeScorer(mode), threshold=1.0, prefilter=prefilter)
    assert res.subsequence_words == ["The", "Eiffel", "Tower", "was", "built", "in", "Paris."]
    assert res.kept_indices == (0, 1, 2, 3, 5, 6, 7)
    assert res.score == pytest.approx(7 / 8)
    assert res.support_of_subsequence == 1.0 and not res.truncated_search


def test_several_unsupported_words_are_removed_and_the_rest_kept() -> None:
    claim = "In 1889 the famous Eiffel Tower was built in Rome by Gustave Eiffel."
    res = lss(claim, REFERENCE, FakeScorer("all"), threshold=1.0)
    assert res.text == "In 1889 the Eiffel Tower was built in by Gustave Eiffel."
    assert res.score == pytest.approx(11 / 13)


def test_unsupported_claim_scores_zero() -> None:
    res = lss("Quantum bananas orbit Neptune", REFERENCE, FakeScorer("all"), threshold=1.0)
    assert res.score == 0.0 and res.kept_indices == () and res.text == ""
    assert res.support_of_subsequence is None and not res.truncated_search
    assert res.to_dict()["lss"] == "" and json.dumps(res.to_dict(), allow_nan=False)


def test_function_words_alone_are_never_an_lss() -> None:
    # only "the" and "in" occur in the reference: a run of stop words asserts nothing, so the LSS is empty
    res = lss("the purple in giraffes", REFERENCE, FakeScorer("all"), threshold=1.0)
    assert res.score == 0.0
    # ... unless min_content_words allows it
    res = lss("the purple in giraffes", REFERENCE, FakeScorer("all"), threshold=1.0, min_content_words=0)
    assert res.subsequence_words == ["the", "in"]


def test_evaluation_cap_is_respected_and_reported() -> None:
    claim = "Gustave quietly designed the enormous iron Tower for Paris during a cold winter in 1889."
    for cap in (1, 2, 5, 12):
        scorer = FakeScorer("fraction")
        res = lss(claim, REFERENCE, scorer, threshold=1.0, max_evaluations=cap, prefilter=False)
        assert res.evaluations <= cap and len(scorer.texts) == res.evaluations
        assert res.truncated_search
        # whatever is returned was verified as supported (or nothing is returned)
        assert res.kept_indices == () or res.support_of_subsequence >= 1.0
    full = lss(claim, REFERENCE, FakeScorer("fraction"), threshold=1.0, max_evaluations=10_000, prefilter=False)
    assert not full.truncated_search
    assert full.text == "Gustave the Tower Paris in 1889."


def test_scorer_calls_are_batched_and_cached() -> None:
    scorer = FakeScorer("fraction")
    res = lss("The tall Tower was built in Paris in 1889.", REFERENCE, scorer, threshold=1.0, prefilter=False)
    assert max(len(b) for b in scorer.batches) > 1  # candidates go through score_many together
    assert len(scorer.texts) == len(set(scorer.texts)) == res.evaluations  # no text scored twice


def test_deterministic_with_ties_broken_by_position() -> None:
    claim = "alpha beta gamma delta"
    a = lss(claim, REFERENCE, LengthScorer(2), prefilter=False)
    b = lss(claim, REFERENCE, LengthScorer(2), prefilter=False)
    assert a == b
    # all deletions tie: the earliest positions go first
    assert a.subsequence_words == ["gamma", "delta"]
    claim2 = "Gustave quietly designed the enormous iron Tower for Paris during a cold winter in 1889."
    runs = {lss(claim2, REFERENCE, FakeScorer("fraction"), threshold=1.0).kept_indices for _ in range(3)}
    assert len(runs) == 1


def test_reinsertion_restores_words_removed_by_the_prefilter() -> None:
    # "Tour" and "yesterday" are absent from the reference: the pre-filter jump deletes both (4 words, supported
    # since at most 5 words are); re-insertion then puts back the earliest one, and no more fits
    res = lss("Tour Eiffel built in 1889 yesterday", REFERENCE, LengthScorer(5))
    assert res.subsequence_words == ["Tour", "Eiffel", "built", "in", "1889"]
    no_reinsert = lss("Tour Eiffel built in 1889 yesterday", REFERENCE, LengthScorer(5), reinsert=False)
    assert no_reinsert.subsequence_words == ["Eiffel", "built", "in", "1889"]


def test_max_span_deletes_runs_of_words() -> None:
    res = lss("The Eiffel Tower was very very quickly built in Paris.", REFERENCE, FakeScorer("all"), threshold=1.0,
              prefilter=False, max_span=3)
    assert res.text == "The Eiffel Tower was built in Paris." and not res.truncated_search


def test_lexical_scorer_drops_the_wrong_number() -> None:
    ref = "Acme Corp reported revenue of 4.2 billion dollars in 2023, up 12% from the previous year."
    res = lss("Acme Corp reported revenue of 5.7 billion dollars in 2023.", ref, LexicalScorer())
    assert res.support_of_claim < 0.5
    assert res.text == "Acme Corp reported revenue of billion dollars in 2023."
    assert res.score == pytest.approx(9 / 10)


def test_bad_inputs_raise_clear_errors() -> None:
    scorer = FakeScorer()
    for kwargs in ({"threshold": 0.0}, {"threshold": 1.5}, {"max_evaluations": 0}, {"beam_width": 0},
                   {"max_span": 0}, {"min_content_words": -1}):
        with pytest.raises(InputError):
            lss("The tower", REFERENCE, scorer, **kwargs)
    with pytest.raises(InputError, match="claim is empty"):
        lss("   ", REFERENCE, scorer)
    with pytest.raises(InputError, match="reference is empty"):
        lss("The tower", " ", scorer)
    with pytest.raises(InputError, match="claim is empty"):  # a zero-width space shows nothing
        lss("\u200b", REFERENCE, scorer)
    with pytest.raises(NonFiniteError):
        lss("The tower", REFERENCE, NaNScorer())
    assert issubclass(InputError, FaithwatchError)


def test_words_content_and_prefilter() -> None:
    assert split_words("Hello - world . Yes") == ["Hello -", "world .", "Yes"]
    assert split_words("— Hi there") == ["— Hi", "there"]
    assert split_words("...") == ["..."]
    assert content_words(["the", "Tower", "of", "1889"]) == [False, True, False, True]
    ref = "They sold 1,000 copies in two weeks."
    assert absent_words(["sold", "1000", "copies", "in", "2", "weeks", "3", "books"], ref) == [
        False, False, False, False, False, False, True, True]


# ---- ROUGE and word-level metrics ---------------------------------------------------------------------


def test_rouge_on_known_strings() -> None:
    r = rouge_l("police killed the gunman", "police kill the gunman")
    assert (r.precision, r.recall, r.f1) == pytest.approx((0.75, 0.75, 0.75))
    r = rouge_l("The cat sat on the mat.", "the cat on the mat")
    assert (r.precision, r.recall) == pytest.approx((5 / 6, 1.0))
    assert r.f1 == pytest.approx(10 / 11)
    assert rouge_l("", "the cat").f1 == 0.0 and rouge_l("!!!", "the cat").f1 == 0.0
    r2 = rouge_n("the cat sat on the mat", "the cat on the mat", 2)
    assert (r2.precision, r2.recall) == pytest.approx((3 / 5, 3 / 4))
    assert rouge_n("the the the", "the cat", 1).precision == pytest.approx(1 / 3)  # clipped counts
    with pytest.raises(InputError):
        rouge_n("a", "a", 0)
    p = 5 / 8
    assert lss_rouge_l("a b c d e f g h", "a c e g h").f1 == pytest.approx(2 * p / (1 + p))


def test_rouge_scorer_matches_hand_computed_values() -> None:
    """rouge_l / rouge_n (computed by rouge-score) against values worked out by hand; P != R everywhere, so a
    precision/recall swap, an unclipped count or an off-by-one in the LCS or the n-grams shows."""
    # LCS with repeated words: "the saw the cat" (4); the whole reference is not a subsequence (no "saw" after "dog")
    r = rouge_l("the cat saw the dog and the cat", "the dog saw the cat")
    assert (r.precision, r.recall, r.f1) == pytest.approx((4 / 8, 4 / 5, 8 / 13))
    r = rouge_l("the dog saw the cat", "the cat saw the dog and the cat")  # sides swapped: P and R swap
    assert (r.precision, r.recall, r.f1) == pytest.approx((4 / 5, 4 / 8, 8 / 13))
    r = rouge_l("A b c d", "b, c; d a e")  # LCS "b c d" = 3; case and punctuation ignored
    assert (r.precision, r.recall, r.f1) == pytest.approx((3 / 4, 3 / 5, 2 / 3))
    # bigrams: "the cat" twice in the candidate but once in the reference (clipped: overlap 3, not 4)
    r = rouge_n("the cat sat on the mat the cat", "the cat on the mat", 2)
    assert (r.precision, r.recall, r.f1) == pytest.approx((3 / 7, 3 / 4, 6 / 11))
    r = rouge_n("the the the", "the cat", 1)
    assert (r.precision, r.recall, r.f1) == pytest.approx((1 / 3, 1 / 2, 2 / 5))
    assert rouge_n("a b c", "a b c", 3) == RougeScore(1.0, 1.0, 1.0)
    assert rouge_n("a b", "a b", 3) == RougeScore(0.0, 0.0, 0.0)  # fewer tokens than n: no n-grams
    # an empty side (no tokens at all) gives exactly 0
    for cand, ref in [("", "the cat"), ("the cat", ""), ("", ""), ("!!! —", "the cat"), ("the cat", "東京")]:
        assert rouge_l(cand, ref) == RougeScore(0.0, 0.0, 0.0)
        assert rouge_n(cand, ref, 1) == RougeScore(0.0, 0.0, 0.0)
        assert rouge_n(cand, ref, 2) == RougeScore(0.0, 0.0, 0.0)
    # faithwatch's tokenisation: lowercased [a-z0-9]+ runs, no stemming; non-ASCII letters split words
    assert rouge_tokens("Café, naïve! COVID-19 cats") == ["caf", "na", "ve", "covid", "19", "cats"]
    assert rouge_l("Café COVID-19", "caf covid 19") == RougeScore(1.0, 1.0, 1.0)
    assert rouge_n("cats", "cat", 1) == RougeScore(0.0, 0.0, 0.0)
    r = rouge_l("x", "x")
    assert type(r) is RougeScore and all(type(v) is float for v in (r.precision, r.recall, r.f1))
    with pytest.raises(InputError, match="rouge1..rouge9"):
        rouge_n("a", "a", 10)


def test_align_human_lss_to_claim_words_and_word_prf() -> None:
    words = split_words("In 2014, Tointon ran for Share A Star, a charity.")
    assert align_to_claim(words, "Tointon ran for Share A Star.") == (2, 3, 4, 5, 6, 7)
    assert align_to_claim(words, "") == ()
    assert align_to_claim(split_words("a b a"), "a") == (0,)  # earliest match
    w = word_prf([0, 1, 2], [1, 2, 3, 4])
    assert (w.precision, w.recall) == pytest.approx((2 / 3, 2 / 4))
    assert word_prf([], []).f1 == 1.0 and word_prf([1], []).f1 == 0.0 and word_prf([], [1]).f1 == 0.0


# ---- lss-dev evaluation on a tiny CSV with the real column layout --------------------------------------

LSS_DEV_HEADER = [
    "worker_id", "task_id", "task_response_id", "Statement", "Reference",
    "Does the statement seem unrelated or completely related to the reference text? Mark if so.",
    "LSS - Remove words from the statement until it is fully supported by the text (if none of the statement is "
    "supported, then leave this empty)",
    "LSS* - Fix any spelling or grammar errors in the LSS",
    "Was it difficult to turn the LSS into the LSS* by only adding filler words? Mark if so.",
    "On a scale of 1-5, how well is the Claim supported by the Reference?",
]
RATINGS = {1: "1 - Not Supported", 2: "2 - Slightly Supported", 3: "3 - Partially Supported",
           4: "4 - Almost Supported", 5: "5 - Completely Supported"}
ROWS = [  # statement, lss, lss*, rating; two pairs annotated twice
    ("The Eiffel Tower was built in 1889 in Paris.", "The Eiffel Tower was built in 1889 in Paris.",
     "The Eiffel Tower was built in 1889 in Paris.", 5),
    ("The Eiffel Tower was built in 1889 in Paris.", "The Eiffel Tower was built in Paris.",
     "The Eiffel Tower was built in Paris.", 4),
    ("The Eiffel Tower was built in 1925 in Rome.", "The Eiffel Tower was built", "The Eiffel Tower was built.", 2),
    ("Gustave Eiffel painted the tower green in Berlin.", "Gustave Eiffel the tower", "Gustave Eiffel's tower.", 2),
    ("Gustave Eiffel painted the tower green in Berlin.", "", "", 1),
    ("Bananas grow on the moon.", "", "", 1),
    ("The company of Gustave Eiffel built the tower.", "The company of Gustave Eiffel built the tower.",
     "The company of Gustave Eiffel built the tower.", 4),
]


def _write_lss_dev(root: Path) -> Path:
    folder = root / "lss-dev"
    folder.mkdir(parents=True)
    rows = []
    for i, (statement, human, star, rating) in enumerate(ROWS):
        rows.append([f"W{i % 3}", f"T{i}", f"R{i}", statement, REFERENCE, "Yes" if not human else "", human, star,
                     "", RATINGS[rating]])
    pd.DataFrame(rows, columns=LSS_DEV_HEADER).to_csv(folder / "LSS_dev.csv", index=False)
    return root


def test_load_lss_dev_real_layout(tmp_path: Path) -> None:
    df = load_lss_dev(_write_lss_dev(tmp_path))
    assert len(df) == 7 and df.pair_id.nunique() == 5
    assert df.rating.tolist() == [r[3] for r in ROWS]
    assert df.human_lss.iloc[4] == "" and bool(df.unrelated.iloc[4]) and not bool(df.unrelated.iloc[0])
    bad = pd.read_csv(tmp_path / "lss-dev" / "LSS_dev.csv", dtype=str, keep_default_na=False)
    bad.iloc[0, -1] = "very good"
    bad.to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(InputError, match="rating"):
        load_lss_dev(tmp_path / "bad.csv")
    bad.drop(columns=[LSS_DEV_HEADER[-1]]).to_csv(tmp_path / "bad2.csv", index=False)
    with pytest.raises(InputError, match="On a scale"):
        load_lss_dev(tmp_path / "bad2.csv")
    # a file in another encoding or with no CSV in it: internal pandas/codec errors before
    (tmp_path / "latin1.csv").write_bytes(bad.to_csv(index=False).replace("The", "Th\u00e9").encode("latin-1"))
    with pytest.raises(InputError, match="latin1.csv is not UTF-8 text"):
        load_lss_dev(tmp_path / "latin1.csv")
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(InputError, match="empty.csv cannot be read as CSV"):
        load_lss_dev(tmp_path / "empty.csv")


def test_eval_on_tiny_csv_is_finite_and_resumable(tmp_path: Path) -> None:
    root = _write_lss_dev(tmp_path / "data")
    scorer = FakeScorer("fraction")
    config = LSSConfig(threshold=1.0)
    res = run_lss_eval(root, {"fake": scorer}, config, cache_dir=tmp_path / "cache", n_boot=50, refchecker=False)
    corr = res.tables["correlation with the human 1-5 rating"].set_index(["method", "scorer"])
    lss_row = corr.loc[("LSS score |LSS|/|claim|", "fake")]
    assert lss_row.n == 7 and lss_row.n_groups == 5 and lss_row.pearson > 0.5
    assert -1 <= lss_row.pearson_low <= lss_row.pearson <= lss_row.pearson_high <= 1
    numeric = corr[["pearson", "spearman"]].to_numpy(dtype=float)
    assert all(math.isfinite(v) for v in numeric.ravel())
    assert {"alignment score of the claim", "ROUGE-L F1(claim, reference)", "ROUGE-L F1(claim, human LSS*)"} <= set(
        corr.index.get_level_values(0))
    agree = res.tables["agreement with the human LSS"]
    assert agree.method.tolist() == ["keep the whole claim (trivial)", "found LSS (fake)"]
    assert set(res.tables["mean score per human rating"].rating) == {1, 2, 4, 5}
    pairs = res.pairs["fake"]
    assert len(pairs) == 5 and pairs.lss_score.between(0, 1).all()
    cache_files = list((tmp_path / "cache").glob("*.jsonl"))
    assert len(cache_files) == 1 and len(cache_files[0].read_text().splitlines()) == 5
    # resume: a cut last line is ignored and recomputed; cached pairs are not searched again
    text = cache_files[0].read_text().splitlines()
    cache_files[0].write_text("\n".join(text[:-1]) + "\n" + text[-1][:20])
    again = FakeScorer("fraction")
    res2 = run_lss_eval(root, {"fake": again}, config, cache_dir=tmp_path / "cache", n_boot=50, refchecker=False)
    assert 0 < len(again.texts) < len(scorer.texts)  # only the cut pair is searched again
    assert res2.pairs["fake"].drop(columns=["seconds"]).equals(pairs.drop(columns=["seconds"]))


def test_constant_scores_give_a_clear_error_not_nan(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="constant"):
        correlate([0.5, 0.5, 0.5, 0.5], [1, 2, 3, 4])
    with pytest.raises(InputError, match="at least 3"):
        correlate([0.1, 0.2], [1, 2])
    ok = correlate([0.1, 0.4, 0.3, 0.9], [1, 3, 2, 5], n_boot=0)
    assert ok["spearman"] == pytest.approx(1.0) and ok["pearson_low"] is None
    # in the eval table a constant method gets a note and no number
    root = _write_lss_dev(tmp_path / "data")

    class Always(AlignmentScorer):
        name = "always"

        def score_many(self, sentences: Sequence[str], context: str) -> list[float]:
            return [1.0] * len(sentences)

    res = run_lss_eval(root, {"always": Always()}, n_boot=10, refchecker=False)
    corr = res.tables["correlation with the human 1-5 rating"].set_index(["method", "scorer"])
    row = corr.loc[("LSS score |LSS|/|claim|", "always")]
    assert row.pearson is None or pd.isna(row.pearson)
    assert "constant" in row.note


# ---- refchecker-annotations summary on a tiny synthetic folder ---------------------------------------------


def _kg(*labels: str) -> list[dict]:
    return [{"triplet": ["Eiffel Tower", "built in", f"{1880 + i}"], "human_label": lab} for i, lab in
            enumerate(labels)]


def _write_refchecker(root: Path) -> Path:
    base = root / "refchecker-annotations"
    data = {
        ("zero_context", "nq", "modelA"): [
            {"id": "1", "response": "The Eiffel Tower was built in 1880 and 1881.", "claude2_response_kg": _kg(
                "Entailment", "Contradiction")},
            {"id": "2", "response": "I do not know.", "claude2_response_kg": []},
        ],
        ("accurate_context", "dolly", "modelA"): [
            {"id": "3", "response": "Built in 1880.", "claude2_response_kg": _kg("Entailment", "Neutral", "Entailment",
                                                                                   "Entailment")},
        ],
        ("accurate_context", "dolly", "model_B"): [
            {"id": "3", "response": "It was built in 1880.", "claude2_response_kg": _kg("Entailment")},
        ],
    }
    for (setting, source, model), items in data.items():
        (base / setting).mkdir(parents=True, exist_ok=True)
        (base / setting / f"{source}_{model}_answers.json").write_text(json.dumps(items))
    return base


def test_refchecker_summary_on_synthetic_files(tmp_path: Path) -> None:
    base = _write_refchecker(tmp_path)
    responses, triplets = load_refchecker(tmp_path)  # the data root works as well as the folder
    assert len(responses) == 4 and len(triplets) == 7
    assert set(responses.model) == {"modelA", "model_B"}
    tables = summarize_refchecker(base)
    per_setting = tables["refchecker: labels and claim granularity per setting"].set_index("setting")
    assert per_setting.loc["zero_context", "responses without triplets"] == 1
    assert per_setting.loc["zero_context", "triplets per response (mean)"] == pytest.approx(1.0)
    assert per_setting.loc["all", "triplets"] == 7
    assert per_setting.loc["accurate_context", "share Entailment"] == pytest.approx(4 / 5)
    per_model = tables["refchecker: per LLM (responses with triplets; paper 002 aggregations)"]
    row = per_model[(per_model.setting == "zero_context") & (per_model.model == "modelA")].iloc[0]
    assert row["with triplets"] == 1 and row["macro Contradiction ratio"] == pytest.approx(0.5)
    assert row["responses with a Contradiction"] == 1.0
    row = per_model[(per_model.setting == "accurate_context") & (per_model.model == "modelA")].iloc[0]
    assert row["non-factual responses (any Neutral/Contradiction)"] == 1.0
    assert row["macro Entailment ratio"] == pytest.approx(0.75)
    not_eval = tables["refchecker: not evaluable without the references"]
    assert len(not_eval) == len(REFCHECKER_NOT_EVALUABLE) and "reference" in " ".join(not_eval["why not"])
    # a wrong label is reported with its file and entry
    f = base / "zero_context" / "nq_modelA_answers.json"
    items = json.loads(f.read_text())
    items[0]["claude2_response_kg"][0]["human_label"] = "Supported"
    f.write_text(json.dumps(items))
    with pytest.raises(InputError, match="entry 0 triplet 0"):
        load_refchecker(base)
    with pytest.raises(InputError, match="no refchecker"):
        load_refchecker(tmp_path / "nowhere")


# ---- the commands ---------------------------------------------------------------------------------------------


def _app() -> typer.Typer:
    from faithwatch.cli import app

    return app


def test_cli_lss_end_to_end_with_the_lexical_scorer(tmp_path: Path) -> None:
    ref = tmp_path / "ref.txt"
    ref.write_text("Acme Corp reported revenue of 4.2 billion dollars in 2023, up 12% from the previous year.")
    runner = CliRunner()
    claim = "Acme Corp reported revenue of 5.7 billion dollars in 2023."
    result = runner.invoke(_app(), ["lss", "--claim", claim, "--reference", str(ref), "--scorer", "lexical"])
    assert result.exit_code == 0, result.output
    assert "LSS score: 0.900 (9/10 words) · support " in result.stdout
    assert "(threshold 0.5) · claim support " in result.stdout and " · 2 evaluations · " in result.stdout
    assert "~~5.7~~ billion" in result.stdout  # removed words are marked when colours do not show
    assert "LSS: Acme Corp reported revenue of billion dollars in 2023." in result.stdout
    for name in ("-c", "--context"):  # as `check` names the reference passage
        again = runner.invoke(_app(), ["lss", "--claim", claim, name, str(ref), "--scorer", "lexical"])
        assert again.exit_code == 0 and again.stdout == result.stdout, again.output
    result = runner.invoke(_app(), ["lss", "--claim", claim, "--reference", str(ref), "--scorer", "lexical",
                                    "--json", "--max-evaluations", "1"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["truncated_search"] is True and data["evaluations"] == 1 and data["score"] == 0.0
    result = runner.invoke(_app(), ["lss", "--claim", claim, "--reference", str(tmp_path / "missing.txt"),
                                    "--scorer", "lexical"])
    assert result.exit_code == 2 and "not found" in result.output
    latin = tmp_path / "latin1.txt"  # the reference is read as every other text file is (it was an internal error)
    latin.write_bytes("Acme Corp reported revenue in Malm\u00f6.".encode("latin-1"))
    for path, said in ((latin, "is not UTF-8 text"), (tmp_path, "is a folder")):
        result = runner.invoke(_app(), ["lss", "--claim", claim, "--reference", str(path), "--scorer", "lexical"])
        assert result.exit_code == 2 and said in result.output, result.output
    for scorer in ("lss-tagger", "lss-tagger:elsewhere"):  # the search options were ignored by the tagger
        result = runner.invoke(_app(), ["lss", "--claim", claim, "--reference", str(ref), "--scorer", scorer,
                                        "--beam-width", "4", "--no-prefilter"])
        message = " ".join(result.output.split())
        assert result.exit_code == 2 and (f"--scorer {scorer} does not read --beam-width, --prefilter/--no-prefilter "
                                          "(it reads --threshold): leave them out") in message, message
    for command in (["lss", "--claim", claim, "--reference", str(ref)], ["eval-lss", "--limit", "3"]):
        for value, said in (("2", "--threshold must be in (0, 1]"), ("nan", "nan is not a finite number")):
            # lss said "threshold must be …", the library's word, once the scorer had loaded
            result = runner.invoke(_app(), [*command, "--scorer", "lexical", "--threshold", value])
            assert result.exit_code == 2 and said in result.output, result.output
    for bad in ("bogus", "none"):  # the message offers what works: the tagger and the search scorers
        result = runner.invoke(_app(), ["lss", "--claim", claim, "--reference", str(ref), "--scorer", bad])
        message = " ".join(result.output.split())
        assert result.exit_code == 2 and "choose lss-tagger (the default) or a search scorer: " in message
        assert ", none" not in message and ", lexical" in message


def test_cli_eval_lss_writes_a_report(tmp_path: Path) -> None:
    root = _write_lss_dev(tmp_path / "data")
    _write_refchecker(root)
    report = tmp_path / "report"
    result = CliRunner().invoke(_app(), ["eval-lss", "--data-root", str(root), "--scorer", "lexical", "--report",
                                         str(report), "--n-boot", "20"])
    assert result.exit_code == 0, result.output
    assert "LSS score" in result.stdout and "ROUGE-L F1(claim, reference)" in result.stdout
    doc = json.loads((report / "results.json").read_text())
    names = [t["name"] for t in doc["tables"]]
    assert "correlation with the human 1-5 rating" in names
    assert "refchecker: not evaluable without the references" in names
    assert doc["meta"]["rows"] == 7 and "search threshold" in doc["meta"]
    assert (report / "results.md").is_file() and list((report / "cache").glob("*.jsonl"))
    same = pd.read_csv(root / "lss-dev" / "LSS_dev.csv", dtype=str, keep_default_na=False).iloc[[0, 0, 0]]
    same.iloc[1:, -1] = [RATINGS[1], RATINGS[3]]  # one claim three times: constant scores, no correlation
    same.to_csv(tmp_path / "same.csv", index=False)
    few = CliRunner().invoke(_app(), ["eval-lss", "--data", str(tmp_path / "same.csv"), "--scorer", "lexical",
                                      "--report", str(tmp_path / "few"), "--n-boot", "0", "--no-refchecker"])
    said = " ".join(few.output.split())
    notes = [n for n in said.split("note: ")[1:] if "the correlation is undefined" in n]
    assert few.exit_code == 0 and notes, said
    for note in notes:  # each named its method and scorer twice ("LSS score (lexical): LSS score (lexical): …")
        head = note.split(": ")[0]
        assert note.count(head + ":") == 1, note
    result = CliRunner().invoke(_app(), ["eval-lss", "--scorer", "lss-tagger", "--max-span", "2", "--report",
                                         str(tmp_path / "t")])  # the tagger alone reads no search option
    assert result.exit_code == 2 and "does not read --max-span" in result.output
    assert not (tmp_path / "t").exists()
    result = CliRunner().invoke(_app(), ["eval-lss", "--data-root", str(tmp_path / "nowhere"), "--scorer",
                                         "lexical", "--report", str(report)])
    assert result.exit_code == 2


def test_cli_eval_lss_reads_another_csv_in_the_same_layout(tmp_path: Path) -> None:
    import pandas as pd

    root = _write_lss_dev(tmp_path / "data")
    rows = pd.read_csv(root / "lss-dev" / "LSS_dev.csv", dtype=str, keep_default_na=False)
    other = tmp_path / "split" / "LSS_other.csv"
    other.parent.mkdir()
    rows.iloc[:5].to_csv(other, index=False)
    report = tmp_path / "report"
    result = CliRunner().invoke(_app(), ["eval-lss", "--data", str(other), "--scorer", "lexical", "--report",
                                         str(report), "--n-boot", "10", "--no-refchecker"])
    assert result.exit_code == 0, result.output
    assert "LSS_other.csv: correlation" in result.stdout
    meta = json.loads((report / "results.json").read_text())["meta"]
    assert meta["rows"] == 5 and meta["data"] == str(other.resolve())
    result = CliRunner().invoke(_app(), ["eval-lss", "--data", str(tmp_path / "missing.csv"), "--scorer",
                                         "lexical", "--report", str(report)])
    assert result.exit_code == 2 and "annotation file not found" in result.output



def test_cap_absent_numbers_reads_numbers_as_novel_numbers_does() -> None:
    ref = "Police said 25 people were injured in 2007-2008. The firm was fined £3m. Revenue was $5.7bn."

    def absent(claim: str) -> list[str]:
        words = split_words(claim)
        return [w for w, a in zip(words, number_absent_words(words, ref), strict=True) if a]

    assert absent("24 people were injured.") == ["24"]
    assert absent("25 people were injured in 2007-08.") == []  # a year range's short end by its full year
    assert absent("The firm was fined £3bn.") == ["£3bn."]  # a magnitude the reference lacks
    assert absent("Revenue was 5,700 million dollars in 2009.") == ["2009."]  # a sum by its value
    assert absent("In 1997-98 it rose.") == ["1997-98"]
    assert number_absent_words([], ref) == []
    words = split_words("24 people were injured in 2007-08.")
    capped = cap_absent_numbers(np.full(len(words), 0.9), words, ref)
    assert capped[0] == ABSENT_NUMBER_CAP and set(capped[1:]) == {0.9}


def test_lss_refuses_text_with_a_lone_surrogate() -> None:
    for claim, reference, said in (("Paris \ud800", "Paris is big.", "the claim holds a lone surrogate U\\+D800"),
                                   ("Paris is big.", "\udcff Paris", "the reference holds a lone surrogate U\\+DCFF")):
        with pytest.raises(InputError, match=said):
            lss(claim, reference, LexicalScorer())

