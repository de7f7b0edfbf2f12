"""The HTML report in a real browser (headless Chromium driven by Playwright): the highlighted
spans are there, a header click sorts the table, the filter hides rows, nothing is logged as an
error and nothing is fetched. Leaves a screenshot in ``$CONTAM_TEST_ARTIFACTS`` (default
``build/test-artifacts/``).

Skipped without Debian's ``chromium`` at /usr/bin/chromium or without the ``playwright`` package
(its own browser download is never used: ``executable_path`` is the system Chromium).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from report_builders import MIXED, ROOT, bench_module, scan_report

from contam_cli.render.html import render_html

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

pytestmark = [
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="no /usr/bin/chromium (apt-get install -y chromium)"
    ),
    pytest.mark.skipif(
        importlib.util.find_spec("playwright") is None,
        reason="playwright is not installed (pip install playwright; no `playwright install`)",
    ),
]


def artifacts() -> Path:
    out = Path(os.environ.get("CONTAM_TEST_ARTIFACTS") or ROOT / "build" / "test-artifacts")
    out.mkdir(parents=True, exist_ok=True)
    return out


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile),
            executable_path=str(CHROMIUM),
            args=ARGS,
            headless=True,
            viewport={"width": 1280, "height": 900},
        )
        yield context
        context.close()


class Opened:
    """A page opened from disk, with every request it made and every error it logged."""

    def __init__(self, browser: Any, page_html: str, path: Path) -> None:
        path.write_text(page_html, encoding="utf-8", newline="\n")
        self.url = path.resolve().as_uri()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page = browser.new_page()
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(self.url, wait_until="load")

    def ids(self) -> list[str]:
        """The ids of the table's visible rows, top to bottom."""
        return list(
            self.page.eval_on_selector_all(
                "#examples tbody tr:not([hidden])", "rows => rows.map(r => r.cells[1].innerText)"
            )
        )

    def close(self) -> None:
        self.page.close()
        assert not self.errors, self.errors
        # NOTE: the page itself, and the empty data: icon at most; never anything else.
        assert {u for u in self.requests if not u.startswith("data:")} == {self.url}


def test_the_page_shows_the_leaks_highlighted_without_errors_or_fetches(
    browser: Any, tmp_path: Path
) -> None:
    report = scan_report()
    opened = Opened(browser, render_html(report), tmp_path / "report.html")
    marks = opened.page.locator("#flagged mark").all_inner_texts()
    q1, q2 = report.take([0, 1])
    assert q1.text is not None and q2.text is not None
    assert marks[0] == q1.text.removesuffix(".")
    assert marks[2] == q2.text.removesuffix(".")
    assert marks[1].split() == q1.text.removesuffix(".").split()  # the corpus side, re-wrapped
    assert opened.page.locator("svg").count() >= 3
    opened.page.screenshot(path=str(artifacts() / "html-report.png"), full_page=True)
    opened.close()


def test_a_header_click_sorts_the_table_nulls_last(browser: Any, tmp_path: Path) -> None:
    opened = Opened(browser, render_html(scan_report(MIXED)), tmp_path / "mixed.html")
    page = opened.page
    assert opened.ids() == ["2", "7", "c1", "s1"]  # most suspicious first; unscorable last
    overlap = page.locator("#examples thead th", has_text="overlap_fraction")
    overlap.click()  # first click: most suspicious (highest) first
    assert opened.ids() == ["2", "7", "c1", "s1"]
    assert overlap.get_attribute("aria-sort") == "descending"
    overlap.click()
    assert opened.ids() == ["c1", "2", "7", "s1"]  # ascending; ties in rank order; null last
    assert overlap.get_attribute("aria-sort") == "ascending"
    ident = page.locator("#examples thead th", has_text="id")
    ident.first.click()
    assert opened.ids() == ["2", "7", "c1", "s1"]
    ident.first.click()
    assert opened.ids() == ["s1", "c1", "7", "2"]
    assert overlap.get_attribute("aria-sort") is None
    opened.close()


def test_numbers_sort_as_numbers(browser: Any, tmp_path: Path) -> None:
    report = bench_module().synthetic_report(5000, 0.05)
    opened = Opened(browser, render_html(report), tmp_path / "big.html")
    heads = opened.page.eval_on_selector_all("#examples thead th", "hs => hs.map(h => h.innerText)")
    col = [h.strip() for h in heads].index("longest_run")
    opened.page.locator("#examples thead th", has_text="longest_run").click()
    opened.page.locator("#examples thead th", has_text="longest_run").click()  # ascending
    runs = opened.page.eval_on_selector_all(
        "#examples tbody tr", f"rows => rows.map(r => r.cells[{col}].getAttribute('data-v'))"
    )
    numbers = [float(v) for v in runs if v]
    assert numbers == sorted(numbers) and len(set(numbers)) > 10
    assert runs[len(numbers) :] == [""] * (len(runs) - len(numbers))  # nulls last
    opened.close()


def test_the_filter_box_and_flagged_only_hide_rows(browser: Any, tmp_path: Path) -> None:
    opened = Opened(browser, render_html(scan_report(MIXED)), tmp_path / "filter.html")
    page = opened.page
    page.fill("#filter", "c1")
    assert opened.ids() == ["c1"]
    assert page.inner_text("#shown") == "1 of 4 listed examples shown"
    page.fill("#filter", "DOC_CONTAMINATED")  # the where column, any case
    assert opened.ids() == ["2", "7"]
    page.fill("#filter", "")
    page.check("#flagged-only")
    assert opened.ids() == ["2", "7"]
    page.fill("#filter", "s1")
    assert opened.ids() == []
    page.uncheck("#flagged-only")
    assert opened.ids() == ["s1"]
    opened.close()


def test_the_policy_stops_a_script_that_got_into_the_page(browser: Any, tmp_path: Path) -> None:
    fragment = "<p>impact</p><script>document.title = 'ran'</script>"
    opened = Opened(browser, render_html(scan_report(), impact=fragment), tmp_path / "csp.html")
    assert opened.page.title() != "ran"
    assert any("Content Security Policy" in e for e in opened.errors)
    assert opened.ids()  # the page's own script still ran (it fills the table's count)
    assert opened.page.inner_text("#shown") == "5 of 5 listed examples shown"
    opened.errors.clear()
    opened.close()
