"""The index header: what an index was built from and how; a scan refuses one that differs."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from contam_cli._version import __version__
from contam_cli.errors import IndexMismatchError, InputError
from contam_cli.io.discover import sha256_file
from contam_cli.text import HASH_NAME, NormConfig

__all__ = ["INDEX_FORMAT", "IndexHeader", "file_entry", "load_header", "resolve_file"]

INDEX_FORMAT = "contam.index/2"
_READS = ("contam.index/1", INDEX_FORMAT)


@dataclass(frozen=True)
class IndexHeader:
    """What an index was built from and how."""

    n: int
    normalization: dict[str, Any]
    hash: str
    positions: bool
    sources: list[dict[str, Any]]
    """Per source: name, files (path, relpath, sha256, bytes), documents, ngrams, stored."""
    tool_version: str = __version__
    format: str = INDEX_FORMAT

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "tool_version": self.tool_version,
            "n": self.n,
            "normalization": self.normalization,
            "hash": self.hash,
            "positions": self.positions,
            "sources": self.sources,
        }

    def check(self, n: int, norm: NormConfig, where: Path | str | None = None) -> None:
        """Raise IndexMismatchError unless this index answers for n-grams of size n under norm
        (`where`: the index directory, named in the message)."""
        problems = []
        if self.format not in _READS:
            problems.append(f"format {self.format} (this contam reads {INDEX_FORMAT})")
        if self.hash != HASH_NAME:
            problems.append(f"hash {self.hash} (this contam uses {HASH_NAME})")
        if self.n != n:
            problems.append(f"n={self.n} (asked for n={n}; rebuild it or pass -n {self.n})")
        if self.normalization != norm.describe():
            problems.append(f"normalization {self.normalization} (asked for {norm.describe()})")
        if problems:
            prefix = f"{where}: " if where is not None else ""
            raise IndexMismatchError(f"{prefix}the index was built with " + "; ".join(problems))

    def verify(self, root: Path) -> bool:
        """Check every corpus file's sha256 against the one recorded at build time; raise
        IndexMismatchError naming the first file that is missing or changed."""
        for src in self.sources:
            for f in src["files"]:
                path = resolve_file(root, f)
                if path is None:
                    raise IndexMismatchError(f"{f['path']}: corpus file of the index is missing")
                if sha256_file(path) != f["sha256"]:
                    raise IndexMismatchError(
                        f"{path}: changed since the index was built (sha256 differs); "
                        "rebuild the index"
                    )
        return True


def file_entry(path: Path, out: Path) -> dict[str, Any]:
    """A corpus file as the header records it: absolute path, path relative to the index
    directory `out`, sha256 and size."""
    # NOTE: abspath, not resolve(): a path through a symlink stays as the user sees it.
    absolute = os.path.abspath(path)
    try:
        relpath: str | None = os.path.relpath(absolute, os.path.abspath(out))
    except ValueError:  # NOTE: the corpus on another drive than the index (Windows)
        relpath = None
    return {
        "path": absolute,
        "relpath": relpath,
        "sha256": sha256_file(path),
        "bytes": path.stat().st_size,
    }


def resolve_file(root: Path, entry: dict[str, Any]) -> Path | None:
    """Where a recorded corpus file is now: its absolute path, else its path relative to the index
    directory `root` (an index moved together with its corpus); None when neither exists."""
    candidates = [Path(entry["path"])]
    if entry.get("relpath"):
        candidates.append(root / entry["relpath"])
    for p in candidates:
        if p.is_file():
            return p
    return None


def load_header(path: str | os.PathLike[str]) -> IndexHeader:
    """Read and validate an index directory's header."""
    head = Path(path) / "header.json"
    try:
        data = orjson.loads(head.read_bytes())
    except FileNotFoundError:
        raise InputError(
            path, "not a contam index (no header.json); build one with `contam index build`"
        ) from None
    except OSError as e:
        raise InputError(head, f"cannot read file: {e.strerror or e}") from None
    except orjson.JSONDecodeError as e:
        raise InputError(head, f"invalid index header ({e})") from None
    try:
        return IndexHeader(
            n=int(data["n"]),
            normalization=data["normalization"],
            hash=data["hash"],
            positions=bool(data["positions"]),
            sources=list(data["sources"]),
            tool_version=data["tool_version"],
            format=data["format"],
        )
    except (KeyError, TypeError, ValueError) as e:
        raise InputError(head, f"invalid index header (missing or bad {e})") from None
