"""The compiled JSONL route (io.jsonl_fast, io._jsonl_kernels).

The line scanner is sure or it declines: every line it accepts is one orjson reads as an object
with a string "text", and the bytes it writes are that string's UTF-8; common corpus lines are
accepted; blank lines are blank. The route built on it gives exactly the batches, records, line
counts and errors of the line-by-line route, whatever the blocks, chunks and byte ranges."""

from __future__ import annotations

import json

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contam_cli.io.accel import load

# NOTE: through accel.load, which empties the kernels' cache when a module they compile in has
# changed (a plain import would run a kernel cached before an edit of _json_scalars).
kernels = load("contam_cli.io._jsonl_kernels")
if kernels is None:
    pytest.skip("needs numba (extra fast)", allow_module_level=True)
BLANK, FAST, FALLBACK = kernels.BLANK, kernels.FAST, kernels.FALLBACK

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(1 << 70), 1 << 70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
values = st.recursive(
    scalars,
    lambda kids: (
        st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=4), kids, max_size=3)
    ),
    max_leaves=10,
)
texts = st.text() | st.sampled_from(["", "a\\b", 'quote " inside', "tab\tnew\nline", "\x00\x1f"])


def _scan(lines: list[bytes], at_file_start: bool = False) -> list[tuple[int, bytes | None]]:
    buf = b"\n".join(lines)
    starts, ends, status, t0, t1, out = kernels.scan_lines(
        np.frombuffer(buf, dtype=np.uint8), at_file_start
    )
    assert len(status) == len(lines)
    data = out.tobytes()
    for k, line in enumerate(lines):
        assert buf[starts[k] : ends[k]] == line
    return [(int(s), data[a:b] if s == FAST else None) for s, a, b in zip(status, t0, t1)]


def _check(line: bytes, status: int, got: bytes | None) -> None:
    """Accepted lines are exactly what orjson reads."""
    if status != FAST:
        return
    obj = orjson.loads(line)
    assert type(obj) is dict and type(obj["text"]) is str, line
    assert obj["text"].encode() == got, line


def _encode(obj: dict, style: int) -> bytes:
    if style == 0:
        return orjson.dumps(obj)
    if style == 1:
        return json.dumps(obj, ensure_ascii=True).encode()
    return json.dumps(obj, ensure_ascii=False, separators=(" , ", " :  "), indent=None).encode()


@settings(max_examples=400, deadline=None)
@given(text=texts, others=st.dictionaries(st.text(max_size=5), values, max_size=4),
       style=st.integers(0, 2), text_first=st.booleans())  # fmt: skip
def test_accepted_lines_are_read_exactly_as_orjson_reads_them(
    text: str, others: dict, style: int, text_first: bool
) -> None:
    others.pop("text", None)
    obj = {"text": text, **others} if text_first else {**others, "text": text}
    try:
        line = _encode(obj, style)
    except (TypeError, ValueError, OverflowError):
        return
    [(status, got)] = _scan([line])
    _check(line, status, got)
    if all(isinstance(v, (str, bool, type(None))) for v in others.values()):
        assert status == FAST, line  # ordinary lines (no numbers to read twice) are accepted


@settings(max_examples=1500, deadline=None)
@given(
    base=st.sampled_from([
        b'{"text": "caf\\u00e9 \\ud83d\\ude00", "id": 12, "m": {"a": [1, 2.5, true, null]}}',
        b'{"id":"x","text":"plain words","meta":{"k":[{}],"e":[]}}',
        '{"text": "d\u00e9j\u00e0 vu \u65e5\u672c"}'.encode(),
    ]),
    edits=st.lists(st.tuples(st.integers(0, 200), st.binary(max_size=3), st.integers(0, 3)),
                   max_size=3),
)  # fmt: skip
def test_damaged_lines_are_never_accepted_wrongly(
    base: bytes, edits: list[tuple[int, bytes, int]]
) -> None:
    line = bytearray(base)
    for at, insert, cut in edits:
        at %= len(line) + 1
        line[at : at + cut] = insert
    line_bytes = bytes(line).replace(b"\n", b" ")
    [(status, got)] = _scan([line_bytes])
    if status == FAST:
        _check(line_bytes, status, got)
    else:
        assert got is None


_SECONDS = [0x00, 0x22, 0x41, 0x5C, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF]


def test_every_two_and_three_byte_sequence_at_every_place_in_an_eight_byte_word() -> None:
    """What orjson reads is accepted with its exact bytes, anything else declined, wherever a
    sequence falls in the string's 8-byte words (the common sequences are read without leaving
    the string's 8-byte loop, the others by the general check)."""
    lines = [
        b'{"text":"' + b"a" * before + bytes([lead, b1, *tail]) + b'xyz"}'
        for lead in range(0x80, 0x100)
        for b1 in _SECONDS
        for tail in ([], *([b2] for b2 in _SECONDS))
        for before in range(10)
    ]
    for line, (status, got) in zip(lines, _scan(lines)):
        try:
            text = orjson.loads(line)["text"]
        except orjson.JSONDecodeError:
            assert status == FALLBACK, line
            continue
        if status == FAST:
            assert got == text.encode(), line
        else:  # declining is allowed where an escape needs the full reader
            assert b"\\" in line, line


def test_common_corpus_lines_are_accepted_and_blank_lines_are_blank() -> None:
    lines = [
        b'{"text": "The quick brown fox.\\nA second line with \\"quotes\\"."}',
        b'{"id": "doc-1", "text": "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac", "score": 0.25}',
        b'{"text":"emoji \\ud83d\\ude00","url":"https://example.org/a?b=c","n":-3}',
        b"",
        b" \t\r",
        b'{"text": "crlf line"}\r',
    ]
    got = _scan(lines)
    assert [s for s, _ in got] == [FAST, FAST, FAST, BLANK, BLANK, FAST]
    for line, (status, text) in zip(lines, got):
        _check(line, status, text)


@pytest.mark.parametrize(
    "line",
    [
        b'{"text": "a", "text": "b"}',  # a repeated key
        b'{"te\\u0078t": "escaped key"}',
        b'{"text": "lone \\ud800 surrogate"}',
        b'{"text": "bad utf-8 \xff"}',
        b'{"text": "raw \x01 control"}',
        b'{"text": 1e5}',
        b'{"text": "x", "n": 1e400}',
        b'{"text": "x", "n": 123456789012345678901}',
        b'{"text": "x",}',
        b'["text", "x"]',
        b'{"content": "no text key"}',
        b'{"text": "x"} trailing',
        b'{"text": "x", "n": NaN}',
    ],
)
def test_lines_the_full_reader_must_see_are_declined(line: bytes) -> None:
    [(status, _)] = _scan([line])
    assert status == FALLBACK


def test_the_first_line_of_a_file_goes_to_the_full_reader() -> None:
    assert _scan([b'{"text": "a"}', b'{"text": "b"}'], at_file_start=True)[0][0] == FALLBACK


# -- the route: exactly the line-by-line route's batches, records and errors ---------------------

from pathlib import Path  # noqa: E402

from contam_cli.errors import InputError  # noqa: E402
from contam_cli.io import batches as batches_module  # noqa: E402
from contam_cli.io import jsonl_fast  # noqa: E402
from contam_cli.io.batches import iter_text_batches  # noqa: E402
from contam_cli.io.model import ReadNotes  # noqa: E402

LINES = st.one_of(
    st.builds(lambda t: orjson.dumps({"text": t}), st.text(max_size=30)),
    st.builds(lambda i, t: orjson.dumps({"id": i, "text": t, "n": 3}), st.text(max_size=4),
              st.text(max_size=30)),  # fmt: skip
    st.builds(lambda t: json.dumps({"m": {"text": "x"}, "text": t}).encode(), st.text(max_size=9)),
    st.sampled_from([
        b"",
        b"  \t",
        b'{"text": "lone \\ud800 surrogate"}',
        b'{"te\\u0078t": "escaped key"}',
        b'{"text": "exp", "n": 1e5}',
        b'{"text": "a", "text": "b"}',
        b'{"messages": [{"role": "user", "content": "hi there"}]}',
        b'{"text": "crlf"}\r',
        b'"a bare string"',
        b"\xef\xbb\xbf",
        b"\xef\xbb\xbf\r",
        b'{"text": "caf\xc3\xa9 \xe2\x80\x94 \xe6\x97\xa5"}',
    ]),
)  # fmt: skip


def _read(path: Path, fast: bool, **kw: object) -> object:
    """Everything a caller can see of the batches of one route (or the error it raises)."""
    with pytest.MonkeyPatch.context() as m:
        if not fast:
            m.setattr(batches_module, "kernels", lambda: None)
        notes = ReadNotes()
        count: list[int] = []
        try:
            out = [
                (
                    list(b.texts),
                    list(b.offsets),
                    b.first_ordinal,
                    list(b.lines),
                    [b.record(i) for i in range(len(b.texts))],
                )  # fmt: skip
                for b in iter_text_batches(path, line_count=count, notes=notes, **kw)  # type: ignore[arg-type]
            ]
        except InputError as e:
            return ("error", str(e))
        return out, count, notes.surrogates


@settings(max_examples=120, deadline=None)
@given(
    lines=st.lists(LINES, min_size=1, max_size=30),
    block=st.integers(1, 64),
    chunk=st.integers(1, 120),
    cut=st.floats(0, 1),
    trailing=st.booleans(),
    big=st.sampled_from([None, 20, 60]),
)
def test_the_compiled_route_reads_what_the_line_route_reads(
    tmp_path_factory: pytest.TempPathFactory,
    lines: list[bytes],
    block: int,
    chunk: int,
    cut: float,
    trailing: bool,
    big: int | None,
) -> None:
    path = tmp_path_factory.mktemp("c") / "c.jsonl"
    data = b"\n".join(lines) + (b"\n" if trailing else b"")
    path.write_bytes(data)
    at = int(cut * len(data))
    with pytest.MonkeyPatch.context() as m:
        # Tiny blocks: lines cut across reads, several blocks per batch and batches per block.
        m.setattr(jsonl_fast, "BLOCK_SIZE", block)
        if big is not None:  # "very long" lines bypass the kernel (and its packed buffer)
            m.setattr(jsonl_fast, "BIG_LINE", big)
        for rng in [None, (0, at), (at, len(data))]:
            fast = _read(path, True, chunk_bytes=chunk, byte_range=rng)
            assert fast == _read(path, False, chunk_bytes=chunk, byte_range=rng)


def test_the_compiled_route_packs_its_documents(tmp_path: Path) -> None:
    from contam_cli.text import PackedTexts, Tokenizer

    path = tmp_path / "c.jsonl"
    rows = [{"text": f"document number {i} caf\u00e9"} for i in range(50)]
    path.write_bytes(b"{}\n" + b"\n".join(orjson.dumps(r) for r in rows) + b"\n")
    with pytest.raises(InputError, match=r"c\.jsonl:1: no text field"):  # read by the full reader
        list(iter_text_batches(path))
    path.write_bytes(b"\n".join(orjson.dumps(r) for r in rows) + b"\n")
    (batch,) = list(iter_text_batches(path))
    assert isinstance(batch.texts, PackedTexts)
    assert list(batch.texts) == [r["text"].encode() for r in rows]
    tk = Tokenizer()
    packed = tk.tokens(batch.texts)
    plain = tk.tokens(list(batch.texts))
    assert (packed.hashes == plain.hashes).all() and (packed.doc == plain.doc).all()
