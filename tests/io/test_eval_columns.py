"""iter_eval_columns reads exactly what iter_eval reads: the same records, lines and errors."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any
from unittest import mock

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contam_cli.errors import ContamError
from contam_cli.io import eval_columns
from contam_cli.io.eval_columns import iter_eval_columns
from contam_cli.io.extract import TextSpec
from contam_cli.io.model import ReadNotes
from contam_cli.io.readers import iter_eval

KERNEL_ROUTES = [False, True] if eval_columns.jsonl_kernels() is not None else [False]


def _by_records(paths: list[Path], spec: TextSpec) -> tuple[Any, dict[str, int]]:
    notes = ReadNotes()
    try:
        got: Any = [
            (r.id, r.text, r.locator.path, -1 if r.locator.line is None else r.locator.line)
            for r in iter_eval(paths, spec, notes=notes)
        ]
    except ContamError as exc:
        got = (type(exc).__name__, str(exc))
    return got, dict(notes.surrogates)


def _by_columns(
    paths: list[Path], spec: TextSpec, size: int, kernel: bool
) -> tuple[Any, dict[str, int]]:
    notes = ReadNotes()
    routes = eval_columns.jsonl_kernels if kernel else lambda: None
    try:
        with mock.patch.object(eval_columns, "jsonl_kernels", routes):
            got: Any = [
                (i, t.decode("utf-8", "surrogatepass"), b.path, line)
                for b in iter_eval_columns(paths, spec, notes=notes, size=size)
                for i, t, line in zip(b.ids, b.texts, b.lines, strict=True)
            ]
    except ContamError as exc:
        got = (type(exc).__name__, str(exc))
    return got, dict(notes.surrogates)


def _same(paths: list[Path], spec: TextSpec = TextSpec(), size: int = 2) -> Any:
    """What both routes read (the compiled line scanner, where numba is installed, and the
    line-by-line one) equals what iter_eval reads."""
    expected, notes = _by_records(paths, spec)
    for kernel in KERNEL_ROUTES:
        got, got_notes = _by_columns(paths, spec, size, kernel)
        assert got == expected, "compiled" if kernel else "line by line"
        if not isinstance(expected, tuple):  # NOTE: after an error, what was noted is not reported
            assert got_notes == notes
    return expected


LINES = {
    "plain": b'{"id": "a", "text": "one two three"}',
    "plain2": b'{"id": "b", "text": "four five"}',
    "int id": b'{"id": 7, "text": "seven"}',
    "no id": b'{"text": "no id here"}',
    "other field": b'{"id": "c", "question": "what?", "answer": "that"}',
    "crlf": b'{"id": "d", "text": "windows line"}\r',
    "blank": b"",
    "spaces": b"   ",
    "bad json": b'{"id": "e", "text": ',
    "not object": b'["a", "list"]',
    "surrogate": b'{"id": "f", "text": "lone \\ud800 here"}',
    "unicode": '{"id": "g", "text": "caf\u00e9 \u2014 na\u00efve"}'.encode(),
    "bom": b'\xef\xbb\xbf{"id": "h", "text": "after a bom"}',
    "bom alone": b"\xef\xbb\xbf",
    "bom crlf": b"\xef\xbb\xbf \r",
    "bad utf8": b'{"id": "i", "text": "\xff"}',
    "padded": b'  {"id": "j", "text": "padded"}  ',
    "escaped id": b'{"id": "k\\u00e9\\n\\"", "text": "an id with escapes"}',
    "nested id": b'{"meta": {"id": "z"}, "id": "l", "text": "the top-level id"}',
    "two ids": b'{"id": "m", "id": "n", "text": "the last one wins"}',
    "id after text": b'{"text": "id last", "id": "o"}',
    "escaped key": b'{"\\u0069d": "p", "text": "an escaped key"}',
    "only nested id": b'{"meta": {"id": "q"}, "text": "no top-level id"}',
}


@pytest.mark.parametrize("kind", sorted(LINES))
@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_each_kind_of_line_anywhere_in_a_file(tmp_path: Path, kind: str, where: str) -> None:
    around = [LINES["plain"], LINES["plain2"]]
    at = {"first": 0, "middle": 1, "last": 2}[where]
    lines = [*around[:at], LINES[kind], *around[at:]]
    path = tmp_path / "e.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    _same([path])


def test_duplicate_ids_within_a_batch_across_batches_and_files(tmp_path: Path) -> None:
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    rows = [{"id": f"x{k}", "text": f"text {k}"} for k in range(7)]
    one.write_bytes(b"\n".join(orjson.dumps(r) for r in [*rows, rows[1]]))
    got = _same([one], size=3)
    assert got[0] == "InputError" and "duplicate id 'x1'" in got[1] and ":2" in got[1]
    got = _same([one], size=100)  # the first and the repeat in one batch
    assert "duplicate id 'x1'" in got[1]
    one.write_bytes(b"\n".join(orjson.dumps(r) for r in rows))
    two.write_bytes(orjson.dumps(rows[5]))
    got = _same([one, two])
    assert "duplicate id 'x5'" in got[1] and "one.jsonl" in got[1]


def test_other_formats_specs_and_files(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("first example\n\nsecond example\n")
    (tmp_path / "b.json").write_text('[{"id": "q", "text": "in an array"}]')
    with gzip.open(tmp_path / "c.jsonl.gz", "wb") as fh:
        fh.write(LINES["plain"] + b"\n" + LINES["plain2"] + b"\n")
    (tmp_path / "d.jsonl").write_bytes(LINES["other field"] + b"\n")
    (tmp_path / "empty.jsonl").write_bytes(b"\n\n")
    for name in ["a.txt", "b.json", "c.jsonl.gz", "d.jsonl", "empty.jsonl"]:
        _same([tmp_path / name])
    _same([tmp_path / "d.jsonl"], TextSpec(fields=("question", "answer")))
    _same([tmp_path / "c.jsonl.gz"], TextSpec(id_field="id"))
    _same([tmp_path / "a.txt", tmp_path / "c.jsonl.gz"])  # ids qualified by file
    assert _same([tmp_path / "missing.jsonl"])[0] in ("InputError", "UsageError")


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    kinds=st.lists(st.sampled_from(sorted(LINES)), max_size=12),
    ids=st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f", "g"]), min_size=12, max_size=12),
    size=st.integers(1, 5),
    final_newline=st.booleans(),
)
def test_any_mix_of_lines(
    tmp_path: Path, kinds: list[str], ids: list[str], size: int, final_newline: bool
) -> None:
    lines = []
    for kind, new_id in zip(kinds, ids):
        line = LINES[kind]
        if line.startswith(b'{"id": "'):  # vary the ids, so that some repeat and some do not
            line = b'{"id": "' + new_id.encode() + line[len(b'{"id": "') + 1 :]
        lines.append(line)
    path = tmp_path / "mix.jsonl"
    path.write_bytes(b"\n".join(lines) + (b"\n" if final_newline else b""))
    _same([path], size=size)


@pytest.mark.parametrize("block", [1, 7, 64, 1 << 21])
def test_lines_across_blocks_of_any_size(
    tmp_path: Path, block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The compiled route reads blocks of whole lines: a line cut by a block's end, or longer
    # than a block, is read whole; with and without a final newline.
    monkeypatch.setattr(eval_columns, "BLOCK_SIZE", block)
    rows = [{"id": f"r{k}", "text": "word " * (k % 9) + "\u00e9" * (k % 2)} for k in range(40)]
    lines = [orjson.dumps(r) for r in rows]
    lines[3] = LINES["crlf"]
    lines[10] = b""
    path = tmp_path / "e.jsonl"
    for end in (b"\n", b""):
        path.write_bytes(b"\n".join(lines) + end)
        assert len(_same([path], size=3)) == 39
