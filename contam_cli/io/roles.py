"""Checking ``--roles`` against the data: a role no chat turn has is an error, never an empty text.

``--roles usr`` (for ``user``) would otherwise keep no turn of any chat record, so every chat
example or document would read as empty and a leak in it would go unseen. The check reads the
inputs' chat turns until every asked role has been seen (usually in the first records), and
fails naming the roles that are there.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from contam_cli.errors import UsageError
from contam_cli.io.columnar import arrow_rows, parquet_rows
from contam_cli.io.extract import TURN_KEYS, TextSpec
from contam_cli.io.formats import detect_format, open_binary
from contam_cli.io.jsonarray import iter_array_elements
from contam_cli.io.lines import decode_whole, iter_lines
from contam_cli.io.readers import read_all
from contam_cli.io.remote import RemoteFile
from contam_cli.io.source import FileSource

__all__ = ["check_roles", "check_roles_of", "roles_in"]

_SHAREGPT = {"human": "user", "gpt": "assistant"}


def roles_in(obj: Any) -> Iterator[str]:
    """The roles of the chat turns anywhere in a parsed record (OpenAI ``role`` or ShareGPT
    ``from``; ShareGPT names given both ways).

    >>> turns = [{"role": "user", "content": "hi"}, {"from": "gpt", "value": "x"}]
    >>> sorted(set(roles_in({"messages": turns})))
    ['assistant', 'gpt', 'user']
    """
    if isinstance(obj, dict):
        role = obj.get("role", obj.get("from"))
        if isinstance(role, str) and any(k in obj for k in TURN_KEYS):
            yield role
            if role in _SHAREGPT:
                yield _SHAREGPT[role]
        for value in obj.values():
            if isinstance(value, (dict, list)):
                yield from roles_in(value)
    elif isinstance(obj, list):
        for item in obj:
            yield from roles_in(item)


def check_roles(files: Iterable[Path], roles: tuple[str, ...] | None, what: str) -> None:
    """UsageError unless every role in `roles` is the role of some chat turn in `files` (every
    format, Parquet and Arrow rows too), and each file with chat turns has a turn of one of them.
    `what` names the inputs in messages."""
    check_roles_of(((str(path), _objects(path)) for path in files), roles, what)


# NOTE: a file whose first records hold no chat turn at all is taken for plain-text records
# (which --roles leaves as they are) after this many, so a plain corpus is not read twice.
PLAIN_SAMPLE = 1000


def check_roles_of(
    inputs: Iterable[tuple[str, Iterator[Any]]], roles: tuple[str, ...] | None, what: str
) -> None:
    """The check of :func:`check_roles` over ``(name, parsed records)`` inputs, one at a time.

    Roles match exactly, case included (as the readers keep turns). A role that no input has is
    an error; so is an input with chat turns none of which has any of the roles: all its texts
    would read as empty (``user`` in one file, ``User`` in another), and a leak there go unseen.
    An input without chat turns (plain-text records) is allowed.
    """
    if not roles:
        return
    asked, wanted, present = set(roles), set(roles), set()
    unmatched: list[tuple[str, set[str]]] = []
    for name, objects in inputs:
        held: set[str] = set()
        matched = False
        try:
            for count, obj in enumerate(objects, 1):
                found = set(roles_in(obj))
                held |= found
                wanted -= found
                matched = matched or not asked.isdisjoint(found)
                if (matched and not wanted) or (not held and count >= PLAIN_SAMPLE):
                    break
        finally:
            close = getattr(objects, "close", None)
            if close is not None:
                close()
        present |= held
        if held and not matched:
            unmatched.append((name, held))
    if not present:
        raise UsageError(f"--roles {','.join(roles)}: no chat turn in the {what} to keep or drop")
    if wanted:
        raise UsageError(
            f"--roles: no chat turn in the {what} has the role {', '.join(sorted(wanted))} "
            f"(roles present: {', '.join(sorted(present))})"
        )
    if unmatched:
        name, held = unmatched[0]
        more = f"; {len(unmatched) - 1} more input(s) too" if len(unmatched) > 1 else ""
        raise UsageError(
            f"{name}: --roles {','.join(roles)}: no chat turn in it has any of these roles, so "
            f"every text in it would be empty (its roles: {', '.join(sorted(held))}; roles "
            f"match exactly, case included){more}"
        )


def _objects(path: Path) -> Iterator[Any]:
    """The parsed records of one input file (formats other than these hold no chat turns)."""
    import orjson

    fmt = detect_format(path)
    if fmt == "jsonl":
        with open_binary(path) as fh:
            for _, line in iter_lines(fh, 0, str(path)):
                if line.strip():
                    try:
                        yield orjson.loads(line)
                    except orjson.JSONDecodeError:
                        continue  # NOTE: the reader itself reports it, with its line
    elif fmt == "json":
        text = decode_whole(read_all(str(path)), str(path))
        for obj, _, _ in iter_array_elements(text, str(path)):
            yield obj
    elif fmt in ("parquet", "arrow"):
        # NOTE: a chat corpus in Parquet went unchecked: --roles usr kept none of its turns
        yield from _columnar_rows(path, fmt)


def _columnar_rows(path: Path | RemoteFile, fmt: str) -> Iterator[Any]:
    """The rows of a Parquet or Arrow file (or remote object), as parsed records."""
    if isinstance(path, RemoteFile):
        src = FileSource(path.url, "corpus", TextSpec(), path.name, remote=path)
    else:
        src = FileSource(str(path), "corpus", TextSpec(), Path(path).name)
    yield from (parquet_rows if fmt == "parquet" else arrow_rows)(src)
