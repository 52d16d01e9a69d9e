"""End to end in a real browser: `faithwatch serve` with the embedded model, the page driven in headless Chromium.

Uses Debian's Chromium (`apt-get install chromium`, done by .ci/run) through Playwright's `executable_path`, so no
browser is downloaded. Marked slow: it loads the real embedded model. The screenshot is saved for people to look at.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ROOT = Path(__file__).resolve().parent.parent
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def server():
    port = _free_port()
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "faithwatch.server", "--host", "127.0.0.1", "--port", str(port)],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 180
        while time.time() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"server exited: {proc.stderr.read().decode()[-2000:]}")
            try:
                with urllib.request.urlopen(url + "/healthz", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("server did not start within 180 s")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


# Installed before the page's own script: keeps a copy of everything the server streams to /v1/monitor, read from a
# clone of the response (the page reads the original), so the test compares the page with the exact stream.
TAP_STREAM = """
window.__streamed = null;
window.__sent = null;
const pageFetch = window.fetch.bind(window);
window.fetch = async (resource, init) => {
  const response = await pageFetch(resource, init);
  if (String(resource).includes("/v1/monitor")) {
    window.__sent = init && init.body ? JSON.parse(init.body) : null;
    response.clone().text().then((text) => { window.__streamed = text; }, (e) => { window.__streamed = "!" + e; });
  }
  return response;
};
"""


def _sse_events(text: str) -> list[tuple[str, dict]]:
    """(event, data) of a text/event-stream body, parsed as the page parses it (comments have no data)."""
    events = []
    for block in text.split("\n\n"):
        event, data = "message", ""
        for line in block.split("\n"):
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                data += line[6:]
        if data:
            events.append((event, json.loads(data)))
    return events


def _fixed3(x: float) -> str:
    """JavaScript's ``x.toFixed(3)`` for x >= 0 (exact binary value, ties away from zero)."""
    return str(Decimal(x).quantize(Decimal("0.001"), rounding=ROUND_HALF_UP))


#: the background of each sentence class in the page's stylesheet (.s.ok, .s.warn, .s.bad)
COLOURS = {"ok": "rgb(218, 251, 225)", "warn": "rgb(255, 248, 197)", "bad": "rgb(255, 235, 233)"}


def _colour_class(score: float, threshold: float) -> str:
    """The page's ``cls(score)``."""
    return "bad" if score < threshold else ("ok" if score >= 0.7 else "warn")


CUT = "cut off by the token limit"


def _ask(page, question: str, max_new_tokens: int) -> tuple[str, list[tuple[str, dict]]]:
    """Ask on the page (live monitor stream), wait until the whole stream is rendered; the status and the events."""
    page.evaluate("window.__streamed = null")
    page.fill("#question", question)
    page.fill("#maxtok", str(max_new_tokens))
    page.click("#run")
    page.wait_for_selector("#answer span.s", timeout=120_000)
    # the whole stream has been read and rendered: the button comes back after the last event
    page.wait_for_function("window.__streamed !== null && !document.getElementById('run').disabled",
                           timeout=120_000)
    status = page.locator("#status").text_content()
    assert status.startswith("done in"), status
    streamed = page.evaluate("window.__streamed")
    assert not streamed.startswith("!"), streamed
    events = _sse_events(streamed)
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "start" and kinds[-1] == "summary" and "error" not in kinds, kinds
    return status, events


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)")
def test_page_streams_coloured_sentences(server, tmp_path):
    from playwright.sync_api import sync_playwright

    context_text = (ROOT / "examples" / "eiffel.txt").read_text()
    with urllib.request.urlopen(server + "/healthz", timeout=10) as response:
        threshold = json.load(response)["threshold"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 1000}, accept_downloads=True)
            page.add_init_script(TAP_STREAM)
            page.goto(server + "/")
            page.wait_for_function("document.getElementById('health').textContent.includes('detector')",
                                   timeout=60_000)

            # the legend says what the score is, names the threshold and explains the colours
            legend = page.locator("#legend")
            assert legend.is_visible()
            words = " ".join(legend.text_content().split())
            assert "detector's probability" in words and "faithful to the context" in words, words
            assert f"below the threshold {_fixed3(threshold)}, so flagged" in words, words
            assert all(w in words for w in ("Red", "Yellow", "Green", "dashed border", CUT)), words

            # the embedded model answers this in two sentences and is stopped by the budget inside the second
            page.fill("#context", context_text)
            status, events = _ask(page, "Who designed the Eiffel Tower and how tall is it?", 44)
            sentences = [data for kind, data in events if kind == "sentence"]
            summary = events[-1][1]
            response = summary["response"]
            assert len(sentences) >= 2, sentences
            assert summary["stop_reason"] == "max_new_tokens", summary

            # one span per streamed sentence, in order, holding exactly its text, titled with its score
            spans = page.locator("#answer span.s")
            assert spans.all_text_contents() == [s["text"] for s in sentences]
            # ... and between them the generated characters: the answer reads as the response does ("France. It")
            answer = page.locator("#answer").text_content()
            assert answer == response[sentences[0]["start"]:sentences[-1]["end"]]
            for before, after in zip(sentences, sentences[1:], strict=False):
                gap = response[before["end"]:after["start"]]
                assert gap and not gap.strip(), (before, after)  # the model did separate them
                assert before["text"] + gap + after["text"] in answer, answer
            last = len(sentences) - 1
            for i, s in enumerate(sentences):
                span = spans.nth(i)
                cut = f" · {CUT}" if i == last else ""
                assert span.get_attribute("title") == f"score {_fixed3(s['score'])}{cut}"
                marks = " cut" if i == last else ""
                assert span.get_attribute("class") == f"s {_colour_class(s['score'], threshold)}{marks}"
            assert f" · {len(sentences)} sentences · " in status
            assert status.endswith("stop: max_new_tokens"), status
            first = spans.first
            colour = first.evaluate("el => getComputedStyle(el).backgroundColor")
            assert colour == COLOURS[_colour_class(sentences[0]["score"], threshold)], colour

            # the sentence cut off by the token budget is marked as such: dashed border and a note
            border = "el => getComputedStyle(el).borderTopStyle"
            assert spans.nth(last).evaluate(border) == "dashed"
            assert first.evaluate(border) != "dashed"
            note = page.locator("#cutnote")
            assert note.is_visible() and CUT in note.text_content(), note.text_content()

            # clicking a sentence shows its index, score, flag and text, and only the signals it has a value for
            first.click()
            page.wait_for_selector("#details h3", timeout=10_000)
            s = sentences[0]
            flag = " — flagged" if s["flagged"] else ""
            heading = f"Sentence {s['index']}: score {_fixed3(s['score'])}{flag}"
            assert page.locator("#details h3").text_content() == heading
            assert page.locator("#details p").first.text_content() == s["text"]
            assert "sel" in first.get_attribute("class").split()
            rows = page.locator("#details table tr").evaluate_all(
                "trs => trs.slice(1).map(tr => Array.from(tr.cells, (c) => c.textContent))")
            assert [name for name, _ in rows] == [k for k, v in s["features"].items() if v is not None], rows
            assert all(value.strip() not in ("", "—") for _, value in rows), rows

            page.screenshot(path=str(tmp_path / "page.png"), full_page=True)
            if os.environ.get("FAITHWATCH_SCREENSHOTS"):  # e.g. docs/screenshots, to refresh the README picture
                target = Path(os.environ["FAITHWATCH_SCREENSHOTS"])
                target.mkdir(parents=True, exist_ok=True)
                shutil.copy(tmp_path / "page.png", target / "web-page.png")
            assert (tmp_path / "page.png").stat().st_size > 10_000

            spans.nth(last).click()
            page.wait_for_function(f"document.querySelector('#details h3').textContent.startsWith('Sentence {last}')",
                                   timeout=10_000)
            assert page.locator("#details h3").text_content().endswith(f" — {CUT}")

            # the downloaded report keeps the spaces, marks the cut sentence and lists no absent signals
            with page.expect_download(timeout=10_000) as download:
                page.click("#download")
            report = Path(download.value.path()).read_text(encoding="utf-8")
            report_text = html.unescape(re.sub(r"<[^>]+>", "", report))
            assert response[sentences[0]["start"]:sentences[-1]["end"]] in report_text
            assert CUT in report_text and f"threshold {_fixed3(threshold)}" in report_text
            absent = [k for k, v in s["features"].items() if v is None]
            assert not any(f"<td>{k}</td>" in report for k in absent), absent

            # a generation that ends by itself marks nothing as cut off
            status, events = _ask(page, "How tall is the Eiffel Tower?", 24)
            assert events[-1][1]["stop_reason"] == "eos", events[-1]
            assert page.locator("#answer span.s").count() == sum(kind == "sentence" for kind, _ in events)
            assert page.locator("#answer span.s.cut").count() == 0
            assert not page.locator("#cutnote").is_visible()
            assert "instruction" not in page.evaluate("window.__sent")  # blank: the server's default applies

            # an instruction typed in the optional field goes with the request, and into the downloaded report
            told = "Answer in one short sentence, with the height in metres."
            page.fill("#instruction", told)
            _ask(page, "How tall is the Eiffel Tower?", 12)
            assert page.evaluate("window.__sent")["instruction"] == told
            with page.expect_download(timeout=10_000) as download:
                page.click("#download")
            assert told in html.unescape(Path(download.value.path()).read_text(encoding="utf-8"))
            page.fill("#instruction", "")

            # the characters between sentences are the generated ones (a blank line stays one), found by offsets
            # that count code points as Python does (an emoji is two UTF-16 units in JavaScript)
            text = "Paris \U0001f5fc is in France.\n\nIt was built in 1889."
            cut = text.index("It")
            parts = [(0, text[:cut].rstrip()), (cut, text[cut:])]
            for i, (start, part) in enumerate(parts):
                parts[i] = {"index": i, "text": part, "start": start, "end": start + len(part), "score": 0.9,
                            "flagged": False, "features": {}}
            answer = page.evaluate("""([parts, text]) => {
                run.sentences = []; run.spans = []; run.gaps = []; $("answer").innerHTML = "";
                parts.forEach(addSentence); settleAnswer(text);
                return $("answer").textContent; }""", [parts, text])
            assert answer == text
        finally:
            browser.close()


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)")
def test_a_refusal_shows_what_came_closest(server):
    """/v1/generate's refusal on the page: the response's ``closest`` sentence (the best-scored of the trace) and
    tau2, as the CLI prints them; and a response's ``notes``."""
    from playwright.sync_api import sync_playwright

    refused = {"refused": True, "answer": "I cannot answer this faithfully from the given context.", "sentences": [],
               "params": {"tau2": 0.6}, "trace": [
                   {"kind": "backtrack", "step": 0, "text": "Built in <1920>.", "score": 0.31},
                   {"kind": "candidate", "step": 0, "text": "Built in 1889.", "score": 0.58},
                   {"kind": "prune", "step": 0, "text": "Built in 1889.", "score": 0.58},
                   {"kind": "refuse", "step": 0, "text": "", "score": None}]}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            page = browser.new_page()
            page.goto(server + "/")
            page.evaluate("(result) => showClosest(result)", {**refused, "closest": refused["trace"][1]})
            assert page.locator("#closest").text_content() == "Closest to passing: 0.58 “Built in 1889.” (tau2 = 0.6)."
            page.evaluate("(result) => { document.getElementById('details').innerHTML = ''; showClosest(result); }",
                          {**refused, "trace": refused["trace"][:1], "closest": refused["trace"][0], "params": {}})
            assert page.locator("#closest").text_content() == "Closest to passing: 0.31 “Built in <1920>.”."
            assert "&lt;1920&gt;" in page.locator("#closest").inner_html()  # the text is escaped, not markup

            # the server's notes (a chat transcript as the context) are shown under the answer, and cleared
            assert not page.locator("#notes").is_visible()
            page.evaluate("(r) => showNotes(r)", {"notes": ["the context reads as a <chat> transcript."]})
            assert page.locator("#notes").is_visible()
            assert page.locator("#notes").text_content() == "Note: the context reads as a <chat> transcript."
            page.evaluate("(r) => showNotes(r)", {"notes": []})
            assert not page.locator("#notes").is_visible()
        finally:
            browser.close()
