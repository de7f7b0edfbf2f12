"""ExampleTable: every example of a report held as columns, cheap at any size.

A read-only sequence of :class:`~contam_cli.report.values.ExampleResult`; each is built on access.
Scores are float64 columns (NaN where a method could not score an example); reasons and the
detectors' sparse details are kept only for the examples that have any, usually a few among many
that match nothing. It is the one representation of a report's examples: a scan builds it from
arrays, :meth:`ExampleTable.from_results` from hand-made results, and ``load_report`` from JSON.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload

import numpy as np

from contam_cli.report.columns import LazyColumn, column, equal_columns, sparse
from contam_cli.report.fuzzy import FuzzyColumns
from contam_cli.report.ngram import NgramColumns
from contam_cli.report.values import ExampleResult, Method, NgramResult, Reason

__all__ = ["ExampleTable"]

#: Examples built per step when walking a whole table (bounds the transient objects).
STEP = 4096
#: The n-gram detector's plain values per example (see NgramColumns.plain_columns).
_NGRAM_VALUES = 6


class ExampleTable(Sequence[ExampleResult]):
    """Per-example columns of one length; see the module docstring."""

    def __init__(
        self,
        *,
        ids: Sequence[str],
        eval_paths: Sequence[str],
        eval_lines: Sequence[int | None],
        fingerprints: Sequence[str],
        methods: Sequence[Method],
        scores: Mapping[str, Any],
        reasons: Mapping[int, Sequence[Reason]] | None = None,
        ngram: NgramColumns | None = None,
        details: Mapping[str, Mapping[int, Any]] | None = None,
        texts: Mapping[int, str | None] | None = None,
        fuzzy: FuzzyColumns | None = None,
    ) -> None:
        n = len(ids)
        # NOTE: lazy columns stay lazy (a scan's million fingerprints are made when written);
        # the ids, read everywhere, are strings.
        self.ids = tuple(ids)
        self.eval_paths: Sequence[str] = _kept(eval_paths)
        self.eval_lines: Sequence[int | None] = _kept(eval_lines)
        self.fingerprints: Sequence[str] = _kept(fingerprints)
        if not len(self.eval_paths) == len(self.eval_lines) == len(self.fingerprints) == n:
            raise ValueError("ExampleTable: columns of different lengths")
        self.methods = tuple(methods)
        names = [m.name for m in self.methods]
        if len(set(names)) != len(names):
            raise ValueError(f"ExampleTable: duplicate method names in {names}")
        if sorted(names) != sorted(scores):
            raise ValueError(f"ExampleTable: methods {names} but scores for {list(scores)}")
        self.scores = {name: column(scores[name], np.float64, n) for name in names}
        self._integer = {m.name for m in self.methods if m.integer}
        self.reasons: dict[int, tuple[Reason, ...]] = {
            e: tuple(v) for e, v in sparse(reasons, n).items()
        }
        if ngram is not None and len(ngram) != n:
            raise ValueError("ExampleTable: n-gram columns of another length")
        if (ngram is not None) != any(m.detector == "ngram" for m in self.methods):
            raise ValueError("ExampleTable: n-gram details go with the n-gram methods")
        self.ngram = ngram
        if fuzzy is not None and (len(fuzzy) != n or "fuzzy" not in self.scores):
            raise ValueError("ExampleTable: fuzzy columns go with the fuzzy method, one per row")
        # NOTE: without examples there is nothing to tell a table with fuzzy columns from one
        # without (the JSON has no example to hold them), so both hold none.
        self.fuzzy = fuzzy if fuzzy is not None and n else None
        kept = {k: sparse(v, n) for k, v in (details or {}).items()}
        self.details = {k: v for k, v in kept.items() if v}
        if fuzzy is not None and "fuzzy" in self.details:
            raise ValueError("ExampleTable: fuzzy details are its columns, not plain details")
        self.texts: dict[int, str] = sparse(texts, n)
        flagged = np.zeros(n, dtype=bool)
        flagged[list(self.reasons)] = True
        flagged.flags.writeable = False
        self.flagged = flagged
        rich = {*self.reasons, *self.texts, *(ngram.detailed() if ngram is not None else ())}
        rich.update(fuzzy.detailed() if fuzzy is not None else ())
        for rows in self.details.values():
            rich.update(rows)
        self._rich = np.array(sorted(rich), dtype=np.int64)

    @classmethod
    def from_results(
        cls, results: Sequence[ExampleResult], methods: Sequence[Method]
    ) -> ExampleTable:
        """A table holding `results` (scores of `methods`; missing scores are None)."""
        names = [m.name for m in methods]
        scores = {
            k: [np.nan if r.scores.get(k) is None else r.scores[k] for r in results] for k in names
        }
        ngram = None
        if any(m.detector == "ngram" for m in methods):
            if not all(r.ngram is not None for r in results):
                raise ValueError("every result of an n-gram report needs its n-gram details")
            ngram = _ngram_columns([r.ngram for r in results])  # type: ignore[misc]
        details: dict[str, dict[int, Any]] = {}
        for e, r in enumerate(results):
            for k, v in r.details.items():
                details.setdefault(k, {})[e] = v
        fuzzy = None
        if "fuzzy" in names and any(r.fuzzy is not None for r in results):
            fuzzy = FuzzyColumns.from_results([r.fuzzy for r in results])
        return cls(
            ids=[r.id for r in results],
            eval_paths=[r.eval_path for r in results],
            eval_lines=[r.eval_line for r in results],
            fingerprints=[r.fingerprint for r in results],
            methods=methods,
            scores=scores,
            reasons={e: r.reasons for e, r in enumerate(results)},
            ngram=ngram,
            details=details,
            texts={e: r.text for e, r in enumerate(results)},
            fuzzy=fuzzy,
        )

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, i: int) -> ExampleResult: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[ExampleResult, ...]: ...

    def __getitem__(self, i: int | slice) -> ExampleResult | tuple[ExampleResult, ...]:
        if isinstance(i, slice):
            return tuple(self.take(np.arange(len(self))[i]))
        return self.take([range(len(self))[i]])[0]

    def __iter__(self) -> Iterator[ExampleResult]:
        for start in range(0, len(self), STEP):
            yield from self.take(np.arange(start, min(start + STEP, len(self))))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ExampleTable):
            return NotImplemented
        return (
            (self.ids, self.eval_paths, self.eval_lines, self.fingerprints)
            == (other.ids, other.eval_paths, other.eval_lines, other.fingerprints)
            and self.methods == other.methods
            and all(equal_columns(v, other.scores[k]) for k, v in self.scores.items())
            and self.reasons == other.reasons
            and self.ngram == other.ngram
            and self.details == other.details
            and self.texts == other.texts
            and self.fuzzy == other.fuzzy
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ExampleTable(<{len(self)} examples, methods {list(self.scores)}>)"

    def scorable(self) -> np.ndarray:
        """Per example: whether any method scored it."""
        if not self.scores:
            return np.zeros(len(self), dtype=bool)
        return ~np.logical_and.reduce([np.isnan(v) for v in self.scores.values()])

    def take(self, indices: Sequence[int] | np.ndarray) -> list[ExampleResult]:
        """The results of the examples at `indices`, in that order."""
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        if len(idx) and (idx.min() < 0 or idx.max() >= len(self)):
            raise IndexError("ExampleTable index out of range")
        scores = {k: _floats(v[idx], k in self._integer) for k, v in self.scores.items()}
        overlap, run = scores.get("overlap_fraction"), scores.get("longest_run")
        fz = scores.get("fuzzy")
        out = []
        for j, e in enumerate(idx.tolist()):
            ngram = None
            if self.ngram is not None:
                ov = None if overlap is None else overlap[j]
                rn = None if run is None or run[j] is None else int(run[j])  # type: ignore[arg-type]
                ngram = self.ngram.result(e, ov, rn)
            details = {k: rows[e] for k, rows in self.details.items() if e in rows}
            fuzzy = None
            if self.fuzzy is not None and fz is not None:
                fuzzy = self.fuzzy.result(e, fz[j])
            out.append(
                ExampleResult(
                    self.ids[e],
                    self.eval_paths[e],
                    self.eval_lines[e],
                    self.fingerprints[e],
                    {k: v[j] for k, v in scores.items()},
                    self.reasons.get(e, ()),
                    ngram,
                    details,
                    self.texts.get(e),
                    fuzzy,
                )
            )
        return out

    def subset(self, indices: Sequence[int] | np.ndarray) -> ExampleTable:
        """A table of the examples at `indices` (renumbered from 0), in that order."""
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        at = idx.tolist()

        def pick(m: Mapping[int, Any]) -> dict[int, Any]:
            return {new: m[old] for new, old in enumerate(at) if old in m}

        return ExampleTable(
            ids=[self.ids[e] for e in at],
            eval_paths=[self.eval_paths[e] for e in at],
            eval_lines=[self.eval_lines[e] for e in at],
            fingerprints=[self.fingerprints[e] for e in at],
            methods=self.methods,
            scores={k: v[idx] for k, v in self.scores.items()},
            reasons=pick(self.reasons),
            ngram=None if self.ngram is None else self.ngram.take(idx),
            details={k: pick(v) for k, v in self.details.items()},
            texts=pick(self.texts),
            fuzzy=None if self.fuzzy is None else self.fuzzy.take(idx),
        )

    def with_texts(self, texts: Mapping[int, str]) -> ExampleTable:
        """This table with the eval texts of examples `texts` (example index -> text)."""
        return ExampleTable(
            ids=self.ids,
            eval_paths=self.eval_paths,
            eval_lines=self.eval_lines,
            fingerprints=self.fingerprints,
            methods=self.methods,
            scores=self.scores,
            reasons=self.reasons,
            ngram=self.ngram,
            details=self.details,
            texts={**self.texts, **texts},
            fuzzy=self.fuzzy,
        )

    # -- JSON, a slice at a time (see contam_cli.report.persist) --------------------------------

    def rich_rows(self, start: int, stop: int) -> list[int]:
        """Rows in ``[start, stop)`` with reasons or sparse details, as offsets from `start`."""
        lo, hi = np.searchsorted(self._rich, [start, stop])
        return (self._rich[lo:hi] - start).tolist()

    def plain_columns(self, start: int, stop: int) -> list[list[Any]]:
        """Columns of the values :meth:`plain_dict` takes, for rows ``[start, stop)``."""
        sel = slice(start, stop)
        cols: list[list[Any]] = [
            list(self.ids[sel]),
            list(self.eval_paths[sel]),
            list(self.eval_lines[sel]),
            list(self.fingerprints[sel]),
        ]
        cols.extend(_floats(self.scores[m.name][sel], m.integer) for m in self.methods)
        if self.ngram is not None:
            cols.extend(self.ngram.plain_columns(sel))
        if self.fuzzy is not None:
            cols.extend(self.fuzzy.plain_columns(sel))
        return cols

    def plain_dict(self, *values: Any) -> dict[str, Any]:
        """The JSON of an example without reasons or sparse details, from its plain values."""
        methods = self.methods
        k = len(methods)
        d: dict[str, Any] = {
            "id": values[0],
            "eval": {"path": values[1], "line": values[2]},
            "fingerprint": values[3],
            "text": None,
            "flagged": False,
            "reasons": [],
            "scores": {m.name: v for m, v in zip(methods, values[4 : 4 + k])},
            "details": {},
        }
        ngram, fuzzy = self._detail_values(values)
        if ngram is not None:
            d["details"]["ngram"] = NgramColumns.plain_dict(*ngram)
        if fuzzy is not None:
            d["details"]["fuzzy"] = FuzzyColumns.plain_dict(*fuzzy)
        return d

    def _detail_values(
        self, values: Sequence[Any]
    ) -> tuple[Sequence[Any] | None, Sequence[Any] | None]:
        """The n-gram and fuzzy detectors' part of a row of :meth:`plain_columns` (None: no
        such detector)."""
        at = 4 + len(self.methods)
        ngram = fuzzy = None
        if self.ngram is not None:
            ngram = values[at : at + _NGRAM_VALUES]
            at += _NGRAM_VALUES
        if self.fuzzy is not None:
            fuzzy = values[at:]
        return ngram, fuzzy

    def example_dicts(
        self, start: int, stop: int, redact: bool, columns: list[list[Any]] | None = None
    ) -> list[dict[str, Any]]:
        """The JSON of examples ``start`` to ``stop`` (`columns`: their :meth:`plain_columns`,
        when the caller has them)."""
        if columns is None:
            columns = self.plain_columns(start, stop)
        return [
            self.example_dict(start + k, redact, [col[k] for col in columns])
            for k in range(stop - start)
        ]

    def example_dict(
        self, e: int, redact: bool, values: Sequence[Any] | None = None
    ) -> dict[str, Any]:
        """The JSON of example `e` (`values`: its row of :meth:`plain_columns`, when the caller
        has the columns of a slice already)."""
        if values is None:
            values = [col[0] for col in self.plain_columns(e, e + 1)]
        d = self.plain_dict(*values)
        reasons = self.reasons.get(e, ())
        d["text"] = None if redact else self.texts.get(e)
        d["flagged"] = bool(reasons)
        d["reasons"] = [r.to_dict() for r in reasons]
        ngram, fuzzy = self._detail_values(values)
        if self.ngram is not None:
            d["details"]["ngram"] = self.ngram.to_dict(e, redact, ngram)
        if self.fuzzy is not None:
            d["details"]["fuzzy"] = self.fuzzy.to_dict(e, redact, fuzzy)
        for k, rows in self.details.items():
            if e in rows:
                d["details"][k] = rows[e]
        return d


def _kept(values: Sequence[Any]) -> Sequence[Any]:
    return values if isinstance(values, LazyColumn) else tuple(values)


def _floats(values: np.ndarray, integer: bool = False) -> list[Any]:
    """Python values of a score column: None where missing, ints for an integer method."""
    missing = np.isnan(values)
    out: list[Any] = (
        np.where(missing, 0, values).astype(np.int64).tolist() if integer else values.tolist()
    )
    if missing.any():
        out = [None if m else v for v, m in zip(out, missing.tolist())]
    return out


def _ngram_columns(results: Sequence[NgramResult]) -> NgramColumns:
    return NgramColumns.build(
        scorable=[r.scorable for r in results],
        n_tokens=[r.n_tokens for r in results],
        total_ngrams=[r.total_ngrams for r in results],
        matched_ngrams=[r.matched_ngrams for r in results],
        ignored_ngrams=[r.ignored_ngrams for r in results],
        zscore=[r.zscore if r.zscore is not None else 0.0 for r in results],
        best_source={e: r.best_source for e, r in enumerate(results)},
        per_source={e: r.per_source for e, r in enumerate(results)},
        evidence={e: r.evidence for e, r in enumerate(results)},
    )
