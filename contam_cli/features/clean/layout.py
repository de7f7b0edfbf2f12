"""Where clean reads and writes: input groups, the mirrored layout, target checks, staging."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from contam_cli.engine.options import ScanOptions
from contam_cli.errors import ArgumentError, OutputError, UsageError
from contam_cli.features.eval_side import eval_files_bytes
from contam_cli.io import iter_files
from contam_cli.io.accel import chosen
from contam_cli.io.discover import list_files
from contam_cli.io.formats import StrPath as PathLike
from contam_cli.io.formats import format_of
from contam_cli.io.inputs import classify
from contam_cli.io.output import WRITE_ERRNOS, check_parents, sync_tree
from contam_cli.io.remote import RemoteFile, Url, url_parts

CorpusArg = PathLike | Sequence[PathLike] | Mapping[str, PathLike | Sequence[PathLike]]


def _scan_options(options: ScanOptions | None, kwargs: dict[str, Any]) -> ScanOptions:
    opts = options or ScanOptions()
    try:
        return replace(opts, **kwargs) if kwargs else opts
    except TypeError as e:  # an unknown keyword
        raise ArgumentError(str(e)) from None


def _as_paths(value: object, what: str = "corpus") -> list[Path]:
    """The paths of `value` (the input rule); texts in memory are refused: clean writes files
    that mirror its inputs."""
    given = classify(value, what=what)
    if given.memory is not None:
        raise UsageError(f"{what}: clean needs files (paths), not texts in memory")
    return list(given.paths)


def _eval_paths(eval: object) -> list[Path]:
    """The eval paths, or [] when the eval set is given in memory."""
    given = classify(eval, what="eval")
    return list(given.paths)


def _corpus_groups(corpus: CorpusArg) -> dict[str, list[Path | Url]]:
    if corpus is None:
        raise UsageError("no corpus given: use --corpus PATH or --source NAME=PATH")
    if isinstance(corpus, Mapping):
        if not corpus:
            raise ArgumentError("corpus: an empty mapping of sources")
        return {str(k): _corpus_paths(v, f"source {k!r}") for k, v in corpus.items()}
    return {"corpus": _corpus_paths(corpus)}


def _corpus_paths(value: object, what: str = "corpus") -> list[Path | Url]:
    """The paths and URLs of a corpus (:func:`_as_paths`, and URLs: a corpus may be remote)."""
    parts = url_parts(value, what)
    if parts is None:
        return [*_as_paths(value, what)]
    return [p if isinstance(p, Url) else Path(p) for p in parts]


def _local_inputs(groups: Mapping[str, list[Path | Url]]) -> list[Path]:
    """The corpus paths that an output must stay out of (a remote object is never written)."""
    return [p for ps in groups.values() for p in ps if isinstance(p, Path)]


def _layout(
    groups: Mapping[str, Sequence[Path | Url]], opts: ScanOptions
) -> list[tuple[Path | RemoteFile, str]]:
    """Every input file and its path relative to the output directory.

    One directory maps onto the output directory itself; otherwise each given path keeps its
    name (a directory its whole subtree) and, with several named sources, sits below the source
    name. A URL prefix is a directory, its last segment its name.
    """
    out: list[tuple[Path | RemoteFile, str]] = []
    for name, paths in groups.items():
        if len(groups) > 1 and (not name or "/" in name or name in (".", "..")):
            raise UsageError(f"source name {name!r} cannot be a directory name")
        prefix = f"{name}/" if len(groups) > 1 else ""
        lone_dir = len(paths) == 1 and isinstance(paths[0], Path) and paths[0].is_dir()
        for p in paths:
            if isinstance(p, Url):
                out += [(f, prefix + rel) for f, rel in _remote_layout(p, len(paths) == 1, opts)]
                continue
            for f in iter_files(p, opts.include, opts.exclude):
                rel: str
                if not p.is_dir():
                    rel = p.resolve().name
                elif lone_dir:
                    rel = f.relative_to(p).as_posix()
                else:
                    rel = f"{p.resolve().name}/{f.relative_to(p).as_posix()}"
                out.append((f, prefix + rel))
    seen: dict[str, Path | RemoteFile] = {}
    for file, rel in out:
        if seen.setdefault(rel, file) != file:
            raise UsageError(f"{file} and {seen[rel]} would both be written to {rel}")
    return out


def _remote_layout(url: Url, lone: bool, opts: ScanOptions) -> list[tuple[RemoteFile, str]]:
    """The objects of `url` and their paths in the output (as a directory's files would be)."""
    name = url.rstrip("/").rsplit("/", 1)[-1]
    out = []
    for f in list_files(url, opts.include, opts.exclude):
        assert isinstance(f, RemoteFile)
        out.append((f, f.name if not f.rel else f.rel if lone else f"{name}/{f.rel}"))
    return out


def _check_manifest(manifest: Path, outdir: Path, inputs: list[Path]) -> None:
    inside = _relative_inside(manifest, outdir)
    if inside is None:
        _check_targets([manifest], inputs, force=True, directory=False)
    elif format_of(manifest.name) is not None and not any(
        part.startswith(".") for part in inside.parts
    ):
        # NOTE: a later scan of OUTDIR would read a visible .json manifest as corpus data.
        raise UsageError(
            f"{manifest}: a manifest inside OUTDIR must be hidden (a name starting with '.'), "
            "or a later scan of OUTDIR would read it as corpus data"
        )


def _relative_inside(path: Path, directory: Path) -> Path | None:
    p, d = path.resolve(), directory.resolve()
    return p.relative_to(d) if p != d and p.is_relative_to(d) else None


def _with_kernels(
    opts: ScanOptions, eval: object, layout: Sequence[tuple[Path | RemoteFile, str]]
) -> ScanOptions:
    """`opts` with the clean's kernel choice (:func:`~contam_cli.io.accel.chosen`, by the eval
    files and the corpus files on disk)."""
    on_disk = eval_files_bytes(eval, opts) + sum(f.stat().st_size for f, _ in layout)
    return replace(opts, accel=chosen(opts.accel, on_disk))


def _check_targets(
    targets: list[Path], inputs: list[Path], *, force: bool, directory: bool
) -> None:
    """Refuse (OutputError) an output that is an input, lies inside an input directory, holds an
    input, or (a directory) is not empty without `force`; and two outputs that overlap."""
    resolved = [t.resolve() for t in targets]
    for k, t in enumerate(resolved):
        for other in resolved[k + 1 :]:
            if t == other or t.is_relative_to(other) or other.is_relative_to(t):
                raise UsageError(f"{targets[k]}: the outputs must not overlap")
        for item in inputs:
            s = item.resolve()
            if t == s or (t.exists() and s.exists() and os.path.samefile(t, s)):
                raise OutputError(f"{targets[k]}: refusing to overwrite the input {item}")
            if s.is_dir() and t.is_relative_to(s):
                raise OutputError(
                    f"{targets[k]}: refusing to write inside the input directory {item}"
                )
            if directory and s.is_relative_to(t):
                raise OutputError(
                    f"{targets[k]}: refusing to replace a directory holding the input {item}"
                )
        check_parents(targets[k])
        if directory and t.exists() and not t.is_dir():
            raise OutputError(f"{targets[k]}: exists and is not a directory")
        if directory and t.is_dir() and any(t.iterdir()) and not force:
            raise OutputError(f"{targets[k]}: directory is not empty (use --force to replace it)")
        if not directory and t.is_dir():
            raise OutputError(f"{targets[k]}: is a directory")


@contextmanager
def _staged_dir(target: Path, force: bool, inputs: list[Path]) -> Iterator[Path]:
    """A fresh directory beside `target`, renamed onto it when the block succeeds and removed
    when it fails (KeyboardInterrupt too), so `target` is either complete or untouched."""
    _check_targets([target], inputs, force=force, directory=True)
    final = target.resolve()
    final.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".tmp", dir=final.parent))
    try:
        os.chmod(stage, 0o777 & ~_umask())  # NOTE: mkdtemp's 0700 would surprise users.
        yield stage
        sync_tree(stage)
        _commit(stage, final, force)
    except BaseException as e:
        shutil.rmtree(stage, ignore_errors=True)
        if isinstance(e, OutputError) and str(stage) in str(e):
            # NOTE: the staging directory is an implementation detail; name what the user gave.
            raise OutputError(str(e).replace(str(stage), str(target))) from None
        if isinstance(e, OSError) and e.errno in WRITE_ERRNOS:
            raise OutputError(
                f"{target}: cannot write ({e.strerror or e}); nothing was written"
            ) from None
        raise


def _commit(stage: Path, final: Path, force: bool) -> None:
    if not final.exists():
        os.rename(stage, final)
        return
    if any(final.iterdir()) and not force:
        raise OutputError(f"{final}: directory is not empty (use --force to replace it)")
    old = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".old", dir=final.parent))
    os.rmdir(old)
    os.rename(final, old)
    try:
        os.rename(stage, final)
    except BaseException:
        os.rename(old, final)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
