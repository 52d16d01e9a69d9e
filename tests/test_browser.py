"""End to end in a real browser: `faithwatch serve` with the embedded model, the page driven in headless Chromium.

Uses Debian's Chromium (`apt-get install chromium`, done by .ci/run) through Playwright's `executable_path`, so no
browser is downloaded. Marked slow: it loads the real embedded model. The screenshot is saved for people to look at.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
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


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)")
def test_page_streams_coloured_sentences(server, tmp_path):
    from playwright.sync_api import sync_playwright

    context_text = (ROOT / "examples" / "eiffel.txt").read_text()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 1000})
            page.goto(server + "/")
            page.wait_for_function("document.getElementById('health').textContent.includes('detector')",
                                   timeout=60_000)
            page.fill("#context", context_text)
            page.fill("#question", "When was the Eiffel Tower built?")
            page.fill("#maxtok", "48")
            page.click("#run")
            page.wait_for_selector("#answer span.s", timeout=120_000)
            page.wait_for_function("!document.getElementById('download').disabled", timeout=60_000)
            spans = page.locator("#answer span.s")
            assert spans.count() >= 1
            first = spans.first
            assert "Eiffel" in first.inner_text() or len(first.inner_text()) > 10
            colour = first.evaluate("el => getComputedStyle(el).backgroundColor")
            assert colour not in ("rgba(0, 0, 0, 0)", "transparent"), colour
            first.click()
            page.wait_for_selector("#details :text('score')", timeout=10_000)
            page.screenshot(path=str(tmp_path / "page.png"), full_page=True)
            if os.environ.get("FAITHWATCH_SCREENSHOTS"):  # e.g. docs/screenshots, to refresh the README picture
                target = Path(os.environ["FAITHWATCH_SCREENSHOTS"])
                target.mkdir(parents=True, exist_ok=True)
                shutil.copy(tmp_path / "page.png", target / "web-page.png")
            assert (tmp_path / "page.png").stat().st_size > 10_000
        finally:
            browser.close()
