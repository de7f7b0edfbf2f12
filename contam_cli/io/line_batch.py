"""Batches of corpus documents as the readers build them: the TextBatch, filled line by line."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from contam_cli.io.lines import line_span, parse_line
from contam_cli.io.model import Locator, Record
from contam_cli.io.source import FileSource

__all__ = ["BatchBuilder", "LineBatch", "TextBatch"]


@dataclass
class TextBatch:
    """About `chunk_bytes` of consecutive documents of one file, as UTF-8 text, for scanning.

    Records are not built for the documents (that is most of the cost of reading); `record(d)`
    rebuilds document `d`'s full Record on demand, for the few that become evidence.
    """

    texts: Sequence[bytes]
    """Each document's text (a list, or :class:`~contam_cli.text.PackedTexts` from the compiled
    JSONL route)."""
    offsets: Sequence[int] | np.ndarray
    """Byte offset of each document's record in the (decompressed) file; -1 when unknown."""
    first_ordinal: int
    """Ordinal of the first document within its file; -1 in byte-range mode."""
    record: Callable[[int], Record]
    lines: list[int]
    """1-based line of each document (-1 when unknown); in byte-range mode counted from the
    range's first line (see `line_count` of :func:`iter_text_batches`)."""


class BatchBuilder:
    """What every builder of a TextBatch from a JSONL file shares: the file, the records built so
    far (by document), the text bytes added, and the full reader for one line."""

    def __init__(self, src: FileSource, ranged: bool, first_ordinal: int) -> None:
        self.src, self.ranged, self.first = src, ranged, first_ordinal
        self.built: dict[int, Record] = {}
        self.size = 0

    def full_record(self, offset: int, line_no: int, raw: bytes, d: int) -> Record:
        """Document `d` of this batch, read by the full record reader."""
        start, stop, content = line_span(offset, raw)
        line = None if self.ranged else line_no
        where = (self.src.path, line)
        ordinal = None if self.ranged else self.first + d
        locator = Locator(self.src.path, line, ordinal, (start, stop))
        position = f"@{start}" if self.ranged else str(line_no)
        obj = parse_line(content, where, self.src.notes)
        return self.src.make(obj, where, position, locator, content)


class LineBatch(BatchBuilder):
    """A TextBatch being filled from the lines of a JSONL file, one line at a time."""

    def __init__(self, src: FileSource, ranged: bool, first_ordinal: int) -> None:
        super().__init__(src, ranged, first_ordinal)
        self.texts: list[bytes] = []
        self.offsets: list[int] = []
        self.lines: list[int] = []
        self.raws: list[bytes] = []

    def add(
        self, text: bytes, offset: int, line: int, raw: bytes, rec: Record | None = None
    ) -> None:
        if rec is not None:
            self.built[len(self.texts)] = rec
            offset = rec.locator.span[0] if rec.locator.span else offset  # after a BOM
        self.texts.append(text)
        self.offsets.append(offset)
        self.lines.append(line)
        self.raws.append(raw)
        self.size += len(text)

    def record(self, d: int) -> Record:
        if d not in self.built:
            self.built[d] = self.full_record(self.offsets[d], self.lines[d], self.raws[d], d)
        return self.built[d]

    def done(self) -> TextBatch:
        first = -1 if self.ranged else self.first
        return TextBatch(self.texts, self.offsets, first, self.record, self.lines)
