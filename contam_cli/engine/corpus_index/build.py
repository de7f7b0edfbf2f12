"""Building a corpus index: a map over the corpus' shards, then a reduce over hash buckets.

The corpus is planned into shards (:func:`~contam_cli.engine.shards.plan_shards`: files, byte
ranges of big JSONL files), each a map task (:mod:`.mapper`) that writes its n-gram records,
grouped by bucket (the hash's top bits), into a run file of its own in the build's staging
directory. Reduce tasks (:mod:`.reducer`) then sort ranges of buckets across every run file,
and their parts are concatenated in bucket order. Both run through an
:class:`~contam_cli.engine.executor.Executor` (in this process, local processes, Ray), and every
number that could depend on how the work was cut is fixed afterwards (global document numbers
by a prefix sum over shards, record ordinals and lines of byte ranges by those of the earlier
ranges), so the index directory is the same, byte for byte, whoever ran it. Memory is bounded
per task (a spill buffer, a bucket range), never by the corpus.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import numpy as np
import orjson

from contam_cli.engine.corpus_index.doctable import check_ranged_files, doc_table, save_npz
from contam_cli.engine.corpus_index.header import (
    IndexHeader,
    describe_spec,
    file_entry,
    given_entry,
    root_entry,
)
from contam_cli.engine.corpus_index.mapper import (
    MARKER,
    REC,
    MapContext,
    MapResult,
    MapTask,
    map_shard,
)
from contam_cli.engine.corpus_index.reducer import (
    ReduceContext,
    ReduceTask,
    append_parts,
    doc_bases,
    plan_groups,
    reduce_group,
)
from contam_cli.engine.corpus_index.resume import BuildCheckpoint, discard
from contam_cli.engine.executor import Executor, make_executor
from contam_cli.engine.shards import Source, plan_shards
from contam_cli.errors import OutputError
from contam_cli.io.accel import chosen
from contam_cli.io.extract import TextSpec
from contam_cli.io.model import merge_unread_turns, unread_turn_entry
from contam_cli.io.output import WRITE_ERRNOS, check_parents, sync_tree
from contam_cli.io.remote import RemoteFile, is_url
from contam_cli.text import HASH_NAME, NormConfig

__all__ = ["build_corpus_index"]

_BUCKET_TARGET = 32 << 20  # bytes of hashes per bucket, so that one bucket sorts in memory
_SPILL_BYTES = 64 << 20  # records a map task holds before writing a segment
_REDUCE_BYTES = 64 << 20  # records a reduce task reads (or one bucket, when bigger)

ProgressFn = Callable[[int], None]


def build_corpus_index(
    sources: list[Source],
    out: str | os.PathLike[str],
    *,
    n: int,
    norm: NormConfig,
    positions: bool,
    corpus_spec: TextSpec,
    chunk_bytes: int = 1 << 20,
    force: bool = False,
    progress: ProgressFn | None = None,
    inputs: Sequence[str | os.PathLike[str]] = (),
    jobs: int = 1,
    executor: Executor | None = None,
    accel: bool | None = None,
    checkpoint: str | os.PathLike[str] | None = None,
    roots: Mapping[str, Sequence[object]] | None = None,
    globs: tuple[Sequence[str], Sequence[str]] = ((), ()),
    on_damaged: Callable[[str], None] | None = None,
) -> IndexHeader:
    """Build an index of every n-gram of `sources` into directory `out` (atomically: built beside
    it and renamed into place; nothing is left behind on an error or an interrupt).

    `inputs`: the paths the user gave (directories too), which the output must stay out of.
    `executor` runs the map and reduce tasks (default: local processes for `jobs`, 0 meaning
    every core; in this process for 1); on a Ray cluster `out` must be on storage every node
    shares. `accel`: tokenize with the compiled kernels (None: by the corpus size, see
    :func:`~contam_cli.io.accel.chosen`). `checkpoint`: a directory that keeps every finished
    task, so that the same call after an interrupt resumes (:mod:`.resume`); removed once the
    index is in place. The index is the same, byte for byte, with any executor, with or without
    the kernels, resumed or not. `roots`: per source name, the paths the user gave, and
    `globs` the include and exclude globs the files were found below them with: the header
    records the local directories among them, so that ``scan --index --verify`` can tell a
    file added below one since, and all of them (:func:`.header.given_entry`), so that ``scan
    --index --thresholds`` checks them against the file's ``calibrated_on``. `on_damaged`:
    told of each checkpoint entry that could not be read back and ran again.
    """
    out = Path(out)
    # NOTE: a local index cannot be written over a remote input: only paths are checked.
    local = [p for src in sources for p in src.paths if isinstance(p, Path)]
    inputs = [Path(p) for p in inputs if not is_url(p)] + local
    _check_output(out, inputs, force)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        os.chmod(tmp, 0o777 & ~_umask())  # NOTE: mkdtemp's 0700 would surprise users.
        build = _Build(tmp, out, n, norm, positions, corpus_spec, chunk_bytes, accel)
        runner = executor
        if checkpoint is not None:
            keep = BuildCheckpoint(tmp, positions)
            runner = keep.executor(executor, jobs, Path(checkpoint), inputs, out, on_damaged)
        with _held(executor):
            described = build.run(sources, runner, jobs, progress)
        if roots is not None:
            for d in described:
                given = [p for p in roots.get(d["name"], ()) if isinstance(p, (str, Path))]
                dirs = [Path(p) for p in given if not is_url(p) and Path(p).is_dir()]
                d["roots"] = [root_entry(p, out, *globs) for p in dirs]
                if given:
                    d["given"] = given_entry(given)
        text = describe_spec(corpus_spec)
        header = IndexHeader(n, norm.describe(), HASH_NAME, positions, described, text)
        (tmp / "header.json").write_bytes(
            orjson.dumps(header.to_dict(), option=orjson.OPT_INDENT_2)
        )
        sync_tree(tmp)
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
        if checkpoint is not None:
            discard(Path(checkpoint))
    except BaseException as e:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(e, OSError) and e.errno in WRITE_ERRNOS:
            raise OutputError(
                f"{out}: cannot write the index ({e.strerror or e}); nothing was written"
            ) from None
        raise
    return header


def _check_output(out: Path, inputs: list[Path], force: bool) -> None:
    resolved = out.resolve()
    for p in inputs:
        rp = Path(p).resolve()
        if resolved == rp or rp.is_relative_to(resolved) or resolved.is_relative_to(rp):
            raise OutputError(f"{out}: refusing to write the index over or inside an input ({p})")
    check_parents(out)
    if out.exists():
        if not force:
            raise OutputError(f"{out}: already exists; pass --force to replace it")
        if not out.is_dir() or (any(out.iterdir()) and not (out / "header.json").exists()):
            raise OutputError(f"{out}: exists and is not a contam index; not replacing it")


def bucket_bits(total: int) -> int:
    """Hash-prefix bits of a source of `total` bytes: from its size alone (4 to 12)."""
    return int(min(12, max(4, np.ceil(np.log2(max(1, total * 8 // _BUCKET_TARGET + 1))))))


class _Build:
    """One build into the staging directory `tmp`: the map, the reduce, the index files."""

    def __init__(
        self,
        tmp: Path,
        out: Path,
        n: int,
        norm: NormConfig,
        positions: bool,
        spec: TextSpec,
        chunk_bytes: int,
        accel: bool | None,
    ) -> None:
        self.tmp, self.out, self.positions, self.accel = tmp, out, positions, accel
        token = secrets.token_hex(16)
        (tmp / MARKER).write_text(token, encoding="utf-8")
        (tmp / "map").mkdir()
        (tmp / "reduce").mkdir()
        root = os.path.abspath(tmp)  # NOTE: what workers elsewhere (Ray) can find
        self.map_ctx = MapContext(n, norm, positions, spec, chunk_bytes, root, token, _SPILL_BYTES)
        self.reduce_ctx = ReduceContext(root, token, positions)

    def run(
        self,
        sources: list[Source],
        executor: Executor | None,
        jobs: int,
        progress: ProgressFn | None,
    ) -> list[dict[str, Any]]:
        """Build every source into the staging directory; their header entries."""
        sizes = [sum(p.stat().st_size for p in src.paths) for src in sources]
        bits = [bucket_bits(size) for size in sizes]
        self.map_ctx = replace(self.map_ctx, accel=chosen(self.accel, sum(sizes)))
        tasks, results, entries = self._map(sources, bits, executor, jobs, progress)
        plan = [self._groups(k, bits[k], tasks, results[k]) for k in range(len(sources))]
        flat = [t for groups in plan for t in groups]
        stored = iter(_run(executor, jobs, reduce_group, self.reduce_ctx, flat, None, None))
        shutil.rmtree(self.tmp / "map")  # NOTE: before the parts are concatenated: less disk
        described = []
        for k, src in enumerate(sources):
            parts = [next(stored) for _ in plan[k]]
            described.append(self._finish(k, src, plan[k], parts, results[k], entries))
        self.cleanup()
        return described

    def _map(
        self,
        sources: list[Source],
        bits: list[int],
        executor: Executor | None,
        jobs: int,
        progress: ProgressFn | None,
    ) -> tuple[list[MapTask], list[list[MapResult]], dict[Path | RemoteFile, dict[str, Any]]]:
        """Every shard mapped (the files hashed beside): the tasks, their results per source,
        the header's file entries."""
        shards = [sh for k, src in enumerate(sources) for sh in plan_shards(k, src)]
        tasks = [MapTask(i, sh, bits[sh.source]) for i, sh in enumerate(shards)]
        on_done = (lambda i: progress(shards[i].size)) if progress else None
        hashing = _Hashing([p for src in sources for p in src.paths], self.out)
        try:
            mapped = _run(executor, jobs, map_shard, self.map_ctx, tasks, hashing.start, on_done)
            entries = hashing.results()
        finally:
            hashing.close()  # NOTE: before the reduce forks: no thread may run then
        results = [
            [r for t, r in zip(tasks, mapped) if t.shard.source == k] for k in range(len(sources))
        ]
        for per_source in results:
            check_ranged_files(per_source)
        return tasks, results, entries

    def _groups(
        self, k: int, bits: int, tasks: list[MapTask], results: list[MapResult]
    ) -> list[ReduceTask]:
        """The reduce tasks of source `k`, from its map tasks' records per bucket."""
        buckets = 1 << bits
        counts = sum((r.bucket_counts for r in results), np.zeros(buckets, dtype=np.int64))
        numbers = [t.number for t in tasks if t.shard.source == k]
        maps = tuple(zip(numbers, doc_bases(results)))
        budget = max(1, _REDUCE_BYTES // (REC.itemsize if self.positions else 8))
        return [
            ReduceTask(k, g, a, b, buckets, maps)
            for g, (a, b) in enumerate(plan_groups(counts, budget))
        ]

    def _finish(
        self,
        k: int,
        src: Source,
        groups: list[ReduceTask],
        stored: list[int],
        results: list[MapResult],
        entries: dict[Path | RemoteFile, dict[str, Any]],
    ) -> dict[str, Any]:
        """Source `k`'s index files and header entry."""
        append_parts(self.tmp, self.tmp / f"s{k}", groups, self.positions)
        if self.positions:
            save_npz(self.tmp / f"s{k}.docs.npz", doc_table(results))
        unread: dict[str, tuple[int, str, str]] = {}
        for item in (i for r in results for i in r.items if i.unread_turn is not None):
            merge_unread_turns(unread, {item.path: cast("tuple[int, str, str]", item.unread_turn)})
        files = [dict(entries[p]) for p in src.paths]
        for p, entry in zip(src.paths, files):
            if str(p) in unread:  # NOTE: a chat turn read as no text, as a scan's inputs say
                entry["unread_turn"] = unread_turn_entry(unread[str(p)])
        return {
            "name": src.name,
            "files": files,
            "documents": sum(r.documents for r in results),
            "ngrams": sum(r.ngrams for r in results),
            "stored": sum(stored),
        }

    def cleanup(self) -> None:
        """Remove the staging files: what is left is the index."""
        shutil.rmtree(self.tmp / "reduce")
        (self.tmp / MARKER).unlink()


def _held(executor: Executor | None) -> AbstractContextManager[Any]:
    """An executor that holds its workers between passes (Ray's) keeps them for both."""
    if hasattr(executor, "__enter__") and hasattr(executor, "__exit__"):
        return cast(AbstractContextManager[Any], executor)
    return nullcontext()


def _run(
    executor: Executor | None,
    jobs: int,
    work: Callable[[Any, Any], Any],
    context: Any,
    tasks: Sequence[Any],
    on_start: Callable[[], None] | None,
    on_done: Callable[[int], None] | None,
) -> list[Any]:
    """Every task's result in order; the workers are stopped before this returns or raises
    (the caller may remove what they write)."""
    ex = executor or make_executor(jobs, len(tasks))
    results = ex.map(work, context, tasks, on_start=on_start, on_done=on_done)
    try:
        return list(results)
    finally:
        close = getattr(results, "close", None)  # NOTE: a generator stops its workers here
        if close is not None:
            close()


class _Hashing:
    """The header's file entries (sha256 of local files) in a thread beside the map, started
    once the workers exist (nothing may fork while a thread runs)."""

    def __init__(self, paths: Iterable[Path | RemoteFile], out: Path) -> None:
        self.paths, self.out = list(paths), out
        self.pool: ThreadPoolExecutor | None = None
        self.futures: dict[Path, Future[dict[str, Any]]] = {}

    def start(self) -> None:
        local = [p for p in self.paths if isinstance(p, Path)]
        if local:
            self.pool = ThreadPoolExecutor(max_workers=1)
            self.futures = {p: self.pool.submit(file_entry, p, self.out) for p in local}

    def results(self) -> dict[Path | RemoteFile, dict[str, Any]]:
        """A remote object by its URL, size and ETag (no relpath, no sha256: hashing it would
        read it once more)."""
        got: dict[Path | RemoteFile, dict[str, Any]] = {
            p: f.result() for p, f in self.futures.items()
        }
        for p in self.paths:
            if isinstance(p, RemoteFile):
                got[p] = {**p.describe(), "relpath": None}
        return got

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
