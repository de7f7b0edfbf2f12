"""`contam index build --checkpoint DIR`: a build interrupted part-way and run again maps and
reduces only what had not finished, and writes the uninterrupted build's index byte for byte; a
changed file is mapped again (and every reduce task reading it runs again); another n is refused;
the checkpoint is removed once the index is in place, and kept when the build fails."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import orjson
import pytest
from index_oracle import build, make_corpus, small_sizes, tree
from typer.testing import CliRunner

import contam_cli.engine.corpus_index.build as ci_build
from contam_cli.cli import app
from contam_cli.engine.checkpoint import MARKER
from contam_cli.engine.corpus_index.mapper import MapTask
from contam_cli.engine.corpus_index.reducer import ReduceTask
from contam_cli.engine.executor import Executor, InProcess, LocalProcesses
from contam_cli.errors import OutputError, UsageError

C = TypeVar("C")
T = TypeVar("T")
R = TypeVar("R")

runner = CliRunner()


@pytest.fixture
def small(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many shards, buckets, spill segments and reduce tasks from a small corpus."""
    small_sizes(monkeypatch)


class Counting(Executor):
    """In this process, counting the map and reduce tasks it runs; raises KeyboardInterrupt
    before running task number `stop_at` of kind `kind` (counted from 0 over this executor's
    life)."""

    name = "counting"

    def __init__(self, kind: type | None = None, stop_at: int = -1) -> None:
        self.kind, self.stop_at = kind, stop_at
        self.ran: dict[type, int] = {MapTask: 0, ReduceTask: 0}

    def map(
        self,
        work: Callable[[C, T], R],
        context: C,
        tasks: Sequence[T],
        *,
        on_start: Callable[[], None] | None = None,
        on_done: Callable[[int], None] | None = None,
    ) -> Iterator[R]:
        if on_start is not None:
            on_start()
        for i, task in enumerate(tasks):
            kind = type(task)
            if kind is self.kind and self.ran[kind] == self.stop_at:
                raise KeyboardInterrupt
            self.ran[kind] += 1
            yield work(context, task)
            if on_done is not None:
                on_done(i)


def _count(given: Any, out: Path, positions: bool, ckpt: Path, **kw: Any) -> Counting:
    ex = Counting()
    build(given, out, positions, executor=ex, checkpoint=ckpt, **kw)
    return ex


@pytest.mark.parametrize("positions", [False, True])
@pytest.mark.parametrize("kind", [MapTask, ReduceTask])
def test_an_interrupted_build_resumes_where_it_stopped_and_gives_the_same_index(
    tmp_path: Path, small: None, positions: bool, kind: type
) -> None:
    given = make_corpus(tmp_path / "corpus")
    build(given, tmp_path / "want", positions, executor=InProcess())
    want = tree(tmp_path / "want")
    full = _count(given, tmp_path / "plain", positions, tmp_path / "unused")
    assert full.ran[MapTask] > 4 and full.ran[ReduceTask] > 4
    assert tree(tmp_path / "plain") == want
    assert not (tmp_path / "unused").exists()  # removed once the index was in place

    ckpt, out = tmp_path / "ckpt", tmp_path / "idx"
    with pytest.raises(KeyboardInterrupt):
        build(given, out, positions, executor=Counting(kind, 3), checkpoint=ckpt)
    assert not out.exists() and (ckpt / MARKER).exists()
    again = _count(given, out, positions, ckpt)
    assert tree(out) == want
    if kind is MapTask:  # three maps were kept, so every reduce runs
        assert again.ran == {MapTask: full.ran[MapTask] - 3, ReduceTask: full.ran[ReduceTask]}
    else:  # every map and three reduces were kept
        assert again.ran == {MapTask: 0, ReduceTask: full.ran[ReduceTask] - 3}
    assert not ckpt.exists()
    leftovers = sorted(p.name for p in tmp_path.iterdir())
    assert leftovers == ["corpus", "idx", "plain", "want"]


def test_a_changed_file_is_mapped_again_and_every_reduce_runs_again(
    tmp_path: Path, small: None
) -> None:
    given = make_corpus(tmp_path / "corpus")
    ckpt, out = tmp_path / "ckpt", tmp_path / "idx"
    with pytest.raises(KeyboardInterrupt):
        build(given, out, True, executor=Counting(ReduceTask, 2), checkpoint=ckpt)
    changed = tmp_path / "corpus" / "a.jsonl"
    data = changed.read_bytes()
    changed.write_bytes(data.replace(b"the", b"THE", 5))
    os.utime(changed, ns=(1, 1))  # NOTE: a new mtime even on a coarse clock
    again = _count(given, out, True, ckpt)
    build(given, tmp_path / "want", True, executor=InProcess())
    assert tree(out) == tree(tmp_path / "want")
    full = _count(given, tmp_path / "plain", True, tmp_path / "other")
    assert 0 < again.ran[MapTask] < full.ran[MapTask]  # the changed file's shards alone
    assert again.ran[ReduceTask] == full.ran[ReduceTask]  # each reads a changed run file


def test_another_configuration_is_refused_and_the_checkpoint_kept(
    tmp_path: Path, small: None
) -> None:
    given = make_corpus(tmp_path / "corpus")
    ckpt = tmp_path / "ckpt"
    with pytest.raises(KeyboardInterrupt):
        build(given, tmp_path / "idx", False, executor=Counting(MapTask, 2), checkpoint=ckpt)
    with pytest.raises(UsageError, match="made by another configuration"):
        build(given, tmp_path / "idx", False, n=6, executor=InProcess(), checkpoint=ckpt)
    assert (ckpt / MARKER).exists() and not (tmp_path / "idx").exists()


def test_the_checkpoint_cannot_be_inside_the_index_or_an_input(tmp_path: Path) -> None:
    given = make_corpus(tmp_path / "corpus", docs=20)
    with pytest.raises(OutputError, match="cannot be inside the index"):
        build(given, tmp_path / "idx", False, checkpoint=tmp_path / "idx" / "ckpt")
    with pytest.raises(OutputError, match="inside the input"):
        build(given, tmp_path / "idx", False, checkpoint=tmp_path / "corpus" / "ckpt",
              inputs=[tmp_path / "corpus"])  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus"]


def test_the_cli_resumes(tmp_path: Path, small: None, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = tmp_path / "corpus"
    make_corpus(corpus)
    ckpt, out = tmp_path / "ckpt", tmp_path / "idx"
    with pytest.raises(KeyboardInterrupt):
        build([corpus], out, True, executor=Counting(MapTask, 4), checkpoint=ckpt)
    full = _count([corpus], tmp_path / "want", True, tmp_path / "other")
    mapped: list[int] = []
    real = ci_build.map_shard

    def counted(ctx: Any, task: MapTask) -> Any:
        mapped.append(task.number)
        return real(ctx, task)

    monkeypatch.setattr(ci_build, "map_shard", counted)
    r = runner.invoke(app, ["index", "build", "-c", str(corpus), "-o", str(out), "-n", "5",
                            "--positions", "--jobs", "1", "--checkpoint", str(ckpt)])  # fmt: skip
    assert r.exit_code == 0, r.output
    got, want = tree(out), tree(tmp_path / "want")
    # NOTE: the command records the directory it was given (for --verify and --thresholds);
    # the library call that built `want` was given none.
    header = orjson.loads(got.pop("header.json"))
    assert [s.pop("roots") for s in header["sources"]] == [
        [{"path": str(corpus), "relpath": "../corpus", "include": [], "exclude": []}]
    ]
    assert [s.pop("given") for s in header["sources"]] == [
        {"paths": [str(corpus)], "resolved": [str(corpus.resolve())]}
    ]
    assert header == orjson.loads(want.pop("header.json")) and got == want
    assert len(mapped) == full.ran[MapTask] - 4 and 0 not in mapped
    assert not ckpt.exists()


def test_a_build_resumed_on_worker_processes_gives_the_same_index(
    tmp_path: Path, small: None
) -> None:
    given = make_corpus(tmp_path / "corpus")
    ckpt, out = tmp_path / "ckpt", tmp_path / "idx"
    with pytest.raises(KeyboardInterrupt):
        build(given, out, True, executor=Counting(ReduceTask, 1), checkpoint=ckpt)
    build(given, out, True, executor=LocalProcesses(2), checkpoint=ckpt)
    build(given, tmp_path / "want", True, executor=InProcess())
    assert tree(out) == tree(tmp_path / "want")
    assert not ckpt.exists()
