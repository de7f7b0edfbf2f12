"""Finding input files: a file itself, or the readable files below a directory."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from contam_cli.errors import InputError
from contam_cli.io.formats import StrPath, format_of

__all__ = ["iter_files", "sha256_file"]

# Metadata files that Hugging Face `Dataset.save_to_disk` writes beside its .arrow shards.
_HF_METADATA = ("state.json", "dataset_info.json", "dataset_dict.json")


def _is_hidden(name: str) -> bool:
    return name.startswith(".")


def _matches(rel: str, patterns: Sequence[str]) -> bool:
    base = rel.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(rel, g) or fnmatch.fnmatchcase(base, g) for g in patterns)


def _walk(root: Path) -> Iterator[str]:
    """Relative posix paths of the regular, non-hidden files below ``root``."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not _is_hidden(d)]
        rel_dir = Path(dirpath).relative_to(root)
        if any(name.endswith(".arrow") for name in filenames) or "dataset_dict.json" in filenames:
            # A Hugging Face dataset saved to disk: its records are in the .arrow shards.
            filenames = [n for n in filenames if n not in _HF_METADATA]
        for name in filenames:
            if not _is_hidden(name) and os.path.isfile(os.path.join(dirpath, name)):
                yield (rel_dir / name).as_posix()


def iter_files(
    path: StrPath, include: Sequence[str] = (), exclude: Sequence[str] = ()
) -> list[Path]:
    """The input files named by ``path``: the file itself, or the readable files below a directory.

    Directory members are found recursively, skipping hidden names, keeping known formats only, and
    filtered by ``include``/``exclude`` globs (matched against the relative posix path and the
    basename); they are sorted by relative path so every machine reads them in the same order.
    """
    root = Path(path)
    if not root.exists():
        raise InputError(path, "no such file or directory")
    if not root.is_dir():
        return [root]
    rels = sorted(
        rel
        for rel in _walk(root)
        if format_of(rel) is not None
        and (not include or _matches(rel, include))
        and not _matches(rel, exclude)
    )
    if not rels:
        raise InputError(
            path,
            "no input files found (looked for .jsonl, .json, .txt, .ndjson, "
            ".parquet, .arrow; text formats optionally .gz/.bz2/.xz/.zst)",
        )
    return [root / rel for rel in rels]


def sha256_file(path: StrPath) -> str:
    """Hex SHA-256 of the raw (still compressed) bytes of ``path``, read in blocks."""
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()
