"""A corpus index build that resumes: its map and reduce tasks through a checkpoint.

With a checkpoint directory, every finished map task (its run file and its result) and every
finished reduce task (its part) is kept there by :class:`~contam_cli.engine.checkpoint.Checkpointed`
(hard links where the file system allows), so that a build interrupted by Ctrl-C, a killed job
or a lost node, run again with the same directory, maps and reduces only what had not finished.
The index it writes is the uninterrupted build's, byte for byte.

A map task is keyed by its shard (each file's size, mtime, ctime and inode: a changed file is
mapped again), its number and its bucket bits; a reduce task by its buckets and the keys of every
map task it reads, so it runs again whenever one of them did. The staging directory's path and
token and the choice of kernels are not part of a key
(:data:`~contam_cli.engine.checkpoint._IRRELEVANT`): a resumed build may use other workers.
Once the index is in place the checkpoint is removed: the index holds everything it did, and its
run files are as large as the index.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from contam_cli.engine.checkpoint import MARKER, Checkpointed, config_key, task_key
from contam_cli.engine.corpus_index.mapper import MapTask, task_dir
from contam_cli.engine.corpus_index.reducer import ReduceTask, part_path
from contam_cli.engine.executor import Executor, LocalAuto
from contam_cli.errors import OutputError

__all__ = ["BuildCheckpoint", "discard"]

_COLUMNS = {False: ("gram",), True: ("gram", "doc", "pos")}


class BuildCheckpoint:
    """The keys and output files of one build's tasks, for a :class:`Checkpointed` executor."""

    def __init__(self, root: Path, positions: bool) -> None:
        self.root, self.positions = root, positions
        self.maps: dict[int, str] = {}
        """Each map task's key by its number, as the map pass computes them."""

    def key(self, task: Any) -> str:
        if isinstance(task, MapTask):
            key = f"map {task.number} bits {task.bits} {task_key(task.shard)}"
            self.maps[task.number] = key
            return key
        if isinstance(task, ReduceTask):
            reads = config_key([self.maps[number] for number, _ in task.maps], list(task.maps))
            return f"reduce {task.key} of {task.buckets} group {task.group} maps {reads}"
        raise TypeError(f"not an index build task: {type(task).__name__}")

    def outputs(self, task: Any) -> Sequence[Path]:
        if isinstance(task, MapTask):
            where = task_dir(self.root, task.number)
            return [where / "records.bin", where / "cuts.i64"]
        return [part_path(self.root, task, c) for c in _COLUMNS[self.positions]]

    def executor(
        self,
        base: Executor | None,
        jobs: int,
        directory: Path,
        inputs: Sequence[Path],
        out: Path,
        on_damaged: Callable[[str], None] | None = None,
    ) -> Checkpointed:
        """`base` (None: the local choice for `jobs`) with its tasks kept in `directory`."""
        _check_apart(directory, out)
        return Checkpointed(
            base or LocalAuto(jobs),
            directory,
            config_key("contam index build"),  # NOTE: the rest is in the contexts
            key=self.key,
            outputs=self.outputs,
            inputs=inputs,
            on_damaged=on_damaged,
        )


def _check_apart(directory: Path, out: Path) -> None:
    """The checkpoint and the index directory (replaced whole) must not hold one another."""
    a, b = directory.resolve(), out.resolve()
    if a == b or a.is_relative_to(b) or b.is_relative_to(a):
        raise OutputError(f"{directory}: the checkpoint cannot be inside the index or hold it")


def discard(directory: Path) -> None:
    """Remove a finished build's checkpoint (only a directory that is one)."""
    if (directory / MARKER).exists():
        shutil.rmtree(directory)
