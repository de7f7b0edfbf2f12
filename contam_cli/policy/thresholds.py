"""Per-source thresholds files: what ``contam calibrate`` writes and ``--thresholds`` reads.

The file (``contam.thresholds/1``) records, per source, the run and overlap thresholds measured on
known-clean controls (and the fuzzy detector's, ``fuzzy``, when calibrated with it), how many
controls they rest on, and whether that is enough for the percentile asked; and the n,
normalization and percentile they were measured with (and the fuzzy settings), so that a scan
with another n or normalization refuses it. Per source read from paths, ``calibrated_on``
records them as given and resolved: a scan that gives a source the paths another source was
calibrated on (swapped or misnamed sources) refuses the file, and one that gives it other paths
warns. A hand-written file may hold only ``sources`` (or just the per-source mapping).

>>> t = parse_thresholds({"sources": {"web": {"longest_run": 40}}}, "t.json")
>>> t["web"].longest_run
40
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from contam_cli._version import __version__
from contam_cli.errors import UsageError
from contam_cli.io.inputs import classify
from contam_cli.io.json_keys import check_unique_keys
from contam_cli.io.output import write_atomic
from contam_cli.io.remote import resolved, url_parts
from contam_cli.policy.rules import SourceThreshold
from contam_cli.text import NormConfig

__all__ = [
    "THRESHOLDS_SCHEMA",
    "CorpusPaths",
    "Thresholds",
    "check_corpus",
    "corpus_paths",
    "load_thresholds",
    "parse_thresholds",
]

THRESHOLDS_SCHEMA = "contam.thresholds/1"
_TOP = {"schema", "tool", "n", "normalization", "percentile", "min_run", "fuzzy", "sources"}
_SOURCE = {
    "longest_run",
    "overlap_fraction",
    "controls",
    "well_estimated",
    "fuzzy",
    "calibrated_on",
}


class CorpusPaths(NamedTuple):
    """The paths (and URLs) a source was read from: as given, and resolved (absolute, links
    followed; a URL as it is), in the same order."""

    given: tuple[str, ...]
    resolved: tuple[str, ...]

    def same(self, other: CorpusPaths) -> bool:
        """The same files or directories, in any order."""
        return set(self.resolved) == set(other.resolved)

    def shown(self, other: CorpusPaths) -> tuple[str, str]:
        """Both, as given, or resolved where they are given alike (another directory)."""
        mine, theirs = ", ".join(self.given), ", ".join(other.given)
        if mine == theirs:
            return ", ".join(self.resolved), ", ".join(other.resolved)
        return mine, theirs


def corpus_paths(corpus: Any) -> dict[str, CorpusPaths]:
    """Per source of a scan's or calibration's `corpus` argument (one input, or a mapping of
    source name to one), the paths it is read from; sources in memory are left out."""
    named = corpus.items() if isinstance(corpus, Mapping) else [("corpus", corpus)]
    out = {}
    for name, value in named:
        parts = url_parts(value, f"source {name!r}")
        if parts is None:
            parts = list(classify(value, what=f"source {name!r}").paths)
            if not parts:
                continue
        out[str(name)] = CorpusPaths(tuple(map(str, parts)), tuple(map(resolved, parts)))
    return out


def check_corpus(
    thresholds: Mapping[str, SourceThreshold], corpus: Any = None, *, paths: Any = None
) -> list[str]:
    """A scan's warnings about `thresholds` calibrated on other paths than its `corpus` gives
    their sources (or `paths`, per source its paths as given and resolved: an index's); a
    UsageError when a source reads what another was calibrated on."""
    check = getattr(thresholds, "check_corpus", None)
    if check is None:
        return []
    scanned = corpus_paths(corpus) if paths is None else paths
    return list(check({k: CorpusPaths(*map(tuple, v)) for k, v in scanned.items()}))


@dataclass(frozen=True)
class Thresholds(Mapping[str, SourceThreshold]):
    """Per-source thresholds, with how they were measured (None: not recorded)."""

    sources: Mapping[str, SourceThreshold]
    n: int | None = None
    normalization: Mapping[str, Any] | None = None
    percentile: float | None = None
    min_run: int | None = None
    fuzzy: Mapping[str, Any] | None = None
    """The fuzzy detector's settings the ``fuzzy`` thresholds were measured with (None: none
    were, or not recorded); a fuzzy scan with other settings refuses them."""
    calibrated_on: Mapping[str, CorpusPaths] = field(default_factory=dict)
    """Per source read from paths, the paths its thresholds were measured on."""
    tool_version: str | None = field(default=None, compare=False)
    origin: str = field(default="--thresholds", compare=False)
    """Where they were read from, for messages."""
    warnings: tuple[str, ...] = field(default=(), compare=False)
    """What calibration found wrong with the controls (never saved in the file)."""

    def __getitem__(self, name: str) -> SourceThreshold:
        return self.sources[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.sources)

    def __len__(self) -> int:
        return len(self.sources)

    def check_fuzzy(self, settings: Mapping[str, Any]) -> None:
        """UsageError unless the fuzzy thresholds were measured with these fuzzy settings (as
        ``ScanOptions.describe()["fuzzy"]`` gives them; not recorded: nothing to check)."""
        if self.fuzzy is not None and dict(self.fuzzy) != dict(settings):
            mine = self.fuzzy
            changed = sorted(k for k in {*mine, *settings} if mine.get(k) != settings.get(k))
            raise UsageError(
                f"{self.origin}: fuzzy thresholds measured with other fuzzy settings "
                f"({', '.join(changed)} differ)"
            )

    def check(self, n: int, norm: NormConfig, source_names: list[str], where: str = "") -> None:
        """UsageError unless these thresholds fit a scan with this n, normalization and sources
        (every source has one, and every one belongs to a source)."""
        where = where or self.origin
        if self.n is not None and self.n != n:
            raise UsageError(f"{where}: thresholds measured with n={self.n}, the scan uses n={n}")
        if self.normalization is not None and dict(self.normalization) != norm.describe():
            raise UsageError(
                f"{where}: thresholds measured with normalization {dict(self.normalization)}, "
                f"the scan uses {norm.describe()}"
            )
        missing = [s for s in source_names if s not in self.sources]
        if missing:
            raise UsageError(
                f"{where}: no threshold for source {missing[0]!r} (the file has "
                f"{', '.join(map(repr, self.sources)) or 'none'})"
            )
        unknown = [s for s in self.sources if s not in source_names]
        if unknown:
            raise UsageError(
                f"{where}: a threshold for {unknown[0]!r}, which is not a source of this scan "
                f"(sources: {', '.join(map(repr, source_names))})"
            )

    def check_corpus(self, scanned: Mapping[str, CorpusPaths]) -> list[str]:
        """Warnings per source whose `scanned` paths are not those it was calibrated on;
        UsageError when they are those another source was calibrated on (swapped or misnamed
        sources would apply that source's thresholds). Not recorded: nothing to check."""
        out = []
        for name, paths in scanned.items():
            mine = self.calibrated_on.get(name)
            if mine is not None and mine.same(paths):
                continue
            other = next(
                (k for k, v in self.calibrated_on.items() if k != name and v.same(paths)), None
            )
            if other is not None:
                raise UsageError(
                    f"{self.origin}: source {name!r} reads {', '.join(paths.given)}, the paths "
                    f"source {other!r} was calibrated on: its thresholds would apply to {name!r} "
                    "(swapped or misnamed sources); give each source its own paths, or calibrate "
                    "again"
                )
            if mine is not None:
                now, then = paths.shown(mine)
                out.append(
                    f"{self.origin}: the thresholds for source {name!r} were calibrated on "
                    f"{then}, this scan reads {now}: applied as they are (calibrate again if "
                    "the source changed)"
                )
        return out

    def to_dict(self) -> dict[str, Any]:
        """The file's JSON (``fuzzy`` keys only when there are fuzzy thresholds, so files
        without them keep their bytes)."""
        out: dict[str, Any] = {
            "schema": THRESHOLDS_SCHEMA,
            "tool": {"name": "contam", "version": self.tool_version or __version__},
            "n": self.n,
            "normalization": None if self.normalization is None else dict(self.normalization),
            "percentile": self.percentile,
            "min_run": self.min_run,
        }
        if self.fuzzy is not None:
            out["fuzzy"] = dict(self.fuzzy)
        out["sources"] = {k: self._source_dict(k) for k in sorted(self.sources)}
        return out

    def _source_dict(self, name: str) -> dict[str, Any]:
        out = self.sources[name].describe()
        paths = self.calibrated_on.get(name)
        if paths is not None:
            out["calibrated_on"] = {"paths": list(paths.given), "resolved": list(paths.resolved)}
        return out

    def to_json(self) -> bytes:
        """The file's bytes (deterministic: sources in name order, two-space indents)."""
        return orjson.dumps(self.to_dict(), option=orjson.OPT_INDENT_2) + b"\n"

    def save(self, path: str | Path, *, inputs: Sequence[str | Path] = ()) -> None:
        """Write the file atomically (deterministic bytes)."""
        write_atomic(path, self.to_json(), inputs=inputs)


def load_thresholds(path: str | Path) -> Thresholds:
    """Read and validate a thresholds file; UsageError naming the file and the bad key."""
    try:
        raw = Path(path).read_bytes()
        data = orjson.loads(raw)
        check_unique_keys(raw.decode("utf-8"))
    except OSError as e:
        raise UsageError(f"{path}: cannot read thresholds ({e.strerror or e})") from None
    except json.JSONDecodeError as e:  # NOTE: orjson's too
        raise UsageError(f"{path}:{e.lineno}: invalid JSON ({e.msg})") from None
    return parse_thresholds(data, str(path))


def parse_thresholds(data: object, where: str) -> Thresholds:
    """The thresholds `data` (parsed JSON) describes; `where` names it in errors."""
    if not isinstance(data, dict):
        raise UsageError(f"{where}: expected an object of per-source thresholds")
    if "sources" not in data:
        data = {"sources": data}  # NOTE: the bare per-source mapping of older files
    for key in data:
        if key not in _TOP:
            raise UsageError(f"{where}: unknown key {key!r} (expected {', '.join(sorted(_TOP))})")
    if data.get("schema", THRESHOLDS_SCHEMA) != THRESHOLDS_SCHEMA:
        raise UsageError(f"{where}: unknown schema {data['schema']!r} (reads {THRESHOLDS_SCHEMA})")
    table = data["sources"]
    if not isinstance(table, dict) or not table:
        raise UsageError(f"{where}: 'sources' must be a non-empty object of source -> thresholds")
    sources = {str(name): _source(t, f"{where}: sources.{name}") for name, t in table.items()}
    calibrated_on = {
        str(name): _paths(t["calibrated_on"], f"{where}: sources.{name}.calibrated_on")
        for name, t in table.items()
        if "calibrated_on" in t
    }
    n = data.get("n")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise UsageError(f"{where}: n must be an integer >= 1, got {n!r}")
    norm = data.get("normalization")
    if norm is not None and not isinstance(norm, dict):
        raise UsageError(f"{where}: normalization must be an object, got {norm!r}")
    tool = data.get("tool")
    fuzzy = data.get("fuzzy")
    if fuzzy is not None and not isinstance(fuzzy, dict):
        raise UsageError(f"{where}: fuzzy must be an object of the fuzzy settings, got {fuzzy!r}")
    return Thresholds(
        sources=sources,
        n=n,
        normalization=norm,
        percentile=_optional(data.get("percentile"), (int, float), f"{where}: percentile"),
        min_run=_optional(data.get("min_run"), int, f"{where}: min_run"),
        fuzzy=fuzzy,
        calibrated_on=calibrated_on,
        tool_version=tool.get("version") if isinstance(tool, dict) else None,
        origin=where,
    )


def _optional(value: Any, kind: type | tuple[type, ...], where: str) -> Any:
    if value is not None and (isinstance(value, bool) or not isinstance(value, kind)):
        raise UsageError(f"{where}: must be a number, got {value!r}")
    return value


def _source(t: object, where: str) -> SourceThreshold:
    if not isinstance(t, dict):
        raise UsageError(
            f"{where}: must be an object with longest_run, overlap_fraction and/or fuzzy"
        )
    for key in t:
        if key not in _SOURCE:
            expected = ", ".join(sorted(_SOURCE))
            raise UsageError(f"{where}: unknown key {key!r} (expected {expected})")
    controls, well = t.get("controls"), t.get("well_estimated", True)
    if controls is not None and (isinstance(controls, bool) or not isinstance(controls, int)):
        raise UsageError(f"{where}.controls: must be an integer, got {controls!r}")
    if not isinstance(well, bool):
        raise UsageError(f"{where}.well_estimated: must be true or false, got {well!r}")
    try:
        found = SourceThreshold(
            t.get("longest_run"), t.get("overlap_fraction"), controls, well, t.get("fuzzy")
        )
    except UsageError as e:
        raise UsageError(f"{where}.{e}") from None
    if found.longest_run is None and found.overlap_fraction is None and found.fuzzy is None:
        raise UsageError(f"{where}: needs longest_run, overlap_fraction or fuzzy")
    return found


def _paths(value: object, where: str) -> CorpusPaths:
    """``{"paths": [...], "resolved": [...]}``: lists of strings of one length, at least one."""
    if not isinstance(value, dict) or set(value) != {"paths", "resolved"}:
        raise UsageError(f"{where}: must be an object with 'paths' and 'resolved', got {value!r}")
    given, resolved = value["paths"], value["resolved"]
    for key, v in (("paths", given), ("resolved", resolved)):
        if not isinstance(v, list) or not v or not all(isinstance(p, str) for p in v):
            raise UsageError(f"{where}.{key}: must be a non-empty list of strings, got {v!r}")
    if len(given) != len(resolved):
        raise UsageError(f"{where}: 'paths' and 'resolved' must have one entry per path")
    return CorpusPaths(tuple(given), tuple(resolved))
