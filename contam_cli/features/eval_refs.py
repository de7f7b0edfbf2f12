"""EvalRefs: the eval records a scan keeps once their texts are indexed, as columns.

A scan needs of each eval example only its id and its place (file and line): the index holds the
rest. Kept as Record objects, a million examples would cost about 290 MB (a record, a locator,
an id and a line number each); as columns (the ids in one UTF-8 buffer, a file number and a line
per example) about 30 MB. A Record is made when one is asked for, and the report's columns are
made from these (:mod:`contam_cli.report.columns`) without a string per example.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import overload

import numpy as np

from contam_cli.io.model import Locator, Record
from contam_cli.report.columns import LineColumn, TextColumn

__all__ = ["EvalRefs", "RefsBuilder"]


class EvalRefs(Sequence[Record]):
    """Records with empty texts (``Record(id, "", Locator(path, line))``), as columns.

    >>> refs = EvalRefs(["a", "b"], ["e.jsonl"], np.zeros(2, np.int32), np.array([1, -1]))
    >>> refs[0].locator.line, refs[1].locator.line, refs.eval_lines()[:], refs[1].id
    (1, None, (1, None), 'b')
    """

    def __init__(
        self, ids: Sequence[str], paths: list[str], file_no: np.ndarray, lines: np.ndarray
    ) -> None:
        if not len(ids) == len(file_no) == len(lines):
            raise ValueError("EvalRefs: columns of different lengths")
        self.ids = ids
        self.paths = paths
        """The files, in order of their first record."""
        self.file_no = file_no
        """int32 per record: its file in `paths`."""
        self.lines = lines
        """int64 per record: its 1-based line (-1: unknown)."""

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, k: int) -> Record: ...

    @overload
    def __getitem__(self, k: slice) -> list[Record]: ...

    def __getitem__(self, k: int | slice) -> Record | list[Record]:
        if isinstance(k, slice):
            return [self[j] for j in range(len(self))[k]]
        line = int(self.lines[k])
        path = self.paths[self.file_no[k]]
        return Record(self.ids[k], "", Locator(path, None if line < 0 else line))

    def __iter__(self) -> Iterator[Record]:
        for k in range(len(self)):
            yield self[k]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(other) == len(self) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"EvalRefs(<{len(self)} records from {len(self.paths)} files>)"

    def eval_paths(self) -> list[str]:
        """Each record's file (the same string object for every record of one file)."""
        return [self.paths[k] for k in self.file_no.tolist()]

    def eval_lines(self) -> LineColumn:
        return LineColumn(self.lines)


class RefsBuilder:
    """Collects EvalRefs one record at a time (while the records stream past the index).

    NOTE: ids are copied into one buffer, not kept as the reader's strings: those sit among the
    reader's short-lived objects, and kept they would pin that memory (about 300 MB of heap for
    a million examples) after the rest is freed. The ids are made again, compactly, at the end.
    """

    def __init__(self) -> None:
        self._ids = bytearray()
        self._id_ends = array("q")
        self._files: dict[str, int] = {}
        self._file_no = array("i")
        self._lines = array("q")

    def add(self, record: Record) -> None:
        loc = record.locator
        self._ids += record.id.encode("utf-8", "surrogatepass")
        self._id_ends.append(len(self._ids))
        self._file_no.append(self._files.setdefault(loc.path, len(self._files)))
        self._lines.append(-1 if loc.line is None else loc.line)

    def add_columns(self, path: str, ids: list[str], lines: list[int]) -> None:
        """Records of file `path` with ids `ids` at lines `lines` (-1: unknown)."""
        joined = "".join(ids)
        if joined.isascii():  # NOTE: the common case: one encode, a byte per character
            lengths = [len(i) for i in ids]
            data = joined.encode("ascii")
        else:
            encoded = [i.encode("utf-8", "surrogatepass") for i in ids]
            lengths = [len(e) for e in encoded]
            data = b"".join(encoded)
        ends = np.cumsum(lengths, dtype=np.int64) + len(self._ids)
        self._ids += data
        self._id_ends.frombytes(ends.tobytes())
        self._file_no.extend([self._files.setdefault(path, len(self._files))] * len(ids))
        self._lines.extend(lines)

    def __len__(self) -> int:
        return len(self._id_ends)

    def build(self) -> EvalRefs:
        file_no = np.frombuffer(self._file_no, dtype=np.intc).astype(np.int32)
        lines = np.frombuffer(self._lines, dtype=np.int64).copy()
        offsets = np.zeros(len(self._id_ends) + 1, dtype=np.int64)
        offsets[1:] = np.frombuffer(self._id_ends, dtype=np.int64)
        ids = TextColumn(bytes(self._ids), offsets)
        return EvalRefs(ids, list(self._files), file_no, lines)
