"""The eval side of a scan: the eval records, where they came from, and their index.

Eval sets (and ``contam calibrate``'s controls) follow the one input rule: paths are read as eval
files (one example per line or record, duplicate ids refused), texts in memory as records.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from contam_cli.engine.eval_index import EvalIndex, build_eval_index
from contam_cli.engine.options import ScanOptions
from contam_cli.errors import UsageError
from contam_cli.features.eval_cache import cache_key, load_entry, store_entry
from contam_cli.features.eval_refs import EvalRefs, RefsBuilder
from contam_cli.io.discover import files_bytes, iter_files, sha256_file
from contam_cli.io.eval_columns import iter_eval_columns
from contam_cli.io.inputs import as_record, classify
from contam_cli.io.model import ReadNotes, Record, unread_turn_entry
from contam_cli.io.readers import iter_eval
from contam_cli.text import Tokenizer

__all__ = [
    "corpus_warnings",
    "eval_files_bytes",
    "eval_warnings",
    "index_eval",
    "index_eval_refs",
    "load_eval",
]


def eval_files_bytes(eval: Any, opts: ScanOptions) -> int:
    """The bytes on disk of the eval files that `eval` names (0 for texts in memory): what a
    run counts toward :data:`~contam_cli.io.accel.MIN_BYTES`."""
    return files_bytes(classify(eval, what="eval").paths, opts.include, opts.exclude)


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
    :func:`index_eval_refs` returns them as columns, which cost far less.
    """
    refs, described, index = index_eval_refs(eval, opts, tk)
    return list(refs), described, index


def index_eval_refs(
    eval: Any, opts: ScanOptions, tk: Tokenizer
) -> tuple[EvalRefs, list[dict[str, Any]], EvalIndex]:
    """:func:`index_eval` with the records as columns
    (:class:`~contam_cli.features.eval_refs.EvalRefs`, a sequence of Records: about 30 MB for a
    million examples, where Record objects take 290 MB).

    With ``opts.eval_cache`` set, eval files are indexed once and the index is reused from there
    (:mod:`contam_cli.features.eval_cache`); texts in memory are always indexed afresh.
    """
    given = classify(eval, what="eval")
    if opts.eval_cache is not None and given.paths:
        return _index_cached(list(given.paths), opts, tk)
    return _index_fresh(eval, opts, tk)


def _index_cached(paths: list[Path], opts: ScanOptions, tk: Tokenizer) -> _Indexed:
    """:func:`index_eval` of eval files through the cache in ``opts.eval_cache``."""
    assert opts.eval_cache is not None
    files = [f for p in paths for f in iter_files(p, opts.include, opts.exclude)]
    before = {f: _stamp(f) for f in files}
    hashes = {f: sha256_file(f) for f in files}
    key = cache_key(paths, [(f, hashes[f]) for f in files], opts)
    found = load_entry(opts.eval_cache, key, opts)
    if found is not None:
        return found
    refs, described, index = _index_fresh(paths, opts, tk, hashes)
    # NOTE: a file changed while it was read is indexed as read, but not kept under a key
    # hashed from what it held before.
    if all(_stamp(f) == before[f] for f in files):
        store_entry(opts.eval_cache, key, refs, described, index)
    return refs, described, index


def _stamp(path: Path) -> tuple[int, int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns  # NOTE: ctime: a write that kept the mtime


_Indexed = tuple[EvalRefs, list[dict[str, Any]], EvalIndex]
Describe = Callable[[Sequence[Record]], list[dict[str, Any]]]


def _index_fresh(
    eval: Any, opts: ScanOptions, tk: Tokenizer, hashes: dict[Path, str] | None = None
) -> _Indexed:
    """:func:`index_eval` without the cache (`hashes`: the eval files' sha256, when known)."""
    builder = RefsBuilder()
    texts, describe = _texts(eval, opts, builder, hashes, tk)
    eval_index = build_eval_index(texts, opts.n, opts.norm, tk)
    if not len(builder):
        raise UsageError("the eval set holds no examples")
    refs = builder.build()
    return refs, describe(refs), eval_index


def _texts(
    eval: Any,
    opts: ScanOptions,
    builder: RefsBuilder,
    hashes: dict[Path, str] | None,
    tk: Tokenizer,
) -> tuple[Iterator[str | bytes], Describe]:
    """The eval texts (str, or UTF-8 from files), each record's id and line going into
    `builder` as its text is read (files as columns, :mod:`contam_cli.io.eval_columns`); and
    how to describe them after."""
    given = classify(eval, what="eval")
    if not given.paths:
        records, describe = _eval_records(eval, opts, hashes=hashes)

        def from_records() -> Iterator[str | bytes]:
            for r in records:
                builder.add(r)
                yield r.text

        return from_records(), describe
    paths = list(given.paths)
    notes = ReadNotes()
    columns = iter_eval_columns(
        paths, opts.eval_spec, opts.include, opts.exclude, notes, accel=tk.kernels is not None
    )

    def from_columns() -> Iterator[str | bytes]:
        for batch in columns:
            builder.add_columns(batch.path, batch.ids, batch.lines)
            yield from batch.texts

    return from_columns(), lambda seen: _describe_eval_files(paths, seen, opts, notes, hashes)


def _eval_records(
    eval: Any, opts: ScanOptions, what: str = "eval", hashes: dict[Path, str] | None = None
) -> tuple[Iterable[Record], Describe]:
    """The eval records (streamed from files), and how to describe them once all are read."""
    given = classify(eval, what=what)
    if given.paths:
        paths = list(given.paths)
        notes = ReadNotes()
        records = iter_eval(paths, opts.eval_spec, opts.include, opts.exclude, notes)
        return records, lambda seen: _describe_eval_files(paths, seen, opts, notes, hashes)
    assert given.memory is not None
    items = given.memory
    spec = opts.eval_spec
    notes = ReadNotes()
    in_memory = _unique(
        as_record(x, i, "<memory>", spec, role="eval", notes=notes) for i, x in enumerate(items)
    )

    def describe(seen: Sequence[Record]) -> list[dict[str, Any]]:
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
    paths: Sequence[Path],
    records: Sequence[Record],
    opts: ScanOptions,
    notes: ReadNotes,
    hashes: dict[Path, str] | None = None,
) -> list[dict[str, Any]]:
    counts: dict[str, int] = {}
    if isinstance(records, EvalRefs):
        per_file = np.bincount(records.file_no, minlength=len(records.paths)).tolist()
        counts = dict(zip(records.paths, per_file))
    else:
        for r in records:
            counts[r.locator.path] = counts.get(r.locator.path, 0) + 1
    files = [f for p in paths for f in iter_files(p, opts.include, opts.exclude)]
    out = []
    for f in files:
        entry: dict[str, Any] = {
            "path": str(f),
            "sha256": hashes[f] if hashes and f in hashes else sha256_file(f),
            "records": counts.get(str(f), 0),
        }
        replaced = notes.surrogates.get(str(f))
        if replaced:
            entry["lone_surrogates"] = replaced
        if str(f) in notes.unread_turns:
            entry["unread_turn"] = unread_turn_entry(notes.unread_turns[str(f)])
        out.append(entry)
    return out


def eval_warnings(eval_inputs: list[dict[str, Any]], option: str = "--field") -> list[str]:
    """What the eval files' reading replaced or did not read, as report warnings (`option`:
    the one that chooses these files' text)."""
    return [
        *(
            f"{e['path']}: {e['lone_surrogates']} record(s) held lone surrogate escapes "
            "(not text), read as U+FFFD"
            for e in eval_inputs
            if e.get("lone_surrogates")
        ),
        *(
            f"{e['path']}: the chat turn at {e['unread_turn']['at']} has no content, value or "
            f"text; its {e['unread_turn']['key']!r} is not read (name that key content, or "
            f"choose the text with {option})"
            for e in eval_inputs
            if e.get("unread_turn")
        ),
    ]


def corpus_warnings(corpus_inputs: list[dict[str, Any]]) -> list[str]:
    """What the corpus files' reading did not read (chat turns without a text key)."""
    unread = [f for s in corpus_inputs for f in s["files"] if "unread_turn" in f]
    return eval_warnings(unread, "--corpus-field")
