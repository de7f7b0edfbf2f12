"""Regressions from fuzzing (fuzz/, scripts/fuzz.sh): every input a fuzz target once failed on,
reduced, replayed through the same target's check, plus the behaviour each fix pinned down.

The targets are plain modules (fuzz/ is not a package) loaded by path; atheris is not needed to
replay them. Each target's seed corpus (built from fixtures/) must pass as well, so a change that
breaks a harness shows here and not only in a fuzzing run.
"""

from __future__ import annotations

import bz2
import gzip
import importlib.util
import lzma
import sys
from pathlib import Path
from types import ModuleType

import pytest
from conftest import ROOT

from contam_cli.errors import InputError
from contam_cli.io.jsonarray import iter_array_elements
from contam_cli.io.readers import iter_records
from contam_cli.text import token_spans, tokenize

pytest.importorskip("zstandard")

FUZZ = ROOT / "fuzz"


def _target(name: str) -> ModuleType:
    module_name = f"fuzz_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    sys.path.insert(0, str(FUZZ))
    spec = importlib.util.spec_from_file_location(module_name, FUZZ / f"fuzz_{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def _variant(fmt: str, role: str, comp: str, how: str) -> int:
    return _target("readers").VARIANTS.index((fmt, role, comp, how))


def _readers_input(
    fmt: str, role: str, comp: str, how: str, payload: bytes, spec: int = 0
) -> bytes:
    return bytes([_variant(fmt, role, comp, how), spec]) + payload


# Reduced inputs, each with the target that failed on it and what was wrong.
REGRESSIONS = [
    pytest.param(
        "jsonarray",
        lambda: b'{"": [1], "": [{"": 1}]}',
        id="jsonarray-records-key-repeated",
        # the scanner read the first array, json.loads keeps the last: now an InputError
    ),
    pytest.param(
        "readers",
        lambda: _readers_input(
            ".txt", "eval", ".bz2", "compressed", bz2.compress(b"a line\n") + b"\xa4"
        ),
        id="readers-bz2-one-byte-after-the-stream",
        # bz2.open stopped silently at data after the stream: a short read, now an InputError
    ),
    pytest.param(
        "readers",
        lambda: _readers_input(
            ".jsonl", "corpus", ".xz", "compressed", lzma.compress(b'{"text": "a"}\n') + b"XZ!"
        ),
        id="readers-xz-garbage-after-the-stream",
        # lzma.open stopped silently there too
    ),
    pytest.param(
        "readers",
        lambda: _readers_input(
            ".jsonl", "corpus", ".xz", "compressed", lzma.compress(b'{"text": "a"}\n') + b"\0" * 8
        ),
        id="readers-xz-stream-padding",
        # the harness refused legal .xz stream padding (harness fix), contam reads it whole
    ),
    pytest.param(
        "readers",
        lambda: _readers_input(".jsonl", "corpus", ".xz", "compressed", b"\0" * 113, spec=1),
        id="readers-xz-zeros-are-lzma-alone-streams",
        # zeros decode as empty .lzma streams until one is cut short: an error (harness fix)
    ),
    pytest.param(
        "readers",
        lambda: _readers_input(
            ".jsonl",
            "eval",
            ".gz",
            "compressed",
            (lambda g: g[:3] + b"\x20" + g[4:])(gzip.compress(b'{"id": "a", "text": "b"}\n')),
        ),
        id="readers-gz-reserved-header-flag",
        # gzip reads a member with a reserved flag bit set whole; zlib alone refused it (harness)
    ),
    pytest.param(
        "text",
        lambda: b"\x81" + "a\u031b\u0301".encode(),
        id="text-reordered-combining-marks",
        # token 'á' was given the span of 'a' alone: canonical reordering moved the acute
    ),
    pytest.param(
        "text",
        lambda: b"\x00" + "\u0301\uff9e".encode(),
        id="text-halfwidth-voiced-mark-reordered",
        # token '\u3099' (from U+FF9E) was given the span of the acute before it
    ),
]


@pytest.mark.parametrize("target, data", REGRESSIONS)
def test_a_fuzz_regression_passes_its_target(target: str, data: object) -> None:
    _target(target).check(data())  # type: ignore[operator]


@pytest.mark.parametrize("target", ["readers", "extract", "text", "jsonarray"])
def test_every_seed_passes_its_target(target: str, tmp_path: Path) -> None:
    sys.path.insert(0, str(FUZZ))
    seeds = importlib.import_module("_seeds")
    check = _target(target).check
    for seed in seeds.SEEDS[target]():
        check(seed)


# -- the fixes, pinned --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "suffix, data",
    [
        (".bz2", bz2.compress(b'{"id": "a", "text": "x"}\n') + b"\xa4"),
        (".bz2", bz2.compress(b'{"id": "a", "text": "x"}\n') + b"BZh9 a damaged second stream"),
        (".xz", lzma.compress(b'{"id": "a", "text": "x"}\n') + b"garbage"),
        (".xz", lzma.compress(b'{"id": "a", "text": "x"}\n') + b"\0\0\0\0garbage"),
    ],
    ids=["bz2-one-byte", "bz2-damaged-stream", "xz-garbage", "xz-padding-then-garbage"],
)
def test_data_after_the_last_stream_is_an_error_not_a_short_read(
    tmp_path: Path, suffix: str, data: bytes
) -> None:
    path = tmp_path / f"e.jsonl{suffix}"
    path.write_bytes(data)
    with pytest.raises(InputError, match="not a whole stream") as err:
        list(iter_records(path, role="eval"))
    assert str(err.value).startswith(str(path))


@pytest.mark.parametrize(
    "suffix, pack",
    [
        (".bz2", bz2.compress),
        (".xz", lzma.compress),
    ],
    ids=["bz2", "xz"],
)
def test_multi_stream_files_with_empty_streams_and_padding_are_read_whole(
    tmp_path: Path, suffix: str, pack: object
) -> None:
    lines = [f'{{"id": "{i}", "text": "record {i}"}}\n'.encode() for i in range(300)]
    parts = [b"".join(lines[:100]), b"", b"".join(lines[100:])]
    data = b"".join(pack(p) for p in parts)  # type: ignore[operator]
    if suffix == ".xz":
        data += b"\0" * 12
    path = tmp_path / f"e.jsonl{suffix}"
    path.write_bytes(data)
    assert [r.id for r in iter_records(path, role="eval")] == [str(i) for i in range(300)]


def test_an_empty_compressed_file_has_no_records(tmp_path: Path) -> None:
    for suffix in (".bz2", ".xz"):
        path = tmp_path / f"e.jsonl{suffix}"
        path.write_bytes(b"")
        with pytest.raises(InputError, match="no records"):
            list(iter_records(path, role="eval"))


def test_a_repeated_records_key_in_a_json_object_is_refused() -> None:
    text = '{"data": [{"id": "a"}],\n "meta": 1,\n "data": [{"id": "b"}]}'
    with pytest.raises(InputError, match="appears twice") as err:
        list(iter_array_elements(text, "x.json"))
    assert err.value.line == 3
    # a repeat of another key, or the records key repeated before the array, is json.loads' own
    ok = '{"data": "placeholder", "data": [{"id": "a"}], "n": 1, "n": 2}'
    assert [obj for obj, _, _ in iter_array_elements(ok, "x.json")] == [{"id": "a"}]


@pytest.mark.parametrize(
    "text, spans",
    [
        ("a\u031b\u0301", [(0, 3)]),
        # NOTE: NFKC makes U+FF9E the combining voiced mark U+3099; since "/2" a mark after no
        # letter, digit or segmented character is no token (it was one, a Hiragana character)
        ("\u0301\uff9e", []),
        ("\u30ab\u0301\uff9e", [(0, 3)]),
        ("x a\u031b\u0301 y", [(0, 1), (2, 5), (6, 7)]),
        ("s\u0307\u0323", [(0, 3)]),
    ],
    ids=[
        "horn-acute",
        "acute-halfwidth-voiced",
        "katakana-acute-halfwidth-voiced",
        "inside-a-sentence",
        "dot-above-dot-below-compose",
    ],
)
def test_token_spans_cover_tokens_whose_marks_were_reordered(
    text: str, spans: list[tuple[int, int]]
) -> None:
    assert token_spans(text) == spans
    for (a, b), tok in zip(spans, tokenize(text)):
        assert tok in tokenize(text[a:b])


@pytest.mark.parametrize(
    "name, data",
    [
        ("e.jsonl.bz2", bz2.compress(b'{"id": "a", "text": "x"}\n') + b"garbage"),
        ("e.jsonl.xz", lzma.compress(b'{"id": "a", "text": "x"}\n') + b"garbage"),
    ],
    ids=["bz2", "xz"],
)
def test_bytes_in_memory_after_the_last_stream_are_an_error(name: str, data: bytes) -> None:
    # NOTE: io/memory.py reads through io.formats.decompressing, as the file readers do.
    from contam_cli.io.memory import records_from_bytes

    with pytest.raises(InputError, match=name):
        list(records_from_bytes(data, name, role="eval"))
