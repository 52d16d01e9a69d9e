"""The self-contained HTML reports, clicked in a real browser (Debian Chromium via Playwright, no download).

Uses the tiny model and the lexical checker, so it is fast; skipped where Chromium is not installed.
"""

from __future__ import annotations

import shutil

import pytest

from faithwatch.alignment import LexicalScorer
from faithwatch.claims.checking import AlignmentChecker
from faithwatch.claims.extraction import SegmentExtractor
from faithwatch.claims.pipeline import check_response
from faithwatch.report import write_claims_html, write_response_html

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
CONTEXT = "The river Avon flows through the old town. The bridge was built in 1820 by local masons."
QUESTION = "When was the bridge built?"

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)")


@pytest.fixture
def browser_page():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            yield browser.new_page()
        finally:
            browser.close()


def test_response_report_click_opens_signals_and_evidence(browser_page, monitor, make_chooser, one_thread, tmp_path):
    result = monitor.score(QUESTION, CONTEXT, "The bridge was built in 1820. The river flows through the old town.")
    path = write_response_html(tmp_path / "r.html", result, question=QUESTION, context=CONTEXT)
    page = browser_page
    page.goto(path.as_uri())
    assert page.locator(".panel.open").count() == 0
    page.click("#sent-0")
    assert page.locator("#panel-0.open").count() == 1
    assert page.locator("#sent-0.active").count() == 1
    # the evidence of sentence 0 (the bridge sentence of the context) is highlighted, and only while selected
    highlighted = page.locator(".ctx.evidence")
    assert highlighted.count() >= 1 and "1820" in highlighted.first.inner_text()
    page.click("#sent-1")
    assert page.locator("#panel-0.open").count() == 0 and page.locator("#panel-1.open").count() == 1
    assert "Avon" in page.locator(".ctx.evidence").first.inner_text()


def test_claims_report_click_highlights_evidence(browser_page, tmp_path):
    check = check_response("The bridge was built in 1820. It cost 7 million euros.", CONTEXT,
                           SegmentExtractor("sentence"), AlignmentChecker(LexicalScorer()))
    path = write_claims_html(tmp_path / "c.html", check, CONTEXT, question=QUESTION)
    page = browser_page
    page.goto(path.as_uri())
    assert page.locator("#claims tr[data-claim]").count() == 2
    assert page.locator(".active").count() == 0
    page.click("#claim-0")
    active = page.locator(".ev.active")
    assert active.count() >= 1 and "1820" in active.first.inner_text()
    assert page.locator("#response .claim.active").first.inner_text().startswith("The bridge")
    page.click("#response .claim >> nth=1")  # the other claim: only its own evidence stays highlighted
    assert page.locator("#claim-1.active").count() == 1 and page.locator("#claim-0.active").count() == 0
    cited = page.locator(".ev.active").evaluate_all("els => els.map(e => e.dataset.claims.split(' '))")
    assert all("1" in c for c in cited)
