"""cleaned_eval_bytes: the eval input minus its flagged records, the same bytes `contam clean`
writes to a file for the same input (JSONL, JSON, TXT, compressed or not), and the flagged ones
alone with ``dirty=True``."""

from __future__ import annotations

import gzip
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contam_cli import clean_eval, scan
from contam_cli.errors import InputError
from contam_cli.features.clean.memory import cleaned_eval_bytes
from contam_cli.io.memory import decompressed, records_from_bytes


def _words(tag: int, k: int = 8) -> str:
    return " ".join(f"t{tag}w{j}" for j in range(k))


TEXTS = [f"a document holding {_words(i)} among other words" for i in range(0, 6, 2)]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`contam clean` reads its corpus from files."""
    root = tmp_path_factory.mktemp("corpus")
    for i, text in enumerate(TEXTS):
        (root / f"d{i}.txt").write_text(text, encoding="utf-8", newline="\n")
    return root


def _eval_bytes(tags: list[int], fmt: str, end: bytes, blank: bool) -> bytes:
    records = [{"id": f"e{k}", "text": _words(t)} for k, t in enumerate(tags)]
    if fmt == "json":
        return orjson.dumps(records, option=orjson.OPT_INDENT_2 if blank else 0)
    lines = [
        orjson.dumps(r) if fmt == "jsonl" else _words(t).encode() for r, t in zip(records, tags)
    ]
    if blank:
        lines.insert(len(lines) // 2, b"")
    return b"".join(line + end for line in lines)


def _memory(data: bytes, name: str, dirty: bool = False) -> bytes:
    records = records_from_bytes(data, name, role="eval")
    report = scan(records, TEXTS, n=4)
    return cleaned_eval_bytes(data, name, report, dirty=dirty)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    tags=st.lists(st.integers(0, 5), min_size=1, max_size=6, unique=True),
    fmt=st.sampled_from(["jsonl", "json", "txt"]),
    end=st.sampled_from([b"\n", b"\r\n"]),
    blank=st.booleans(),
    gz=st.booleans(),
)
def test_the_bytes_contam_clean_writes(
    tmp_path: Path, corpus: Path, tags: list[int], fmt: str, end: bytes, blank: bool, gz: bool
) -> None:
    raw = _eval_bytes(tags, fmt, end, blank)
    name = f"bench.{fmt}" + (".gz" if gz else "")
    data = gzip.compress(raw, mtime=0) if gz else raw
    src = tmp_path / name
    src.write_bytes(data)
    out, dirty = tmp_path / f"out.{fmt}", tmp_path / f"dirty.{fmt}"
    for p in (out, dirty):
        p.unlink(missing_ok=True)
    clean_eval(src, corpus, out, dirty_output=dirty, n=4)
    assert _memory(data, name) == out.read_bytes()
    assert _memory(data, name, dirty=True) == dirty.read_bytes()


def test_kept_lines_are_byte_identical_and_flagged_ones_gone() -> None:
    data = b'{"id": "a",  "text": "%s"}\r\n\n{"id":"b","text":"%s"}\n{"id": "c", "text": "%s"}' % (
        _words(0).encode(),
        _words(1).encode(),
        _words(2).encode(),
    )
    assert _memory(data, "x.jsonl") == b'\n{"id":"b","text":"%s"}\n' % _words(1).encode()
    assert decompressed(data, "x.jsonl") is data


def test_a_report_of_another_eval_set_is_refused() -> None:
    data = b'{"id": "a", "text": "%s"}\n' % _words(0).encode()
    report = scan(records_from_bytes(data, "x.jsonl", role="eval"), TEXTS, n=4)
    other = b'{"id": "z", "text": "%s"}\n' % _words(0).encode()
    with pytest.raises(InputError, match="not the one this report was made from"):
        cleaned_eval_bytes(other, "x.jsonl", report)
