"""The scan report: a plain value holding every per-example result, the config and the inputs."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, overload

import numpy as np

from contam_cli.engine import Evidence
from contam_cli.policy import Reason

__all__ = [
    "SCHEMA",
    "SourceResult",
    "ExampleResult",
    "ExampleRows",
    "ExampleTable",
    "Report",
    "plain_example_dict",
    "fingerprint",
    "fingerprints",
]

#: Version of the JSON report layout; bumped on any incompatible change.
SCHEMA = "contam.scan/1"

#: Examples built per step when walking a whole table (bounds the transient objects).
_STEP = 4096


@dataclass(frozen=True, slots=True)
class SourceResult:
    """One example's overlap with one corpus source."""

    matched_ngrams: int
    overlap_fraction: float
    longest_run: int


@dataclass(frozen=True, slots=True)
class ExampleResult:
    """Everything measured about one eval example."""

    id: str
    eval_path: str
    eval_line: int | None
    n_tokens: int
    total_ngrams: int
    """Distinct n-grams of the example (0 when unscorable)."""
    matched_ngrams: int
    overlap_fraction: float | None
    """matched / total distinct n-grams; None when the example is unscorable."""
    longest_run: int | None
    """Longest span, in tokens, found verbatim inside one corpus document; None when unscorable."""
    zscore: float | None
    flagged: bool
    reasons: tuple[Reason, ...]
    best_source: str | None
    matched_sources: tuple[str, ...]
    per_source: dict[str, SourceResult]
    evidence: Evidence | None
    fingerprint: str
    """Content hash of (normalized example text, best source): stable across reordering."""

    @property
    def scorable(self) -> bool:
        return self.overlap_fraction is not None

    def to_dict(self, redact: bool = False) -> dict[str, Any]:
        ev = self.evidence
        return {
            "id": self.id,
            "eval": {"path": self.eval_path, "line": self.eval_line},
            "flagged": self.flagged,
            "reasons": [r.to_dict() for r in self.reasons],
            "scorable": self.scorable,
            "n_tokens": self.n_tokens,
            "total_ngrams": self.total_ngrams,
            "matched_ngrams": self.matched_ngrams,
            "overlap_fraction": self.overlap_fraction,
            "longest_run": self.longest_run,
            "zscore": self.zscore,
            "best_source": self.best_source,
            "matched_sources": list(self.matched_sources),
            "per_source": _per_source_dict(self.per_source),
            "evidence": None if ev is None else _evidence_dict(ev, redact),
            "fingerprint": self.fingerprint,
        }


def _per_source_dict(per_source: Mapping[str, SourceResult]) -> dict[str, Any]:
    return {
        k: {
            "matched_ngrams": v.matched_ngrams,
            "overlap_fraction": v.overlap_fraction,
            "longest_run": v.longest_run,
        }
        for k, v in per_source.items()
    }


def _evidence_dict(ev: Evidence, redact: bool) -> dict[str, Any]:
    return {
        "source": ev.source,
        "path": ev.path,
        "line": ev.line,
        "record": ev.record,
        "doc_id": ev.doc_id,
        "char_start": ev.char_start,
        "char_end": ev.char_end,
        "doc_token": ev.doc_token,
        "eval_token": ev.eval_token,
        "length": ev.length,
        "text": None if redact else ev.text,
    }


class ExampleRows(NamedTuple):
    """Consecutive or picked rows of an :class:`ExampleTable`, as Python values.

    The fields from ``ids`` to ``fingerprints`` are the arguments of :func:`plain_example_dict`,
    in its order; None stands for the values of unscorable examples.
    """

    at: list[int]
    """The example index of each row."""
    ids: Sequence[str]
    paths: Sequence[str]
    lines: Sequence[int | None]
    scorable: list[bool]
    n_tokens: list[int]
    total: list[int]
    matched: list[int]
    overlap: list[float | None]
    run: list[int | None]
    zscore: list[float | None]
    fingerprints: Sequence[str]
    detail: list[int]
    """Positions (in these rows) of the examples with reasons, sources or evidence; the others
    have none of them and are what :func:`plain_example_dict` describes."""

    def values(self) -> tuple[Sequence[Any], ...]:
        """The columns that :func:`plain_example_dict` takes, in its order."""
        return self[1:-1]


def plain_example_dict(
    id: str,
    path: str,
    line: int | None,
    scorable: bool,
    n_tokens: int,
    total: int,
    matched: int,
    overlap: float | None,
    run: int | None,
    zscore: float | None,
    fingerprint: str,
) -> dict[str, Any]:
    """The JSON form (:meth:`ExampleResult.to_dict`) of an example without reasons, sources or
    evidence, from its other values."""
    return {
        "id": id,
        "eval": {"path": path, "line": line},
        "flagged": False,
        "reasons": [],
        "scorable": scorable,
        "n_tokens": n_tokens,
        "total_ngrams": total,
        "matched_ngrams": matched,
        "overlap_fraction": overlap,
        "longest_run": run,
        "zscore": zscore,
        "best_source": None,
        "matched_sources": [],
        "per_source": {},
        "evidence": None,
        "fingerprint": fingerprint,
    }


class ExampleTable(Sequence[ExampleResult]):
    """Every example's result held as columns: what a scan returns, cheap at any size.

    A read-only sequence of :class:`ExampleResult`; each is built on access (equal to, not the
    same object as, one from an earlier access). The columns are read-only numpy arrays and tuples,
    and the per-example details (reasons, sources, evidence) are kept only for the examples that
    have any: usually a few, among many that match nothing.

    ``overlap``, ``longest_run`` and ``zscore`` hold the reported values where ``scorable``; the
    results say None elsewhere.
    """

    __slots__ = (
        "ids",
        "eval_paths",
        "eval_lines",
        "n_tokens",
        "total_ngrams",
        "matched_ngrams",
        "scorable",
        "overlap",
        "longest_run",
        "zscore",
        "flagged",
        "fingerprints",
        "_reasons",
        "_best_source",
        "_per_source",
        "_evidence",
        "_detail",
    )

    ids: tuple[str, ...]
    eval_paths: tuple[str, ...]
    eval_lines: tuple[int | None, ...]
    n_tokens: np.ndarray
    total_ngrams: np.ndarray
    matched_ngrams: np.ndarray
    scorable: np.ndarray
    overlap: np.ndarray
    longest_run: np.ndarray
    zscore: np.ndarray
    flagged: np.ndarray
    """True where the example has reasons."""
    fingerprints: tuple[str, ...]
    _reasons: dict[int, tuple[Reason, ...]]
    _best_source: dict[int, str]
    _per_source: dict[int, dict[str, SourceResult]]
    _evidence: dict[int, Evidence]
    _detail: np.ndarray

    def __init__(
        self,
        *,
        ids: Sequence[str],
        eval_paths: Sequence[str],
        eval_lines: Sequence[int | None],
        n_tokens: np.ndarray,
        total_ngrams: np.ndarray,
        matched_ngrams: np.ndarray,
        scorable: np.ndarray,
        overlap: np.ndarray,
        longest_run: np.ndarray,
        zscore: np.ndarray,
        fingerprints: Sequence[str],
        reasons: Mapping[int, tuple[Reason, ...]] | None = None,
        best_source: Mapping[int, str | None] | None = None,
        per_source: Mapping[int, Mapping[str, SourceResult]] | None = None,
        evidence: Mapping[int, Evidence | None] | None = None,
    ) -> None:
        """Per-example columns (all of one length) and, keyed by example index, the details
        of the examples that have any (empty or None values may be left out)."""
        n = len(ids)
        self.ids = tuple(ids)
        self.eval_paths = tuple(eval_paths)
        self.eval_lines = tuple(eval_lines)
        self.n_tokens = _column(n_tokens, np.int64, n)
        self.total_ngrams = _column(total_ngrams, np.int64, n)
        self.matched_ngrams = _column(matched_ngrams, np.int64, n)
        self.scorable = _column(scorable, np.bool_, n)
        self.overlap = _column(overlap, np.float64, n)
        self.longest_run = _column(longest_run, np.int64, n)
        self.zscore = _column(zscore, np.float64, n)
        self.fingerprints = tuple(fingerprints)
        if not len(self.eval_paths) == len(self.eval_lines) == len(self.fingerprints) == n:
            raise ValueError("ExampleTable: columns of different lengths")
        self._reasons = {e: tuple(v) for e, v in _sparse(reasons, n, bool).items()}
        self._best_source = _sparse(best_source, n, _not_none)
        self._per_source = {e: dict(v) for e, v in _sparse(per_source, n, bool).items()}
        self._evidence = _sparse(evidence, n, _not_none)
        flagged = np.zeros(n, dtype=bool)
        flagged[list(self._reasons)] = True
        flagged.flags.writeable = False
        self.flagged = flagged
        keys = {*self._reasons, *self._best_source, *self._per_source, *self._evidence}
        self._detail = np.array(sorted(keys), dtype=np.int64)

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, i: int) -> ExampleResult: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[ExampleResult, ...]: ...

    def __getitem__(self, i: int | slice) -> ExampleResult | tuple[ExampleResult, ...]:
        if isinstance(i, slice):
            return tuple(self.take(np.arange(len(self))[i]))
        return self.take(np.array([range(len(self))[i]], dtype=np.int64))[0]

    def __iter__(self) -> Iterator[ExampleResult]:
        for start in range(0, len(self), _STEP):
            yield from self._results(self._rows(slice(start, start + _STEP)))

    def __eq__(self, other: object) -> bool:
        # NOTE: compares like the tuple it stands for: equal to a tuple or table of equal results.
        if not isinstance(other, (tuple, ExampleTable)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ExampleTable(<{len(self)} examples>)"

    def take(self, indices: Sequence[int] | np.ndarray) -> list[ExampleResult]:
        """The results of the examples at `indices`, in that order."""
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        if len(idx) and (idx.min() < 0 or idx.max() >= len(self)):
            raise IndexError("ExampleTable index out of range")
        return self._results(self._rows(idx))

    def dicts(self, start: int, stop: int, redact: bool = False) -> list[dict[str, Any]]:
        """``[e.to_dict(redact) for e in self[start:stop]]``, built from the columns directly."""
        rows = self.rows(start, stop)
        out = [plain_example_dict(*values) for values in zip(*rows.values())]
        for k, d in zip(rows.detail, self.detail_dicts(rows, redact)):
            out[k] = d
        return out

    def detail_dicts(self, rows: ExampleRows, redact: bool = False) -> list[dict[str, Any]]:
        """The JSON form of the examples at ``rows.detail`` (those with reasons, sources or
        evidence)."""
        out = []
        for k in rows.detail:
            e = rows.at[k]
            d = plain_example_dict(*(column[k] for column in rows.values()))
            # NOTE: re-assigning a key keeps its place in the dict (and the JSON).
            reasons = self._reasons.get(e, ())
            per_source = self._per_source.get(e, {})
            ev = self._evidence.get(e)
            d["flagged"] = bool(reasons)
            d["reasons"] = [r.to_dict() for r in reasons]
            d["best_source"] = self._best_source.get(e)
            d["matched_sources"] = list(per_source)
            d["per_source"] = _per_source_dict(per_source)
            d["evidence"] = None if ev is None else _evidence_dict(ev, redact)
            out.append(d)
        return out

    def rows(self, start: int, stop: int) -> ExampleRows:
        """Rows ``start`` to ``stop`` (clipped to the table, as a slice is)."""
        return self._rows(slice(start, stop))

    def _rows(self, sel: slice | np.ndarray) -> ExampleRows:
        """Rows `sel` (a slice with step 1, or an index array) as Python values."""
        if isinstance(sel, slice):
            start, stop, _ = sel.indices(len(self))
            stop = max(start, stop)
            at = list(range(start, stop))
            ids: Sequence[str] = self.ids[sel]
            paths: Sequence[str] = self.eval_paths[sel]
            lines: Sequence[int | None] = self.eval_lines[sel]
            fps: Sequence[str] = self.fingerprints[sel]
            lo, hi = np.searchsorted(self._detail, [start, stop])
            detail = (self._detail[lo:hi] - start).tolist()
        else:
            at = sel.tolist()
            ids = [self.ids[e] for e in at]
            paths = [self.eval_paths[e] for e in at]
            lines = [self.eval_lines[e] for e in at]
            fps = [self.fingerprints[e] for e in at]
            detail = np.flatnonzero(np.isin(sel, self._detail)).tolist()
        scorable = self.scorable[sel].tolist()
        overlap: list[float | None] = self.overlap[sel].tolist()
        run: list[int | None] = self.longest_run[sel].tolist()
        zscore: list[float | None] = self.zscore[sel].tolist()
        if not all(scorable):
            overlap = [v if s else None for v, s in zip(overlap, scorable)]
            run = [v if s else None for v, s in zip(run, scorable)]
            zscore = [v if s else None for v, s in zip(zscore, scorable)]
        return ExampleRows(
            at,
            ids,
            paths,
            lines,
            scorable,
            self.n_tokens[sel].tolist(),
            self.total_ngrams[sel].tolist(),
            self.matched_ngrams[sel].tolist(),
            overlap,
            run,
            zscore,
            fps,
            detail,
        )

    def _results(self, rows: ExampleRows) -> list[ExampleResult]:
        out = [
            ExampleResult(i, p, ln, nt, t, m, o, r, z, False, (), None, (), {}, None, f)
            for i, p, ln, nt, t, m, o, r, z, f in zip(
                rows.ids,
                rows.paths,
                rows.lines,
                rows.n_tokens,
                rows.total,
                rows.matched,
                rows.overlap,
                rows.run,
                rows.zscore,
                rows.fingerprints,
            )
        ]
        for k in rows.detail:
            e = rows.at[k]
            reasons = self._reasons.get(e, ())
            per_source = dict(self._per_source.get(e, {}))
            out[k] = ExampleResult(
                rows.ids[k],
                rows.paths[k],
                rows.lines[k],
                rows.n_tokens[k],
                rows.total[k],
                rows.matched[k],
                rows.overlap[k],
                rows.run[k],
                rows.zscore[k],
                bool(reasons),
                reasons,
                self._best_source.get(e),
                tuple(per_source),
                per_source,
                self._evidence.get(e),
                rows.fingerprints[k],
            )
        return out


def _column(values: np.ndarray, dtype: type, n: int) -> np.ndarray:
    col: np.ndarray = np.array(values, dtype=dtype)  # a copy: the table owns its columns
    if col.shape != (n,):
        raise ValueError(f"ExampleTable: a column of shape {col.shape}, expected ({n},)")
    col.flags.writeable = False
    return col


def _not_none(value: object) -> bool:
    return value is not None


def _sparse(
    values: Mapping[int, Any] | None, n: int, keep: Callable[[Any], bool]
) -> dict[int, Any]:
    """The entries of `values` to `keep`, keyed by plain ints (checked to be in range)."""
    out = {int(e): v for e, v in (values or {}).items() if keep(v)}
    if out and not (min(out) >= 0 and max(out) < n):
        raise ValueError("ExampleTable: a detail for an example out of range")
    return out


@dataclass(frozen=True)
class Report:
    """The result of a scan; renderers turn it into text, the CLI turns it into an exit code."""

    examples: Sequence[ExampleResult]
    """Every example's result, in input order: an :class:`ExampleTable` from a scan, any
    sequence (such as a tuple) of ExampleResult in a report built by hand."""
    config: dict[str, Any]
    inputs: dict[str, Any]
    tool_version: str
    redact: bool = False
    stats: dict[str, Any] = field(default_factory=dict)

    def flagged_mask(self) -> np.ndarray:
        """Per example (in input order): flagged."""
        if isinstance(self.examples, ExampleTable):
            return self.examples.flagged
        return np.fromiter((e.flagged for e in self.examples), bool, len(self.examples))

    def scorable_mask(self) -> np.ndarray:
        """Per example (in input order): scorable."""
        if isinstance(self.examples, ExampleTable):
            return self.examples.scorable
        return np.fromiter((e.scorable for e in self.examples), bool, len(self.examples))

    @property
    def flagged(self) -> tuple[ExampleResult, ...]:
        return tuple(self.take(np.flatnonzero(self.flagged_mask())))

    @property
    def unscorable(self) -> tuple[ExampleResult, ...]:
        return tuple(self.take(np.flatnonzero(~self.scorable_mask())))

    @property
    def contaminated(self) -> bool:
        return bool(self.flagged_mask().any())

    def summary(self) -> dict[str, int]:
        n = len(self.examples)
        n_flag = int(self.flagged_mask().sum())
        n_uns = n - int(self.scorable_mask().sum())
        return {
            "examples": n,
            "flagged": n_flag,
            "clean": n - n_flag - n_uns,
            "unscorable": n_uns,
        }

    def summary_line(self) -> str:
        s = self.summary()
        return (
            f"{s['examples']} examples: {s['flagged']} flagged, {s['clean']} clean, "
            f"{s['unscorable']} unscorable"
        )

    def take(self, indices: Sequence[int] | np.ndarray) -> list[ExampleResult]:
        """The examples at `indices` (into ``examples``), in that order."""
        if isinstance(self.examples, ExampleTable):
            return self.examples.take(indices)
        return [self.examples[i] for i in np.asarray(indices, dtype=np.int64).tolist()]

    def ranked_indices(self) -> np.ndarray:
        """Indices of the scorable examples, most suspicious first: flagged, then longest run,
        then overlap (both descending), then input order (the order of :meth:`ranked`)."""
        ex = self.examples
        scorable = np.flatnonzero(self.scorable_mask())
        flagged = self.flagged_mask()[scorable]
        if isinstance(ex, ExampleTable):
            run = ex.longest_run[scorable]
            overlap = ex.overlap[scorable]
        else:
            rows = [ex[i] for i in scorable.tolist()]
            run = np.fromiter((e.longest_run or 0 for e in rows), np.int64, len(rows))
            overlap = np.fromiter((e.overlap_fraction or 0.0 for e in rows), np.float64, len(rows))
        # NOTE: lexsort is stable (input order breaks ties), its last key is the primary one,
        # and -0.0 == 0.0 for it as for a Python sort key.
        return scorable[np.lexsort((-overlap, -run, ~flagged))]

    def ranked(self) -> list[ExampleResult]:
        """Scorable examples, most suspicious first (flagged, run, overlap), then input order."""
        return self.take(self.ranked_indices())

    def header(self) -> dict[str, Any]:
        """Everything of :meth:`to_dict` but the examples (which come last there)."""
        return {
            "schema": SCHEMA,
            "tool": {"name": "contam", "version": self.tool_version},
            "config": self.config,
            "inputs": self.inputs,
            "summary": {**self.summary(), **self.stats},
        }

    def example_dicts(self, start: int = 0, stop: int | None = None) -> list[dict[str, Any]]:
        """The JSON form of examples ``start`` to ``stop`` (default: to the end)."""
        n = len(self.examples)
        start, stop, _ = slice(start, stop).indices(n)
        if isinstance(self.examples, ExampleTable):
            out: list[dict[str, Any]] = []
            for lo in range(start, stop, _STEP):
                out.extend(self.examples.dicts(lo, min(lo + _STEP, stop), self.redact))
            return out
        return [self.examples[i].to_dict(self.redact) for i in range(start, stop)]

    def to_dict(self) -> dict[str, Any]:
        return {**self.header(), "examples": self.example_dicts()}


_FINGERPRINT_SALT = b"contam-finding/1\0"


def fingerprint(text_digest: bytes, source: str | None) -> str:
    """Stable id of a finding: the normalized example text (as the digest of its tokens) and the
    source; nothing positional, so it survives reordering and reformatting."""
    h = hashlib.sha256(_FINGERPRINT_SALT)
    h.update(text_digest)
    h.update(b"\0")
    h.update((source or "").encode("utf-8"))
    return h.hexdigest()[:32]


def fingerprints(text_digests: Iterable[bytes], source: str | None = None) -> list[str]:
    """``[fingerprint(d, source) for d in text_digests]``, with less work per digest."""
    # NOTE: copying a hash object primed with the salt costs less than making a new one.
    salted = hashlib.sha256(_FINGERPRINT_SALT)
    tail = b"\0" + (source or "").encode("utf-8")
    out = []
    for digest in text_digests:
        h = salted.copy()
        h.update(digest + tail)
        out.append(h.hexdigest()[:32])
    return out
