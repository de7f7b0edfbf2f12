"""Per-source thresholds files: what ``contam calibrate`` writes and ``--thresholds`` reads.

The file (``contam.thresholds/1``) records, per source, the run and overlap thresholds measured on
known-clean controls (and the fuzzy detector's, ``fuzzy``, when calibrated with it), how many
controls they rest on, and whether that is enough for the percentile asked; and the n,
normalization and percentile they were measured with (and the fuzzy settings), so that a scan
with another n or normalization refuses it. A hand-written file may hold only ``sources`` (or
just the per-source mapping).

>>> t = parse_thresholds({"sources": {"web": {"longest_run": 40}}}, "t.json")
>>> t["web"].longest_run
40
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from contam_cli._version import __version__
from contam_cli.errors import UsageError
from contam_cli.io.json_keys import check_unique_keys
from contam_cli.io.output import write_atomic
from contam_cli.policy.rules import SourceThreshold
from contam_cli.text import NormConfig

__all__ = ["THRESHOLDS_SCHEMA", "Thresholds", "load_thresholds", "parse_thresholds"]

THRESHOLDS_SCHEMA = "contam.thresholds/1"
_TOP = {"schema", "tool", "n", "normalization", "percentile", "min_run", "fuzzy", "sources"}
_SOURCE = {"longest_run", "overlap_fraction", "controls", "well_estimated", "fuzzy"}


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
        out["sources"] = {k: v.describe() for k, v in sorted(self.sources.items())}
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
