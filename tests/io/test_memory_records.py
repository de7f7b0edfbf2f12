"""records_from_bytes reads bytes as the file readers read a file of that name: the same records
(ids, texts, lines, ordinals, byte spans) and the same one-line errors, compressed or not."""

from __future__ import annotations

import bz2
import gzip
import lzma
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contam_cli.errors import ContamError, InputError, UsageError
from contam_cli.io import TextSpec, iter_records, read_eval
from contam_cli.io.memory import check_roles_in_memory, records_from_bytes
from contam_cli.io.model import Record
from contam_cli.io.roles import PLAIN_SAMPLE, check_roles, check_roles_of

zstandard = pytest.importorskip("zstandard")

COMPRESS: dict[str, Callable[[bytes], bytes]] = {
    "": lambda b: b,
    ".gz": lambda b: gzip.compress(b, mtime=0),
    ".bz2": bz2.compress,
    ".xz": lzma.compress,
    ".zst": lambda b: zstandard.ZstdCompressor().compress(b),
}

_text = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=20)
_record = st.fixed_dictionaries(
    {"text": _text}, optional={"id": st.text(max_size=4), "extra": st.integers(-1000, 1000)}
)
_chat = st.fixed_dictionaries(
    {
        "messages": st.lists(
            st.fixed_dictionaries(
                {"role": st.sampled_from(["user", "assistant", "system"]), "content": _text}
            ),
            max_size=3,
        )
    }
)
_objects = st.lists(st.one_of(_record, _chat), max_size=6)
_ends = st.sampled_from([b"\n", b"\r\n"])


def _jsonl(objs: list[object], end: bytes, blank: bool, bom: bool) -> bytes:
    lines = [orjson.dumps(o) for o in objs]
    if blank:
        lines.insert(len(lines) // 2, b"  ")
    return (b"\xef\xbb\xbf" if bom else b"") + b"".join(line + end for line in lines)


def _json(objs: list[object], pretty: bool, wrapped: bool) -> bytes:
    body: object = {"data": objs, "version": 1} if wrapped else objs
    return orjson.dumps(body, option=orjson.OPT_INDENT_2 if pretty else 0)


def _same(rel: list[Record], mem: list[Record], path: Path, name: str) -> None:
    """Equal but for the locator's path (the file's path there, the name here)."""
    assert [r.locator.path for r in rel] == [str(path)] * len(rel)
    assert [r.locator.path for r in mem] == [name] * len(mem)
    key = [(r.id, r.text, r.locator.line, r.locator.record, r.locator.span) for r in rel]
    assert key == [(r.id, r.text, r.locator.line, r.locator.record, r.locator.span) for r in mem]


def _outcome(read: Callable[[], list[Record]], path: str) -> tuple[str, object]:
    """('ok', records) or ('error', the message with the path as a placeholder)."""
    try:
        return "ok", read()
    except ContamError as e:
        return "error", (type(e).__name__, str(e).replace(path, "<PATH>"))


def _check(tmp_path: Path, data: bytes, name: str, role: str, spec: TextSpec) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    if role == "eval":
        got_file = _outcome(lambda: read_eval([path], spec), str(path))
    else:
        got_file = _outcome(lambda: list(iter_records(path, role="corpus", spec=spec)), str(path))
    got_mem = _outcome(lambda: records_from_bytes(data, name, role=role, spec=spec), name)  # type: ignore[arg-type]
    assert got_file[0] == got_mem[0], (got_file, got_mem)
    if got_file[0] == "ok":
        _same(got_file[1], got_mem[1], path, name)  # type: ignore[arg-type]
    else:
        assert got_file[1] == got_mem[1]


_SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@_SETTINGS
@given(
    objs=_objects,
    end=_ends,
    blank=st.booleans(),
    bom=st.booleans(),
    role=st.sampled_from(["eval", "corpus"]),
    compression=st.sampled_from(sorted(COMPRESS)),
    roles=st.sampled_from([None, ("user",)]),
)
def test_jsonl_bytes_read_as_the_file(
    tmp_path: Path,
    objs: list[object],
    end: bytes,
    blank: bool,
    bom: bool,
    role: str,
    compression: str,
    roles: tuple[str, ...] | None,
) -> None:
    data = COMPRESS[compression](_jsonl(objs, end, blank, bom))
    _check(tmp_path, data, f"set.jsonl{compression}", role, TextSpec(roles=roles))


@_SETTINGS
@given(
    objs=_objects,
    pretty=st.booleans(),
    wrapped=st.booleans(),
    role=st.sampled_from(["eval", "corpus"]),
    compression=st.sampled_from(["", ".gz", ".zst"]),
)
def test_json_bytes_read_as_the_file(
    tmp_path: Path, objs: list[object], pretty: bool, wrapped: bool, role: str, compression: str
) -> None:
    data = COMPRESS[compression](_json(objs, pretty, wrapped))
    _check(tmp_path, data, f"set.json{compression}", role, TextSpec())


@_SETTINGS
@given(
    lines=st.lists(st.one_of(_text, st.just(""), st.just("  ")), max_size=6),
    end=_ends,
    bom=st.booleans(),
    role=st.sampled_from(["eval", "corpus"]),
    compression=st.sampled_from(["", ".bz2", ".xz"]),
)
def test_txt_bytes_read_as_the_file(
    tmp_path: Path, lines: list[str], end: bytes, bom: bool, role: str, compression: str
) -> None:
    raw = (b"\xef\xbb\xbf" if bom else b"") + end.join(t.encode() for t in lines)
    _check(tmp_path, COMPRESS[compression](raw), f"set.ndjson.txt{compression}", role, TextSpec())


@_SETTINGS
@given(junk=st.binary(max_size=40), role=st.sampled_from(["eval", "corpus"]))
def test_arbitrary_bytes_fail_or_read_as_the_file(tmp_path: Path, junk: bytes, role: str) -> None:
    for name in ("junk.jsonl", "junk.json", "junk.txt"):
        _check(tmp_path, junk, name, role, TextSpec())


BAD = [
    (
        "eval.jsonl",
        b'{"id": "a", "text": "x"}\n{"id": "b", "text": \n',
        "eval.jsonl:2: invalid JSON",
    ),
    ("eval.jsonl", b'{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n', "duplicate id 'a'"),
    ("eval.txt", b"fine\n\xff\xfe broken\n", "eval.txt:2: invalid UTF-8"),
    ("eval.json", b'[{"id": "a", "text": "x"},\n {"id": "b"]', "eval.json:2: invalid JSON"),
    ("eval.jsonl", b"\n \n", "eval.jsonl: no records"),
    ("eval.jsonl", b'{"id": "a", "txt": "x"}\n', "eval.jsonl:1: no text field found"),
    ("eval.csv", b"id,text\n", "eval.csv: unknown file format"),
]


@pytest.mark.parametrize(("name", "data", "message"), BAD, ids=[b[2] for b in BAD])
def test_bad_input_is_the_file_readers_one_line_error(
    tmp_path: Path, name: str, data: bytes, message: str
) -> None:
    with pytest.raises(InputError) as mem:
        records_from_bytes(data, name, role="eval")
    assert message in str(mem.value) and "\n" not in str(mem.value)
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(InputError) as on_disk:
        read_eval([path])
    assert str(on_disk.value).replace(str(path), name) == str(mem.value)


@pytest.mark.parametrize("compression", [".gz", ".bz2", ".xz", ".zst"])
def test_truncated_compressed_bytes_are_an_error_as_for_a_file(
    tmp_path: Path, compression: str
) -> None:
    lines = b"".join(orjson.dumps({"id": str(i), "text": f"t {i}"}) + b"\n" for i in range(500))
    packed = COMPRESS[compression](lines)
    data = packed[: len(packed) // 2]
    name = f"c.jsonl{compression}"
    with pytest.raises(InputError, match="cannot read file") as mem:
        records_from_bytes(data, name, role="corpus")
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(InputError) as on_disk:
        list(iter_records(path, role="corpus"))
    assert str(on_disk.value).replace(str(path), name) == str(mem.value)


def test_parquet_and_non_bytes_are_refused_with_a_message() -> None:
    with pytest.raises(InputError, match="parquet is not read from memory"):
        records_from_bytes(b"PAR1", "x.parquet", role="eval")
    with pytest.raises(UsageError, match="expected bytes"):
        records_from_bytes("text", "x.txt", role="eval")  # type: ignore[arg-type]


@pytest.mark.parametrize("roles", [("user",), ("usr",), ("user", "tool")])
def test_roles_checked_in_memory_as_on_disk(tmp_path: Path, roles: tuple[str, ...]) -> None:
    chat = b'{"id": "1", "messages": [{"role": "user", "content": "hi there"}]}\n'
    plain = b'{"id": "2", "text": "no chat here"}\n'
    inputs = [(chat, "a.jsonl"), (plain, "b.jsonl")]
    paths = []
    for data, name in inputs:
        (tmp_path / name).write_bytes(data)
        paths.append(tmp_path / name)
    try:
        check_roles(paths, roles, "inputs")
    except UsageError as e:
        with pytest.raises(UsageError) as mem:
            check_roles_in_memory(inputs, roles, "inputs")
        assert str(mem.value) == str(e)
    else:
        check_roles_in_memory(inputs, roles, "inputs")
    with pytest.raises(UsageError, match="no chat turn in the inputs"):
        check_roles_in_memory([(plain, "b.jsonl")], roles)


def test_roles_checked_input_by_input() -> None:
    # NOTE: `user` in one input let another's `User` turns through, read as empty texts.
    chat = b'{"id": "1", "messages": [{"role": "user", "content": "hi there"}]}\n'
    other = b'{"id": "2", "messages": [{"role": "User", "content": "a leak"}]}\n'
    plain = b'{"id": "3", "text": "no chat here"}\n'
    with pytest.raises(UsageError) as e:
        check_roles_in_memory(
            [(chat, "a.jsonl"), (plain, "p.jsonl"), (other, "b.jsonl")], ("user",)
        )
    assert str(e.value).startswith("b.jsonl: --roles user: no chat turn in it has any of these")
    assert "(its roles: User;" in str(e.value) and "\n" not in str(e.value)
    check_roles_in_memory(
        [(chat, "a.jsonl"), (plain, "p.jsonl"), (other, "b.jsonl")], ("user", "User")
    )


def test_a_plain_input_is_not_read_past_its_sample() -> None:
    read = []

    def plain() -> Iterator[dict[str, str]]:
        for i in range(10 * PLAIN_SAMPLE):
            read.append(i)
            yield {"text": "no chat"}

    chat = iter([{"messages": [{"role": "user", "content": "hi"}]}])
    check_roles_of([("a.jsonl", chat), ("p.jsonl", plain())], ("user",), "inputs")
    assert len(read) == PLAIN_SAMPLE


@pytest.mark.parametrize("compression", [".bz2", ".xz", ".gz"])
def test_damaged_data_after_the_first_stream_is_an_error_as_for_a_file(
    tmp_path: Path, compression: str
) -> None:
    lines = b'{"id": "a", "text": "first stream"}\n'
    data = COMPRESS[compression](lines) + COMPRESS[compression](lines)[:-8] + b"not a stream"
    name = f"c.jsonl{compression}"
    path = tmp_path / name
    path.write_bytes(data)
    got_file = _outcome(lambda: list(iter_records(path, role="corpus")), str(path))
    got_mem = _outcome(lambda: records_from_bytes(data, name, role="corpus"), name)
    assert got_file[0] == got_mem[0] == "error"
    assert got_file[1] == got_mem[1]
