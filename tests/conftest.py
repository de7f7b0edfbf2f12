"""Shared test helpers: fixture paths, file factories, a pinned Rich console, and what keeps
tests portable (symlinks where the OS allows them, outputs compared with ``/`` separators)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
CD = FIXTURES / "contamination_detector"
DECONTAM = FIXTURES / "decontam_example"


@pytest.fixture(autouse=True)
def _plain_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rich output as a wide, non-interactive terminal, whatever the machine running the tests."""
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("TERM", "dumb")
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    # NOTE: under GitHub Actions contam prints annotations and appends to the step summary.
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("CONTAM_EVAL_CACHE", raising=False)  # NOTE: a developer's own cache


@pytest.fixture
def write_jsonl(tmp_path: Path) -> Callable[..., Path]:
    """Factory: write records (dicts or str) as JSONL and return the path."""

    def make(name: str, records: list, *, raw: bytes | None = None) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if raw is not None:
            path.write_bytes(raw)
        else:
            path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
        return path

    return make


@pytest.fixture
def chdir_tmp(tmp_path: Path) -> Path:
    old = os.getcwd()
    os.chdir(tmp_path)
    yield tmp_path
    os.chdir(old)


_SCHEMA = None


def assert_valid_report(data: bytes | str | dict) -> dict:
    """Validate a written report against the JSON Schema the package ships; return it parsed."""
    global _SCHEMA
    import jsonschema

    if _SCHEMA is None:
        _SCHEMA = orjson.loads((ROOT / "contam_cli" / "report" / "schema.json").read_bytes())
    doc = data if isinstance(data, dict) else orjson.loads(data)
    jsonschema.Draft202012Validator(_SCHEMA).validate(doc)
    return doc


def symlink_or_skip(link: Path, target: Path, *, target_is_directory: bool = False) -> Path:
    """Make `link` point at `target`, or skip the test where the OS refuses (Windows without
    the symlink privilege or developer mode); returns `link`."""
    try:
        os.symlink(target, link, target_is_directory=target_is_directory)
    except (OSError, NotImplementedError) as e:
        pytest.skip(f"cannot create a symlink here: {e}")
    return link


POSIX_ONLY = pytest.mark.skipif(os.name != "posix", reason="POSIX only")
"""For what only POSIX has: device files, permission bits that bind, signals to a process."""


def posix_paths(text: str) -> str:
    """`text` with Windows path separators written ``/`` (as it is elsewhere), so that output
    naming files compares with expected text written with ``/`` (docs, golden files). JSON's
    escaped ``\\\\`` counts as one separator.

    >>> posix_paths("a/b.txt:3")
    'a/b.txt:3'
    """
    if os.sep == "/":
        return text
    return text.replace("\\\\", "/").replace("\\", "/")


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    """One local Ray with 2 CPUs for the module (starting one takes seconds)."""
    ray = pytest.importorskip("ray", reason="needs the ray extra")
    ray.init("local", num_cpus=2, include_dashboard=False, log_to_driver=False,
             logging_level="ERROR")  # fmt: skip
    yield
    ray.shutdown()
