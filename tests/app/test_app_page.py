"""The page's logic through Streamlit's AppTest (no browser): the bundled fixture pasted and
uploaded finds q1 and q2 with their evidence; the caps refuse big inputs before any scan; bad
input is the command line's one-line message; a scan past the time budget ends with a message;
the downloads are offered; the privacy statement is shown (and a warning when telemetry is on).
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from conftest import CD

pytest.importorskip("streamlit")

from streamlit import config  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from contam_cli.app import launch, run, view  # noqa: E402
from contam_cli.app.limits import human_size  # noqa: E402

BENCH = CD / "examples" / "benchmark.jsonl"
CORPUS = sorted((CD / "examples" / "corpus").iterdir())


@pytest.fixture
def page(monkeypatch: pytest.MonkeyPatch) -> Iterator[AppTest]:
    """The page, run once, with the default limits and Streamlit's usage statistics off (as
    `contam app` starts it)."""
    for name in (
        "CONTAM_APP_MAX_EVAL_BYTES",
        "CONTAM_APP_MAX_CORPUS_BYTES",
        "CONTAM_APP_MAX_SECONDS",
    ):
        monkeypatch.delenv(name, raising=False)
    with usage_stats(False):
        yield AppTest.from_file(str(launch.PAGE), default_timeout=60)


@contextmanager
def usage_stats(on: bool) -> Iterator[None]:
    """Streamlit's ``browser.gatherUsageStats`` set for the block (st.get_option reads it)."""
    before = config.get_option("browser.gatherUsageStats")
    config.set_option("browser.gatherUsageStats", on)
    try:
        yield
    finally:
        config.set_option("browser.gatherUsageStats", before)


def fill(at: AppTest, eval_text: str = "", corpus_files: list[Path] | None = None) -> AppTest:
    at.run()
    at.text_area(key="eval_text").input(eval_text)
    files = CORPUS if corpus_files is None else corpus_files
    at.file_uploader(key="corpus_files").set_value(
        [(p.name, p.read_bytes(), "text/plain") for p in files]
    )
    at.button(key="scan").click()
    return at.run()


def errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


def table(at: AppTest) -> list[dict[str, Any]]:
    assert len(at.dataframe) == 1
    return at.dataframe[0].value.to_dict("records")  # type: ignore[no-any-return]


def test_the_fixture_pasted_flags_q1_and_q2_with_evidence(page: AppTest) -> None:
    at = fill(page, BENCH.read_text(encoding="utf-8"))
    assert errors(at) == [] and not at.exception
    rows = table(at)
    assert [(r["id"], r["flag"]) for r in rows] == [
        ("q1", "FLAGGED"),
        ("q2", "FLAGGED"),
        ("q3", ""),
        ("q4", ""),
        ("q5", ""),
    ]
    assert [r["where"] for r in rows[:2]] == ["doc_contaminated.txt:3", "doc_contaminated.txt:8"]
    assert rows[0]["reasons"] == "overlap 1.000 >= 0.5" and rows[0]["run"] == 23
    assert any("5 examples: 2 flagged, 3 clean, 0 unscorable" in m.value for m in at.markdown)
    (frame,) = at.get("iframe")
    report = frame.proto.srcdoc  # type: ignore[attr-defined]
    assert "<mark>The capital of Australia is Canberra" in report
    assert report.count("<mark>") >= 2
    labels = [b.label for b in at.download_button]
    assert labels == ["JSON report", "HTML report", "Cleaned eval set", "Flagged examples"]
    assert any("processed in this server's memory only" in i.value for i in at.info)


def test_a_compressed_upload_and_a_pasted_document(page: AppTest) -> None:
    page.run()
    packed = gzip.compress(BENCH.read_bytes(), mtime=0)
    page.file_uploader(key="eval_file").set_value(("bench.jsonl.gz", packed, "application/gzip"))
    page.text_area(key="corpus_text").input(CORPUS[1].read_text(encoding="utf-8"))
    page.number_input(key="min_run").set_value(20)
    page.button(key="scan").click()
    at = page.run()
    assert errors(at) == []
    rows = table(at)
    assert [r["id"] for r in rows if r["flag"]] == ["q1", "q2"]
    assert rows[0]["where"] == "pasted-corpus.txt:3"
    assert rows[0]["reasons"] == "overlap 1.000 >= 0.5; run 23 >= 20"


def test_a_too_large_eval_is_refused_before_any_scan(
    page: AppTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONTAM_APP_MAX_EVAL_BYTES", "100")
    calls: list[object] = []
    monkeypatch.setattr(view, "run_scan", lambda *a: calls.append(a))
    at = fill(page, BENCH.read_text(encoding="utf-8"))
    size = BENCH.stat().st_size
    assert errors(at) == [
        f"eval: {human_size(size)} is more than this server accepts (100 bytes). For larger "
        "inputs run `contam scan` on your own machine (no limits there)."
    ]
    assert calls == [] and not at.dataframe
    assert any("eval up to 100 bytes" in c.value for c in at.caption)


def test_a_too_large_corpus_is_refused_before_any_scan(
    page: AppTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONTAM_APP_MAX_CORPUS_BYTES", "500")
    monkeypatch.setattr(view, "run_scan", lambda *a: pytest.fail("scanned over the cap"))
    at = fill(page, BENCH.read_text(encoding="utf-8"))
    assert errors(at) and errors(at)[0].startswith("corpus: ")
    assert "more than this server accepts (500 bytes)" in errors(at)[0]


def test_malformed_jsonl_is_the_one_line_error_naming_the_line(page: AppTest) -> None:
    lines = BENCH.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2][:-1]  # NOTE: the third record loses its closing brace
    at = fill(page, "\n".join(lines))
    (message,) = errors(at)
    assert message.startswith("pasted-eval.jsonl:3: invalid JSON: ") and "\n" not in message
    assert not at.dataframe


def test_invalid_utf8_in_an_upload_is_named(page: AppTest) -> None:
    page.run()
    data = BENCH.read_bytes().replace(b"Canberra", b"Canb\xffrra")
    page.file_uploader(key="eval_file").set_value(("bench.jsonl", data, "application/json"))
    page.file_uploader(key="corpus_files").set_value(
        [(p.name, p.read_bytes(), "text/plain") for p in CORPUS]
    )
    page.button(key="scan").click()
    at = page.run()
    byte = data.index(b"\xff") + 1
    assert errors(at) == [f"bench.jsonl:1: invalid UTF-8 (byte {byte} of the line)"]


def _slow(request: run.ScanRequest) -> run.ScanOutcome:
    import time

    time.sleep(60)
    raise AssertionError("not reached")


def test_a_scan_past_the_time_budget_ends_with_a_message(
    page: AppTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    from contam_cli.engine.executor import START_METHOD_ENV, start_method

    if start_method() != "fork":
        pytest.skip("the patched slow scan reaches the child only by fork")
    monkeypatch.setenv(START_METHOD_ENV, "fork")  # NOTE: the app spawns; forked, it has the patch
    monkeypatch.setenv("CONTAM_APP_MAX_SECONDS", "0.5")
    monkeypatch.setattr(run, "scan_request", _slow)
    at = fill(page, BENCH.read_text(encoding="utf-8"))
    (message,) = errors(at)
    assert message.startswith("the scan ran past this server's time budget of 0.5 s")
    assert not at.dataframe


def test_the_page_warns_when_usage_statistics_are_on() -> None:
    with usage_stats(True):
        at = AppTest.from_file(str(launch.PAGE), default_timeout=60).run()
    assert [w.value for w in at.warning] == [view.USAGE_STATS_ON]
    assert not at.info


def test_unscorable_examples_and_warnings_are_shown_apart(page: AppTest) -> None:
    lines = BENCH.read_text(encoding="utf-8").splitlines()
    lines += ['{"id": "short", "text": "too short \\ud800 to score"}']
    at = fill(page, "\n".join(lines))
    assert errors(at) == []
    scored, unscorable = (d.value.to_dict("records") for d in at.dataframe)
    assert [r["id"] for r in scored if r["flag"]] == ["q1", "q2"]
    assert unscorable == [{"id": "short", "tokens": 4, "where": "pasted-eval.jsonl:6"}]
    assert [w.value for w in at.warning] == [
        "The scan has warnings (they are in the JSON report too):"
    ]
    assert any("lone surrogate" in c.value for c in at.code)
