"""The compiled translation and word-edge kernel equals the numpy path's definition: the byte
table, the separators above ASCII blanked, and the edges of every run of non-separators."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contam_cli.text.accel import kernels
from contam_cli.text.tokenizer import _blank_unicode_separators, _translate_table

K = kernels()
SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_translate.py"
pytestmark = pytest.mark.skipif(K is None, reason="numba (extra fast) is not installed")


def _definition(buf: bytes, casefold: bool) -> tuple[np.ndarray, np.ndarray]:
    arr = np.frombuffer(buf.translate(_translate_table(casefold)), dtype=np.uint8)
    arr = _blank_unicode_separators(arr) if len(arr) else arr
    word = np.r_[False, arr != 0x20]
    return arr, np.flatnonzero(word[1:] != word[:-1])


def _check(buf: bytes, casefold: bool) -> None:
    out, edges = K.translate_edges(np.frombuffer(buf, dtype=np.uint8), casefold)
    want_out, want_edges = _definition(buf, casefold)
    assert out.tobytes() == want_out.tobytes(), (buf, casefold)
    assert edges.tolist() == want_edges.tolist(), (buf, casefold)


@pytest.mark.parametrize("casefold", [True, False])
def test_every_byte_at_every_place_in_an_eight_byte_word(casefold: bool) -> None:
    for b in range(256):
        for before in range(10):
            _check(b"x" * before + bytes([b]) + b"Y" * 9, casefold)
            _check(b"x" * before + bytes([b]), casefold)  # at the very end


@pytest.mark.parametrize("casefold", [True, False])
def test_every_general_punctuation_and_nbsp_lead_at_every_place(casefold: bool) -> None:
    seconds = range(256)
    # NOTE: and each edge of the format characters kept inside words (0xE2 0x80 0x8B..0x8F and
    # 0xAA..0xAE, 0xE2 0x81 0xA0..0xAF)
    thirds = [0x00, 0x41, 0x7F, 0x80, 0x8A, 0x8B, 0x8F, 0x90, 0x9F, 0xA0, 0xA5, 0xA9, 0xAA, 0xAE]
    thirds += [0xAF, 0xB0, 0xBF, 0xFF]
    for b1 in seconds:
        for b2 in thirds:
            for before in range(10):
                for after in (0, 1, 9):  # cut at the end of the chunk, or not
                    _check(b"a" * before + bytes([0xE2, b1, b2]) + b"b" * after, casefold)
        for before in range(10):
            _check(b"a" * before + bytes([0xC2, b1]) + b"b" * 9, casefold)
            _check(b"a" * before + bytes([0xC2, b1]), casefold)
    _check(b"ab\xe2", casefold)
    _check(b"ab\xe2\x80", casefold)
    _check(b"\xc2", casefold)
    _check(b"", casefold)


_BYTES = st.sampled_from(
    [0x20, 0x2E, 0x41, 0x5A, 0x61, 0x7A, 0x30, 0x39, 0x40, 0x5B, 0x60, 0x7B, 0x2F, 0x3A,
     0xE2, 0x80, 0x81, 0x9C, 0xAF, 0xB0, 0xC2, 0xA0, 0xC3, 0xA9, 0xFF, 0x8B, 0x8F, 0xAA,
     0xAE, 0x9F, 0xA5, 0xAD]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(data=st.lists(_BYTES, max_size=80), casefold=st.booleans())
def test_random_chunks_equal_the_definition(data: list[int], casefold: bool) -> None:
    _check(bytes(data), casefold)


def test_the_benchmark_script_times_every_chunk(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = importlib.util.spec_from_file_location("bench_translate", SCRIPT)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "a.jsonl").write_bytes(
        b'{"text": "Caf\xc3\xa9 \xe2\x80\x94 ok"}\n' * 900
    )
    assert script.main([str(tmp_path), "--chunk-mb", "0.01", "--repeat", "2"]) == 0
    out = capsys.readouterr().out
    assert re.fullmatch(r"translate_edges: 0\.0 MB in 3 chunks, least [\d.]+ ns/B, median [\d.]+ "
                        r"ns/B \(2 rounds\)\n", out), out  # fmt: skip
    assert script.main([str(tmp_path / "corpus"), "--repeat", "1"]) == 2  # no corpus/ below it
