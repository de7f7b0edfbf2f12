"""`contam index build` on several processes: every file of the index directory is the one the
serial build writes, and the one the index's definition gives (index_oracle), on the fixtures and
on corpora cut into many shards (byte ranges of JSONL files with BOM, CRLF and blank lines, a .gz,
a .txt, a JSON array, two sources), with many spill segments, buckets and reduce tasks; a failing
shard is exit 2 naming it, with nothing left behind; `scan --index` reads the same report."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from conftest import CD, DECONTAM
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from index_oracle import WORDS, build, make_corpus, oracle_index, small_sizes, tree
from typer.testing import CliRunner

import contam_cli.engine.corpus_index.build as ci_build
import contam_cli.engine.corpus_index.mapper as mapper
import contam_cli.engine.shards as shards
from contam_cli.cli import app
from contam_cli.engine.corpus_index.mapper import MapContext, MapTask, map_shard
from contam_cli.engine.corpus_index.reducer import ReduceContext, ReduceTask, reduce_group
from contam_cli.engine.executor import Executor, InProcess, LocalProcesses, start_method
from contam_cli.errors import InputError, OutputError
from contam_cli.features.scan import ScanOptions, resolve_sources
from contam_cli.io.extract import TextSpec
from contam_cli.text import DEFAULT_NORM
from contam_cli.text.accel import kernels

runner = CliRunner()


def oracle(given: Any, out: Path, positions: bool, n: int = 5) -> dict[str, bytes]:
    oracle_index(resolve_sources(given, ScanOptions(n=n)), out, n, positions)
    return tree(out)


@pytest.fixture
def small(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many shards, buckets, spill segments and reduce tasks from a small corpus."""
    small_sizes(monkeypatch)


def _executors() -> list[tuple[str, Executor | None, int]]:
    return [("serial", None, 1), ("in-process", InProcess(), 0), ("jobs2", LocalProcesses(2), 0)]


@pytest.mark.parametrize("positions", [False, True])
@pytest.mark.parametrize(
    ("given", "n"),
    [([CD / "examples" / "corpus"], 13), ([DECONTAM / "train_chat.jsonl"], 8)],
    ids=["examples", "chat"],
)
def test_the_fixtures_give_one_index_whoever_builds_it(
    tmp_path: Path, given: Any, n: int, positions: bool
) -> None:
    want = oracle(given, tmp_path / "oracle", positions, n)
    for name, executor, jobs in _executors():
        build(given, tmp_path / name, positions, n, executor=executor, jobs=jobs)
        assert tree(tmp_path / name) == want, name


@pytest.mark.parametrize("positions", [False, True])
def test_a_corpus_in_many_shards_gives_the_definition_byte_for_byte(
    tmp_path: Path, small: None, positions: bool
) -> None:
    given = make_corpus(tmp_path / "corpus")
    planned = [
        shards.plan_shards(k, s) for k, s in enumerate(resolve_sources(given, ScanOptions()))
    ]
    ranges = [it for p in planned for sh in p for it in sh.items if it[2] is not None]
    assert sum(map(len, planned)) >= 20 and len({str(it[1]) for it in ranges}) == 3
    want = oracle(given, tmp_path / "oracle", positions)
    header = orjson.loads(want["header.json"])
    assert [s["documents"] for s in header["sources"]] == [434, 598]
    for name, executor, jobs in _executors():
        build(given, tmp_path / name, positions, executor=executor, jobs=jobs)
        assert tree(tmp_path / name) == want, name
    # NOTE: a corpus this small is tokenized without the kernels unless asked for them.
    for name, accel in [("numpy", False), ("kernels", True)][: 1 + (kernels() is not None)]:
        build(given, tmp_path / name, positions, executor=InProcess(), accel=accel)
        assert tree(tmp_path / name) == want, name
    assert {"in-process", "jobs2", "serial", "numpy"} <= {p.name for p in tmp_path.iterdir()}


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    docs=st.lists(
        st.lists(st.sampled_from(WORDS), max_size=30).map(" ".join), min_size=1, max_size=60
    ),  # fmt: skip
    shard=st.integers(200, 3000),
    spill=st.integers(24, 4000),
    reduce=st.integers(1, 4000),
    positions=st.booleans(),
    n=st.integers(1, 4),
)
def test_any_cut_of_the_work_gives_the_definition(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    docs: list[str],
    shard: int,
    spill: int,
    reduce: int,
    positions: bool,
    n: int,
) -> None:
    d = tmp_path_factory.mktemp("h")
    half = len(docs) // 2
    (d / "a.jsonl").write_bytes(b"".join(orjson.dumps({"text": t}) + b"\n" for t in docs[:half]))
    (d / "b.jsonl").write_bytes(b"\n".join(orjson.dumps({"text": t}) for t in docs[half:]))
    given = (
        {"one": [d / "b.jsonl"], "two": [d / "a.jsonl", d / "b.jsonl"]} if half else [d / "b.jsonl"]
    )
    with monkeypatch.context() as m:
        m.setattr(shards, "SHARD_BYTES", shard)
        m.setattr(shards, "MIN_SHARD_BYTES", shard)
        m.setattr(ci_build, "_BUCKET_TARGET", 8)
        m.setattr(ci_build, "_SPILL_BYTES", spill)
        m.setattr(ci_build, "_REDUCE_BYTES", reduce)
        build(given, d / "idx", positions, n, executor=InProcess())
    assert tree(d / "idx") == oracle(given, d / "oracle", positions, n)


def _cli_build(corpus: Path, out: Path, *extra: str) -> None:
    r = runner.invoke(app, ["index", "build", "-c", str(corpus), "-o", str(out), "-n", "5",
                            "--force", *extra])  # fmt: skip
    assert r.exit_code == 0, r.output


def test_jobs_2_through_the_cli_and_scan_index_give_the_serial_answers(
    tmp_path: Path, small: None
) -> None:
    corpus = tmp_path / "corpus"
    make_corpus(corpus)
    leaked = orjson.loads((corpus / "b.jsonl").read_bytes()[3:].splitlines()[40])["text"]
    ev = tmp_path / "eval.jsonl"
    ev.write_bytes(orjson.dumps({"id": "x", "text": leaked}) + b"\n")
    reports = []
    for jobs in ("1", "2"):
        _cli_build(corpus, tmp_path / f"j{jobs}", "--positions", "--jobs", jobs)
        _cli_build(corpus, tmp_path / "idx", "--positions", "--jobs", jobs)
        r = runner.invoke(app, ["scan", str(ev), "--index", str(tmp_path / "idx"), "-n", "5",
                                "--json"])  # fmt: skip
        assert r.exit_code == 1, r.output
        reports.append(r.stdout)
    assert tree(tmp_path / "j1") == tree(tmp_path / "j2")
    assert reports[0] == reports[1]
    ex = orjson.loads(reports[0])["examples"][0]
    assert ex["flagged"] and "b.jsonl" in orjson.dumps(ex).decode()


def _leftovers(parent: Path, keep: set[str]) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name not in keep)


def test_a_bad_line_in_a_later_shard_is_exit_2_naming_it_and_nothing_is_left(
    tmp_path: Path, small: None
) -> None:
    corpus = tmp_path / "corpus"
    make_corpus(corpus)
    lines = (corpus / "c.jsonl").read_bytes().split(b"\r\n")
    lines[250] = b'{"text": "broken'
    (corpus / "c.jsonl").write_bytes(b"\r\n".join(lines))
    for jobs in ("1", "2"):
        r = runner.invoke(app, ["index", "build", "-c", str(corpus), "-o", str(tmp_path / "idx"),
                                "--jobs", jobs, "--positions"])  # fmt: skip
        assert r.exit_code == 2, r.output
        assert "c.jsonl:251:" in r.stderr and "internal" not in r.stderr
        assert _leftovers(tmp_path, {"corpus"}) == []


def _boom(real: Any) -> Any:
    def read_item(ctx: MapContext, ordinal: int, path: Any, *rest: Any) -> Any:
        if str(path).endswith("c.jsonl"):
            raise RuntimeError("boom")
        return real(ctx, ordinal, path, *rest)

    return read_item


@pytest.mark.skipif(start_method() != "fork", reason="the patch reaches forked workers only")
def test_a_crashing_task_is_exit_2_naming_its_shard(
    tmp_path: Path, small: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = tmp_path / "corpus"
    make_corpus(corpus)
    monkeypatch.setattr(mapper, "_read_item", _boom(mapper._read_item))
    r = runner.invoke(app, ["index", "build", "-c", str(corpus), "-o", str(tmp_path / "idx"),
                            "--jobs", "2"])  # fmt: skip
    assert r.exit_code == 2, r.output
    assert "contam: error: shard s0:" in r.stderr and "c.jsonl" in r.stderr
    assert "RuntimeError: boom" in r.stderr
    assert _leftovers(tmp_path, {"corpus"}) == []


def test_an_interrupt_stops_the_workers_and_leaves_nothing(tmp_path: Path, small: None) -> None:
    given = make_corpus(tmp_path / "corpus")
    seen: list[int] = []

    def progress(size: int) -> None:
        seen.append(size)
        if len(seen) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build(given, tmp_path / "idx", True, executor=LocalProcesses(2), progress=progress)
    assert _leftovers(tmp_path, {"corpus"}) == []


def test_progress_counts_every_byte_once(tmp_path: Path, small: None) -> None:
    given = make_corpus(tmp_path / "corpus")
    seen: list[int] = []
    build(given, tmp_path / "idx", False, executor=LocalProcesses(2), progress=seen.append)
    assert sum(seen) == sum(p.stat().st_size for ps in given.values() for p in ps)


def test_a_worker_that_cannot_see_the_staging_directory_says_so(tmp_path: Path) -> None:
    (tmp_path / "map").mkdir()
    ctx = MapContext(5, DEFAULT_NORM, True, TextSpec(), 1 << 20, str(tmp_path), "token")
    shard = shards.plan_shards(0, resolve_sources([CD / "examples" / "corpus"], ScanOptions())[0])
    with pytest.raises(OutputError, match="not visible from this worker.*shares"):
        map_shard(ctx, MapTask(0, shard[0], 4))
    (tmp_path / ".contam-staging").write_text("token")
    task = ReduceTask(0, 0, 0, 16, 16, ((7, 0),))
    with pytest.raises(OutputError, match="t00007.*cannot be read here.*every node shares"):
        reduce_group(ReduceContext(str(tmp_path), "token", False), task)
    assert map_shard(ctx, MapTask(0, shard[0], 4)).documents == 2


def test_an_empty_jsonl_file_read_in_ranges_has_no_records(tmp_path: Path, small: None) -> None:
    (tmp_path / "blank.jsonl").write_bytes(b"\n" * 9000)  # over a shard: read in ranges
    with pytest.raises(InputError, match="blank.jsonl: no records"):
        build([tmp_path / "blank.jsonl"], tmp_path / "idx", True, jobs=1)
    assert _leftovers(tmp_path, {"blank.jsonl"}) == []


def test_parts_are_concatenated_without_copy_file_range_too(
    tmp_path: Path, small: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    given = make_corpus(tmp_path / "corpus")
    build(given, tmp_path / "kernel", True, executor=InProcess())

    def refuse(*args: Any) -> int:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "copy_file_range", refuse, raising=False)
    build(given, tmp_path / "copied", True, executor=InProcess())
    assert tree(tmp_path / "copied") == tree(tmp_path / "kernel")


def test_two_serial_builds_are_byte_identical_including_the_docs_table(tmp_path: Path) -> None:
    given = [CD / "examples" / "corpus"]
    build(given, tmp_path / "a", True, 13, jobs=1)
    table = np.load(tmp_path / "a" / "s0.docs.npz")
    assert sorted(table.files) == ["file_ord", "line", "offset", "record"]
    build(given, tmp_path / "b", True, 13, jobs=1)
    assert tree(tmp_path / "a") == tree(tmp_path / "b")
