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

__all__ = ["check_roles", "roles_in"]

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
    format, Parquet and Arrow rows too). `what` names the inputs in messages."""
    if not roles:
        return
    wanted, present = set(roles), set()
    for obj in _objects(files):
        found = set(roles_in(obj))
        present |= found
        wanted -= found
        if not wanted:
            return
    if not present:
        raise UsageError(f"--roles {','.join(roles)}: no chat turn in the {what} to keep or drop")
    missing = ", ".join(sorted(wanted))
    raise UsageError(
        f"--roles: no chat turn in the {what} has the role {missing} "
        f"(roles present: {', '.join(sorted(present))})"
    )


def _objects(files: Iterable[Path]) -> Iterator[Any]:
    import orjson

    for path in files:
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
