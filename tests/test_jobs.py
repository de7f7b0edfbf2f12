"""--jobs: worker processes and byte-range shards give exactly the results of one process."""

from __future__ import annotations

import pickle
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import contam_cli.engine.shards as scan_module
from contam_cli import scan
from contam_cli.errors import InputError

WORDS = st.sampled_from("the cat sat on a mat with hat bat rat dog".split())
DOC = st.lists(WORDS, min_size=0, max_size=30).map(" ".join)


def _key(report):  # noqa: ANN001, ANN202
    return report.to_dict()


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    evals=st.lists(DOC, min_size=1, max_size=5),
    docs=st.lists(DOC, min_size=1, max_size=40),
    split=st.integers(30, 400),
)
def test_jobs_and_byte_range_shards_match_one_process(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    evals: list[str],
    docs: list[str],
    split: int,
) -> None:
    d = tmp_path_factory.mktemp("c")
    half = len(docs) // 2
    for name, part in (("a.jsonl", docs[:half]), ("b.jsonl", docs[half:]), ("c.jsonl", docs)):
        (d / name).write_bytes(b"".join(orjson.dumps({"text": t}) + b"\n" for t in part) or b"\n")
    files = [p for p in sorted(d.iterdir()) if p.read_bytes().strip()]
    monkeypatch.setattr(scan_module, "SHARD_BYTES", split)
    monkeypatch.setattr(scan_module, "MIN_SHARD_BYTES", split)
    one = scan(evals, files, n=3, jobs=1)
    assert _key(scan(evals, files, n=3, jobs=2)) == _key(one)
    assert _key(scan(evals, files, n=3, jobs=3, chunk_bytes=64)) == _key(one)


def test_byte_range_evidence_gets_line_numbers_and_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [f"filler number {i} and some more words" for i in range(200)]
    lines[150] = "the planted sentence sits on this exact line"
    f = tmp_path / "big.jsonl"
    f.write_bytes(b"".join(orjson.dumps({"text": t}) + b"\n" for t in lines))
    monkeypatch.setattr(scan_module, "SHARD_BYTES", 1000)
    monkeypatch.setattr(scan_module, "MIN_SHARD_BYTES", 1000)
    for jobs in (1, 2):
        e = scan(["the planted sentence sits on this exact line"], [f], n=4, jobs=jobs).examples[0]
        assert e.longest_run == 8 and e.evidence.line == 151 and e.evidence.path == str(f)
        assert (e.evidence.record, e.evidence.doc_id) == (150, "151")  # as a whole read


def test_bad_corpus_record_in_a_worker_is_reported_with_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = b"".join(orjson.dumps({"text": f"doc {i} words"}) + b"\n" for i in range(300))
    (tmp_path / "a.jsonl").write_bytes(good)
    (tmp_path / "b.jsonl").write_bytes(good + b'{"text": broken\n')
    monkeypatch.setattr(scan_module, "SHARD_BYTES", 1000)
    monkeypatch.setattr(scan_module, "MIN_SHARD_BYTES", 1000)
    with pytest.raises(InputError) as err:
        scan(["doc 1 words"], [tmp_path / "a.jsonl", tmp_path / "b.jsonl"], n=2, jobs=2)
    assert str(err.value).startswith(str(tmp_path / "b.jsonl"))
    assert pickle.loads(pickle.dumps(err.value)).args == err.value.args
