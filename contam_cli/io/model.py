"""Plain values shared by every module: records and where they came from."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

StrPath = str | os.PathLike[str]
"""A file system path as users pass it (``str`` or ``pathlib.Path``)."""


@dataclass(frozen=True, slots=True)
class Locator:
    """Where a record lives, for evidence, error messages and byte-exact rewriting.

    ``span`` is the half-open byte range of the record's raw bytes in the (decompressed) file:
    the line without its line terminator for JSONL/TXT lines, the element's text for a JSON array,
    the whole file for a one-document TXT file.
    """

    path: str
    line: int | None = None
    """1-based line number where the record starts (None when unknown, e.g. a generator)."""
    record: int | None = None
    """0-based ordinal of the record within its file (every format)."""
    span: tuple[int, int] | None = None

    def __str__(self) -> str:
        if self.line is not None:
            return f"{self.path}:{self.line}"
        if self.record is not None:
            return f"{self.path}[{self.record}]"
        return self.path


@dataclass(frozen=True, slots=True)
class Record:
    """One eval example or one corpus document: an id, its text, and where it came from."""

    id: str
    text: str
    locator: Locator


@dataclass
class ReadNotes:
    """What readers replaced while reading, per file, for the report's warnings (mutable)."""

    surrogates: dict[str, int] = field(default_factory=dict)
    """Records per file whose JSON held lone surrogate escapes (such as ``"\\ud800"``), which
    are not text: they were read as U+FFFD."""

    unread_turns: dict[str, tuple[int, str, str]] = field(default_factory=dict)
    """Per file, the first record holding a chat turn with none of the text keys but another
    string (see io.extract.TURN_KEYS): (its byte offset or ordinal, where it is, that key)."""

    def replaced(self, path: str) -> None:
        self.surrogates[path] = self.surrogates.get(path, 0) + 1

    def unread_turn(self, locator: Locator, key: str) -> None:
        """Note the record at `locator` holding a chat turn whose text, if any, is under `key`
        (the first of a file is kept)."""
        note = unread_turn_note(locator, key)
        merge_unread_turns(self.unread_turns, {locator.path: note})

    def warnings(self) -> list[str]:
        return [
            f"{path}: {n} record(s) held lone surrogate escapes, read as U+FFFD"
            for path, n in sorted(self.surrogates.items())
        ]


def unread_turn_note(locator: Locator, key: str) -> tuple[int, str, str]:
    """A :attr:`ReadNotes.unread_turns` entry for the record at `locator`."""
    span, line, record = locator.span, locator.line, locator.record
    order = span[0] if span else (record or 0)
    if line is not None:
        place = f"line {line}"
    else:
        place = f"byte {span[0]}" if span else f"record {record}"
    return order, place, key


def merge_unread_turns(
    into: dict[str, tuple[int, str, str]], other: dict[str, tuple[int, str, str]]
) -> None:
    """Fold `other`'s notes into `into`, keeping each file's first (order-independent)."""
    for path, note in other.items():
        if path not in into or note < into[path]:
            into[path] = note


def unread_turn_entry(note: tuple[int, str, str]) -> dict[str, str]:
    """A file's ``unread_turn`` report input entry, from its ReadNotes.unread_turns note."""
    return {"at": note[1], "key": note[2]}
