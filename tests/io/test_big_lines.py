"""Lines over BIG_LINE are parsed by the standard library (orjson holds about 12× a huge line
while parsing it) under orjson's rules: the same objects, the same refusals; and iter_lines
joins a line longer than a block from its pieces alone."""

from __future__ import annotations

import io

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import contam_cli.io.lines as lines
from contam_cli.errors import InputError
from contam_cli.io.lines import iter_lines, parse_line
from contam_cli.io.model import ReadNotes

WHERE = ("big.jsonl", 3)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(1 << 63), (1 << 64) - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda kids: (
        st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=5), kids, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_a_big_line_parses_as_orjson_parses_it(value: object) -> None:
    line = orjson.dumps(value)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(lines, "BIG_LINE", 0)
        assert parse_line(line, WHERE) == orjson.loads(line)


@pytest.mark.parametrize(
    "line",
    [
        b'{"text": NaN}',
        b'{"text": Infinity}',
        b'{"n": 18446744073709551616}',
        b'{"n": -9223372036854775809}',
        b'{"n": 1' + b"0" * 400 + b"}",
        b'{"n": 1e400}',
        b'{"text": "a"',
        b'{"text": "\xff"}',
        b"[1, 2,]",
    ],
)
def test_a_big_line_is_read_or_refused_as_orjson_does(
    monkeypatch: pytest.MonkeyPatch, line: bytes
) -> None:
    monkeypatch.setattr(lines, "BIG_LINE", 0)
    try:
        expected = orjson.loads(line)
    except orjson.JSONDecodeError:
        with pytest.raises(InputError) as caught:
            parse_line(line, WHERE)
        assert str(caught.value).startswith("big.jsonl:3:")
    else:
        assert parse_line(line, WHERE) == expected


def test_lone_surrogates_in_a_big_line_are_replaced_and_noted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    line = b'{"text": "a\\ud800b"}'
    small_notes, big_notes = ReadNotes(), ReadNotes()
    small = parse_line(line, WHERE, small_notes)
    monkeypatch.setattr(lines, "BIG_LINE", 0)
    assert parse_line(line, WHERE, big_notes) == small == {"text": "a\ufffdb"}
    assert big_notes.surrogates == small_notes.surrogates == {"big.jsonl": 1}


@pytest.mark.parametrize("block", [1, 3, 7, 64])
def test_long_lines_are_joined_from_their_pieces(
    monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    data = b"short\n" + b"x" * 100 + b"\n\nmid line\n" + b"y" * 33 + b"\ntail"
    monkeypatch.setattr(lines, "BLOCK_SIZE", block)
    got = list(iter_lines(io.BytesIO(data), 0, "f.jsonl"))
    expected, offset = [], 0
    for piece in data.split(b"\n"):
        expected.append((offset, piece))
        offset += len(piece) + 1
    assert got == expected
