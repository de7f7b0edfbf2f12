"""Tests for contam_cli.io: formats, text/id detection, errors, file walking, atomic writes."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import symlink_or_skip
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contam_cli.errors import InputError, MissingExtraError, OutputError
from contam_cli.io import (
    TextSpec,
    atomic_writer,
    detect_format,
    extract_id,
    extract_text,
    iter_corpus,
    iter_files,
    iter_records,
    open_binary,
    read_eval,
    sha256_file,
    write_atomic,
)
from contam_cli.io.model import Record

zstandard = pytest.importorskip("zstandard")

WHERE = ("x.jsonl", 3)
JSONL = b'{"id": "q1", "text": "alpha"}\n{"id": "q2", "text": "beta"}\n'
PAIRS = [("q1", "alpha"), ("q2", "beta")]
COMPRESS: dict[str, Callable[[bytes], bytes]] = {
    ".gz": gzip.compress,
    ".bz2": bz2.compress,
    ".xz": lzma.compress,
    ".zst": lambda data: zstandard.ZstdCompressor().compress(data),
}


def write(directory: Path, name: str, data: bytes | str) -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode() if isinstance(data, str) else data
    suffix = path.suffix
    path.write_bytes(COMPRESS[suffix](raw) if suffix in COMPRESS else raw)
    return path


def pairs(records: list[Record]) -> list[tuple[str, str]]:
    return [(r.id, r.text) for r in records]


def raw_bytes(data: bytes, record: Record) -> bytes:
    assert record.locator.span is not None
    start, end = record.locator.span
    return data[start:end]


def jsonl(*objs: object) -> str:
    return "".join(json.dumps(o) + "\n" for o in objs)


# --------------------------------------------------------------------------------------------
# Formats


FORMAT_CASES = [
    pytest.param("b.jsonl", JSONL, "eval", PAIRS, id="jsonl"),
    pytest.param("b.ndjson", JSONL, "eval", PAIRS, id="ndjson"),
    pytest.param("b.jsonl.gz", JSONL, "eval", PAIRS, id="gz"),
    pytest.param("b.jsonl.bz2", JSONL, "eval", PAIRS, id="bz2"),
    pytest.param("b.jsonl.xz", JSONL, "eval", PAIRS, id="xz"),
    pytest.param("b.jsonl.zst", JSONL, "corpus", PAIRS, id="zst"),
    pytest.param(
        "b.json",
        '[{"id": "q1", "text": "alpha"}, {"id": "q2", "text": "beta"}]',
        "eval",
        PAIRS,
        id="json-array",
    ),
    pytest.param(
        "b.json",
        '{"version": 2, "tags": ["x"], "data": [{"text": "alpha"}, "beta"]}',
        "eval",
        [("0", "alpha"), ("1", "beta")],
        id="json-object-holding-array",
    ),
    pytest.param(
        "b.json.gz",
        '["alpha", "beta"]',
        "corpus",
        [("0", "alpha"), ("1", "beta")],
        id="json-gz-strings",
    ),
    pytest.param(
        "b.txt", "alpha\n\n  \nbeta\r\n", "eval", [("1", "alpha"), ("4", "beta")], id="txt-eval"
    ),
    pytest.param(
        "b.txt", "alpha\n\nbeta\n", "corpus", [("b.txt", "alpha\n\nbeta\n")], id="txt-corpus"
    ),
    pytest.param(
        "b.txt.xz", "alpha\nbeta", "corpus", [("b.txt.xz", "alpha\nbeta")], id="txt-corpus-xz"
    ),
    pytest.param(
        "b.jsonl",
        '"alpha"\n{"content": "beta"}\n',
        "eval",
        [("1", "alpha"), ("2", "beta")],
        id="jsonl-bare-string",
    ),
]


@pytest.mark.parametrize("name, data, role, expected", FORMAT_CASES)
def test_formats(tmp_path: Path, name: str, data: str | bytes, role: str, expected: list) -> None:
    path = write(tmp_path, name, data)
    records = list(iter_records(path, role=role))  # type: ignore[arg-type]
    assert pairs(records) == expected
    assert all(r.locator.path == str(path) for r in records)


def test_txt_corpus_locator_and_id_from_directory(tmp_path: Path) -> None:
    write(tmp_path, "docs/sub/a.txt", "hello world")
    [record] = iter_corpus([tmp_path / "docs"])
    assert record.id == "sub/a.txt"
    assert (record.locator.line, record.locator.record, record.locator.span) == (1, 0, (0, 11))


@pytest.mark.parametrize(
    "name, expected",
    [
        ("a.jsonl", "jsonl"),
        ("a.NDJSON", "jsonl"),
        ("a.json.bz2", "json"),
        ("a.txt.zst", "txt"),
        ("a.parquet", "parquet"),
        ("dir/a.b.jsonl.gz", "jsonl"),
    ],
)
def test_detect_format(name: str, expected: str) -> None:
    assert detect_format(name) == expected


@pytest.mark.parametrize("name", ["a.csv", "a.gz", "a.parquet.gz", "jsonl"])
def test_detect_format_unknown(name: str) -> None:
    with pytest.raises(InputError, match=rf"^{name}: unknown file format"):
        detect_format(name)


def test_open_binary_streams_multi_frame_zstd(tmp_path: Path) -> None:
    cctx = zstandard.ZstdCompressor()
    path = tmp_path / "a.jsonl.zst"
    path.write_bytes(cctx.compress(b"one\n") + cctx.compress(b"two\n"))
    with open_binary(path) as fh:
        assert fh.read() == b"one\ntwo\n"


def test_zstd_missing_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, "a.jsonl.zst", JSONL)
    monkeypatch.setitem(sys.modules, "zstandard", None)
    with pytest.raises(MissingExtraError, match=r"contam-cli\[zstd\]"):
        list(iter_records(path, role="corpus"))


def test_parquet_missing_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, "a.parquet", b"PAR1")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(MissingExtraError, match=r"contam-cli\[parquet\]"):
        list(iter_records(path, role="eval"))


# --------------------------------------------------------------------------------------------
# Text detection


CHAT = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Hi?"},
    {"role": "assistant", "content": "Hello."},
]
PARTS_CHAT = [
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "Look:"},
            {"type": "image_url", "image_url": {"url": "x"}},
            "and this",
        ],
    },
    {"role": "assistant", "content": None},
    {"role": "assistant", "content": [{"type": "text", "text": "A cat."}]},
]
SHAREGPT = [
    {"from": "system", "value": "Be brief."},
    {"from": "human", "value": "Hi?"},
    {"from": "gpt", "value": "Hello."},
]

TEXT_CASES = [
    pytest.param({"text": "t", "content": "c"}, TextSpec(), "t", id="text-first"),
    pytest.param({"content": "c", "question": "q"}, TextSpec(), "c", id="content"),
    pytest.param(
        {"content": [{"type": "text", "text": "a"}, "b"]}, TextSpec(), "a\nb", id="content-parts"
    ),
    pytest.param({"text": None, "content": "c"}, TextSpec(), "c", id="null-text-skipped"),
    pytest.param({"question": "Q?", "answer": "A."}, TextSpec(), "Q?\nA.", id="question-answer"),
    pytest.param({"question": "Q?", "answer": 42}, TextSpec(), "Q?\n42", id="numeric-answer"),
    pytest.param({"question": "Q?"}, TextSpec(), "Q?", id="question-only"),
    pytest.param({"prompt": "P", "completion": "C"}, TextSpec(), "P\nC", id="prompt-completion"),
    pytest.param({"instruction": "I", "input": "", "output": "O"}, TextSpec(), "I\nO", id="alpaca"),
    pytest.param(
        {"instruction": "I", "input": "X", "output": "O"}, TextSpec(), "I\nX\nO", id="alpaca-full"
    ),
    pytest.param({"messages": CHAT}, TextSpec(), "Be brief.\nHi?\nHello.", id="messages"),
    pytest.param(
        {"messages": PARTS_CHAT}, TextSpec(), "Look:\nand this\nA cat.", id="messages-parts"
    ),
    pytest.param({"conversations": SHAREGPT}, TextSpec(), "Be brief.\nHi?\nHello.", id="sharegpt"),
    pytest.param(
        {"messages": CHAT},
        TextSpec(roles=("user", "assistant")),
        "Hi?\nHello.",
        id="roles-messages",
    ),
    pytest.param(
        {"conversations": SHAREGPT}, TextSpec(roles=("user",)), "Hi?", id="roles-sharegpt-mapped"
    ),
    pytest.param(
        {"conversations": SHAREGPT}, TextSpec(roles=("gpt",)), "Hello.", id="roles-sharegpt-raw"
    ),
    pytest.param({"messages": CHAT}, TextSpec(roles=("tool",)), "", id="roles-none-left"),
    pytest.param({"text": "t"}, TextSpec(roles=("user",)), "t", id="roles-ignore-plain-text"),
    pytest.param("bare", TextSpec(), "bare", id="bare-string"),
    pytest.param({"text": ""}, TextSpec(), "", id="empty-text-allowed"),
    pytest.param(
        {"q": {"stem": "S", "choices": ["a", "b"]}},
        TextSpec(fields=("q.choices.1",)),
        "b",
        id="dotted-list-index",
    ),
    pytest.param(
        {"q": {"choices": ["a", "b"]}}, TextSpec(fields=("q.choices.-1",)), "b", id="negative-index"
    ),
    pytest.param(
        {"q": "Q", "choices": ["a", "b"], "n": 3},
        TextSpec(fields=("q", "choices", "n")),
        "Q\na\nb\n3",
        id="multiple-fields",
    ),
    pytest.param(
        {"a.b": "dotted key", "a": {"b": "nested"}},
        TextSpec(fields=("a.b",)),
        "dotted key",
        id="literal-dotted-key",
    ),
    pytest.param(
        {"dialog": SHAREGPT}, TextSpec(fields=("dialog",), roles=("human",)), "Hi?", id="field-chat"
    ),
    pytest.param({"x": None}, TextSpec(fields=("x",)), "", id="field-null"),
    # A turn or a text part naming its text "text" / "content" was read as empty (a leak in it
    # never scanned).
    pytest.param(
        {"messages": [{"role": "user", "text": "T"}, {"role": "assistant", "content": "C"}]},
        TextSpec(),
        "T\nC",
        id="turn-text-key",
    ),
    pytest.param(
        {"messages": [{"role": "user", "content": [{"type": "text", "content": "P"}]}]},
        TextSpec(roles=("user",)),
        "P",
        id="text-part-content-key",
    ),
    pytest.param(
        {"messages": [{"role": "user", "content": "C", "text": "ignored"}]},
        TextSpec(),
        "C",
        id="turn-content-before-text",
    ),
]


@pytest.mark.parametrize("obj, spec, expected", TEXT_CASES)
def test_extract_text(obj: object, spec: TextSpec, expected: str) -> None:
    assert extract_text(obj, spec, WHERE) == expected


TEXT_ERRORS = [
    pytest.param(
        {"title": "t"}, TextSpec(), "no text field found (looked for text, content", id="no-text"
    ),
    pytest.param(
        {"text": {"a": 1}}, TextSpec(), "field 'text' is an object, not text", id="object-text"
    ),
    pytest.param(
        {"a": {"b": []}}, TextSpec(fields=("a.c",)), "field 'a.c' not found", id="missing-field"
    ),
    pytest.param(
        {"a": ["x"]}, TextSpec(fields=("a.3",)), "field 'a.3' not found", id="index-out-of-range"
    ),
    pytest.param(
        {"a": [[1]]}, TextSpec(fields=("a",)), "field 'a' holds an array", id="nested-list"
    ),
    pytest.param(
        [1, 2], TextSpec(), "record is an array, expected an object or a string", id="array-record"
    ),
    pytest.param(5, TextSpec(), "record is a number", id="number-record"),
    pytest.param(None, TextSpec(), "record is null", id="null-record"),
]


@pytest.mark.parametrize("obj, spec, message", TEXT_ERRORS)
def test_extract_text_errors(obj: object, spec: TextSpec, message: str) -> None:
    with pytest.raises(InputError) as info:
        extract_text(obj, spec, WHERE)
    assert str(info.value).startswith(f"x.jsonl:3: {message}")
    assert (info.value.path, info.value.line) == ("x.jsonl", 3)


ID_CASES = [
    pytest.param({"id": "q1", "_id": "z"}, TextSpec(), "q1", id="id"),
    pytest.param({"id": 7}, TextSpec(), "7", id="int-id"),
    pytest.param({"id": True, "uid": "u"}, TextSpec(), "u", id="bool-not-id"),
    pytest.param({"id": None, "qid": "k"}, TextSpec(), "k", id="null-not-id"),
    pytest.param({"id": [1], "task_id": "t/1"}, TextSpec(), "t/1", id="list-not-id"),
    pytest.param({"question_id": 3, "idx": 9}, TextSpec(), "3", id="question-id"),
    pytest.param({"example_id": "e"}, TextSpec(), "e", id="example-id"),
    pytest.param({"idx": 0}, TextSpec(), "0", id="idx-zero"),
    pytest.param({"id": 1.5}, TextSpec(), "1.5", id="float-id"),
    pytest.param({"id": float("nan"), "uid": "u"}, TextSpec(), "u", id="nan-not-id"),
    pytest.param({"text": "t"}, TextSpec(), None, id="none"),
    pytest.param("bare", TextSpec(), None, id="bare-string"),
    pytest.param(
        {"meta": {"key": 12}, "id": "x"}, TextSpec(id_field="meta.key"), "12", id="id-field"
    ),
]


@pytest.mark.parametrize("obj, spec, expected", ID_CASES)
def test_extract_id(obj: object, spec: TextSpec, expected: str | None) -> None:
    assert extract_id(obj, spec, WHERE) == expected


@pytest.mark.parametrize(
    "obj, message",
    [
        pytest.param({"id": "x"}, "id field 'meta.key' not found", id="missing"),
        pytest.param({"meta": {"key": True}}, "id field 'meta.key' is a boolean", id="bool"),
    ],
)
def test_extract_id_errors(obj: object, message: str) -> None:
    with pytest.raises(InputError, match=rf"^x\.jsonl:3: {message}"):
        extract_id(obj, TextSpec(id_field="meta.key"), WHERE)


def test_corpus_tolerates_missing_id_field(tmp_path: Path) -> None:
    path = write(tmp_path, "c.jsonl", jsonl({"text": "a", "doc": "d1"}, {"text": "b"}))
    records = list(iter_records(path, role="corpus", spec=TextSpec(id_field="doc")))
    assert pairs(records) == [("d1", "a"), ("2", "b")]


# --------------------------------------------------------------------------------------------
# Locators, line numbers, spans


def test_jsonl_ids_lines_and_blank_lines(tmp_path: Path) -> None:
    data = '{"id": "s1", "text": "a"}\n\n   \n{"id": 7, "text": "b"}\r\n{"text": "c"}\n'
    path = write(tmp_path, "e.jsonl", data)
    records = read_eval([path])
    assert pairs(records) == [("s1", "a"), ("7", "b"), ("5", "c")]
    assert [(r.locator.line, r.locator.record) for r in records] == [(1, 0), (4, 1), (5, 2)]


JSONL_SPAN_DATA = (
    '\ufeff{"id": "a", "text": "caf\u00e9 \u4e2d\u6587"}\r\n'
    "\n"
    '  {"text": "x\\ny"}  \r\n'
    '"just a string"\n'
    '{"messages": [{"role": "user", "content": "hi"}]}'
)
JSON_SPAN_DATA = """\ufeff[
  {
    "id": "a",
    "text": "caf\u00e9 \u4e2d\u6587"
  },
  "bare \u00fc",

  {"text": [1, 2]}  ,
  {"nested": {"text": "[not, a, boundary]"}, "text": "}"}
]
"""
JSON_OBJECT_SPAN_DATA = """{"meta": {"rows": [1, 2]},
 "rows": [
   {"id": "r1", "text": "\u00e9\\"]"},
   {"id": "r2",
    "text": "two"}
 ],
 "count": 2}
"""


@pytest.mark.parametrize(
    "name, data, lines",
    [
        pytest.param("s.jsonl", JSONL_SPAN_DATA, [1, 3, 4, 5], id="jsonl"),
        pytest.param("s.json", JSON_SPAN_DATA, [2, 6, 8, 9], id="json-pretty"),
        pytest.param("s.json", JSON_OBJECT_SPAN_DATA, [3, 4], id="json-object"),
    ],
)
def test_spans_round_trip(tmp_path: Path, name: str, data: str, lines: list[int]) -> None:
    path = write(tmp_path, name, data)
    raw = path.read_bytes()
    records = list(iter_records(path, role="corpus"))
    assert [r.locator.line for r in records] == lines
    assert [r.locator.record for r in records] == list(range(len(lines)))
    for record in records:
        obj = orjson.loads(raw_bytes(raw, record))
        assert extract_text(obj, TextSpec(), WHERE) == record.text
        assert extract_id(obj, TextSpec(), WHERE) in (record.id, None)


def test_txt_eval_spans_and_crlf(tmp_path: Path) -> None:
    path = write(tmp_path, "e.txt", "  first line \r\n\nsecond\u00e9")
    raw = path.read_bytes()
    records = list(iter_records(path, role="eval"))
    assert pairs(records) == [("1", "  first line "), ("3", "second\u00e9")]
    assert [raw_bytes(raw, r).decode() for r in records] == [r.text for r in records]


# --------------------------------------------------------------------------------------------
# Errors


ERROR_CASES = [
    pytest.param(
        "e.jsonl",
        b'{"text": "a"}\n{"text": \n',
        "eval",
        TextSpec(),
        "e.jsonl:2: invalid JSON: unexpected end of data",
        id="invalid-json",
    ),
    pytest.param(
        "e.jsonl",
        b'{"text": "a"}\n\n{"text": "\xff"}\n',
        "corpus",
        TextSpec(),
        "e.jsonl:3: invalid UTF-8",
        id="invalid-utf8-jsonl",
    ),
    pytest.param(
        "e.txt",
        b"ok\nbad \xc3\x28\n",
        "eval",
        TextSpec(),
        "e.txt:2: invalid UTF-8",
        id="invalid-utf8-txt-eval",
    ),
    pytest.param(
        "e.txt",
        b"ok\nok\n\xff",
        "corpus",
        TextSpec(),
        "e.txt:3: invalid UTF-8",
        id="invalid-utf8-txt-corpus",
    ),
    pytest.param(
        "e.json",
        b'[\n{"text": "a"},\n"\xfe"]',
        "eval",
        TextSpec(),
        "e.json:3: invalid UTF-8",
        id="invalid-utf8-json",
    ),
    pytest.param(
        "e.jsonl",
        b'{"text": "a"}\n[1]\n',
        "eval",
        TextSpec(),
        "e.jsonl:2: record is an array",
        id="array-record",
    ),
    pytest.param(
        "e.jsonl",
        b'{"text": "a"}\n{"body": "b"}\n',
        "eval",
        TextSpec(),
        "e.jsonl:2: no text field found (looked for text, content, question, prompt, "
        "instruction, messages, conversations); use --field",
        id="no-text-field",
    ),
    pytest.param(
        "e.jsonl",
        b'{"q": "a"}\n',
        "corpus",
        TextSpec(fields=("q", "a")),
        "e.jsonl:1: field 'a' not found",
        id="missing-field",
    ),
    pytest.param(
        "e.jsonl",
        b'{"text": "a"}\n',
        "eval",
        TextSpec(id_field="key"),
        "e.jsonl:1: id field 'key' not found",
        id="missing-id-field",
    ),
    pytest.param("e.jsonl", b"", "eval", TextSpec(), "e.jsonl: no records", id="empty-jsonl"),
    pytest.param(
        "e.jsonl", b"\n  \n\r\n", "corpus", TextSpec(), "e.jsonl: no records", id="blank-jsonl"
    ),
    pytest.param("e.txt", b"\n\n", "eval", TextSpec(), "e.txt: no records", id="empty-txt-eval"),
    pytest.param("e.txt", b"", "corpus", TextSpec(), "e.txt: no records", id="empty-txt-corpus"),
    pytest.param("e.json", b"[]", "eval", TextSpec(), "e.json: no records", id="empty-array"),
    pytest.param("e.json", b" \n", "eval", TextSpec(), "e.json: no records", id="empty-json"),
    pytest.param(
        "e.json", b'{"data": []}', "eval", TextSpec(), "e.json: no records", id="empty-object-array"
    ),
    pytest.param(
        "e.json",
        b'{"id": "a", "body": "some text", "tags": ["x", "y"]}',
        "eval",
        TextSpec(),
        "e.json:1: a JSON object holding the array of strings 'tags' beside the string field(s)",
        id="json-object-strings-beside-text",
    ),
    pytest.param(
        "e.json",
        b'{"text": "a"} x',
        "eval",
        TextSpec(),
        "e.json:1: invalid JSON: extra data after the record",
        id="json-record-then-data",
    ),
    pytest.param(
        "e.json",
        b'{"a": [{"text": "x"}], "b": [{"text": "y"}]}',
        "eval",
        TextSpec(),
        "e.json:1: expected a JSON array of records, an object holding exactly one array",
        id="json-two-arrays",
    ),
    pytest.param(
        "e.json", b'"text"', "eval", TextSpec(), "e.json:1: expected a JSON array", id="json-scalar"
    ),
    pytest.param(
        "e.json",
        b'[\n{"text": "a"},\n{"text": }\n]',
        "eval",
        TextSpec(),
        "e.json:3: invalid JSON",
        id="json-invalid-element",
    ),
    pytest.param(
        "e.json",
        b'[\n{"text": "a"}\n{"text": "b"}]',
        "eval",
        TextSpec(),
        "e.json:3: invalid JSON: expected , or ]",
        id="json-missing-comma",
    ),
    pytest.param(
        "e.json",
        b'[{"text": "a"}]\n\n]',
        "eval",
        TextSpec(),
        "e.json:3: invalid JSON: extra data",
        id="json-extra-data",
    ),
    pytest.param(
        "e.json",
        b'[\n{"text": "a"},\n7]',
        "eval",
        TextSpec(),
        "e.json:3: record is a number",
        id="json-number-record",
    ),
    pytest.param(
        "e.jsonl.gz",
        b"not gzip",
        "eval",
        TextSpec(),
        "e.jsonl.gz:1: cannot read file",
        id="corrupt-gzip",
    ),
    pytest.param(
        "e.json.xz", b"not xz", "eval", TextSpec(), "e.json.xz: cannot read file", id="corrupt-xz"
    ),
]


@pytest.mark.parametrize("name, data, role, spec, message", ERROR_CASES)
def test_input_errors(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    data: bytes,
    role: str,
    spec: TextSpec,
    message: str,
) -> None:
    (tmp_path / name).write_bytes(data)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError) as info:
        list(iter_records(name, role=role, spec=spec))  # type: ignore[arg-type]
    assert str(info.value).startswith(message)


def test_truncated_gzip_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl.gz"
    path.write_bytes(gzip.compress(JSONL * 100)[:-20])
    with pytest.raises(InputError, match="cannot read file"):
        list(iter_records(path, role="corpus"))


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"missing\.jsonl: cannot read file"):
        list(iter_records(tmp_path / "missing.jsonl", role="eval"))


def test_duplicate_ids_name_both_places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(
        tmp_path,
        "eval.jsonl",
        jsonl({"id": "q1", "text": "a"}, {"id": "q2", "text": "b"}, {"id": "q1", "text": "c"}),
    )
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError) as info:
        read_eval(["eval.jsonl"])
    assert str(info.value) == "eval.jsonl:3: duplicate id 'q1' (first seen at eval.jsonl:1)"


def test_duplicate_ids_across_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "a.jsonl", jsonl({"id": 1, "text": "a"}))
    write(tmp_path, "b.jsonl", jsonl({"id": "1", "text": "b"}))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(
        InputError, match=r"^b\.jsonl:1: duplicate id '1' \(first seen at a\.jsonl:1\)"
    ):
        read_eval(["a.jsonl", "b.jsonl"])


def test_read_eval_qualifies_positional_ids_across_files(tmp_path: Path) -> None:
    write(tmp_path, "set/a.jsonl", jsonl({"text": "a"}, {"id": "k", "text": "b"}))
    write(tmp_path, "set/sub/b.txt", "c\n")
    assert pairs(read_eval([tmp_path / "set"])) == [
        ("a.jsonl:1", "a"),
        ("k", "b"),
        ("sub/b.txt:1", "c"),
    ]


def test_iter_corpus_reads_every_path_in_order(tmp_path: Path) -> None:
    write(tmp_path, "c/2.jsonl", jsonl({"text": "x"}))
    write(tmp_path, "c/1.txt", "doc")
    one = write(tmp_path, "one.json", '["y"]')
    records = list(iter_corpus([tmp_path / "c", one]))
    assert pairs(records) == [("1.txt", "doc"), ("1", "x"), ("0", "y")]


# --------------------------------------------------------------------------------------------
# iter_files


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for name in [
        "b.jsonl",
        "a/z.json.gz",
        "a/b/c.txt",
        "a.parquet",
        "A.jsonl",
        "notes.md",
        ".hidden.jsonl",
        ".git/x.jsonl",
        "a/.cache/y.jsonl",
        "data.csv",
        "x.ndjson.zst",
    ]:
        write(tmp_path, f"root/{name}", b"[]")
    return tmp_path / "root"


@pytest.mark.parametrize(
    "include, exclude, expected",
    [
        pytest.param(
            (),
            (),
            ["A.jsonl", "a.parquet", "a/b/c.txt", "a/z.json.gz", "b.jsonl", "x.ndjson.zst"],
            id="all-sorted",
        ),
        pytest.param(("*.jsonl",), (), ["A.jsonl", "b.jsonl"], id="include-basename"),
        pytest.param(("a/*",), (), ["a/b/c.txt", "a/z.json.gz"], id="include-relative"),
        pytest.param(
            (), ("*.gz", "a/b/*"), ["A.jsonl", "a.parquet", "b.jsonl", "x.ndjson.zst"], id="exclude"
        ),
        pytest.param(("*.txt", "b.*"), ("c.txt",), ["b.jsonl"], id="include-and-exclude"),
    ],
)
def test_iter_files(tree: Path, include: tuple, exclude: tuple, expected: list[str]) -> None:
    found = iter_files(tree, include, exclude)
    assert [p.relative_to(tree).as_posix() for p in found] == expected


def test_unread_files_are_the_ones_passed_over_for_their_format(tree: Path) -> None:
    from contam_cli.io.discover import unread_files, unread_warnings

    assert unread_files(tree) == ["data.csv", "notes.md"]
    assert unread_files(tree, exclude=("*.md",)) == ["data.csv"]
    assert unread_files(tree, include=("*.jsonl",)) == []
    assert unread_files(tree / "notes.md") == []  # a file named itself is read (as text)
    (w,) = unread_warnings([[tree], "a text, not a path"])
    assert w.startswith(f"{tree}: 2 file(s) not read, of no known format: data.csv, notes.md (")
    assert unread_warnings([[tree]], exclude=("*.md", "*.csv")) == []
    assert unread_warnings([["a list of texts"], None]) == []


def test_iter_files_single_file_and_errors(tree: Path) -> None:
    assert iter_files(tree / "notes.md") == [tree / "notes.md"]
    with pytest.raises(InputError, match="no such file or directory"):
        iter_files(tree / "nope")
    with pytest.raises(InputError, match=r"root: no input files found \(looked for \.jsonl"):
        iter_files(tree, include=("*.nothing",))


# --------------------------------------------------------------------------------------------
# Writers


def test_sha256_file(tmp_path: Path) -> None:
    path = write(tmp_path, "a.bin", b"abc")
    assert sha256_file(path) == ("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")


@pytest.mark.parametrize("suffix", ["", ".gz", ".bz2", ".xz", ".zst"])
def test_atomic_writer_round_trip(tmp_path: Path, suffix: str) -> None:
    out = tmp_path / "new" / "dir" / f"out.jsonl{suffix}"
    with atomic_writer(out) as fh:
        fh.write(JSONL)
    assert pairs(list(iter_records(out, role="eval"))) == PAIRS
    assert sorted(p.name for p in out.parent.iterdir()) == [out.name]


def test_atomic_writer_gzip_is_deterministic(tmp_path: Path) -> None:
    write_atomic(tmp_path / "a.txt.gz", "text")
    write_atomic(tmp_path / "b.txt.gz", "text")
    assert (tmp_path / "a.txt.gz").read_bytes() == (tmp_path / "b.txt.gz").read_bytes()


def test_write_atomic_text_and_bytes(tmp_path: Path) -> None:
    write_atomic(tmp_path / "t.txt", "caf\u00e9\n")
    write_atomic(tmp_path / "b.bin", b"\x00\x01")
    assert (tmp_path / "t.txt").read_bytes() == "caf\u00e9\n".encode()
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\x01"
    umask = os.umask(0o022)
    os.umask(umask)
    assert (tmp_path / "t.txt").stat().st_mode & 0o777 == 0o666 & ~umask


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_atomic_writer_failure_leaves_nothing(tmp_path: Path, error: type[BaseException]) -> None:
    out = tmp_path / "out.jsonl.gz"
    with pytest.raises(error), atomic_writer(out, mode="w") as fh:
        fh.write("partial")
        raise error()
    assert list(tmp_path.iterdir()) == []


def test_atomic_writer_failure_keeps_old_file(tmp_path: Path) -> None:
    out = write(tmp_path, "out.txt", "old")
    with pytest.raises(RuntimeError), atomic_writer(out) as fh:
        fh.write(b"new")
        raise RuntimeError
    assert out.read_text(encoding="utf-8") == "old"
    assert list(tmp_path.iterdir()) == [out]


def test_atomic_writer_refuses_a_directory(tmp_path: Path) -> None:
    with pytest.raises(OutputError, match="is a directory"), atomic_writer(tmp_path):
        pass


def refuse_same_file(tmp_path: Path) -> tuple[Path, list[Any]]:
    source = write(tmp_path, "in.jsonl", JSONL)
    return source, [str(source)]


def refuse_symlink(tmp_path: Path) -> tuple[Path, list[Any]]:
    source = write(tmp_path, "in.jsonl", JSONL)
    return symlink_or_skip(tmp_path / "link.jsonl", source), [source]


def refuse_hardlink(tmp_path: Path) -> tuple[Path, list[Any]]:
    source = write(tmp_path, "in.jsonl", JSONL)
    os.link(source, tmp_path / "hard.jsonl")
    return tmp_path / "hard.jsonl", [source]


def refuse_inside_dir(tmp_path: Path) -> tuple[Path, list[Any]]:
    write(tmp_path, "data/in.jsonl", JSONL)
    return tmp_path / "data" / "sub" / "out.jsonl", [tmp_path / "other.jsonl", tmp_path / "data"]


@pytest.mark.parametrize(
    "setup", [refuse_same_file, refuse_symlink, refuse_hardlink, refuse_inside_dir]
)
def test_atomic_writer_refuses_inputs(
    tmp_path: Path, setup: Callable[[Path], tuple[Path, list[Any]]]
) -> None:
    out, inputs = setup(tmp_path)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    with pytest.raises(OutputError, match="refusing"), atomic_writer(out, inputs=inputs) as fh:
        fh.write(b"x")
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before
    assert not (tmp_path / "data" / "sub").exists()


# --------------------------------------------------------------------------------------------
# Byte ranges


def test_byte_range_rejects_other_formats(tmp_path: Path) -> None:
    for name, role in [("a.jsonl.gz", "eval"), ("a.json", "eval"), ("a.txt", "corpus")]:
        path = write(tmp_path, name, JSONL if name.endswith("gz") else '["x"]')
        with pytest.raises(ValueError, match="byte_range"):
            list(iter_records(path, role=role, byte_range=(0, 10)))  # type: ignore[arg-type]


def test_byte_range_locators(tmp_path: Path) -> None:
    path = write(tmp_path, "a.jsonl", '{"text": "a"}\n{"id": "k", "text": "b"}\n{"text": "c"}\n')
    records = list(iter_records(path, role="eval", byte_range=(1, 100)))
    assert pairs(records) == [("k", "b"), ("@39", "c")]
    assert [(r.locator.line, r.locator.record, r.locator.span) for r in records] == [
        (None, None, (14, 38)),
        (None, None, (39, 52)),
    ]
    assert list(iter_records(path, role="eval", byte_range=(5, 5))) == []


RANGE_LINES = st.lists(
    st.one_of(
        st.text(alphabet="ab \u00e9\u4e2d", max_size=6).map(lambda t: json.dumps({"text": t})),
        st.sampled_from(["", "  ", '"s"', "\r"]),
    ),
    max_size=12,
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    lines=RANGE_LINES,
    crlf=st.booleans(),
    final_newline=st.booleans(),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=6),
)
def test_byte_ranges_partition_records(
    tmp_path: Path, lines: list[str], crlf: bool, final_newline: bool, cuts: list[int]
) -> None:
    newline = "\r\n" if crlf else "\n"
    data = newline.join(lines) + (newline if final_newline else "")
    if not data.strip():
        return
    path = tmp_path / "r.jsonl"
    path.write_bytes(data.encode())
    size = path.stat().st_size
    whole = [(r.text, r.locator.span) for r in iter_records(path, role="corpus")]
    bounds = sorted({0, size, *(min(c, size) for c in cuts)})
    parts = [
        (r.text, r.locator.span)
        for start, end in zip(bounds, bounds[1:])
        for r in iter_records(path, role="corpus", byte_range=(start, end))
    ]
    assert parts == whole


# -- iter_text_batches: the scanner's fast reader gives exactly what iter_records gives -----------

from contam_cli.io import iter_text_batches  # noqa: E402

LINE = st.one_of(
    st.fixed_dictionaries({"id": st.text(max_size=3), "text": st.text(max_size=20)}),
    st.fixed_dictionaries({"text": st.text(max_size=20)}),
    st.fixed_dictionaries(
        {
            "messages": st.lists(
                st.fixed_dictionaries(
                    {
                        "role": st.sampled_from(["user", "assistant"]),
                        "content": st.text(max_size=10),
                    }
                ),
                min_size=1,
                max_size=3,
            )
        }
    ),
    st.fixed_dictionaries({"prompt": st.text(max_size=8), "completion": st.text(max_size=8)}),
    st.text(min_size=1, max_size=10),
)


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(st.one_of(LINE, st.just(None)), min_size=1, max_size=25),
    crlf=st.booleans(),
    bom=st.booleans(),
    gz=st.booleans(),
    chunk=st.integers(1, 200),
    cut=st.integers(0, 400),
)
def test_text_batches_equal_records(
    tmp_path_factory: pytest.TempPathFactory,
    lines: list,
    crlf: bool,
    bom: bool,
    gz: bool,
    chunk: int,
    cut: int,
) -> None:
    if all(x is None for x in lines):
        lines = [*lines, {"text": "x"}]
    end = b"\r\n" if crlf else b"\n"
    body = b"".join((b"" if x is None else orjson.dumps(x)) + end for x in lines)
    d = tmp_path_factory.mktemp("tb")
    path = d / ("c.jsonl.gz" if gz else "c.jsonl")
    raw = (b"\xef\xbb\xbf" if bom else b"") + body
    path.write_bytes(gzip.compress(raw) if gz else raw)
    try:
        want = list(iter_records(path, role="corpus"))
    except InputError as err:  # e.g. a BOM on an otherwise blank first line: both must refuse
        with pytest.raises(InputError) as again:
            list(iter_text_batches(path, chunk_bytes=chunk))
        assert str(again.value) == str(err)
        return
    batches = list(iter_text_batches(path, chunk_bytes=chunk))
    got = [(b.texts[i], b.offsets[i], b.record(i)) for b in batches for i in range(len(b.texts))]
    assert [g[0] for g in got] == [r.text.encode() for r in want]
    assert [g[2] for g in got] == want
    assert [g[1] for g in got] == [r.locator.span[0] for r in want]
    if not gz:
        ranges = [(0, cut), (cut, len(raw))]
        ranged = [
            b.record(i)
            for r in ranges
            for b in iter_text_batches(path, byte_range=r, chunk_bytes=chunk)
            for i in range(len(b.texts))
        ]
        assert [r.text for r in ranged] == [r.text for r in want]


@pytest.mark.parametrize(
    "line",
    [
        '{"id":"a","text":"café — “ok”"}',
        '{"meta":{"text":"décoy"},"text":"réal"}',
        '{"text" : "é spaced","meta":{"text":"décoy"}}',
        '{"type":"text","text":"ünique"}',
        '{"text":"é with \\"escaped\\" quotes and \\\\n"}',
        '{"text":"\\u00e9t\\u00e9"}',
        '{"text":"plain ascii"}',
    ],
)
def test_text_batches_take_the_top_level_text_exactly(tmp_path: Path, line: str) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text('{"text":"first"}\n' + line + "\n", encoding="utf-8", newline="\n")
    (batch,) = list(iter_text_batches(path))
    assert batch.texts[1] == orjson.loads(line)["text"].encode("utf-8")
