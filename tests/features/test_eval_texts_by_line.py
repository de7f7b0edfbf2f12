"""Eval texts read back at their lines (pick_by_line) equal the eval reader's, or fall back."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import contam_cli.features.eval_texts as eval_texts
from contam_cli import ScanOptions, scan
from contam_cli.features.eval_texts import pick_by_line, review_rows
from contam_cli.io.readers import read_eval

WORDS = "red green blue cyan magenta yellow black white grey pink".split()


def _text(seed: int) -> str:
    rng = np.random.default_rng(seed)
    return " ".join(WORDS[i] for i in rng.integers(0, len(WORDS), 12))


def _scan_all(evals: Path, tmp_path: Path) -> object:
    """A scan in which every eval example matches (so each is a review row)."""
    texts = [r.text for r in read_eval([evals])]
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(texts), encoding="utf-8")
    return scan(evals, corpus, n=3)


def _expected(evals: Path) -> dict[int, str]:
    return dict(enumerate(r.text for r in read_eval([evals])))


def test_lines_files_and_quirks_read_back_as_the_reader_reads_them(tmp_path: Path) -> None:
    evals = tmp_path / "eval"
    evals.mkdir()
    a = f'\ufeff{{"text": "{_text(1)}"}}\r\n\n{{"text": "{_text(2)} \\u00e9"}}\r\n'
    (evals / "a.jsonl").write_bytes(a.encode())
    (evals / "b.txt").write_text(f"{_text(3)}\n\n  \n{_text(4)}", encoding="utf-8")
    (evals / "sub").mkdir()
    (evals / "sub" / "c.jsonl").write_text(f'{{"id": "x", "text": "{_text(5)}"}}\n')
    report = _scan_all(evals, tmp_path)
    assert report.examples.texts == _expected(evals)  # type: ignore[attr-defined]
    rows = review_rows(report).tolist()  # type: ignore[arg-type]
    got = pick_by_line([evals], rows, report, ScanOptions(n=3))  # type: ignore[arg-type]
    assert got == _expected(evals)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=st.lists(st.integers(0, 40), min_size=1, max_size=30),
    blank=st.lists(st.booleans(), min_size=30, max_size=30),
    crlf=st.booleans(),
    block=st.sampled_from([7, 64, 1 << 24]),
)
def test_any_layout_of_lines_reads_back_exactly(
    tmp_path: Path, rows: list[int], blank: list[bool], crlf: bool, block: int
) -> None:
    end = "\r\n" if crlf else "\n"
    lines = []
    for k, seed in enumerate(rows):
        lines.append(f'{{"id": "e{k}", "text": "{_text(seed)}"}}')
        if blank[k]:
            lines.append("")
    path = tmp_path / "e.jsonl"
    path.write_text(end.join(lines), encoding="utf-8")
    report = _scan_all(path, tmp_path)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(eval_texts, "_BLOCK", block)  # lines across block boundaries
        rows_ = review_rows(report).tolist()  # type: ignore[arg-type]
        got = pick_by_line([path], rows_, report, ScanOptions(n=3))  # type: ignore[arg-type]
    assert got == {k: v for k, v in _expected(path).items() if k in rows_}


def test_other_formats_and_changed_files_fall_back(tmp_path: Path) -> None:
    body = "".join(f'{{"text": "{_text(k)}"}}\n' for k in range(4))
    packed = tmp_path / "e.jsonl.gz"
    packed.write_bytes(gzip.compress(body.encode()))
    report = _scan_all(packed, tmp_path)
    opts = ScanOptions(n=3)
    assert pick_by_line([packed], [0, 1], report, opts) is None  # type: ignore[arg-type]
    assert report.examples.texts == _expected(packed)  # type: ignore[attr-defined]
    plain = tmp_path / "p.jsonl"
    plain.write_text(body, encoding="utf-8")
    report = _scan_all(plain, tmp_path)
    plain.write_text(body.splitlines(keepends=True)[0], encoding="utf-8")  # lines gone
    assert pick_by_line([plain], [0, 3], report, opts) is None  # type: ignore[arg-type]
    plain.write_text(body.replace("text", "id", 0).replace("{", '{"id": "z", ', 1))
    assert pick_by_line([plain], [0], report, opts) is None  # type: ignore[arg-type]
