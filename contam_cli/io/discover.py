"""Finding input files: a file itself, or the readable files below a directory."""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import cast

from contam_cli.errors import InputError
from contam_cli.io.formats import StrPath, format_of
from contam_cli.io.read_digests import hash_rest
from contam_cli.io.remote import RemoteFile, Url, is_url, list_objects

__all__ = [
    "check_regular",
    "files_bytes",
    "iter_files",
    "list_files",
    "sha256_file",
    "unread_files",
    "unread_warnings",
]

#: Names listed in a warning about unread files at most (then a count of the rest).
UNREAD_LISTED = 5

# Metadata files that Hugging Face `Dataset.save_to_disk` writes beside its .arrow shards.
_HF_METADATA = ("state.json", "dataset_info.json", "dataset_dict.json")


def _is_hidden(name: str) -> bool:
    return name.startswith(".")


def _matches(rel: str, patterns: Sequence[str]) -> bool:
    base = rel.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(rel, g) or fnmatch.fnmatchcase(base, g) for g in patterns)


def _kept(rel: str, include: Sequence[str], exclude: Sequence[str]) -> bool:
    """Whether `rel` passes the ``--include``/``--exclude`` globs."""
    return (not include or _matches(rel, include)) and not _matches(rel, exclude)


def _walk(root: Path) -> Iterator[str]:
    """Relative posix paths of the non-hidden files below ``root``; an unlistable directory, a
    directory symlink loop, or a file of a known format that cannot be read (a broken symlink,
    a FIFO) is an InputError naming it, never skipped."""
    seen = {os.path.realpath(root)}

    def fail(err: OSError) -> None:
        raise InputError(err.filename or root, f"cannot list directory: {err.strerror or err}")

    for dirpath, dirnames, filenames in os.walk(root, onerror=fail, followlinks=True):
        kept = []
        for d in dirnames:
            if _is_hidden(d):
                continue
            real = os.path.realpath(os.path.join(dirpath, d))
            if real in seen:
                raise InputError(
                    os.path.join(dirpath, d),
                    "directory reached twice (a symlink loop, or two links to one directory)",
                )
            seen.add(real)
            kept.append(d)
        dirnames[:] = kept
        rel_dir = Path(dirpath).relative_to(root)
        if any(name.endswith(".arrow") for name in filenames) or "dataset_dict.json" in filenames:
            # A Hugging Face dataset saved to disk: its records are in the .arrow shards.
            filenames = [n for n in filenames if n not in _HF_METADATA]
        for name in filenames:
            if _is_hidden(name):
                continue
            if format_of(name) is not None:
                check_regular(os.path.join(dirpath, name))
            yield (rel_dir / name).as_posix()


def check_regular(path: StrPath) -> None:
    """InputError unless `path` is a regular file (or a symlink to one)."""
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        raise InputError(path, f"cannot read file: {e.strerror or e}") from None
    if not stat.S_ISREG(mode):
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "not a regular file"
        raise InputError(
            path, f"{kind}: contam reads inputs more than once (to hash them); give a file"
        )


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
        raise InputError(
            path, "no such file or directory" if not root.is_symlink() else "broken symlink"
        )
    if not root.is_dir():
        check_regular(root)
        return [root]
    rels = sorted(
        rel for rel in _walk(root) if format_of(rel) is not None and _kept(rel, include, exclude)
    )
    if not rels:
        raise InputError(path, _NOTHING_FOUND)
    return [root / rel for rel in rels]


_FORMATS = (
    ".jsonl, .json, .txt, .ndjson, .parquet, .arrow; text formats optionally .gz/.bz2/.xz/.zst"
)
_KNOWN = f"contam reads {_FORMATS}"
_NOTHING_FOUND = f"no input files found (looked for {_FORMATS})"


def files_bytes(
    paths: Sequence[StrPath], include: Sequence[str] = (), exclude: Sequence[str] = ()
) -> int:
    """The bytes on disk of every file that :func:`iter_files` yields under `paths`."""
    return sum(f.stat().st_size for p in paths for f in iter_files(p, include, exclude))


def list_files(
    path: StrPath, include: Sequence[str] = (), exclude: Sequence[str] = ()
) -> list[Path | RemoteFile]:
    """:func:`iter_files`, and for a URL (:mod:`contam_cli.io.remote`) the objects it names by
    the same rules: the object itself, or the objects below a prefix, sorted by their path
    below it, hidden names skipped, known formats only, filtered by the same globs."""
    if not is_url(path):
        return [*iter_files(path, include, exclude)]
    single, objects = list_objects(str(path))
    if single:
        return [*objects]
    by_rel = {o.rel: o for o in objects}
    rels = sorted(
        rel
        for rel in _visible(list(by_rel))
        if format_of(rel) is not None and _kept(rel, include, exclude)
    )
    if not rels:
        raise InputError(path, _NOTHING_FOUND)
    return [by_rel[rel] for rel in rels]


def unread_files(
    path: StrPath, include: Sequence[str] = (), exclude: Sequence[str] = ()
) -> list[str]:
    """The files below directory (or URL prefix) `path` that :func:`iter_files` and
    :func:`list_files` pass over for their format alone (not hidden, kept by the globs), as
    sorted relative paths: a ``shard-00000`` or ``.csv`` file that may hold text no one read.
    A file named itself gives none."""
    if is_url(path):
        single, objects = list_objects(str(path))
        rels = [] if single else _visible([o.rel for o in objects])
    elif Path(path).is_dir():
        rels = list(_walk(Path(path)))
    else:
        return []
    return sorted(rel for rel in rels if format_of(rel) is None and _kept(rel, include, exclude))


def unread_warnings(
    inputs: Sequence[object], include: Sequence[str] = (), exclude: Sequence[str] = ()
) -> list[str]:
    """A warning per directory or URL prefix in `inputs` (each a path, a URL, or a list of
    them, as the commands take; texts in memory are passed over) below which files were passed
    over for their format: nothing in them was read, so nothing in them was checked."""
    out = []
    for value in inputs:
        if isinstance(value, (str, os.PathLike)):
            parts: Sequence[object] = [value]
        elif isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)):
            # NOTE: a str in a list is a text, unless it is a Url (the input rule).
            parts = [v for v in value if isinstance(v, (os.PathLike, Url))]
        else:
            continue
        for part in parts:
            if not (is_url(part) or os.path.isdir(cast("StrPath", part))):
                continue
            rels = unread_files(cast("StrPath", part), include, exclude)
            if not rels:
                continue
            shown = ", ".join(rels[:UNREAD_LISTED])
            if len(rels) > UNREAD_LISTED:
                shown += f" and {len(rels) - UNREAD_LISTED} more"
            where = os.fspath(cast("StrPath", part))
            out.append(
                f"{where}: {len(rels)} file(s) not read, of no known format: {shown} "
                f"({_KNOWN}; --exclude GLOB passes over them without this warning)"
            )
    return out


def _visible(rels: list[str]) -> list[str]:
    """The object paths a directory walk would yield: none below or of a hidden name, and a
    Hugging Face dataset's metadata files left out beside its .arrow shards (as in `_walk`)."""
    shown = [r for r in rels if not any(_is_hidden(part) for part in r.split("/"))]
    folders: dict[str, list[str]] = {}
    for rel in shown:
        folders.setdefault(rel.rpartition("/")[0], []).append(rel.rpartition("/")[2])
    kept = []
    for rel in shown:
        folder, _, name = rel.rpartition("/")
        names = folders[folder]
        dataset = any(n.endswith(".arrow") for n in names) or "dataset_dict.json" in names
        if not (dataset and name in _HF_METADATA):
            kept.append(rel)
    return kept


def sha256_file(path: StrPath) -> str:
    """Hex SHA-256 of the raw (still compressed) bytes of ``path``, read in blocks."""
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb", buffering=0) as fh:
        hash_rest(digest, fh)
    return digest.hexdigest()
