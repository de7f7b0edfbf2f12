"""The eval side of a scan: the eval records, where they came from, and their index.

Eval sets (and ``contam calibrate``'s controls) follow the one input rule: paths are read as eval
files (one example per line or record, duplicate ids refused), texts in memory as records.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from contam_cli.engine.eval_index import EvalIndex, build_eval_index
from contam_cli.engine.options import ScanOptions
from contam_cli.errors import UsageError
from contam_cli.io.discover import iter_files, sha256_file
from contam_cli.io.inputs import as_record, classify
from contam_cli.io.model import Locator, ReadNotes, Record
from contam_cli.io.readers import iter_eval
from contam_cli.text import Tokenizer

__all__ = ["eval_warnings", "index_eval", "load_eval"]


def load_eval(
    eval: Any, opts: ScanOptions, *, what: str = "eval"
) -> tuple[list[Record], list[dict[str, Any]]]:
    """The eval records and a description of where they came from (`what` names the set in
    messages: ``eval``, ``controls``)."""
    records, describe = _eval_records(eval, opts, what)
    listed = list(records)
    if not listed:
        raise UsageError(_EMPTY.get(what, f"the {what} hold no examples"))
    return listed, describe(listed)


_EMPTY = {"eval": "the eval set holds no examples", "controls": "no controls: the set is empty"}


def index_eval(
    eval: Any, opts: ScanOptions, tk: Tokenizer
) -> tuple[list[Record], list[dict[str, Any]], EvalIndex]:
    """:func:`load_eval` and the eval index in one pass over the records.

    Each text is dropped once hashed: the records returned have empty texts (the index and its
    digests hold all that is needed of them), so a large eval set is never in memory whole.
    """
    refs: list[Record] = []
    records, describe = _eval_records(eval, opts)

    def texts() -> Iterator[str]:
        for r in records:
            refs.append(Record(r.id, "", Locator(r.locator.path, r.locator.line)))
            yield r.text

    eval_index = build_eval_index(texts(), opts.n, opts.norm, tk)
    if not refs:
        raise UsageError("the eval set holds no examples")
    return refs, describe(refs), eval_index


def _eval_records(
    eval: Any, opts: ScanOptions, what: str = "eval"
) -> tuple[Iterable[Record], Callable[[list[Record]], list[dict[str, Any]]]]:
    """The eval records (streamed from files), and how to describe them once all are read."""
    given = classify(eval, what=what)
    if given.paths:
        paths = list(given.paths)
        notes = ReadNotes()
        records = iter_eval(paths, opts.eval_spec, opts.include, opts.exclude, notes)
        return records, lambda seen: _describe_eval_files(paths, seen, opts, notes)
    assert given.memory is not None
    items = given.memory
    spec = opts.eval_spec
    notes = ReadNotes()
    in_memory = _unique(
        as_record(x, i, "<memory>", spec, role="eval", notes=notes) for i, x in enumerate(items)
    )

    def describe(seen: list[Record]) -> list[dict[str, Any]]:
        entry: dict[str, Any] = {"path": "<memory>", "sha256": None, "records": len(seen)}
        if notes.surrogates:
            entry["lone_surrogates"] = notes.surrogates["<memory>"]
        return [entry]

    return in_memory, describe


def _unique(records: Iterable[Record]) -> Iterator[Record]:
    seen: dict[str, int] = {}
    for k, r in enumerate(records):
        first = seen.setdefault(r.id, k)
        if first != k:
            raise UsageError(
                f"<memory>[{k}]: duplicate id {r.id!r} (first seen at <memory>[{first}])"
            )
        yield r


def _describe_eval_files(
    paths: Sequence[Path], records: list[Record], opts: ScanOptions, notes: ReadNotes
) -> list[dict[str, Any]]:
    counts: dict[str, int] = {}
    for r in records:
        counts[r.locator.path] = counts.get(r.locator.path, 0) + 1
    files = [f for p in paths for f in iter_files(p, opts.include, opts.exclude)]
    out = []
    for f in files:
        entry: dict[str, Any] = {
            "path": str(f),
            "sha256": sha256_file(f),
            "records": counts.get(str(f), 0),
        }
        replaced = notes.surrogates.get(str(f))
        if replaced:
            entry["lone_surrogates"] = replaced
        out.append(entry)
    return out


def eval_warnings(eval_inputs: list[dict[str, Any]]) -> list[str]:
    """What the eval files' reading replaced, as report warnings."""
    return [
        f"{e['path']}: {e['lone_surrogates']} record(s) held lone surrogate escapes "
        "(not text), read as U+FFFD"
        for e in eval_inputs
        if e.get("lone_surrogates")
    ]
