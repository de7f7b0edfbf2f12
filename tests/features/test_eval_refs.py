"""EvalRefs and the report's lazy columns: the same values as the objects they replace."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from contam_cli import ScanOptions
from contam_cli.features.eval_refs import EvalRefs, RefsBuilder
from contam_cli.features.eval_side import index_eval, index_eval_refs, load_eval
from contam_cli.io.model import Locator, Record
from contam_cli.report.columns import Fingerprints, LineColumn, TextColumn
from contam_cli.report.load import load_report
from contam_cli.report.persist import iter_json
from contam_cli.text import Tokenizer
from contam_cli.text.fingerprint import fingerprints

IDS = st.text(st.characters(blacklist_categories=["Cs"]), max_size=6)


@settings(max_examples=50, deadline=None)
@given(
    rows=st.lists(
        st.tuples(IDS, st.sampled_from(["a.jsonl", "b/é.txt"]), st.none() | st.integers(1, 10**9))
    )
)
def test_refs_give_back_the_records_they_were_built_from(rows: list) -> None:
    records = [Record(i, "", Locator(p, line)) for i, p, line in rows]
    builder = RefsBuilder()
    for r in records:
        builder.add(r)
    refs = builder.build()
    assert len(refs) == len(records) and list(refs) == records and refs == records
    assert refs[1:3] == records[1:3]
    assert refs.eval_paths() == [r.locator.path for r in records]
    assert list(refs.eval_lines()) == [r.locator.line for r in records]
    assert list(refs.ids) == [r.id for r in records]


@settings(max_examples=50, deadline=None)
@given(texts=st.lists(IDS), a=st.integers(-8, 8), b=st.integers(-8, 8))
def test_lazy_columns_read_as_tuples(texts: list[str], a: int, b: int) -> None:
    blob = [t.encode() for t in texts]
    offsets = np.cumsum([0, *map(len, blob)])
    col = TextColumn(b"".join(blob), offsets)
    assert col == tuple(texts) and tuple(texts) == col and col[a:b] == tuple(texts)[a:b]
    if texts:
        assert col[a % len(texts)] == texts[a % len(texts)] and col[-1] == texts[-1]
    lines = np.arange(len(texts)) - 1
    assert LineColumn(lines)[:] == tuple(None if x < 0 else x for x in lines.tolist())
    digests = [t.encode().ljust(16, b"\0")[:16] for t in texts]
    assert list(Fingerprints(digests)) == fingerprints(digests)


def test_a_scanned_report_equals_its_json_read_back(tmp_path: Path) -> None:
    from contam_cli import scan

    evals = tmp_path / "e.jsonl"
    evals.write_text("".join(f'{{"text": "one two three four {i}"}}\n' for i in range(50)))
    report = scan(evals, [f"one two three four {i} x" for i in range(0, 50, 7)], n=3)
    assert isinstance(report.examples.fingerprints, Fingerprints)
    assert isinstance(report.examples.eval_lines, LineColumn)
    path = tmp_path / "r.json"
    path.write_bytes(b"".join(iter_json(report)))
    assert load_report(path).examples == report.examples


def test_index_eval_refs_equal_the_records_read(tmp_path: Path) -> None:
    evals = tmp_path / "e.jsonl"
    evals.write_text('{"id": "a", "text": "x y"}\n\n{"id": "é", "text": "z"}\n')
    refs, _, _ = index_eval_refs(evals, ScanOptions(n=1), Tokenizer())
    records, _ = load_eval(evals, ScanOptions(n=1))
    expected = [Record(r.id, "", Locator(r.locator.path, r.locator.line)) for r in records]
    assert isinstance(refs, EvalRefs) and refs == expected
    assert index_eval(evals, ScanOptions(n=1), Tokenizer())[0] == expected
