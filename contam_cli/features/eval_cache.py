"""The eval index persisted and reused: many corpora scanned against one eval suite index it once.

``ScanOptions(eval_cache=DIR)`` (``contam scan --eval-cache DIR``, ``CONTAM_EVAL_CACHE``) keeps
each eval set's index in ``DIR/eval-<key>/``, where the key hashes everything the index depends
on: every eval file's path as found, size and sha256, the paths as given, n, the normalization,
the text spec (fields, roles, id field), include/exclude, the hash, this cache's format, contam's
version and the index's field names. A changed eval file has another sha256, so another key: it
misses the cache and never reads a stale entry.

An entry holds every field of the :class:`~contam_cli.engine.eval_index.EvalIndex` as it is built
(before boilerplate suppression, which is applied to it afterwards, as to a fresh index), the
records' ids and places (file, line) and the eval inputs' description, so that a report made from
the cache is byte-identical to one made without it. Arrays are raw little-endian files described
in ``header.json`` (dtype, shape, CRC-32) and come back as copy-on-write memory maps: nothing is
copied, and scans running at once share the pages. An entry is written into a staged directory,
synced and renamed into place, so it is whole or absent; a damaged one (a file missing, short, or
failing its CRC) is an :class:`~contam_cli.errors.InputError` naming it, never a wrong index.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import tempfile
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from contam_cli._version import __version__
from contam_cli.engine.eval_index import EvalIndex
from contam_cli.engine.options import ScanOptions
from contam_cli.errors import InputError, OutputError
from contam_cli.features.eval_refs import EvalRefs
from contam_cli.io.output import WRITE_ERRNOS, check_parents, sync_tree
from contam_cli.report.columns import TextColumn
from contam_cli.text import HASH_NAME

__all__ = [
    "CACHE_FORMAT",
    "EVAL_CACHE_ENV",
    "CacheKey",
    "cache_key",
    "check_cache_dir",
    "load_entry",
    "store_entry",
]

CACHE_FORMAT = "contam.eval-cache/3"
"""Bumped whenever an entry's layout changes (an older entry then misses, as its key differs)."""
EVAL_CACHE_ENV = "CONTAM_EVAL_CACHE"
"""The environment variable the command line reads as the default ``--eval-cache``."""

_HEADER = "header.json"
#: EvalIndex fields that are not arrays in files: set from the key, or checked.
_SCALARS = ("n", "words_log2", "dir_log2")

Cached = tuple[EvalRefs, list[dict[str, Any]], EvalIndex]


@dataclasses.dataclass(frozen=True)
class CacheKey:
    """Where an eval set's entry lives, and what its name hashes."""

    name: str
    """``eval-`` and 32 hex digits of the SHA-256 of `parts`."""
    parts: dict[str, Any]
    """Everything the index depends on (recorded in the entry's header, compared on load)."""


def cache_key(
    given: Sequence[Path], files: Sequence[tuple[Path, str]], opts: ScanOptions
) -> CacheKey:
    """The key of the eval set read from paths `given`, that is `files` ((file, sha256) in
    reading order), under `opts`.

    >>> k = cache_key([Path("e.jsonl")], [], ScanOptions())
    >>> k.name.startswith("eval-"), len(k.name)
    (True, 37)
    """
    parts = {
        "format": CACHE_FORMAT,
        "tool_version": __version__,
        "hash": HASH_NAME,
        "n": opts.n,
        "normalization": opts.norm.describe(),
        "text_spec": dataclasses.asdict(opts.eval_spec),
        "include": list(opts.include),
        "exclude": list(opts.exclude),
        "given": [str(p) for p in given],
        "files": [{"path": str(f), "bytes": f.stat().st_size, "sha256": h} for f, h in files],
        "index_fields": [f.name for f in dataclasses.fields(EvalIndex)],
    }
    # NOTE: orjson of plain values (sorted keys) is the same bytes on every machine and run.
    blob = orjson.dumps(parts, option=orjson.OPT_SORT_KEYS)
    return CacheKey("eval-" + hashlib.sha256(blob).hexdigest()[:32], orjson.loads(blob))


def check_cache_dir(root: Path, inputs: Sequence[str | os.PathLike[str]]) -> None:
    """OutputError unless `root` can hold the cache: not an input, not inside an input directory
    (a corpus directory would read the entries as documents), not below a file."""
    target = Path(root).resolve()
    for item in inputs:
        source = Path(item).resolve()
        if target == source or (source.is_dir() and target.is_relative_to(source)):
            raise OutputError(f"{root}: refusing to keep the eval cache in the input {item}")
    if target.exists() and not target.is_dir():
        raise OutputError(f"{root}: the eval cache must be a directory")
    check_parents(target)


# -- writing -------------------------------------------------------------------------------------


def store_entry(
    root: Path,
    key: CacheKey,
    records: EvalRefs,
    inputs: list[dict[str, Any]],
    index: EvalIndex,
) -> Path:
    """Write the entry of `key` under `root` (staged, synced, renamed into place); its path.

    An entry that appeared meanwhile (another scan of the same eval set) is kept as it is.
    """
    if index.ignored_count is not None:
        raise ValueError("the eval cache holds indexes before boilerplate suppression")
    final = root / key.name
    try:
        root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{key.name}.", suffix=".tmp", dir=root))
    except OSError as e:
        raise OutputError(f"{root}: cannot write the eval cache ({e.strerror or e})") from None
    try:
        os.chmod(tmp, 0o777 & ~_umask())  # NOTE: mkdtemp's 0700 would surprise users.
        header = {"key": key.parts, "records": len(records), "inputs": inputs}
        header["files"] = _write_arrays(tmp, {**_index_arrays(index), **_record_arrays(records)})
        header["scalars"] = {k: int(getattr(index, k)) for k in _SCALARS}
        (tmp / _HEADER).write_bytes(orjson.dumps(header, option=orjson.OPT_INDENT_2))
        sync_tree(tmp)
        try:
            os.rename(tmp, final)
        except OSError:
            if not (final / _HEADER).is_file():
                raise
            shutil.rmtree(tmp, ignore_errors=True)  # NOTE: another scan stored it first
    except BaseException as e:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(e, OSError):
            why = "the disk is full" if e.errno in WRITE_ERRNOS else (e.strerror or str(e))
            raise OutputError(f"{final}: cannot write the eval cache entry ({why})") from None
        raise
    return final


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _index_arrays(index: EvalIndex) -> dict[str, np.ndarray]:
    """Every array field of `index`; any other field must be one the key or header covers."""
    out: dict[str, np.ndarray] = {}
    for f in dataclasses.fields(index):
        value = getattr(index, f.name)
        if isinstance(value, np.ndarray):
            out[f.name] = value
        elif f.name == "digests":
            out["digests"] = _digest_matrix(value)
        elif f.name not in (*_SCALARS, "norm", "ignored_count"):
            raise TypeError(f"EvalIndex.{f.name}: the eval cache does not know how to store it")
    return out


def _digest_matrix(digests: list[bytes]) -> np.ndarray:
    width = len(digests[0]) if digests else 16
    if any(len(d) != width for d in digests):
        raise ValueError("content digests of different lengths")
    flat = np.frombuffer(b"".join(digests), dtype=np.uint8)
    return flat.reshape(len(digests), width)


def _record_arrays(records: EvalRefs) -> dict[str, np.ndarray]:
    """The records' ids (UTF-8, with offsets), files (by number) and lines (-1: none)."""
    if isinstance(records.ids, TextColumn):
        blob, offsets = records.ids.storage()
    else:
        parts = [i.encode("utf-8", "surrogatepass") for i in records.ids]
        blob, offsets = b"".join(parts), np.zeros(len(parts) + 1, dtype=np.int64)
        np.cumsum([len(b) for b in parts], out=offsets[1:])
    names = "\0".join(records.paths).encode("utf-8", "surrogatepass")
    return {
        "ids": np.frombuffer(blob, dtype=np.uint8),
        "id_offsets": offsets,
        "paths": np.frombuffer(names, dtype=np.uint8),
        "file_no": np.asarray(records.file_no, dtype=np.int32),
        "lines": np.asarray(records.lines, dtype=np.int64),
    }


def _write_arrays(tmp: Path, arrays: dict[str, np.ndarray]) -> dict[str, dict[str, Any]]:
    files = {}
    for name, arr in arrays.items():
        data = np.ascontiguousarray(arr)
        dtype = data.dtype.newbyteorder("<") if data.dtype.byteorder == ">" else data.dtype
        data = data.astype(dtype, copy=False)
        with open(tmp / f"{name}.bin", "wb") as fh:
            fh.write(_raw(data))
        files[name] = {
            "dtype": data.dtype.str,
            "shape": list(data.shape),
            "crc32": zlib.crc32(_raw(data)),
        }
    return files


def _raw(data: np.ndarray) -> memoryview:
    """The bytes of a C-contiguous array, without a copy."""
    return data.reshape(-1).view(np.uint8).data


# -- reading -------------------------------------------------------------------------------------


def load_entry(root: Path, key: CacheKey, opts: ScanOptions) -> Cached | None:
    """The records, inputs description and index of `key`'s entry; None when there is none.

    A damaged entry is an InputError naming it (delete it: the next scan builds it again).
    """
    entry = root / key.name
    try:
        raw = (entry / _HEADER).read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None  # NOTE: a cache that is not a directory fails when the entry is stored
    except OSError as e:
        raise _damaged(entry, f"cannot read {_HEADER} ({e.strerror or e})") from None
    try:
        header = orjson.loads(raw)
        if header["key"] != key.parts:
            raise _damaged(entry, "its header names another eval set")
        arrays = {k: _map(entry, k, v) for k, v in header["files"].items()}
        index = _index(arrays, header["scalars"], opts)
        records = _records(arrays, int(header["records"]))
        inputs = header["inputs"]
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as e:
        raise _damaged(entry, f"unreadable ({e})") from None
    if len(records) != index.n_examples:
        raise _damaged(entry, "its records and index disagree")
    _touch(entry)
    return records, inputs, index


def _damaged(entry: Path, why: str) -> InputError:
    return InputError(
        entry, f"damaged eval cache entry: {why}; delete it, the next scan builds it again"
    )


def _map(entry: Path, name: str, spec: dict[str, Any]) -> np.ndarray:
    """File `name` of `entry` as a copy-on-write memory map, checked against `spec`."""
    path = entry / f"{name}.bin"
    dtype, shape = np.dtype(spec["dtype"]), tuple(int(s) for s in spec["shape"])
    nbytes = dtype.itemsize * int(np.prod(shape, dtype=np.int64))
    try:
        size = path.stat().st_size
    except OSError:
        raise _damaged(entry, f"{name}.bin is missing") from None
    if size != nbytes:
        raise _damaged(entry, f"{name}.bin holds {size} bytes, its header says {nbytes}")
    if nbytes == 0:
        return np.zeros(shape, dtype=dtype)
    # NOTE: "c" (copy-on-write) maps read-only pages but gives writeable arrays, which the
    # compiled kernels take as they take built ones (read-only arrays would compile anew).
    data = np.asarray(np.memmap(path, dtype=dtype, mode="c", shape=shape))
    if zlib.crc32(_raw(data)) != spec["crc32"]:
        raise _damaged(entry, f"{name}.bin fails its CRC-32")
    return data


def _index(arrays: dict[str, np.ndarray], scalars: dict[str, int], opts: ScanOptions) -> EvalIndex:
    values: dict[str, Any] = {"norm": opts.norm, "ignored_count": None}
    for f in dataclasses.fields(EvalIndex):
        if f.name in _SCALARS:
            values[f.name] = int(scalars[f.name])
        elif f.name == "digests":
            flat = arrays["digests"]
            blob, width = flat.tobytes(), flat.shape[1]
            values["digests"] = [blob[a : a + width] for a in range(0, len(blob), width)]
        elif f.name not in values:
            values[f.name] = arrays[f.name]
    if values["n"] != opts.n:
        raise ValueError(f"n={values['n']}, the scan's n={opts.n}")
    index = EvalIndex(**values)
    multi, extra = index.occ_multi, index.occ_extra
    if len(extra) != len(multi) + 1 or len(index.grams) + int(extra[-1]) != len(index.occ_ex):
        raise ValueError("the index's arrays disagree")
    if len(multi) and (int(multi.min()) < 0 or int(multi.max()) >= len(index.grams)):
        raise ValueError("the index's arrays disagree")
    return index


def _records(arrays: dict[str, np.ndarray], count: int) -> EvalRefs:
    """The records (ids and places, empty texts) as :func:`index_eval` returns them."""
    blob, offsets = arrays["ids"].tobytes(), arrays["id_offsets"]
    if len(offsets) != count + 1 or int(offsets[-1]) != len(blob) or np.any(np.diff(offsets) < 0):
        raise ValueError("the ids' offsets disagree with the records")
    blob.decode("utf-8", "surrogatepass")  # NOTE: fails here, not when an id is read
    ids = TextColumn(blob, offsets)
    names = arrays["paths"].tobytes().decode("utf-8", "surrogatepass").split("\0")
    file_no, lines = arrays["file_no"], arrays["lines"]
    if len(file_no) and (int(file_no.min()) < 0 or int(file_no.max()) >= len(names)):
        raise ValueError("a record's file number is out of range")
    return EvalRefs(ids, names if count else [], file_no, lines)


def _touch(entry: Path) -> None:
    """Mark the entry used (its modification time), so old entries can be pruned by age."""
    try:
        os.utime(entry)
    except OSError:
        pass  # NOTE: a read-only cache is still a cache
