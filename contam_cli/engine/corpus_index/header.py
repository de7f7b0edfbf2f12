"""The index header: what an index was built from and how; a scan refuses one that differs."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from contam_cli._version import __version__
from contam_cli.errors import IndexMismatchError, InputError
from contam_cli.io.discover import iter_files, sha256_file
from contam_cli.io.extract import TextSpec
from contam_cli.io.remote import is_url, mask, resolved
from contam_cli.text import HASH_NAME, NormConfig

__all__ = [
    "INDEX_FORMAT",
    "IndexHeader",
    "describe_spec",
    "file_entry",
    "given_entry",
    "load_header",
    "resolve_file",
    "root_entry",
]

INDEX_FORMAT = "contam.index/3"
_READS = ("contam.index/1", "contam.index/2", INDEX_FORMAT)
"""Formats before 3 record no ``corpus_text`` (see :meth:`IndexHeader.corpus_spec`)."""


@dataclass(frozen=True)
class IndexHeader:
    """What an index was built from and how."""

    n: int
    normalization: dict[str, Any]
    hash: str
    positions: bool
    sources: list[dict[str, Any]]
    """Per source: name, files (path, relpath, sha256, bytes), documents, ngrams, stored; and
    from ``contam index build`` on, roots (its directories) and given (:func:`given_entry`)."""
    corpus_text: dict[str, Any] | None
    """The text rules the corpus was read with (:func:`describe_spec` of its TextSpec: fields,
    roles, id field); None in an index of a format before 3, which did not record them."""
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
            "corpus_text": self.corpus_text,
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

    def corpus_spec(self, asked: TextSpec, where: Path | str) -> TextSpec:
        """The text rules to read the index's documents again with (its evidence): those it was
        built with. `asked`: the scan's corpus text rules; the default TextSpec() means "the
        index's", any other must be the index's. Raise IndexMismatchError when they differ, or
        when the index records none (built before format 3) and they matter: it has positions
        (evidence is read again) or the scan asks for rules of its own."""
        if self.corpus_text is None:
            if self.positions or asked != TextSpec():
                why = (
                    "which its evidence documents must be read again with"
                    if self.positions
                    else f"so {_flags(asked)} cannot be checked against them"
                )
                raise IndexMismatchError(
                    f"{where}: the index was built by an earlier contam ({self.format}) that "
                    f"did not record its corpus text rules (--corpus-field/--roles), {why}; "
                    "rebuild it with `contam index build`"
                )
            return asked
        built = spec_of(self.corpus_text)
        if asked not in (TextSpec(), built):
            raise IndexMismatchError(
                f"{where}: the index was built with {_flags(built)}, this scan asks for "
                f"{_flags(asked)}; scan with the index's (or without --corpus-field/--roles) "
                "or rebuild it"
            )
        return built

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
        added = self.added_files(root)
        if added:
            path, where = added[0]
            raise IndexMismatchError(
                f"{path}: in the corpus directory {where} but not in the index (added since it "
                "was built); rebuild the index"
            )
        return True

    @property
    def records_roots(self) -> bool:
        """Whether the index records the directories its corpus was found in (so that
        :meth:`verify` can tell a file added below one): indexes built by ``contam index
        build`` from this version on; not those built before, nor from a list of files."""
        return bool(self.sources) and all("roots" in src for src in self.sources)

    def given_paths(self, where: Path | str) -> dict[str, tuple[list[str], list[str]]]:
        """Per source that records them (:func:`given_entry`; not an index built before contam
        recorded them, nor one built in Python without them), the paths it was built from, as
        given and resolved, as a scan of those paths compares them with a thresholds file's
        ``calibrated_on``. `where`: the index directory, for errors."""
        out = {}
        for src in self.sources:
            given = src.get("given")
            if given is None:
                continue
            paths, resolved = given.get("paths"), given.get("resolved")
            lists = [v for v in (paths, resolved) if isinstance(v, list) and v]
            if len(lists) != 2 or len(paths) != len(resolved):
                raise InputError(Path(where) / "header.json", "invalid index header (bad given)")
            out[str(src["name"])] = (list(map(str, paths)), list(map(str, resolved)))
        return out

    def added_files(self, root: Path) -> list[tuple[Path, Path]]:
        """The files below a recorded corpus directory (found by the build's globs) that the
        index does not hold, each with its directory: added since it was built. A listing,
        nothing read; `root`: the index directory."""
        out = []
        for src in self.sources:
            held = {p.resolve() for f in src["files"] if (p := resolve_file(root, f)) is not None}
            for entry in src.get("roots", ()):
                where = resolve_file(root, entry, want=Path.is_dir)
                if where is None:
                    continue  # NOTE: its files are missing then, which verify names
                found = iter_files(where, entry["include"], entry["exclude"])
                out += [(f, where) for f in found if f.resolve() not in held]
        return out


def describe_spec(spec: TextSpec) -> dict[str, Any]:
    """A corpus TextSpec as the header records it (JSON).

    >>> describe_spec(TextSpec(fields=("body",), roles=("assistant",)))
    {'fields': ['body'], 'roles': ['assistant'], 'id_field': None}
    """
    roles = None if spec.roles is None else list(spec.roles)
    return {"fields": list(spec.fields), "roles": roles, "id_field": spec.id_field}


def spec_of(described: dict[str, Any]) -> TextSpec:
    """The TextSpec that :func:`describe_spec` described."""
    roles = described.get("roles")
    return TextSpec(
        fields=tuple(described.get("fields") or ()),
        roles=None if roles is None else tuple(roles),
        id_field=described.get("id_field"),
    )


def _flags(spec: TextSpec) -> str:
    """A corpus TextSpec in the words of the command line.

    >>> _flags(TextSpec(fields=("body",)))
    '--corpus-field body'
    >>> _flags(TextSpec())
    'no --corpus-field/--roles (the text found by default, every role)'
    """
    parts = [f"--corpus-field {f}" for f in spec.fields]
    if spec.roles is not None:
        parts.append(f"--roles {','.join(spec.roles)}")
    if spec.id_field is not None:
        parts.append(f"corpus id field {spec.id_field!r}")
    return " ".join(parts) or "no --corpus-field/--roles (the text found by default, every role)"


def file_entry(path: Path, out: Path) -> dict[str, Any]:
    """A corpus file as the header records it: absolute path, path relative to the index
    directory `out`, sha256 and size."""
    absolute, relpath = _located(path, out)
    return {
        "path": absolute,
        "relpath": relpath,
        "sha256": sha256_file(path),
        "bytes": path.stat().st_size,
    }


def _located(path: Path, out: Path) -> tuple[str, str | None]:
    """`path`'s absolute path and its path relative to the index directory `out` (None when
    none exists: another drive, on Windows)."""
    # NOTE: abspath, not resolve(): a path through a symlink stays as the user sees it.
    absolute = os.path.abspath(path)
    try:
        return absolute, os.path.relpath(absolute, os.path.abspath(out))
    except ValueError:
        return absolute, None


def given_entry(given: Sequence[str | os.PathLike[str]]) -> dict[str, Any]:
    """The paths (and URLs) a source was built from as the header records them: as given, and
    resolved (absolute, links followed, when the index is built; a URL as it is, credentials
    masked), as ``contam calibrate`` records those it read (``calibrated_on``)."""
    shown = [(mask(str(p)), mask(str(p))) if is_url(p) else (str(p), resolved(p)) for p in given]
    return {"paths": [p for p, _ in shown], "resolved": [r for _, r in shown]}


def root_entry(
    path: Path, out: Path, include: Sequence[str], exclude: Sequence[str]
) -> dict[str, Any]:
    """A corpus directory as the header records it: absolute path, path relative to the index
    directory `out`, and the globs its files were found with."""
    absolute, relpath = _located(path, out)
    return {"path": absolute, "relpath": relpath, "include": [*include], "exclude": [*exclude]}


def resolve_file(
    root: Path, entry: dict[str, Any], want: Callable[[Path], bool] = Path.is_file
) -> Path | None:
    """Where a recorded corpus file (or, `want` ``Path.is_dir``, directory) is now: its absolute
    path, else its path relative to the index directory `root` (an index moved together with its
    corpus); None when neither exists."""
    candidates = [Path(entry["path"])]
    if entry.get("relpath"):
        candidates.append(root / entry["relpath"])
    for p in candidates:
        if want(p):
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
            corpus_text=_corpus_text(data, head),
            tool_version=data["tool_version"],
            format=data["format"],
        )
    except (KeyError, TypeError, ValueError) as e:
        raise InputError(head, f"invalid index header (missing or bad {e})") from None


def _corpus_text(data: dict[str, Any], head: Path) -> dict[str, Any] | None:
    """The header's corpus text rules: required in format 3, absent before (a format this
    contam does not read has none here: :meth:`IndexHeader.check` refuses it)."""
    if data.get("format") != INDEX_FORMAT:
        return None
    text = data["corpus_text"]
    ok = isinstance(text, dict) and isinstance(text.get("fields"), list)
    roles = text.get("roles") if isinstance(text, dict) else None
    if not ok or not (roles is None or isinstance(roles, list)):
        raise InputError(head, "invalid index header (bad corpus_text)")
    return dict(text)
