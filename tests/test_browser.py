"""End to end in a real browser: `faithwatch serve` with the embedded model, the page driven in headless Chromium.

Uses Debian's Chromium (`apt-get install chromium`, done by .ci/run) through Playwright's `executable_path`, so no
browser is downloaded. Marked slow: it loads the real embedded model. The screenshot is saved for people to look at.
"""

from __future__ import annotations

import json
import os
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
const pageFetch = window.fetch.bind(window);
window.fetch = async (resource, init) => {
  const response = await pageFetch(resource, init);
  if (String(resource).includes("/v1/monitor")) {
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


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)")
def test_page_streams_coloured_sentences(server, tmp_path):
    from playwright.sync_api import sync_playwright

    context_text = (ROOT / "examples" / "eiffel.txt").read_text()
    with urllib.request.urlopen(server + "/healthz", timeout=10) as response:
        threshold = json.load(response)["threshold"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 1000})
            page.add_init_script(TAP_STREAM)
            page.goto(server + "/")
            page.wait_for_function("document.getElementById('health').textContent.includes('detector')",
                                   timeout=60_000)
            page.fill("#context", context_text)
            page.fill("#question", "When was the Eiffel Tower built?")
            page.fill("#maxtok", "48")
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
            sentences = [data for kind, data in events if kind == "sentence"]
            assert sentences, kinds

            # one span per streamed sentence, in order, holding exactly its text, titled with its score
            spans = page.locator("#answer span.s")
            assert spans.all_text_contents() == [s["text"] for s in sentences]
            assert page.locator("#answer").text_content() == "".join(s["text"] for s in sentences)
            for i, s in enumerate(sentences):
                span = spans.nth(i)
                assert span.get_attribute("title") == f"score {_fixed3(s['score'])}"
                assert span.get_attribute("class") == f"s {_colour_class(s['score'], threshold)}"
            assert f" · {len(sentences)} sentences · " in status
            first = spans.first
            colour = first.evaluate("el => getComputedStyle(el).backgroundColor")
            assert colour == COLOURS[_colour_class(sentences[0]["score"], threshold)], colour

            # clicking a sentence shows its index, score, flag and text
            first.click()
            page.wait_for_selector("#details h3", timeout=10_000)
            s = sentences[0]
            flag = " — flagged" if s["flagged"] else ""
            heading = f"Sentence {s['index']}: score {_fixed3(s['score'])}{flag}"
            assert page.locator("#details h3").text_content() == heading
            assert page.locator("#details p").first.text_content() == s["text"]
            assert "sel" in first.get_attribute("class").split()

            page.screenshot(path=str(tmp_path / "page.png"), full_page=True)
            if os.environ.get("FAITHWATCH_SCREENSHOTS"):  # e.g. docs/screenshots, to refresh the README picture
                target = Path(os.environ["FAITHWATCH_SCREENSHOTS"])
                target.mkdir(parents=True, exist_ok=True)
                shutil.copy(tmp_path / "page.png", target / "web-page.png")
            assert (tmp_path / "page.png").stat().st_size > 10_000
        finally:
            browser.close()
