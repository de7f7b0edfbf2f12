"""Baselines of accepted findings: the gate fails only on findings that are not in one.

A baseline (``contam.baseline/1``, written by ``contam scan --write-baseline``) lists findings by
content: per finding the example's fingerprint (a hash of its normalized text alone, so that
reordering, re-indenting or re-casing the eval file changes nothing), its id (null when the id is
only the example's line number), the rules that fired (detector, rule, source: no values, which
move as a corpus grows) and, in a per-source baseline, the source. No eval text, no line numbers,
no timestamps; keys sorted and one finding per line, sorted by fingerprint, so that a diff shows
exactly the findings accepted or dropped and a reordered eval file gives the same bytes.

The gate is a subtraction of keys (``new = found - baseline``): the key of a finding is its
fingerprint, or in a per-source baseline ``sha256(fingerprint + "\\0" + source)[:32]`` for each
source the example was found in, so that the same example leaking into another source is new.

>>> a = BaselineEntry("a" * 32, "q1", (ReasonKey("ngram", "min-run", None),))
>>> sorted(Baseline((a,)).keys) == ["a" * 32]
True
>>> len(BaselineEntry("a" * 32, None, (), "web").key)
32
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, get_args

from contam_cli.errors import InputError, UsageError
from contam_cli.io.json_keys import check_unique_keys
from contam_cli.io.output import write_atomic
from contam_cli.policy.finding_sources import finding_sources
from contam_cli.report import ExampleResult, ExampleTable, Report
from contam_cli.text.fingerprint import same_fingerprints

__all__ = [
    "BASELINE_SCHEMA", "FAIL_ON", "Baseline", "BaselineEntry", "BaselineResult", "FailOn",
    "ReasonKey", "dump_baseline", "findings", "gate", "load_baseline", "parse_baseline",
    "save_baseline", "source_key", "subtract",
]  # fmt: skip

BASELINE_SCHEMA = "contam.baseline/1"
FailOn = Literal["new", "any", "none"]
"""What fails the gate: new findings (not in the baseline), any finding, or nothing."""
FAIL_ON: tuple[str, ...] = get_args(FailOn)
_TOP = {"schema", "per_source", "normalization", "findings"}
_NO_NORM = "no 'normalization' key, so its fingerprints cannot be checked (use --write-baseline)"
_ENTRY = {"fingerprint", "id", "reasons", "source"}
_REASON = {"detector", "rule", "source"}
_HEX32 = re.compile(r"[0-9a-f]{32}")


@dataclass(frozen=True, slots=True)
class ReasonKey:
    """A rule that fired, without its value: what a baseline records of a reason."""

    detector: str
    rule: str
    source: str | None = None

    def sort_key(self) -> tuple[str, str, bool, str]:
        return (self.detector, self.rule, self.source is not None, self.source or "")

    def to_dict(self) -> dict[str, str | None]:
        return {"detector": self.detector, "rule": self.rule, "source": self.source}


def _sorted(reasons: Iterable[ReasonKey]) -> tuple[ReasonKey, ...]:
    return tuple(sorted(set(reasons), key=ReasonKey.sort_key))


def source_key(fingerprint: str, source: str | None) -> str:
    """The key of a finding: the fingerprint, or with a source its per-source key.

    >>> source_key("f" * 32, None) == "f" * 32
    True
    >>> source_key("f" * 32, "web") == hashlib.sha256(b"f" * 32 + b"\\0web").hexdigest()[:32]
    True
    """
    if source is None:
        return fingerprint
    return hashlib.sha256(f"{fingerprint}\0{source}".encode()).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class BaselineEntry:
    """One accepted finding."""

    fingerprint: str
    """The example's content fingerprint (as in the report)."""
    id: str | None
    """For people reading the file; never matched on. None when the id is the line number."""
    reasons: tuple[ReasonKey, ...] = ()
    source: str | None = None
    """The source it was found in (per-source baselines only)."""

    @property
    def key(self) -> str:
        return source_key(self.fingerprint, self.source)

    def sort_key(self) -> tuple[str, bool, str, bool, str]:
        s, i = self.source, self.id
        return (self.fingerprint, s is not None, s or "", i is not None, i or "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "fingerprint": self.fingerprint,
            "id": self.id,
            "reasons": [r.to_dict() for r in self.reasons],
            "source": self.source,
        }


@dataclass(frozen=True)
class Baseline:
    """Accepted findings, one per key, in file order (sorted)."""

    entries: tuple[BaselineEntry, ...] = ()
    per_source: bool = False
    normalization: Mapping[str, Any] | None = None
    """The normalization the fingerprints were computed under (None: not recorded)."""
    path: str | None = field(default=None, compare=False)
    """Where it was read from, for messages and the report."""

    @property
    def keys(self) -> frozenset[str]:
        return frozenset(e.key for e in self.entries)

    def check_normalization(self, normalization: Mapping[str, Any] | None) -> None:
        """UsageError when the fingerprints were computed under another normalization: every
        finding would look new and every accepted one fixed."""
        mine = self.normalization
        if mine is None or normalization is None or same_fingerprints(mine, normalization):
            return
        raise UsageError(
            f"{self.path or 'baseline'}: written with normalization {dict(mine)}, this run uses "
            f"{dict(normalization)}: fingerprints would not match (write it again with "
            "--write-baseline)"
        )


@dataclass(frozen=True)
class BaselineResult:
    """A report less its baseline: which findings are new, which accepted, which fixed."""

    report: Report
    """The report, each flagged example's ``details["baseline"]`` holding its state and
    ``stats["baseline"]`` the counts and the fixed findings."""
    new: tuple[int, ...]
    """Flagged examples with at least one key not in the baseline (indices, input order)."""
    accepted: tuple[int, ...]
    """Flagged examples whose every key is in the baseline."""
    fixed: tuple[BaselineEntry, ...]
    """Baseline entries no longer found, in baseline order."""
    updated: frozenset[int] = frozenset()
    """Accepted examples whose rules differ from the ones recorded."""

    def sarif_states(self) -> dict[str, str]:
        """Fingerprint to SARIF ``baselineState`` of the accepted examples (new ones are absent:
        the SARIF renderer marks them ``new``)."""
        fps = self.report.examples.fingerprints
        return {fps[e]: "updated" if e in self.updated else "unchanged" for e in self.accepted}


# -- findings of a report ------------------------------------------------------------------------


def _stable_id(e: ExampleResult) -> str | None:
    """The id, unless it is only the example's place (an id-less file's line number)."""
    line = e.eval_line
    if line is not None and (e.id == str(line) or e.id.endswith(f":{line}")):
        return None
    return e.id


def _entries_of(
    e: ExampleResult, per_source: bool, policy: Mapping[str, Any]
) -> list[BaselineEntry]:
    reasons = _sorted(ReasonKey(r.detector, r.rule, r.source) for r in e.reasons)
    sources = finding_sources(e, policy) if per_source else [None]
    return [BaselineEntry(e.fingerprint, _stable_id(e), reasons, s) for s in sources]


def _flagged_entries(report: Report, per_source: bool) -> list[tuple[int, list[BaselineEntry]]]:
    policy = report.config.get("policy")
    policy = policy if isinstance(policy, Mapping) else {}
    flagged = [int(i) for i in report.flagged_mask().nonzero()[0]]
    return [(i, _entries_of(e, per_source, policy)) for i, e in zip(flagged, report.take(flagged))]


def _merge(entries: Iterable[BaselineEntry]) -> tuple[BaselineEntry, ...]:
    """One entry per key (the same text twice in an eval set is one finding): the smallest id,
    every rule; sorted by fingerprint, source, id."""
    merged: dict[str, BaselineEntry] = {}
    for en in entries:
        old = merged.get(en.key)
        if old is not None:
            ids = [i for i in (old.id, en.id) if i is not None]
            reasons = _sorted((*old.reasons, *en.reasons))
            en = replace(old, id=min(ids) if ids else None, reasons=reasons)
        merged[en.key] = en
    return tuple(sorted(merged.values(), key=BaselineEntry.sort_key))


def findings(report: Report, *, per_source: bool = False) -> Baseline:
    """The report's findings as a baseline (what ``--write-baseline`` writes)."""
    entries = [en for _, ens in _flagged_entries(report, per_source) for en in ens]
    norm = report.config.get("normalization")
    return Baseline(_merge(entries), per_source, norm if isinstance(norm, Mapping) else None)


# -- subtraction and the gate --------------------------------------------------------------------


def subtract(report: Report, baseline: Baseline) -> BaselineResult:
    """`report` less `baseline` (keyed the way the baseline was written)."""
    baseline.check_normalization(report.config.get("normalization"))
    known = {en.key: en for en in baseline.entries}
    pairs = _flagged_entries(report, baseline.per_source)
    current = {en.key: en for en in _merge(en for _, ens in pairs for en in ens)}
    new: list[int] = []
    accepted: list[int] = []
    updated: set[int] = set()
    rows: dict[int, Any] = {}
    for i, ens in pairs:
        states = {en.source: "accepted" if en.key in known else "new" for en in ens}
        state = "new" if "new" in states.values() else "accepted"
        (new if state == "new" else accepted).append(i)
        if state == "accepted" and any(
            known[k].reasons != current[k].reasons for k in {en.key for en in ens}
        ):
            updated.add(i)
        row: dict[str, Any] = {"state": state}
        if baseline.per_source and any(s is not None for s in states):
            row["sources"] = {s: v for s, v in states.items() if s is not None}
        rows[i] = row
    fixed = tuple(en for en in baseline.entries if en.key not in current)
    stats = {
        "path": baseline.path, "per_source": baseline.per_source, "new": len(new),
        "accepted": len(accepted), "fixed": len(fixed),
        "fixed_findings": [en.to_dict() for en in fixed],
    }  # fmt: skip
    marked = replace(
        report,
        examples=_with_details(report.examples, "baseline", rows),
        stats={**report.stats, "baseline": stats},
    )
    return BaselineResult(marked, tuple(new), tuple(accepted), fixed, frozenset(updated))


def gate(report: Report, result: BaselineResult | None, fail_on: FailOn) -> bool:
    """Whether the gate fails: on new findings (all are new without a baseline), on any finding,
    or never."""
    if fail_on == "none":
        return False
    if fail_on == "new" and result is not None:
        return bool(result.new)
    return report.contaminated


def _with_details(table: ExampleTable, name: str, rows: Mapping[int, Any]) -> ExampleTable:
    return ExampleTable(
        ids=table.ids,
        eval_paths=table.eval_paths,
        eval_lines=table.eval_lines,
        fingerprints=table.fingerprints,
        methods=table.methods,
        scores=table.scores,
        reasons=table.reasons,
        ngram=table.ngram,
        details={**table.details, name: dict(rows)},
        texts=table.texts,
        fuzzy=table.fuzzy,
    )


# -- the file ------------------------------------------------------------------------------------


def dump_baseline(baseline: Baseline) -> str:
    """The file's text: keys sorted, one finding per line, entries sorted (byte-stable)."""

    def one(value: Any) -> str:
        return json.dumps(value, sort_keys=True, ensure_ascii=False)

    entries = [one(en.to_dict()) for en in sorted(baseline.entries, key=BaselineEntry.sort_key)]
    body = "[]" if not entries else "[\n    " + ",\n    ".join(entries) + "\n  ]"
    norm = None if baseline.normalization is None else dict(baseline.normalization)
    return (
        "{\n"
        f'  "findings": {body},\n'
        f'  "normalization": {one(norm)},\n'
        f'  "per_source": {one(baseline.per_source)},\n'
        f'  "schema": {one(BASELINE_SCHEMA)}\n'
        "}\n"
    )


def save_baseline(
    baseline: Baseline, path: str | Path, *, inputs: Sequence[str | Path] = ()
) -> None:
    """Write `baseline` to `path` atomically (never over one of `inputs`)."""
    write_atomic(path, dump_baseline(baseline), inputs=inputs)


def load_baseline(path: str | Path) -> Baseline:
    """Read and check a baseline file; any problem is one InputError naming the file."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError(path, "no such baseline file (write one with --write-baseline)") from None
    except OSError as e:
        raise InputError(path, f"cannot read the baseline ({e.strerror or e})") from None
    try:
        text = raw.decode("utf-8")
        data = json.loads(text)
        check_unique_keys(text)
    except UnicodeDecodeError as e:
        raise InputError(path, f"not UTF-8 ({e.reason} at byte {e.start})") from None
    except json.JSONDecodeError as e:
        raise InputError(path, f"not a baseline: invalid JSON ({e.msg})", e.lineno) from None
    return parse_baseline(data, str(path))


def parse_baseline(data: Any, path: str = "baseline") -> Baseline:
    """A Baseline from the parsed file (InputError naming `path` and the bad key)."""
    if not isinstance(data, dict) or data.get("schema") != BASELINE_SCHEMA:
        raise InputError(
            path, f"not a baseline (expected an object with schema {BASELINE_SCHEMA!r})"
        )
    _known_keys(data, _TOP, path, "")
    per_source = data.get("per_source", False)
    if not isinstance(per_source, bool):
        raise InputError(path, "per_source must be true or false")
    if "normalization" not in data:  # NOTE: fingerprints unchecked; --write-baseline records it
        raise InputError(path, _NO_NORM)
    norm = data["normalization"]
    if norm is not None and not isinstance(norm, dict):
        raise InputError(path, "normalization must be an object or null")
    items = data.get("findings")
    if not isinstance(items, list):
        raise InputError(path, "findings must be an array")
    entries = [_entry(item, path, f"findings[{k}]") for k, item in enumerate(items)]
    if not per_source and any(en.source is not None for en in entries):
        raise InputError(path, "a finding with a source in a baseline that is not per_source")
    return Baseline(_merge(entries), per_source, norm, path)


def _known_keys(obj: Mapping[str, Any], known: set[str], path: str, where: str) -> None:
    unknown = sorted(set(obj) - known)
    if unknown:
        raise InputError(path, f"{where or 'top level'}: unknown key {unknown[0]!r}")


def _entry(item: Any, path: str, where: str) -> BaselineEntry:
    if not isinstance(item, dict):
        raise InputError(path, f"{where}: expected an object")
    _known_keys(item, _ENTRY, path, where)
    fp = item.get("fingerprint")
    if not isinstance(fp, str) or not _HEX32.fullmatch(fp):
        raise InputError(path, f"{where}: fingerprint must be 32 lowercase hex digits")
    id_, source = item.get("id"), item.get("source")
    if id_ is not None and not isinstance(id_, str):
        raise InputError(path, f"{where}: id must be a string or null")
    if source is not None and not isinstance(source, str):
        raise InputError(path, f"{where}: source must be a string or null")
    reasons = item.get("reasons", [])
    if not isinstance(reasons, list):
        raise InputError(path, f"{where}: reasons must be an array")
    return BaselineEntry(fp, id_, _sorted(_reason(r, path, where) for r in reasons), source)


def _reason(item: Any, path: str, where: str) -> ReasonKey:
    if not isinstance(item, dict):
        raise InputError(path, f"{where}: a reason must be an object")
    _known_keys(item, _REASON, path, f"{where}.reasons")
    detector, rule, source = item.get("detector"), item.get("rule"), item.get("source")
    if not isinstance(detector, str) or not isinstance(rule, str):
        raise InputError(path, f"{where}: a reason needs a detector and a rule (strings)")
    if source is not None and not isinstance(source, str):
        raise InputError(path, f"{where}: a reason's source must be a string or null")
    return ReasonKey(detector, rule, source)
