"""A scan through the page leaves no file behind and writes none: the temp dir, the working
directory and HOME are the same before and after, and every way to create or write a file
(``open``/``io.open``/``os.open`` for writing, ``tempfile``'s makers) fails the test if the page,
the scan or its child process calls it.

NOTE: the temp dir is a private one (``tempfile.tempdir`` and ``TMPDIR`` point to it), because
the machine's own /tmp is shared with other processes that write there meanwhile; a write to a
fixed path anywhere is caught by the patched ``open``/``os.open`` instead. The app spawns its
scan's child (a fresh interpreter, which the patches cannot reach); where fork exists (Linux) the
test forces it, so that the child inherits the patches and a write there fails its scan, which
the page then shows as an error. Elsewhere only the page's own process is checked, and the
listings.
"""

from __future__ import annotations

import builtins
import io
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import CD

pytest.importorskip("streamlit")

from streamlit import config  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from contam_cli.app import launch  # noqa: E402
from contam_cli.engine.executor import START_METHOD_ENV, start_method  # noqa: E402

BENCH = CD / "examples" / "benchmark.jsonl"
CORPUS = sorted((CD / "examples" / "corpus").iterdir())
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def listing(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


class Writes:
    """Records (and refuses) every attempt to create or write a file."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def refuse(self, what: str) -> None:
        self.calls.append(what)
        raise AssertionError(f"the app tried to write a file: {what}")

    def guard_open(self, real: Callable[..., Any]) -> Callable[..., Any]:
        def guarded(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            # NOTE: an open file descriptor (the pipe a spawned child's start is written to)
            # creates no file.
            if not isinstance(file, int) and any(c in mode for c in "wax+"):
                self.refuse(f"open({file!r}, {mode!r})")
            return real(file, mode, *args, **kwargs)

        return guarded

    def guard_os_open(self, real: Callable[..., int]) -> Callable[..., int]:
        def guarded(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            if flags & _WRITE_FLAGS:
                self.refuse(f"os.open({path!r}, {flags:#o})")
            return real(path, flags, *args, **kwargs)

        return guarded

    def maker(self, name: str) -> Callable[..., Any]:
        def refused(*args: Any, **kwargs: Any) -> Any:
            self.refuse(f"tempfile.{name}")

        return refused


def test_a_scan_through_the_page_writes_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tmp, cwd, home = (tmp_path / d for d in ("tmp", "cwd", "home"))
    for d in (tmp, cwd, home):
        d.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(cwd)
    if start_method() == "fork":
        monkeypatch.setenv(START_METHOD_ENV, "fork")
    before = config.get_option("browser.gatherUsageStats")
    config.set_option("browser.gatherUsageStats", False)
    try:
        at = AppTest.from_file(str(launch.PAGE), default_timeout=60).run()
        at.text_area(key="eval_text").input(BENCH.read_text(encoding="utf-8"))
        at.file_uploader(key="corpus_files").set_value(
            [(p.name, p.read_bytes(), "text/plain") for p in CORPUS]
        )
        at.button(key="scan").click()
        writes = Writes()
        with monkeypatch.context() as m:
            m.setattr(builtins, "open", writes.guard_open(builtins.open))
            m.setattr(io, "open", writes.guard_open(io.open))
            m.setattr(os, "open", writes.guard_os_open(os.open))
            for name in (
                "mkstemp",
                "mkdtemp",
                "NamedTemporaryFile",
                "TemporaryFile",
                "SpooledTemporaryFile",
                "TemporaryDirectory",
            ):
                m.setattr(tempfile, name, writes.maker(name))
            at.run()
    finally:
        config.set_option("browser.gatherUsageStats", before)
    assert [e.value for e in at.error] == [] and not at.exception
    assert writes.calls == []
    rows = at.dataframe[0].value.to_dict("records")
    assert [r["id"] for r in rows if r["flag"]] == ["q1", "q2"]
    assert (listing(tmp), listing(cwd), listing(home)) == ([], [], [])
