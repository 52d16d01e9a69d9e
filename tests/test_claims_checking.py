"""Checkers (NLI, alignment, LLM judge), the combination rules, aggregation, batches and the CLI."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from faithwatch.alignment import AlignmentScorer, LexicalScorer
from faithwatch.claims import (
    ABSTAIN,
    AlignmentChecker,
    CheckError,
    Claim,
    ClaimVerdict,
    Evidence,
    LLMJudgeChecker,
    NLIChecker,
    SegmentExtractor,
    aggregate,
    check_file,
    check_response,
    hallucination_rate,
    merge_verdicts,
    summarize,
)
from faithwatch.claims.checking import CheckerSpec, PassageVerdict, get_checker
from faithwatch.claims.extraction import ExtractionError
from faithwatch.claims.llm_judge import parse_judgement
from faithwatch.cli import app as cli_app
from faithwatch.errors import InputError, ModelNotAvailableError, NonFiniteError


def claim(text: str) -> Claim:
    return Claim(text, "sentence", (0, len(text)))


# ---- a fake NLI model whose verdicts are set by keywords -------------------------------------------------


class KeywordNLI:
    """Implements what NLIChecker uses of NLIScorer. Tokens are words.

    A claim whose first word is ``w`` is entailed by a chunk containing ``"w yes"``, contradicted by one
    containing ``"w no"``, neutral otherwise.
    """

    name = "nli:keyword"
    labels = ["contradiction", "entailment", "neutral"]

    def __init__(self, window: int = 40) -> None:
        self.window = window
        self.contexts: list[str] = []

    def n_tokens(self, text: str) -> int:
        return len(text.split())

    def budget_for(self, sentence: str) -> int:
        return self.window - self.n_tokens(sentence)

    def probabilities_many(self, sentences: Sequence[str], context: str) -> list[dict[str, float]]:
        self.contexts.append(context)
        assert self.n_tokens(context) <= self.window - max(self.n_tokens(s) for s in sentences)
        out = []
        for s in sentences:
            key, ctx = s.split()[0].lower(), context.lower()
            if f"{key} yes" in ctx:
                out.append({"entailment": 0.9, "neutral": 0.07, "contradiction": 0.03})
            elif f"{key} no" in ctx:
                out.append({"entailment": 0.05, "neutral": 0.15, "contradiction": 0.8})
            else:
                out.append({"entailment": 0.2, "neutral": 0.7, "contradiction": 0.1})
        return out


PASSAGE_YES = "Alpha yes is stated here. Beta has nothing."
PASSAGE_NO = "Other text. Alpha no is stated there."


def test_nli_single_passage_labels_confidence_and_evidence() -> None:
    checker = NLIChecker(KeywordNLI())
    v_alpha, v_beta = checker.check([claim("alpha is true"), claim("beta is true")], PASSAGE_YES)
    assert (v_alpha.label, v_alpha.confidence) == ("Entailment", 0.9)
    ev = v_alpha.evidence[0]
    assert ev.passage_index == 0 and PASSAGE_YES[ev.start : ev.end] == ev.text and ev.label == "Entailment"
    assert v_alpha.scores == {"max_entailment": 0.9, "max_contradiction": 0.03}
    assert (v_beta.label, v_beta.confidence) == ("Neutral", 0.7)
    (v_no,) = checker.check([claim("alpha is true")], PASSAGE_NO)
    assert (v_no.label, v_no.confidence) == ("Contradiction", 0.8)


def test_nli_conflict_across_passages_shows_both_evidences() -> None:
    claims = [claim("alpha is true"), claim("beta is true")]
    v, neutral = NLIChecker(KeywordNLI()).check(claims, [PASSAGE_YES, PASSAGE_NO])
    assert v.label == "Conflict" and v.confidence == pytest.approx(0.8)  # min(0.9 support, 0.8 contradiction)
    assert [(e.passage_index, e.label) for e in v.evidence] == [(0, "Entailment"), (1, "Contradiction")]
    assert "alpha no" in v.evidence[1].text.lower()
    assert neutral.label == "Neutral"
    (v,) = NLIChecker(KeywordNLI(), combine="max-entail").check(claims[:1], [PASSAGE_YES, PASSAGE_NO])
    assert v.label == "Entailment" and [e.passage_index for e in v.evidence] == [0]
    (v,) = NLIChecker(KeywordNLI(), combine="any-contradiction").check(claims[:1], [PASSAGE_YES, PASSAGE_NO])
    assert v.label == "Contradiction" and [e.passage_index for e in v.evidence] == [1]


def test_nli_chunks_fit_and_locate_the_evidence() -> None:
    filler = " ".join(f"Sentence {i} says nothing." for i in range(20))
    passage = f"{filler} Alpha yes at the end."
    fake = KeywordNLI(window=20)
    (v,) = NLIChecker(fake).check([claim("alpha holds")], passage)
    assert len(fake.contexts) > 3  # the passage was chunked
    ev = v.evidence[0]
    assert v.label == "Entailment" and passage[ev.start : ev.end] == ev.text
    assert ev.text.endswith("Alpha yes at the end.")
    # inside one passage, support in one chunk beats a contradiction in another (RefChecker's rule)
    mixed = f"Alpha no here. {filler} Alpha yes at the end."
    (v,) = NLIChecker(KeywordNLI(window=20)).check([claim("alpha holds")], mixed)
    assert v.label == "Entailment"
    (v,) = NLIChecker(KeywordNLI(window=20), combine="any-contradiction").check([claim("alpha holds")], mixed)
    assert v.label == "Contradiction"
    smaller = KeywordNLI(window=40)
    NLIChecker(smaller, max_chunk_tokens=8).check([claim("alpha holds")], passage)
    assert max(len(c.split()) for c in smaller.contexts) <= 8


def test_nli_checker_rejects_two_class_models_and_bad_rules() -> None:
    two = KeywordNLI()
    two.labels = ["entailment", "not_entailment"]
    with pytest.raises(InputError, match="not a 3-class NLI model"):
        NLIChecker(two)
    with pytest.raises(InputError, match="combination rule"):
        NLIChecker(KeywordNLI(), combine="vote")
    with pytest.raises(InputError, match="empty"):
        NLIChecker(KeywordNLI()).check([claim("alpha")], ["ok", "  "])
    shipped = get_checker(CheckerSpec(kind="nli"))  # without --nli-model: the shipped nli-minilm
    assert shipped.scorer.name == "nli-minilm"
    verdicts = shipped.check([claim("The tower is in Paris.")], "The Eiffel Tower is a landmark in Paris, France.")
    assert verdicts[0].label in ("Entailment", "Neutral", "Contradiction")
    assert NLIChecker(KeywordNLI()).check([], "text") == []


def _tiny_nli(path: Path) -> str:
    """A tiny random 3-class BERT classifier (as in test_alignment), saved to ``path``."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from faithwatch.alignment.embedding import default_minilm_path

    tok = AutoTokenizer.from_pretrained(default_minilm_path())
    labels = {0: "ENTAILMENT", 1: "neutral", 2: "contradiction"}
    config = BertConfig(vocab_size=tok.vocab_size, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=64, id2label=labels,
                        label2id={v: k for k, v in labels.items()})
    torch.manual_seed(0)
    BertForSequenceClassification(config).save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


def test_nli_checker_with_a_real_tiny_model(tmp_path, one_thread) -> None:
    checker = get_checker(CheckerSpec(kind="nli", nli_model=_tiny_nli(tmp_path)))
    assert isinstance(checker, NLIChecker)
    passages = [" ".join(f"Paragraph {i} says the revenue of Acme grew in Berlin." for i in range(8)),
                "The office is in Paris."]
    verdicts = checker.check([claim("Acme revenue grew."), claim("The office is in Rome.")], passages)
    assert len(verdicts) == 2
    for v in verdicts:
        assert v.label in ("Entailment", "Neutral", "Contradiction", "Conflict")
        assert v.confidence is not None and 0.0 <= v.confidence <= 1.0
        for ev in v.evidence:
            assert passages[ev.passage_index][ev.start : ev.end] == ev.text
            assert checker.scorer.n_tokens(ev.text) <= checker.scorer.max_length
        assert 0.0 <= v.scores["max_entailment"] <= 1.0
    with pytest.raises(ModelNotAvailableError):
        get_checker(CheckerSpec(kind="nli", nli_model=str(tmp_path / "missing")))


# ---- alignment thresholds --------------------------------------------------------------------------------


class FixedScorer(AlignmentScorer):
    """Scores by a table: ``score = table[claim]`` when the context contains ``"GOOD"``, else 0.1."""

    name = "fixed"

    def __init__(self, table: dict[str, float]) -> None:
        self.table = table

    def score_many(self, sentences: Sequence[str], context: str) -> list[float]:
        return [self.table[s] if "GOOD" in context else 0.1 for s in sentences]


def test_alignment_thresholds_and_margins() -> None:
    table = {"a": 0.7, "b": 0.69, "c": 0.2, "d": 0.19, "e": 1.0, "f": 0.45}
    checker = AlignmentChecker(FixedScorer(table))
    verdicts = checker.check([claim(k) for k in table], "Nothing. GOOD here.")
    assert [v.label for v in verdicts] == ["Entailment", "Neutral", "Neutral", "Contradiction", "Entailment",
                                           "Neutral"]
    conf = {v.claim.text: v.confidence for v in verdicts}
    assert conf["a"] == pytest.approx(0.0) and conf["e"] == pytest.approx(1.0)  # margins from the boundary
    assert conf["f"] == pytest.approx(1.0) and conf["d"] == pytest.approx(0.05)
    assert verdicts[0].scores == {"align_score": 0.7}
    assert verdicts[0].evidence[0].text == "GOOD here."  # the best sentence of the best passage
    with pytest.raises(InputError, match="thresholds"):
        AlignmentChecker(FixedScorer(table), entail_threshold=0.3, contradict_threshold=0.5)


def test_alignment_takes_the_best_passage_and_never_conflicts() -> None:
    checker = AlignmentChecker(FixedScorer({"a": 0.9}))
    (v,) = checker.check([claim("a")], ["unrelated", "GOOD support"])
    assert v.label == "Entailment" and v.evidence[0].passage_index == 1


def test_alignment_checker_with_the_lexical_scorer() -> None:
    ctx = "Acme reported revenue of 4.2 billion dollars in 2023. The CEO is Jane Smith."
    good, wrong = AlignmentChecker(LexicalScorer()).check(
        [claim("Acme reported revenue of 4.2 billion dollars."), claim("Acme reported revenue of 9.9 billion.")], ctx)
    assert good.label == "Entailment" and wrong.label != "Entailment"
    listed, cited = AlignmentChecker(LexicalScorer()).check(  # markup rule 1: "1." and "[2]" are no numbers
        [claim("1. Acme reported revenue of 4.2 billion dollars."), claim("The CEO is Jane Smith [2].")], ctx)
    assert listed.label == cited.label == "Entailment"
    assert listed.claim.text.startswith("1. ")  # the claim as written is kept


# ---- the LLM judge ------------------------------------------------------------------------------------------


class Scripted:
    name = "scripted"

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.calls: list[list[dict]] = []

    def complete(self, messages, *, max_tokens, temperature):
        self.calls.append([dict(m) for m in messages])
        return self.replies[min(len(self.calls), len(self.replies)) - 1]


def test_llm_judge_schema_quote_and_retry() -> None:
    passage = "The bridge was built in 1820 by local masons."
    fenced = '```json\n{"label": "ENTAILMENT", "quote": "built in  1820", "confidence": 1}\n```'
    backend = Scripted("Entailment!", fenced)
    (v,) = LLMJudgeChecker(backend).check([Claim("bridge built in 1820", "triplet", (0, 5),
                                                 ("bridge", "built in", "1820"))], passage, question="When?")
    assert v.label == "Entailment" and v.confidence == 1.0 and v.scores == {"quote_found": 1.0}
    assert v.evidence[0].text == "built in 1820"
    first = backend.calls[0]
    assert "(bridge, built in, 1820)" in first[-1]["content"] and "Question: When?" in first[-1]["content"]
    assert "no JSON object" in backend.calls[1][-1]["content"]


def test_llm_judge_unfound_quote_falls_back_and_invalid_fails() -> None:
    passage = "The bridge was built in 1820 by local masons. It is old."
    (v,) = LLMJudgeChecker(Scripted('{"label": "Contradiction", "quote": "built in 1900"}')).check(
        [claim("The bridge was built in 1900.")], passage)
    assert v.label == "Contradiction" and v.confidence is None and v.scores == {"quote_found": 0.0}
    assert v.evidence[0].text == "The bridge was built in 1820 by local masons."
    backend = Scripted('{"label": "True"}')
    with pytest.raises(CheckError, match="after 2 attempt"):
        LLMJudgeChecker(backend, max_retries=1).check([claim("x y z")], passage)
    assert len(backend.calls) == 2


@pytest.mark.parametrize("answer", ['{"label": "Maybe"}', '{"label": "Neutral", "confidence": 3}', "[1]", ""])
def test_parse_judgement_rejects(answer: str) -> None:
    with pytest.raises(ValueError):
        parse_judgement(answer)


# ---- the combination rule -----------------------------------------------------------------------------------


def _pv(label: str, conf: float | None, p: int = 0) -> PassageVerdict:
    return PassageVerdict(label, conf, Evidence(p, 0, 1, "x", label, conf), relevance=conf or 0.0)


def test_merge_verdicts_rules() -> None:
    both = [_pv("Entailment", 0.6, 0), _pv("Neutral", 0.9, 1), _pv("Contradiction", 0.7, 2)]
    assert merge_verdicts(both, "conflict")[:2] == ("Conflict", 0.6)
    assert merge_verdicts(both, "max-entail")[:2] == ("Entailment", 0.6)
    assert merge_verdicts(both, "any-contradiction")[:2] == ("Contradiction", 0.7)
    neutral = [_pv("Neutral", 0.9), _pv("Neutral", 0.6)]
    assert merge_verdicts(neutral, "conflict")[:2] == ("Neutral", 0.6)
    assert merge_verdicts([_pv("Neutral", None), _pv("Neutral", 0.6)], "conflict")[1] is None
    with pytest.raises(ValueError):
        merge_verdicts([], "conflict")


# ---- aggregation --------------------------------------------------------------------------------------------

E, N, C, X = "Entailment", "Neutral", "Contradiction", "Conflict"


def test_strict_soft_majority_and_hallucination_rate() -> None:
    labels = [E, E, N, C, X]
    assert aggregate(labels, "strict") == C
    assert aggregate([E, X, N], "strict") == N and aggregate([E, X], "strict") == X and aggregate([E], "strict") == E
    assert aggregate(labels, "soft") == {E: 0.4, N: 0.2, C: 0.2, X: 0.2}
    assert aggregate(labels, "majority") == E
    assert aggregate([E, C], "majority") == C  # a tie goes to the more severe label
    assert hallucination_rate(labels) == pytest.approx(0.4)  # Neutral + Contradiction; Conflict not counted
    assert aggregate([], "strict") == ABSTAIN and aggregate([], "majority") == ABSTAIN
    assert aggregate([], "soft") is None and hallucination_rate([]) is None
    with pytest.raises(InputError):
        aggregate(labels, "mean")
    with pytest.raises(ValueError):
        hallucination_rate(["Maybe"])
    verdicts = [ClaimVerdict(claim("a"), E, 0.9), ClaimVerdict(claim("b"), N, None)]
    assert aggregate(verdicts, "strict") == N and hallucination_rate(verdicts) == 0.5
    with pytest.raises(NonFiniteError):
        ClaimVerdict(claim("a"), E, float("nan"))


def test_summaries_macro_average_by_group() -> None:
    def row(model: str, labels: list[str]) -> dict:
        return {"model": model, "dataset": "d1", "claims": [{"label": lab} for lab in labels]}

    rows = [row("m1", [E, N]), row("m1", [C, C, E, E]), row("m1", []), row("m2", [E]),
            {"model": "m2", "error": "extraction failed"}]
    groups = summarize(rows, by="model")
    m1, m2 = groups["m1"], groups["m2"]
    assert (m1.responses, m1.checked, m1.abstained, m1.claims, m1.failed) == (3, 3, 1, 6, 0)
    assert m1.label_rates[E] == pytest.approx(0.5) and m1.label_rates[C] == pytest.approx(0.25)
    assert m1.hallucination_rate == pytest.approx(0.5) and m1.abstain_rate == pytest.approx(1 / 3)
    assert m1.strict_labels == {N: 1, C: 1, ABSTAIN: 1}
    assert (m2.failed, m2.checked, m2.hallucination_rate) == (1, 1, 0.0)
    assert summarize(rows)["all"].responses == 5
    only_failed = summarize([{"error": "x"}])["all"]
    assert only_failed.hallucination_rate is None and only_failed.abstain_rate is None


# ---- pipeline and batches -----------------------------------------------------------------------------------

CTX = "The river Avon flows through the old town. The bridge was built in 1820 by local masons."


def test_check_response_and_abstain() -> None:
    checker = AlignmentChecker(LexicalScorer())
    res = check_response("The bridge was built in 1820. It cost 7 million euros.", CTX,
                         SegmentExtractor("sentence"), checker, aggregation="soft")
    assert [v.label for v in res.verdicts][0] == "Entailment" and res.verdicts[1].label != "Entailment"
    assert isinstance(res.aggregate, dict) and res.hallucination_rate == 0.5
    d = res.to_dict()
    assert d["claims"][0]["response_span"] == [0, 29] and d["extraction_error"] is None

    class NoClaims:
        name, granularity = "none", "triplet"

        def extract(self, response, question=None):
            return []

    res = check_response("Hmm.", CTX, NoClaims(), checker)
    assert res.abstained and res.aggregate == ABSTAIN and res.hallucination_rate is None


def test_text_of_invisible_characters_is_empty() -> None:
    # a zero-width space or byte-order mark alone passed str.strip: it was extracted and checked as a claim
    checker = AlignmentChecker(LexicalScorer())
    with pytest.raises(InputError, match="the response is empty"):
        check_response("\u200b\ufeff", CTX, SegmentExtractor("sentence"), checker)
    with pytest.raises(InputError, match="reference passage 1 is empty"):
        check_response("The bridge was built in 1820.", [CTX, "\u200b"], SegmentExtractor("sentence"), checker)


def test_text_with_a_lone_surrogate_is_refused() -> None:
    # json.loads reads "\ud800" as one; the NLI tokenizer raised a TypeError on it
    checker = AlignmentChecker(LexicalScorer())
    sentence = SegmentExtractor("sentence")
    for response, refs, said in (("It \ud800.", CTX, "the response holds a lone surrogate U\\+D800 at character 3"),
                                 ("It is.", [CTX, "x\udcff"], "reference passage 1 holds a lone surrogate U\\+DCFF"),
                                 ("It is.", CTX, "the question holds a lone surrogate")):
        with pytest.raises(InputError, match=said):
            check_response(response, refs, sentence, checker, question="W\ud800?" if "question" in said else None)


class FlakyExtractor:
    """Sentence claims, but extraction fails for responses containing 'FAIL'."""

    name, granularity = "flaky", "sentence"

    def extract(self, response, question=None):
        if "FAIL" in response:
            raise ExtractionError("triplet extraction failed after 3 attempt(s): no JSON list found")
        return SegmentExtractor("sentence").extract(response)


def _write(path: Path, rows: list) -> None:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))


GOOD = [
    {"id": "a", "context": CTX, "response": "The bridge was built in 1820.", "model": "m1", "dataset": "d"},
    {"id": "b", "context": [CTX, "Masons came from Bath."], "response": "Masons from Bath built it in 1820.",
     "model": "m2", "dataset": "d"},
    {"id": "c", "context": CTX, "response": "It FAIL was built in 1999.", "model": "m2", "dataset": "d"},
]


def test_check_file_resumes_reports_bad_records_and_summarises(tmp_path) -> None:
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    _write(src, [*GOOD, "{not json", {"id": "e", "context": [], "response": "x"}])
    checker = AlignmentChecker(LexicalScorer())
    summary = check_file(FlakyExtractor(), checker, src, out)
    assert (summary.checked, summary.failed, summary.skipped_done) == (2, 1, 0)
    assert [(b.line, b.id) for b in summary.bad] == [(3, "c"), (4, None), (5, "e")]
    assert "extraction failed" in summary.bad[0].error and "'context'" in summary.bad[2].error
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["a", "b"] and rows[1]["model"] == "m2"
    assert [r["notes"] for r in rows] == [[], []]  # English, no transcript: no caution
    assert rows[0]["claims"][0]["evidence"][0]["text"] == "The bridge was built in 1820 by local masons."
    errors = [json.loads(line) for line in (tmp_path / "out.jsonl.errors.jsonl").read_text().splitlines()]
    assert [e["line"] for e in errors] == [3, 4, 5]
    saved = json.loads((tmp_path / "out.jsonl.summary.json").read_text())
    assert saved["model"]["m2"]["failed"] == 1 and saved["all"]["all"]["responses"] == 3

    again = check_file(FlakyExtractor(), checker, src, out)  # resumes: nothing new, the failure retried
    assert (again.checked, again.skipped_done, again.failed) == (0, 2, 1)
    assert len(out.read_text().splitlines()) == 2
    stricter = AlignmentChecker(LexicalScorer(), entail_threshold=0.95)  # same names, other verdicts: refused
    with pytest.raises(InputError, match=r"another configuration \(entail_threshold .* → 0\.95"):
        check_file(FlakyExtractor(), stricter, src, out)
    with pytest.raises(InputError, match="--overwrite"):
        check_file(SegmentExtractor("response"), checker, src, out)
    fresh = check_file(SegmentExtractor("response"), checker, src, out, overwrite=True, aggregation="majority")
    assert fresh.checked == 3


def test_check_file_rows_carry_their_own_notes(tmp_path) -> None:
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    french = ("Le pont a été construit en 1820 par des maçons de la ville. Il est le plus ancien pont de la région "
              "et il est encore utilisé par les habitants.")
    _write(src, [GOOD[0], {"id": "f", "context": french, "response": "Le pont a été construit en 1820."}])
    check_file(SegmentExtractor("sentence"), AlignmentChecker(LexicalScorer()), src, out)
    rows = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert rows["a"]["notes"] == []
    assert len(rows["f"]["notes"]) == 1 and "French" in rows["f"]["notes"][0]


# ---- the CLI ----------------------------------------------------------------------------------------------------


@pytest.fixture
def cli() -> typer.Typer:
    """The real faithwatch app (its `check` command)."""
    return cli_app


def test_cli_batch_with_a_bad_record(cli, tmp_path) -> None:
    src, out = tmp_path / "in.jsonl", tmp_path / "checked.jsonl"
    _write(src, [GOOD[0], GOOD[1], '{"id": "z", "response": "no context"}'])
    args = ["check", "-i", str(src), "-o", str(out), "--extractor", "sentence", "--checker", "alignment",
            "--alignment", "lexical", "--aggregate", "strict"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output
    assert "line 3 (id z)" in result.output and "'context' is missing" in result.output
    assert "by model" in result.output and "m2" in result.output
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["a", "b"]
    assert json.loads(out.read_text().splitlines()[0])["aggregate"] == "Entailment"


def test_cli_single_response_text_output(cli, tmp_path) -> None:
    (tmp_path / "ctx.txt").write_text(CTX)
    (tmp_path / "ans.txt").write_text("The bridge was built in 1820. It cost 7 million euros.")
    result = CliRunner().invoke(cli, ["check", "-c", str(tmp_path / "ctx.txt"), "-r", str(tmp_path / "ans.txt"),
                                      "--extractor", "sentence", "--checker", "alignment", "--alignment", "lexical",
                                      "-o", str(tmp_path / "new" / "one.json"), "--html", str(tmp_path / "one.html")])
    assert result.exit_code == 0, result.output  # its folder is made (it was a FileNotFoundError, after the check)
    assert "Entailment" in result.stdout and "hallucination rate 0.50" in result.stdout
    doc = json.loads((tmp_path / "new" / "one.json").read_text())
    assert doc["n_claims"] == 2
    page = (tmp_path / "one.html").read_text()
    assert page.count('<tr id="claim-') == 2 and "http" not in page.replace(
        "http-equiv", "")  # self-contained: nothing fetched at view time
    labels = [c["label"] for c in doc["claims"]]
    for i, label in enumerate(labels):
        assert f'<tr id="claim-{i}" data-claim="{i}">' in page and label in page
    # the supported claim's evidence is highlighted in the reference and tied to claim 0
    assert doc["claims"][0]["evidence"] and '<span class="ev" data-claims="0">' in page
    assert '<span class="claim" data-claims="0"' in page and '<span class="claim" data-claims="1"' in page


def test_the_aggregation_flag_has_the_name_the_output_and_the_server_give_it(cli, tmp_path) -> None:
    """``--aggregation`` (the JSON's and /v1/check's field) is ``--aggregate``; it was a usage error."""
    (tmp_path / "ctx.txt").write_text(CTX)
    (tmp_path / "ans.txt").write_text("The bridge was built in 1820. It cost 7 million euros.")
    base = ["check", "-c", str(tmp_path / "ctx.txt"), "-r", str(tmp_path / "ans.txt"), "--extractor", "sentence",
            "--checker", "alignment", "--alignment", "lexical"]
    for flag in ("--aggregate", "--aggregation"):
        result = CliRunner().invoke(cli, [*base, flag, "soft", "-o", str(tmp_path / f"{flag}.json")])
        assert result.exit_code == 0, result.output
        assert json.loads((tmp_path / f"{flag}.json").read_text())["aggregation"] == "soft"
    wrong = CliRunner().invoke(cli, [*base, "--aggregation", "mean"])
    assert wrong.exit_code == 2 and "--aggregate must be one of strict, soft, majority" in wrong.output


def test_cli_usage_errors(cli, tmp_path) -> None:
    (tmp_path / "c.txt").write_text(CTX)
    runner = CliRunner()
    html_batch = runner.invoke(cli, ["check", "-i", str(tmp_path / "c.txt"), "-o", "y.jsonl", "--html", "x.html"])
    assert html_batch.exit_code == 2 and "--html reports one response" in html_batch.output
    both = runner.invoke(cli, ["check", "-i", "x.jsonl", "-o", "y.jsonl", "-c", str(tmp_path / "c.txt")])
    assert both.exit_code == 2 and "not both" in both.output
    bad_choice = runner.invoke(cli, ["check", "-c", str(tmp_path / "c.txt"), "-r", str(tmp_path / "c.txt"),
                                     "--extractor", "word", "--checker", "alignment"])
    assert bad_choice.exit_code == 2 and "--extractor must be one of" in bad_choice.output
    missing = runner.invoke(cli, ["check", "-c", str(tmp_path / "nope.txt"), "-r", str(tmp_path / "c.txt"),
                                  "--extractor", "sentence", "--checker", "alignment", "--alignment", "lexical"])
    assert missing.exit_code == 2 and "not found" in missing.output


def test_check_extractor_auto_is_sentence_without_an_llm_and_triplet_with_one(cli, tmp_path) -> None:
    (tmp_path / "c.txt").write_text(CTX)
    (tmp_path / "r.txt").write_text("The tower is in Paris. It was finished in 1999.")
    base = ["check", "-c", str(tmp_path / "c.txt"), "-r", str(tmp_path / "r.txt"), "--checker", "alignment",
            "--alignment", "lexical"]
    plain = CliRunner().invoke(cli, [*base, "--json"])
    assert plain.exit_code == 0, plain.output
    doc = json.loads(plain.output)
    assert doc["extractor"] == "sentence" and [c["text"] for c in doc["claims"]] == [
        "The tower is in Paris.", "It was finished in 1999."]
    # an LLM named: triplets, so the LLM is loaded (here a folder that does not exist)
    named = CliRunner().invoke(cli, [*base, "--llm-model", str(tmp_path / "no-such-model")])
    assert named.exit_code == 3 and "model folder not found" in named.output  # 3: a model not available


def test_check_limits_context_size_like_monitor(cli, tmp_path) -> None:
    from faithwatch.claims.pipeline import fit_context

    assert fit_context(["ab", "cd"], 10) == (["ab", "cd"], 0)
    assert fit_context(["abc", "def", "ghi"], 5, truncate=True) == (["abc", "de"], 4)
    with pytest.raises(InputError, match="more than the limit of 5"):
        fit_context("abcdefgh", 5)
    (tmp_path / "ctx.txt").write_text("The tower is in Paris. " * 50)
    (tmp_path / "ans.txt").write_text("The tower is in Paris.")
    args = ["check", "-c", str(tmp_path / "ctx.txt"), "-r", str(tmp_path / "ans.txt"), "--extractor", "sentence",
            "--checker", "alignment", "--alignment", "lexical", "--max-context-chars", "100", "--json"]
    refused = CliRunner().invoke(cli, args)
    assert refused.exit_code == 2 and "more than the limit of 100" in refused.output
    cut = CliRunner().invoke(cli, [*args, "--truncate-context"])
    assert cut.exit_code == 0 and "1050 context characters cut" in cut.output
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"id": "long", "context": "x " * 100, "response": "x"}) + "\n"
                   + json.dumps({"id": "ok", "context": "The tower is in Paris.", "response": "It is in Paris."})
                   + "\n")
    batch = CliRunner().invoke(cli, ["check", "-i", str(src), "-o", str(tmp_path / "out.jsonl"), "--extractor",
                                     "sentence", "--checker", "alignment", "--alignment", "lexical",
                                     "--max-context-chars", "100"])
    assert batch.exit_code == 1 and "(id long)" in batch.output and "1 checked" in " ".join(batch.output.split())


class _FakeTextMonitor:
    """What DetectorChecker reads of a text-only monitor: a threshold and score_many (scores by passage)."""

    model_free, threshold = True, 0.5

    def __init__(self, by_passage: dict[str, tuple[float, dict]]) -> None:
        from types import SimpleNamespace

        self.by_passage, self.ns = by_passage, SimpleNamespace
        self.detector = SimpleNamespace(name="fake-detector")

    def score_many(self, records):
        out = []
        for _question, passage, text in records:
            score, features = self.by_passage[passage]
            out.append(self.ns(sentences=[self.ns(text=text, score=score, features=features)]))
        return out


def test_detector_checker_labels_as_the_monitor_flags():
    """At or above the detector's threshold: Entailment; below: Contradiction for a near copy with a changed value
    (edits), else Neutral; across passages the combine rule applies (one supports, one contradicts: Conflict)."""
    from faithwatch.claims.detector_check import DetectorChecker

    a, b, c = "The bridge opened in 1931.", "The bridge opened in 1934.", "Tolls ended in 1958."
    mon = _FakeTextMonitor({a: (0.8, {}), b: (0.2, {"edit_swap_num": 1.0}), c: (0.3, {"edit_swap_num": 0.0})})
    check = DetectorChecker(mon, "conflict")
    assert check.name == "detector:fake-detector"
    (ent,) = check.check([claim("The bridge opened in 1931.")], [a])
    assert ent.label == "Entailment" and ent.confidence == pytest.approx(0.8) and ent.scores["detector_score"] == 0.8
    assert ent.evidence[0].text == a and ent.evidence[0].label == "Entailment"
    (con,) = check.check([claim("The bridge opened in 1931.")], [b])
    assert con.label == "Contradiction" and con.confidence == pytest.approx(0.8)
    # what the claim changed in the passage sentence it copies, in the JSON too; none for other labels
    assert [ch.describe() for ch in con.evidence[0].changes] == ["'1931' for '1934' (number)"]
    assert con.to_dict()["evidence"][0]["changes"] == [
        {"kind": "number", "how": "replace", "claim": "1931", "context": "1934"}]
    assert ent.evidence[0].changes == () and "changes" not in ent.to_dict()["evidence"][0]
    (neu,) = check.check([claim("The bridge opened in 1931.")], [c])
    assert neu.label == "Neutral" and neu.confidence == pytest.approx(0.7)
    (both,) = check.check([claim("The bridge opened in 1931.")], [a, b])
    assert both.label == "Conflict" and len(both.evidence) == 2
    (first,) = DetectorChecker(mon, "max-entail").check([claim("The bridge opened in 1931.")], [b, a])
    assert first.label == "Entailment" and first.scores["detector_score"] == 0.8
    mon.model_free = False
    with pytest.raises(InputError, match="reads text only"):
        DetectorChecker(mon, "conflict")


def test_detector_checker_scores_what_no_passage_decides_against_the_passages_joined():
    """A claim Neutral under every passage is scored against the passages joined (as `monitor` reads them):
    Entailment there, with each passage's sentence as evidence; a decided claim is not scored again."""
    from faithwatch.claims.detector_check import DetectorChecker

    a, b = "Acme was founded in 1990.", "Acme employs 12,000 people."
    both = claim("Acme was founded in 1990 and employs 12,000 people.")
    mon = _FakeTextMonitor({a: (0.3, {}), b: (0.35, {}), f"{a}\n\n{b}": (0.7, {}), f"{b}\n\n{a}": (0.4, {})})
    (joined,) = DetectorChecker(mon, "conflict").check([both], [a, b])
    assert joined.label == "Entailment" and joined.confidence == pytest.approx(0.7)
    assert joined.scores["detector_score"] == pytest.approx(0.7)
    assert [(e.passage_index, e.text, e.label) for e in joined.evidence] == [(0, a, "Entailment"), (1, b, "Entailment")]
    # each passage's evidence is found by the words it alone holds: "12,000", not "Acme was founded" (in both)
    b2 = "Acme was founded as a workshop. Its staff numbers 12,000."
    mon.by_passage |= {b2: (0.35, {}), f"{a}\n\n{b2}": (0.7, {})}
    (found,) = DetectorChecker(mon, "conflict").check([both], [a, b2])
    assert [e.text for e in found.evidence] == [a, "Its staff numbers 12,000."]
    (below,) = DetectorChecker(mon, "conflict").check([both], [b, a])  # the joined score under the threshold
    assert below.label == "Neutral" and below.scores["detector_score"] == pytest.approx(0.4)
    mon.by_passage[b] = (0.2, {"edit_swap_num": 1.0})  # decided by a passage: never scored joined (no key needed)
    del mon.by_passage[f"{a}\n\n{b}"]
    (con,) = DetectorChecker(mon, "conflict").check([both], [a, b])
    assert con.label == "Contradiction"
    (one,) = DetectorChecker(_FakeTextMonitor({a: (0.3, {})}), "conflict").check([both], [a])
    assert one.label == "Neutral"  # one passage: nothing to join


def test_joined_evidence_comes_only_from_passages_that_add_a_word_of_the_claim():
    """A claim the joined passages support takes evidence from the passages that together hold its words: one
    that holds only words another chosen passage already gives ("Acme"), or none of its words, gives none."""
    from faithwatch.claims.detector_check import DetectorChecker

    a, b = "Acme was founded in 1990.", "Acme employs 12,000 people."
    shared, unrelated = "Acme opened a shop.", "Tolls ended in 1958."
    both = claim("Acme was founded in 1990 and employs 12,000 people.")
    refs = [shared, a, unrelated, b]
    mon = _FakeTextMonitor({r: (0.3, {}) for r in refs} | {"\n\n".join(refs): (0.7, {})})
    (joined,) = DetectorChecker(mon, "conflict").check([both], refs)
    assert joined.label == "Entailment"
    assert [(e.passage_index, e.text) for e in joined.evidence] == [(1, a), (3, b)]
    # a passage holding all the words is the only evidence, however many others hold some of them
    whole = "Acme, founded in 1990, employs 12,000 people."
    mon.by_passage |= {whole: (0.3, {}), f"{a}\n\n{whole}\n\n{b}": (0.7, {})}
    (one,) = DetectorChecker(mon, "conflict").check([both], [a, whole, b])
    assert [e.passage_index for e in one.evidence] == [1]


def test_the_claims_report_says_what_a_contradiction_changed(tmp_path):
    from faithwatch.claims.detector_check import DetectorChecker
    from faithwatch.report import write_claims_html

    passage = "The bridge opened in 1934."
    checker = DetectorChecker(_FakeTextMonitor({passage: (0.2, {"edit_swap_num": 1.0})}), "conflict")
    result = check_response("The bridge opened in 1931.", passage, SegmentExtractor("sentence"), checker)
    assert result.verdicts[0].label == "Contradiction"
    html = write_claims_html(tmp_path / "c.html", result, [passage]).read_text(encoding="utf-8")
    assert "changed: &#39;1931&#39; for &#39;1934&#39; (number)" in html


@pytest.mark.parametrize("args, message", [
    (["--checker", "nli", "--alignment", "lexical"], "--checker nli does not read --alignment (it reads --nli-model"),
    (["--checker", "alignment", "--combine", "max-entail"], "--checker alignment does not read --combine"),
    (["--checker", "alignment", "--chunk-tokens", "64"], "--checker alignment does not read --chunk-tokens"),
    (["--checker", "nli", "--entail-threshold", "0.9"], "--checker nli does not read --entail-threshold"),
    (["--checker", "alignment", "--llm-url", "http://127.0.0.1:9/v1"], "--llm-url is for an LLM"),
    (["--checker", "alignment", "--max-retries", "1"], "--max-retries is for an LLM"),
    (["--checker", "alignment", "--group-by", "model"], "--group-by is for a batch"),
])
def test_check_refuses_options_this_run_would_not_read(tmp_path, monkeypatch, args, message):
    # each was accepted and ignored: `--checker nli --alignment lexical` checked with the NLI model, silently
    import faithwatch.claims.checking as checking

    monkeypatch.setattr(checking, "get_checker", lambda *a, **k: pytest.fail("the checker was built"))
    (tmp_path / "c.txt").write_text("The bridge opened in 1931.")
    one = ["check", "-c", str(tmp_path / "c.txt"), "-r", str(tmp_path / "c.txt"), "--extractor", "sentence"]
    result = CliRunner().invoke(cli_app, [*one, *args])
    said = " ".join(result.output.split())
    assert result.exit_code == 2 and message in said, said


def test_check_refuses_one_response_options_in_a_batch(tmp_path):
    (tmp_path / "in.jsonl").write_text('{"context": "The bridge opened in 1931.", "response": "It opened."}\n')
    batch = ["check", "-i", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "o.jsonl"), "--checker", "alignment",
             "--alignment", "lexical", "--extractor", "sentence"]
    result = CliRunner().invoke(cli_app, [*batch, "--question", "When?", "--json"])
    said = " ".join(result.output.split())
    assert result.exit_code == 2 and "--question, --json are for one response" in said, said
    assert not (tmp_path / "o.jsonl").exists()
    assert CliRunner().invoke(cli_app, [*batch, "--group-by", "model"]).exit_code == 0


def test_check_detector_options_are_checked_before_loading(tmp_path):
    (tmp_path / "c.txt").write_text("The bridge opened in 1931.")
    runner = CliRunner()
    base = ["check", "-c", str(tmp_path / "c.txt"), "-r", str(tmp_path / "c.txt"), "--extractor", "sentence"]
    stray = runner.invoke(cli_app, [*base, "--checker", "alignment", "--detector", "default"])
    assert stray.exit_code == 2 and "--checker alignment does not read --detector" in stray.output
    unknown = runner.invoke(cli_app, [*base, "--checker", "detector", "--detector", str(tmp_path / "nowhere")])
    assert unknown.exit_code == 2 and "detector folder not found" in unknown.output


@pytest.mark.slow
def test_detector_checker_agrees_with_the_monitor_on_the_demo(tmp_path):
    """`check --checker detector` gives the verdict `monitor` gives: the demo's wrong dates are not Entailment."""
    from faithwatch.monitor import NO_MODEL, Monitor

    context = (Path(__file__).parents[1] / "examples" / "eiffel.txt").read_text(encoding="utf-8")
    wrong, right = "The Eiffel Tower was built between 1889 and 1890.", "It is 330 metres tall."
    checker = get_checker(CheckerSpec(kind="detector"))
    verdicts = checker.check([claim(wrong), claim(right)], [context])
    scores = Monitor(NO_MODEL).score_many([(None, context, wrong), (None, context, right)])
    assert [v.label for v in verdicts] == ["Neutral", "Entailment"]
    assert [v.scores["detector_score"] for v in verdicts] == pytest.approx([r.sentences[0].score for r in scores])
    assert scores[0].sentences[0].flagged and not scores[1].sentences[0].flagged
    config = checker.config()  # what a resumed batch output is bound to
    assert config["detector_content_hash"] and config["threshold"] == pytest.approx(checker.monitor.threshold)


CHAT = "Amanda: I baked cookies. Do you want some?\nJerry: Sure!\nAmanda: I'll bring you some tomorrow :-)\n"


@pytest.mark.parametrize(("text", "chat"), [
    (CHAT, True),
    ("PM: Let's start.\nMarketing: The survey is done.\n\nPM: Good, the results?\nMarketing: Mostly positive.", True),
    ("Name: Ada Lovelace\nBorn: 1815\nKnown for: the first program", False),  # a record of fields: no one speaks twice
    ("Title: Emma\nAuthor: Austen\nYear: 1815\nTitle: Dubliners\nAuthor: Joyce\nYear: 1914", False),  # records
    ("Ana: Hi all.\nBen: Hi.\nCy: Hello.\nAna: Shall we start?\nCy: Yes.\nBen: Fine.", True),  # three, not cyclic
    ("Amanda: I baked cookies.\nJerry: Sure!", False),  # two lines
    ("The tower was built in 1889.\nIt is 330 m tall.\nNote: it was repainted.", False),  # prose
    ("Amanda: I baked cookies.\nAmanda: More later.\nAmanda: Bye.", False),  # one speaker
    ("Q: Who built it?\nA: Eiffel's company.\nQ: When?\nA: 1887 to 1889.", True),  # a Q/A exchange is a dialogue
    ("[00:00:05] Speaker 1: Welcome.\n[00:00:09] Speaker 2: Thanks.\n[00:00:12] Speaker 1: Let's start.", True),
    ("[00:00:05] Ana: Welcome.\n[00:00:09] Ben: Thanks.\n(00:12) Ana: Let's start.", True),  # timed turns
    ("10:15 Ana: Welcome.\n10:16 Ben: Thanks.\n10:17 Ana: Let's start.", True),
])
def test_a_chat_transcript_is_told_from_prose_and_records(text, chat):
    from faithwatch.text import is_transcript

    assert is_transcript(text) is chat


def test_check_notes_a_chat_context_for_the_detector_only(tmp_path, monkeypatch, capsys):
    """The detector was measured at chance on chat summaries (FacEval): `check` says so for such a context."""
    import faithwatch.claims.checking as checking
    from faithwatch.claims.detector_check import DetectorChecker
    from faithwatch.cli import app as cli_app

    (tmp_path / "chat.txt").write_text(CHAT)
    prose = "Amanda baked cookies. She will bring Jerry some tomorrow."
    (tmp_path / "prose.txt").write_text(prose)
    (tmp_path / "r.txt").write_text("Jerry baked cookies.")
    monitor = _FakeTextMonitor({CHAT: (0.7, {}), prose: (0.7, {})})
    monkeypatch.setattr(checking, "get_checker", lambda spec, backend=None: DetectorChecker(monitor, "conflict"))
    runner = CliRunner()
    base = ["check", "-r", str(tmp_path / "r.txt"), "--extractor", "sentence"]
    chat = runner.invoke(cli_app, [*base, "-c", str(tmp_path / "chat.txt")], terminal_width=300)
    assert chat.exit_code == 0 and "the context reads as a chat or meeting transcript" in chat.output
    plain = runner.invoke(cli_app, [*base, "-c", str(tmp_path / "prose.txt")], terminal_width=300)
    assert plain.exit_code == 0 and "transcript" not in plain.output
    lexical = runner.invoke(cli_app, [*base, "-c", str(tmp_path / "chat.txt"), "--checker", "alignment",
                                      "--alignment", "lexical"], terminal_width=300)
    assert lexical.exit_code == 0 and "transcript" not in lexical.output
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in [
        {"id": "a", "context": CHAT, "response": "Jerry baked cookies."},
        {"id": "b", "context": [CHAT], "response": "Jerry baked cookies."},
        {"id": "c", "context": prose, "response": "Jerry."}])
        + "\n{torn\n")
    from faithwatch.cli._common import input_contexts, transcript_note

    assert len(list(input_contexts(src, check=True))) == 3  # the torn line is skipped
    assert len(list(input_contexts(src))) == 2  # as `score` reads it: passages are no context there
    transcript_note(input_contexts(src, check=True))  # what a batch run of `check` ends with
    assert "2 of 3 contexts read as a chat or meeting transcript" in " ".join(capsys.readouterr().err.split())
