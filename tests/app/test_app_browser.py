"""`contam app` end to end: the real server on 127.0.0.1 (a subprocess of ``contam app``), driven
in headless Chromium with Playwright: the fixture's eval set pasted and its two corpus files
uploaded, a scan, the flagged rows in the table, the leaked span highlighted in the evidence,
every request made to the server alone, and no file left in the server's temp dir, HOME or
working directory. Leaves a screenshot in ``$CONTAM_TEST_ARTIFACTS`` (default
``build/test-artifacts/``).

Skipped without Debian's ``chromium`` at /usr/bin/chromium, without the ``playwright`` package
(its own browser download is never used) or without streamlit (the ``app`` extra).
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import CD, ROOT

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
BENCH = CD / "examples" / "benchmark.jsonl"
CORPUS = sorted((CD / "examples" / "corpus").iterdir())

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="no /usr/bin/chromium (apt-get install -y chromium)"
    ),
    pytest.mark.skipif(
        importlib.util.find_spec("playwright") is None,
        reason="playwright is not installed (pip install playwright; no `playwright install`)",
    ),
    pytest.mark.skipif(
        importlib.util.find_spec("streamlit") is None,
        reason='streamlit is not installed (pip install "contam-cli[app]")',
    ),
]


def artifacts() -> Path:
    out = Path(os.environ.get("CONTAM_TEST_ARTIFACTS") or ROOT / "build" / "test-artifacts")
    out.mkdir(parents=True, exist_ok=True)
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """`contam app` in a subprocess, with its own temp dir, HOME and working directory."""

    def __init__(self, root: Path) -> None:
        self.dirs = {d: root / d for d in ("tmp", "home", "cwd")}
        for d in self.dirs.values():
            d.mkdir()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.log = root / "server.log"
        env = dict(
            os.environ,
            TMPDIR=str(self.dirs["tmp"]),
            HOME=str(self.dirs["home"]),
            PYTHONPATH=str(ROOT),
            CONTAM_APP_MAX_SECONDS="60",
        )
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "contam_cli", "app", "--port", str(self.port)],
                cwd=self.dirs["cwd"],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def wait_ready(self, seconds: float = 60) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                log = self.log.read_text(encoding="utf-8")
                pytest.fail(f"contam app exited {self.proc.returncode}: {log}")
            try:
                with urllib.request.urlopen(self.url + "_stcore/health", timeout=2) as r:
                    if r.read() == b"ok":
                        return
            except OSError:
                time.sleep(0.3)
        pytest.fail(
            f"contam app did not answer in {seconds} s: {self.log.read_text(encoding='utf-8')}"
        )

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def files_left(self) -> dict[str, list[str]]:
        return {k: sorted(p.name for p in d.rglob("*")) for k, d in self.dirs.items()}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    srv = Server(tmp_path)
    try:
        srv.wait_ready()
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"),
            executable_path=str(CHROMIUM),
            args=ARGS,
            headless=True,
            viewport={"width": 1400, "height": 2600},
        )
        yield context
        context.close()


def settle(page: Any) -> None:
    """Wait until the page is connected and its script has finished running.

    A widget used while a rerun is under way can be lost: a text typed into an element the
    rerun replaces, or a button's click coalesced into the rerun an upload asked for (both
    seen on a loaded machine). Streamlit marks its root element with the script's state.
    """
    app = '[data-testid="stApp"]'
    page.wait_for_selector(f'{app}[data-test-connection-state="CONNECTED"]', state="attached")
    page.wait_for_selector(f'{app}[data-test-script-state="notRunning"]', state="attached")
    # NOTE: the rerun a widget asks for may not have been requested yet; wait a moment, and
    # for that rerun too (as Streamlit's own end-to-end tests do).
    page.wait_for_timeout(250)
    page.wait_for_selector(f'{app}[data-test-script-state="notRunning"]', state="attached")


def test_paste_upload_scan_and_see_the_leaked_span(server: Server, browser: Any) -> None:
    page = browser.new_page()
    page.set_default_timeout(60_000)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(server.url)
    page.wait_for_selector("textarea")
    settle(page)
    pasted = BENCH.read_text(encoding="utf-8")
    eval_box = page.locator("textarea").nth(0)
    eval_box.fill(pasted)
    eval_box.press("Control+Enter")
    settle(page)
    uploaded: list[str] = []
    page.on(
        "requestfinished",
        lambda r: uploaded.append(r.url) if "/_stcore/upload_file/" in r.url else None,
    )
    page.locator('input[type="file"]').nth(1).set_input_files([str(p) for p in CORPUS])
    for p in CORPUS:
        page.get_by_text(p.name).first.wait_for(timeout=30_000)
    deadline = time.monotonic() + 60
    while len(uploaded) < len(CORPUS) and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    assert len(uploaded) == len(CORPUS), uploaded
    settle(page)
    assert eval_box.input_value() == pasted
    cells = page.locator('[data-testid="stDataFrame"] [role="gridcell"]')
    for attempt in (1, 2):
        page.get_by_role("button", name="Scan").click()
        # NOTE: the grid draws on a canvas; its cells are in the DOM for assistive technology
        # only. A scan that a loaded machine keeps past the time budget is stopped with a
        # message (contam_cli/app/run.py), and the user can scan again: once here, and only
        # for that message.
        try:
            cells.first.wait_for(state="attached", timeout=75_000)
            break
        except Exception as exc:  # noqa: BLE001 - a timeout: say what the page showed instead
            shown = page.locator("body").inner_text()
            if attempt == 1 and "time budget" in shown:
                continue
            log = server.log.read_text(encoding="utf-8")[-4000:]
            pytest.fail(f"no result table ({exc}); the page shows:\n{shown[-2000:]}\n{log}")
    text = [cells.nth(i).text_content() for i in range(cells.count())]
    # NOTE: these cells hold the raw numbers (1, not the 1.000 drawn on the canvas).
    rows = [text[i : i + 7] for i in range(0, len(text), 7)]
    assert [(r[0], r[2], r[4], r[5], r[6]) for r in rows[:2]] == [
        ("q1", "23", "FLAGGED", "overlap 1.000 >= 0.5", "doc_contaminated.txt:3"),
        ("q2", "23", "FLAGGED", "overlap 1.000 >= 0.5", "doc_contaminated.txt:8"),
    ]
    assert [(r[0], r[4]) for r in rows[2:]] == [("q3", ""), ("q4", ""), ("q5", "")]
    assert page.get_by_text("5 examples: 2 flagged, 3 clean, 0 unscorable").first.is_visible()
    report = page.frame_locator('iframe[title="contam HTML report"]')
    marks = report.locator("mark")
    marks.first.wait_for(timeout=30_000)
    leaked = [marks.nth(i).inner_text() for i in range(marks.count())]
    assert any(m.startswith("The capital of Australia is Canberra") for m in leaked)
    assert any(m.startswith("A photon travelling through a vacuum") for m in leaked)
    for label in ("JSON report", "HTML report", "Cleaned eval set", "Flagged examples"):
        assert page.get_by_role("button", name=label).count() == 1
    page.screenshot(path=str(artifacts() / "contam-app.png"))
    marks.first.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts() / "contam-app-evidence.png"))
    hosts = {u.split("/")[2] for u in requests if u.startswith("http")}
    assert hosts == {f"127.0.0.1:{server.port}"}, requests
    assert not [
        u for u in requests if not u.startswith(("http://127.0.0.1", "data:", "blob:", "about:"))
    ]
    assert server.files_left() == {"tmp": [], "home": [], "cwd": []}
