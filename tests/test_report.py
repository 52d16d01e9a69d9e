"""HTML reports: one response (monitor / decoding) and one dataset evaluation, self-contained and escaped."""

from __future__ import annotations

import base64
import html
import re
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
from markupsafe import escape
from typer.testing import CliRunner

from faithwatch.cli import app
from faithwatch.decoding.types import REFUSAL, DecodingResult, TraceEvent
from faithwatch.eval.metrics import MetricCI
from faithwatch.eval.report import write_report
from faithwatch.report import dataset_html, response_html, write_dataset_html
from faithwatch.report.response import content_words, evidence_for, score_colour, split_context
from faithwatch.results import SentenceReport

CONTEXT = ("The river Avon flows through the old town. The bridge was built in 1820 by local masons. "
           "<script>alert('x')</script> The market opens at nine.")
QUESTION = "When was the bridge built? <script>alert(1)</script>"
VOID = {"meta", "br", "img", "input", "hr", "link", "col", "area", "base", "wbr", "source"}


class _Checker(HTMLParser):
    """Collects tags, checks they nest properly, and records every src/href."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.urls: list[str] = []
        self.sent_spans: list[dict[str, str | None]] = []
        self.scripts = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.urls += [v or "" for k, v in attrs if k in ("src", "href")]
        if tag == "script":
            self.scripts += 1
            if "src" in a:
                self.errors.append("external script")
        if tag == "span" and "sent" in (a.get("class") or "").split():
            self.sent_spans.append(a)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unexpected </{tag}> (open: {self.stack[-3:]})")
        else:
            self.stack.pop()


def _check(page: str) -> _Checker:
    assert page.startswith("<!DOCTYPE html>")
    parser = _Checker()
    parser.feed(page)
    parser.close()
    assert not parser.errors, parser.errors
    assert parser.stack == [], parser.stack
    assert "http://" not in page and "https://" not in page  # nothing fetched at view time
    assert all(u.startswith(("#", "data:image/png;base64,")) for u in parser.urls), parser.urls
    return parser


def test_evidence_is_content_word_jaccard():
    ctx = split_context(CONTEXT)
    assert [c.text for c in ctx][:2] == ["The river Avon flows through the old town.",
                                        "The bridge was built in 1820 by local masons."]
    assert all(CONTEXT[c.start:c.end] == c.text for c in ctx)
    assert content_words("The bridge was built in 1820.") == {"bridge", "built", "1820"}
    best = evidence_for("The bridge was built in 1820.", ctx)
    assert best[0][0] == 1 and 0 < best[0][1] <= 1
    assert evidence_for("Yes, it is.", ctx) == []
    assert score_colour(0.0) == "hsl(0, 75%, 78%)" and score_colour(1.0) == "hsl(120, 75%, 78%)"
    assert score_colour(None) == "#dddddd"


def test_response_html_from_monitor(monitor, make_chooser, one_thread):
    result = monitor.generate(QUESTION, CONTEXT, max_new_tokens=24, choose=make_chooser())
    assert len(result.sentences) >= 2
    page = response_html(result, question=QUESTION, context=CONTEXT, title="t <b>")
    parser = _check(page)
    assert "<script>alert" not in page  # question and context escaped
    assert html.escape(QUESTION, quote=False) in page and "&lt;script&gt;alert(&#39;x&#39;)" in page
    assert "t &lt;b&gt;" in page
    assert parser.scripts == 1  # only the inline one
    assert len(parser.sent_spans) == len(result.sentences)
    for s, span in zip(result.sentences, parser.sent_spans, strict=True):
        assert str(escape(s.text)) in page
        assert span["style"] == f"background: {score_colour(s.score)}"
        assert f"score {s.score:.3f}" in (span["title"] or "")
        assert ("flagged" in (span["class"] or "")) == s.flagged
    assert f'id="panel-{len(result.sentences) - 1}"' in page
    assert result.model_id in page and result.detector in page


def _sentence(text: str, start: int, score: float, flagged: bool) -> SentenceReport:
    return SentenceReport(0, text, start, start + len(text), 0, 1, {"align_score": 0.123456, "lid": None}, score,
                          flagged, "fake-detector")


def test_response_html_decoding_trace_and_refusal():
    sentences = [_sentence(REFUSAL, 0, 0.2, True)]
    trace = [
        TraceEvent("candidate", 0, "The bridge is from 1990.", 0.31, beam=0),
        TraceEvent("backtrack", 0, "The bridge is from 1990.", 0.31, reason="below tau1"),
        TraceEvent("prune", 0, "It was <em>old</em>.", 0.4, beam=1, reason="below tau2"),
        TraceEvent("refuse", 0, "", None, reason="no candidate above the abstain threshold"),
    ]
    result = DecodingResult("fod", REFUSAL, True, sentences, trace, 9, 40, "refused", {"tau1": 0.7}, "fake-detector")
    page = response_html(result, question="q?", context=CONTEXT, meta={"model": "tiny"})
    _check(page)
    rows = re.findall(r'<tr class="ev-(\w+)"', page)
    assert rows == ["candidate", "backtrack", "prune", "refuse"]
    assert 'id="refusal"' in page and "REFUSED" in page
    assert "It was &lt;em&gt;old&lt;/em&gt;." in page and "below tau2" in page
    assert "fod" in page and "tiny" in page and "0.123" in page and "0.123456" not in page
    assert 'id="notes"' not in page  # no cautions: no notes box


def test_response_html_shows_the_results_notes():
    """The notes of a result (a cut context, a transcript, an over-long sentence) are on the page, escaped."""
    notes = ["the context's last 7 tokens were cut to fit the model's window: <judged> against the rest only."]
    result = DecodingResult("greedy", "The bridge opened in 1820.", False, [_sentence("The bridge opened in 1820.", 0,
                            0.9, False)], [], 6, 6, "eos", {}, "fake-detector", context_tokens_cut=7, notes=notes)
    page = response_html(result, question="q?", context=CONTEXT)
    _check(page)
    assert 'id="notes"' in page and "last 7 tokens were cut" in page and "&lt;judged&gt;" in page
    assert re.search(r"context tokens cut</td><td>7<", page)


@pytest.fixture
def results_dir(tmp_path):
    rng = np.random.default_rng(0)
    labels = np.array([0, 1] * 20)
    scores = labels + rng.normal(0, 0.8, len(labels))
    table = pd.DataFrame({"method": ["syncheck", "flare <x>"], "auroc": [MetricCI(0.712, 0.68, 0.741), None],
                          "n": [40, 40]})
    other = pd.DataFrame({"model": ["m1"], "auroc": [0.5]})
    write_report(tmp_path, "tiny eval", {"toy · sentence level": table, "by source model": other},
                 {"toy": {"syncheck": (labels, scores)}}, {"seed": 0})
    return tmp_path


def test_dataset_html_embeds_png(results_dir):
    page = dataset_html(results_dir / "results.json")
    _check(page)
    for name in ("roc_toy.png", "hist_toy.png"):  # the ROC curve and the score histogram
        png = (results_dir / name).read_bytes()
        assert "data:image/png;base64," + base64.b64encode(png).decode("ascii") in page
    assert "0.712 [0.680, 0.741]" in page and "n/a" in page and "flare &lt;x&gt;" in page
    assert "toy · sentence level" in page and "by source model" in page
    out = write_dataset_html(results_dir)
    assert out.name == "index.html" and out.read_text(encoding="utf-8") == page


def test_dataset_html_replots_missing_png(results_dir):
    (results_dir / "roc_toy.png").unlink()
    page = dataset_html(results_dir / "results.json")
    _check(page)
    # the re-plotted ROC curve and the histogram PNG that is still there
    assert page.count("data:image/png;base64,") == 2 and "re-plotted" in page
    (results_dir / "hist_toy.png").unlink()
    page = dataset_html(results_dir / "results.json")
    assert page.count("data:image/png;base64,") == 1  # a missing histogram is not invented


def test_cli_monitor_html(tiny_model_dir, tmp_path, one_thread):
    ctx = tmp_path / "ctx.txt"
    ctx.write_text(CONTEXT)
    out = tmp_path / "sub" / "answer.html"
    result = CliRunner().invoke(app, ["monitor", "-c", str(ctx), "-q", QUESTION, "--model", str(tiny_model_dir),
                                      "--alignment", "lexical", "--max-new-tokens", "10", "--html", str(out)])
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    _check(page)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_cli_generate_html(monitor, tmp_path, monkeypatch, one_thread):
    import faithwatch.monitor

    monkeypatch.setattr(faithwatch.monitor, "Monitor", lambda *args, **kwargs: monitor)  # the tiny model
    ctx = tmp_path / "ctx.txt"
    ctx.write_text(CONTEXT)
    out = tmp_path / "out.html"
    result = CliRunner().invoke(app, ["generate", "-c", str(ctx), "-q", QUESTION, "--strategy", "fod", "--beams", "1",
                                      "--samples", "2", "--max-new-tokens", "12", "--html", str(out)])
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    _check(page)
    assert 'id="trace"' in page and "fod" in page and monitor.lm.model_id in page
