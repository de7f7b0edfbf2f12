"""The page's plain-Python parts, without Streamlit: the caps, the inputs as named bytes, the scan
in a child process (its results, its errors, its time budget) and the server's settings."""

from __future__ import annotations

import gzip
import multiprocessing
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import CD, ROOT, assert_valid_report

from contam_cli import scan
from contam_cli.app import launch, run
from contam_cli.app.inputs import NamedBytes, corpus_inputs, eval_input, expanded_size, sniff
from contam_cli.app.limits import MB, Limits
from contam_cli.engine.executor import START_METHOD_ENV, start_method
from contam_cli.errors import ArgumentError, InputError, UsageError
from contam_cli.render.table import render_table

BENCH = CD / "examples" / "benchmark.jsonl"
CORPUS = sorted((CD / "examples" / "corpus").iterdir())
# NOTE: the app spawns its child (its server runs threads); where scans fork their workers
# (Linux), a test that patches what the child runs forces fork, so that the child has the patch.
FORK = start_method() == "fork"


def fixture_request(**settings: Any) -> run.ScanRequest:
    corpus = tuple(NamedBytes(p.name, p.read_bytes()) for p in CORPUS)
    return run.ScanRequest(
        NamedBytes("benchmark.jsonl", BENCH.read_bytes()), corpus, run.Settings(**settings)
    )


@dataclass
class FakeUpload:
    name: str
    data: bytes

    @property
    def size(self) -> int:
        return len(self.data)

    def getvalue(self) -> bytes:
        return self.data


# -- limits and inputs ---------------------------------------------------------------------------


def test_limits_from_the_environment_and_back() -> None:
    limits = Limits(max_eval_bytes=10, max_corpus_bytes=3 * MB + 1, max_seconds=2.5)
    assert Limits.from_env(limits.to_env()) == limits
    assert Limits.from_env({}) == Limits()
    assert limits.upload_mb == 4
    with pytest.raises(UsageError, match="CONTAM_APP_MAX_EVAL_BYTES='lots': expected a number"):
        Limits.from_env({"CONTAM_APP_MAX_EVAL_BYTES": "lots"})
    for bad in ({"max_eval_bytes": 0}, {"max_seconds": 0.0}, {"max_seconds": float("nan")}):
        with pytest.raises(ArgumentError):
            Limits(**bad)  # type: ignore[arg-type]


def test_caps_are_checked_on_byte_lengths_before_reading() -> None:
    limits = Limits(max_eval_bytes=100, max_corpus_bytes=200)
    # NOTE: 60 characters, 120 UTF-8 bytes: the byte length is what counts.
    with pytest.raises(UsageError, match=r"eval: 120 bytes is more than this server accepts"):
        eval_input("é" * 60, "auto", None, limits)

    class Unread(FakeUpload):
        def getvalue(self) -> bytes:
            raise AssertionError("an upload over the cap must not be read")

    with pytest.raises(UsageError, match="eval: 101 bytes"):
        eval_input("", "auto", Unread("e.jsonl", b"x" * 101), limits)
    files = [FakeUpload("a.txt", b"x" * 150), Unread("b.txt", b"y" * 51)]
    with pytest.raises(UsageError, match="corpus: 201 bytes"):
        corpus_inputs("", "auto", files, limits)
    with pytest.raises(UsageError, match="corpus: 201 bytes"):
        corpus_inputs("z" * 51, "auto", files[:1], limits)


def test_inputs_are_named_by_their_format() -> None:
    limits = Limits()
    assert eval_input('{"id": 1, "text": "a"}\n', "auto", None, limits).name == "pasted-eval.jsonl"
    assert eval_input("one\ntwo\n", "auto", None, limits).name == "pasted-eval.txt"
    assert eval_input("{}", "JSON (an array of records)", None, limits).name == "pasted-eval.json"
    assert sniff(b'  {\n  "data": []\n}') == ".json"
    assert sniff(b'\xef\xbb\xbf{"id": 1, "text": "a"}\n') == ".jsonl"  # was .txt: each line a text
    assert sniff(b"\xef\xbb\xbf[1]") == ".json"
    packed = gzip.compress(b'{"id": 1, "text": "a"}\n')
    up = FakeUpload("set.jsonl.gz", packed)
    assert eval_input("", "auto", up, limits) == NamedBytes("set.jsonl.gz", packed)
    with pytest.raises(UsageError, match="not both"):
        eval_input("x", "auto", up, limits)
    with pytest.raises(UsageError, match="paste some examples"):
        eval_input("  \n", "auto", None, limits)
    with pytest.raises(UsageError, match="paste a document or upload"):
        corpus_inputs("", "auto", [], limits)
    both = corpus_inputs("a doc", "auto", [FakeUpload("b.txt", b"b")], limits)
    assert [x.name for x in both] == ["pasted-corpus.txt", "b.txt"]


def test_the_caps_hold_for_decompressed_bytes() -> None:
    # A 42 KB gzip of 12 MB passed a 50 KB cap on its compressed size: the scan read 286 times
    # the cap. The caps count what the scan reads, decompressed, and stop counting past them.
    limits = Limits(max_eval_bytes=2_000, max_corpus_bytes=50_000)
    big = b'{"text": "lorem ipsum lorem ipsum"}\n' * 20_000
    bomb = FakeUpload("c.jsonl.gz", gzip.compress(big, 9))
    assert bomb.size < 50_000
    with pytest.raises(UsageError, match=r"^corpus: .* is more than this server accepts"):
        corpus_inputs("", "auto", [bomb], limits)
    small = FakeUpload("c.jsonl.gz", gzip.compress(big[:30_000]))
    two = [small, FakeUpload("d.jsonl.gz", gzip.compress(big[:30_000]))]
    assert [x.name for x in corpus_inputs("", "auto", [small], limits)] == ["c.jsonl.gz"]
    with pytest.raises(UsageError, match="60,000 bytes|58.6 KB"):  # together over the cap
        corpus_inputs("", "auto", two, limits)
    with pytest.raises(UsageError, match=r"^eval: .* is more than this server accepts"):
        eval_input("", "auto", FakeUpload("e.jsonl.gz", gzip.compress(big[:5_000])), limits)
    assert expanded_size("c.jsonl.gz", bomb.getvalue(), 50_000) <= 50_000 + (1 << 20)


def test_a_cap_message_never_reads_as_a_size_over_itself() -> None:
    with pytest.raises(UsageError, match=r"2,002 bytes is more than this server accepts \(2,000"):
        Limits(max_eval_bytes=2_000).check("eval", 2_002)


# -- the scan ------------------------------------------------------------------------------------


def test_scan_request_is_what_the_command_line_finds() -> None:
    outcome = run.scan_request(fixture_request())
    assert [(r["id"], r["flag"]) for r in outcome.rows[:2]] == [
        ("q1", "FLAGGED"),
        ("q2", "FLAGGED"),
    ]
    assert {r["id"] for r in outcome.rows[2:]} == {"q3", "q4", "q5"}
    assert outcome.rows[0]["where"] == "doc_contaminated.txt:3"
    assert outcome.summary == "5 examples: 2 flagged, 3 clean, 0 unscorable"
    on_disk = scan([BENCH], CORPUS)
    # NOTE: the same table but for the corpus paths (names in memory, paths on disk).
    shown = str(CORPUS[0].parent.relative_to(ROOT))
    want = render_table(on_disk, flagged_rows=None).replace(str(CORPUS[0].parent) + os.sep, "")
    assert outcome.table == want.replace(shown + os.sep, "")
    doc = assert_valid_report(outcome.json)
    assert [e["id"] for e in doc["examples"] if e["flagged"]] == ["q1", "q2"]
    assert outcome.html.count("<mark>") >= 2 and "Canberra" in outcome.html
    lines = BENCH.read_bytes().splitlines(keepends=True)
    assert outcome.cleaned == b"".join(lines[2:])
    assert outcome.flagged_only == b"".join(lines[:2])
    assert (outcome.cleaned_name, outcome.flagged_name) == (
        "benchmark.clean.jsonl",
        "benchmark.flagged.jsonl",
    )


def test_settings_reach_the_scan() -> None:
    tuned = run.scan_request(fixture_request(min_overlap=1.0, min_run=20))
    assert tuned.rows[0]["reasons"] == "overlap 1.000 >= 1; run 23 >= 20"
    with pytest.raises(UsageError, match="no chat turn in the inputs"):
        run.scan_request(fixture_request(roles=("user",)))
    short = run.scan_request(fixture_request(n=30))
    assert short.unscorable and short.unscorable[0]["tokens"] == 23


def test_run_scan_in_a_child_gives_the_same_outcome() -> None:
    inside = run.scan_request(fixture_request())
    child = run.run_scan(fixture_request(), max_seconds=60)
    assert (child.rows, child.json, child.html, child.cleaned) == (
        inside.rows,
        inside.json,
        inside.html,
        inside.cleaned,
    )


def test_errors_come_back_from_the_child_as_they_are(tmp_path: Path) -> None:
    data = b'{"id": "a", "text": "x"}\n{"id": \n'
    bad = run.ScanRequest(NamedBytes("pasted-eval.jsonl", data), (NamedBytes("c.txt", b"w"),))
    with pytest.raises(InputError) as err:
        run.run_scan(bad, max_seconds=60)
    assert str(err.value).startswith("pasted-eval.jsonl:2: invalid JSON: ")
    (tmp_path / "pasted-eval.jsonl").write_bytes(data)
    with pytest.raises(InputError) as cli:
        scan([tmp_path / "pasted-eval.jsonl"], ["w"])
    assert str(cli.value) == f"{tmp_path}{os.sep}{err.value}"


def _slow(request: run.ScanRequest) -> run.ScanOutcome:
    time.sleep(60)
    raise AssertionError("not reached")


@pytest.mark.skipif(not FORK, reason="the patched slow scan reaches the child only by fork")
def test_a_scan_past_the_budget_is_stopped_and_its_child_killed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(START_METHOD_ENV, "fork")
    monkeypatch.setattr(run, "scan_request", _slow)
    started = time.monotonic()
    with pytest.raises(UsageError, match=r"time budget of 0.5 s and was stopped"):
        run.run_scan(fixture_request(), max_seconds=0.5)
    assert time.monotonic() - started < 10
    assert not [p for p in multiprocessing.active_children() if p.name == "contam-app-scan"]


def test_the_server_is_started_private_and_bounded() -> None:
    argv = launch.streamlit_argv("127.0.0.1", 8600, Limits(max_corpus_bytes=50 * MB))
    flags = dict(zip(argv[5::2], argv[6::2]))
    assert argv[1:5] == ["-m", "streamlit", "run", str(launch.PAGE)]
    assert Path(argv[4]).is_file()
    assert flags["--browser.gatherUsageStats"] == "false"
    assert flags["--server.headless"] == "true"
    assert flags["--server.address"] == "127.0.0.1" and flags["--server.port"] == "8600"
    assert flags["--server.maxUploadSize"] == "50"
    assert flags["--client.showErrorDetails"] == "none"
    assert flags["--logger.hideWelcomeMessage"] == "true"  # NOTE: no external-IP lookup


def test_uploads_are_kept_in_memory_up_to_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    formparsers = pytest.importorskip("starlette.formparsers")
    monkeypatch.setattr(formparsers.MultiPartParser, "spool_max_size", 1 << 20)
    launch.keep_uploads_in_memory(40 * MB)
    assert formparsers.MultiPartParser.spool_max_size == 40 * MB
    launch.keep_uploads_in_memory(1)  # NOTE: never lowered
    assert formparsers.MultiPartParser.spool_max_size == 40 * MB


def test_outcome_json_is_the_report_bytes() -> None:
    outcome = run.scan_request(fixture_request())
    assert orjson.loads(outcome.json)["summary"]["flagged"] == 2
