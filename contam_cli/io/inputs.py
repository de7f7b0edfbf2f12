"""The one input rule, for every command and every source.

* a ``str`` or an ``os.PathLike`` is a path, always (never text), and must exist;
* a sequence of paths is several paths (all ``os.PathLike``; a mix of paths and strings is refused:
  a string in a list is text);
* texts in memory are an iterable of ``str`` (each one text), :class:`~contam_cli.io.model.Record`,
  or ``dict`` records (their text and id found as in a file, see :mod:`.extract`); a generator is
  streamed once;
* anything else (None, a number, bytes, an empty list) is an
  :class:`~contam_cli.errors.ArgumentError` naming the argument.

>>> classify(".", what="eval").paths[0].is_dir()
True
>>> classify(["some text in memory"], what="eval").paths
()
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contam_cli.errors import ArgumentError, InputError
from contam_cli.io.discover import check_regular
from contam_cli.io.extract import TextSpec, extract_text, find_id, without_surrogates
from contam_cli.io.model import Locator, ReadNotes, Record

__all__ = ["Input", "as_record", "classify", "name_paths"]


@dataclass(frozen=True)
class Input:
    """One input as given: paths on disk, or an iterable of texts/records in memory."""

    paths: tuple[Path, ...] = ()
    memory: Iterable[Any] | None = None


def name_paths(paths: Sequence[str | os.PathLike[str]]) -> str:
    """The inputs an error is about, for its start: ``""`` when they were in memory.

    >>> name_paths(["a.jsonl"]), name_paths(["a.jsonl", "b.jsonl", "c.jsonl", "d.jsonl"])
    ('a.jsonl: ', 'a.jsonl, b.jsonl, c.jsonl and 1 more: ')
    """
    if not paths:
        return ""
    shown = ", ".join(str(p) for p in paths[:3])
    more = f" and {len(paths) - 3} more" if len(paths) > 3 else ""
    return f"{shown}{more}: "


def classify(value: object, *, what: str) -> Input:
    """`value` under the input rule (see the module docstring); `what` names it in errors."""
    if isinstance(value, (str, os.PathLike)):
        return Input(paths=(_existing(value),))
    if value is None or isinstance(value, (bytes, bytearray, int, float, Mapping)):
        kind = "a mapping" if isinstance(value, Mapping) else repr(value)[:40]
        raise ArgumentError(
            f"{what}: expected a path, a list of paths, or an iterable of texts or records, "
            f"got {kind}"
        )
    if isinstance(value, Sequence):
        if len(value) == 0:
            raise ArgumentError(f"{what} is empty: give a path, or at least one text or record")
        paths = [isinstance(v, os.PathLike) for v in value]
        if all(paths):
            return Input(paths=tuple(_existing(v) for v in value))
        if any(paths):
            raise ArgumentError(
                f"{what}: a list mixes paths and texts; give pathlib.Path objects for files "
                "(a str in a list is a text)"
            )
        return Input(memory=value)
    if isinstance(value, Iterable):
        return Input(memory=value)
    raise ArgumentError(
        f"{what}: expected a path or an iterable of texts, got {type(value).__name__}"
    )


def _existing(value: str | os.PathLike[str]) -> Path:
    path = Path(value)
    if not path.exists():
        raise InputError(
            path, "broken symlink" if path.is_symlink() else "no such file or directory"
        )
    if not path.is_dir():
        check_regular(path)
    return path


def as_record(
    x: object, i: int, where: str, spec: TextSpec, *, role: str, notes: ReadNotes | None = None
) -> Record:
    """Item `i` of an in-memory input as a Record (a text gets the id ``str(i)``).

    Lone surrogates (a str can hold them, text cannot) are replaced by U+FFFD, as the file
    readers do, and noted in `notes` under `where`, so that every output can carry the text.
    """
    rec = _as_record(x, i, where, spec, role)
    fixed, replaced = without_surrogates(rec.text)
    if not replaced:
        return rec
    if notes is not None:
        notes.replaced(where)
    return Record(rec.id, fixed, rec.locator)


def _as_record(x: object, i: int, where: str, spec: TextSpec, role: str) -> Record:
    locator = Locator(where, record=i)
    if isinstance(x, Record):
        return x
    if isinstance(x, str):
        return Record(str(i), x, locator)
    if isinstance(x, dict):
        at = (f"{where}[{i}]", None)
        text = extract_text(x, spec, at)
        found = find_id(x, spec, at, required=role == "eval")
        return Record(found if found is not None else str(i), text, locator)
    raise ArgumentError(
        f"{where}[{i}]: expected a str, a Record or a dict record, got {type(x).__name__}"
    )
