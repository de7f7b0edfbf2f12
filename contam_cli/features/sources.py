"""A scan's corpus sources: the `corpus` argument (one input, or a mapping of source name to
one) as named sources of files, URLs or records in memory, and the report's corpus inputs."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from contam_cli.engine.options import ScanOptions
from contam_cli.engine.shards import Source
from contam_cli.errors import ArgumentError, UsageError
from contam_cli.io.discover import iter_files, list_files
from contam_cli.io.inputs import classify
from contam_cli.io.model import unread_turn_entry
from contam_cli.io.remote import RemoteFile, url_parts

__all__ = ["check_documents", "describe_sources", "resolve_sources"]


def resolve_sources(corpus: Any, opts: ScanOptions) -> list[Source]:
    """The `corpus` argument as named sources (one rule for every source, see scan())."""
    if corpus is None:
        raise UsageError("no corpus given: use --corpus PATH or --source NAME=PATH")
    if isinstance(corpus, Mapping):
        if not corpus:
            raise ArgumentError("corpus: an empty mapping of sources")
        return [_source(str(k), v, opts) for k, v in corpus.items()]
    return [_source("corpus", corpus, opts)]


def _source(name: str, value: object, opts: ScanOptions) -> Source:
    what = "corpus" if name == "corpus" else f"source {name!r}"
    parts = url_parts(value, what)
    if parts is not None:  # URLs (and paths beside them)
        found = (f for p in parts for f in list_files(p, opts.include, opts.exclude))
        return Source(name, tuple(found))
    given = classify(value, what=what)
    if given.memory is not None:
        return Source(name, stream=given.memory)
    files = [f for p in given.paths for f in iter_files(p, opts.include, opts.exclude)]
    return Source(name, tuple(files))


def check_documents(sources: list[Source], documents: list[int]) -> None:
    for src, n in zip(sources, documents):
        if n == 0:
            what = "corpus" if src.name == "corpus" else f"source {src.name!r}"
            raise UsageError(f"{what}: no documents to scan")


def describe_sources(
    sources: list[Source],
    documents: list[int],
    text_bytes: list[int],
    hashes: Mapping[Path, str],
    replaced: Mapping[str, int] | None = None,
    unread: Mapping[str, tuple[int, str, str]] | None = None,
) -> list[dict[str, Any]]:
    """The report's corpus inputs; `replaced`, `unread`: ReadNotes' notes, as for eval files."""
    replaced, unread = replaced or {}, unread or {}

    def entry(p: Path | RemoteFile) -> dict[str, Any]:
        if isinstance(p, RemoteFile):
            out = p.describe()
        else:
            out = {"path": str(p), "bytes": p.stat().st_size, "sha256": hashes.get(p)}
        if replaced.get(out["path"]):
            out["lone_surrogates"] = replaced[out["path"]]
        if out["path"] in unread:
            out["unread_turn"] = unread_turn_entry(unread[out["path"]])
        return out

    return [
        {
            "source": src.name,
            "files": [entry(p) for p in src.paths],
            "streamed": src.stream is not None,
            "documents": int(docs),
            "text_bytes": int(size),
        }
        for src, docs, size in zip(sources, documents, text_bytes)
    ]
