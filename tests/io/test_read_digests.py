"""A scan in one process hashes the corpus from what it reads: the digests are the files' sha256
whatever the reads were, and the corpus is not read a second time."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import lzma
import threading
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contam_cli.engine import shards
from contam_cli.errors import InputError
from contam_cli.features.scan import scan
from contam_cli.io import read_digests
from contam_cli.io.formats import open_binary, open_raw
from contam_cli.io.read_digests import ReadDigests

OPS = st.lists(
    st.one_of(
        st.tuples(st.just("seek"), st.integers(0, 6000)),
        st.tuples(st.just("read"), st.integers(-1, 3000)),
        st.tuples(st.just("readinto"), st.integers(1, 3000)),
    ),
    max_size=12,
)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.binary(max_size=5000), ops=OPS, opens=st.integers(1, 2))
def test_any_reads_give_the_files_sha256(
    tmp_path: Path, data: bytes, ops: list[tuple[str, int]], opens: int
) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    digests = ReadDigests([path])
    digests.start()
    try:
        for _ in range(opens):
            with open_raw(path) as fh:
                for op, n in ops:
                    if op == "seek":
                        fh.seek(n)
                    elif op == "read":
                        fh.read(n)
                    else:
                        buf = bytearray(n)
                        fh.readinto(buf)  # type: ignore[attr-defined]
                        buf[:] = b"\0" * n  # NOTE: the buffer is reused: the digest kept a copy
        got = digests.results()
    finally:
        digests.close()
    assert got == {path: hashlib.sha256(data).hexdigest()}


def _rows(k: int, n: int = 60) -> bytes:
    return b"".join(orjson.dumps({"id": f"{k}-{i}", "text": f"doc {k} {i} the cat sat"}) + b"\n"
                    for i in range(n))  # fmt: skip


def test_a_scan_reads_each_corpus_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # NOTE: small shards, so that the plain files are scanned as several byte ranges.
    monkeypatch.setattr(shards, "SHARD_BYTES", 1500)
    monkeypatch.setattr(shards, "MIN_SHARD_BYTES", 1500)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.jsonl").write_bytes(_rows(0))
    (corpus / "b.jsonl").write_bytes(_rows(1))
    (corpus / "c.jsonl.gz").write_bytes(gzip.compress(_rows(2)))
    (corpus / "d.jsonl.bz2").write_bytes(bz2.compress(_rows(3)))
    (corpus / "e.jsonl.xz").write_bytes(lzma.compress(_rows(4)))
    (corpus / "f.txt").write_text("a whole document, the cat sat on the mat\n")
    (corpus / "g.json").write_bytes(orjson.dumps([{"text": "in an array, the cat sat"}]))
    left: dict[str, int] = {}
    real_finish = read_digests._finish

    def finish(digest: read_digests._Digest) -> None:
        left[digest.path.name] = digest.path.stat().st_size - digest.fed
        real_finish(digest)

    monkeypatch.setattr(read_digests, "_finish", finish)
    report = scan(["doc 1 7 the cat sat"], corpus, n=3, jobs=1)
    files = report.inputs["corpus"][0]["files"]
    assert {Path(f["path"]).name: f["sha256"] for f in files} == {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(corpus.iterdir())
    }
    assert left == dict.fromkeys(left, 0) and len(left) == 7  # every byte came from the scan
    assert not [t for t in threading.enumerate() if t.name == "contam-hash"]


def test_a_failed_scan_stops_hashing(tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_bytes(_rows(0) + b"{not json\n")
    with pytest.raises(InputError):
        scan(["the cat sat"], corpus, n=2, jobs=1)
    assert not [t for t in threading.enumerate() if t.name == "contam-hash"]
    with open_binary(corpus) as fh:  # nothing is hashed any more
        assert not isinstance(fh, read_digests._Tee)


def test_files_not_hashed_open_as_they_are(tmp_path: Path) -> None:
    hashed, other = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    hashed.write_bytes(_rows(0))
    other.write_bytes(_rows(1))
    digests = ReadDigests([hashed])
    digests.start()
    try:
        with open_raw(other) as fh:
            assert not isinstance(fh, read_digests._Tee)
        with open_raw(hashed) as fh:
            assert isinstance(fh, read_digests._Tee)
    finally:
        digests.close()
    with open_raw(hashed) as fh:
        assert not isinstance(fh, read_digests._Tee)


def test_a_file_named_twice_has_its_digest_under_both_names(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(_rows(0))
    (tmp_path / "link.jsonl").symlink_to(path)
    names = [path, tmp_path / "link.jsonl"]
    digests = ReadDigests(names)
    digests.start()
    try:
        with open_raw(names[1]) as fh:
            fh.read()
        got = digests.results()
    finally:
        digests.close()
    assert got == dict.fromkeys(names, hashlib.sha256(path.read_bytes()).hexdigest())
