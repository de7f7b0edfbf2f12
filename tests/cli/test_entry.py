"""The console entry point sets the process up before numpy is imported."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import ROOT

from contam_cli.entry import no_huge_pages


def test_the_entry_point_imports_no_numpy_before_its_settings() -> None:
    # NOTE: numpy reads NUMPY_MADVISE_HUGEPAGE when it is imported: once imported, it is too late.
    code = "import sys, contam_cli.entry; print('numpy' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )  # fmt: skip
    assert out.stdout.strip() == "False"


def test_numpy_gets_no_huge_pages_unless_the_user_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NUMPY_MADVISE_HUGEPAGE", raising=False)
    no_huge_pages()
    assert os.environ["NUMPY_MADVISE_HUGEPAGE"] == "0"
    monkeypatch.setenv("NUMPY_MADVISE_HUGEPAGE", "1")
    no_huge_pages()
    assert os.environ["NUMPY_MADVISE_HUGEPAGE"] == "1"
