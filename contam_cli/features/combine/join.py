"""Joining the inputs of ``contam report`` by example id.

The combined report has every id of every input: the first input's in its order, then each later
input's new ids in theirs. An id one input lacks gets null for that input's methods (never zero),
and each input's missing ids are counted. Per example, the eval location, fingerprint, text and
every detector's details come from the first report input that has them, so evidence survives.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from contam_cli.errors import UsageError
from contam_cli.features.combine.inputs import ScoreInput
from contam_cli.report import ExampleTable, Method, NgramColumns

__all__ = ["COMBINED", "Joined", "Rename", "id_fingerprint", "join", "rename_methods"]

#: The name (and detector) of the combined score.
COMBINED = "combined"
#: Details an input report may hold that the combined report computes afresh.
RECOMPUTED = (COMBINED, "label", "baseline")
#: Keys of detectors' details whose strings quote eval, corpus or model text (left out when
#: redacting: a guided-prompting completion may reproduce the eval example).
TEXT_KEYS = frozenset({"text", "completion", "prefix", "suffix", "span", "matched_text"})


@dataclass(frozen=True, slots=True)
class Rename:
    """``INPUT:OLD=NEW``: the method OLD of input INPUT is called NEW in the combined report.

    >>> Rename.parse("2:longest_run=run_b")
    Rename(input='2', old='longest_run', new='run_b')
    >>> Rename.parse("score=ppl").input is None
    True
    """

    input: str | None
    """The input: its path as given, its file name, or its position counted from 1; None: the
    one input that has a method OLD."""
    old: str
    new: str

    @classmethod
    def parse(cls, spec: str) -> Rename:
        head, sep, new = spec.rpartition("=")
        where, colon, old = head.rpartition(":")
        if not sep or not old or not new.strip() or (colon and not where):
            raise UsageError(f"--method-name expects INPUT:OLD=NEW (or OLD=NEW), got {spec!r}")
        return cls(where if colon else None, old, new.strip())

    def __str__(self) -> str:
        return f"{self.input}:{self.old}={self.new}" if self.input else f"{self.old}={self.new}"


@dataclass(frozen=True, eq=False)
class Joined:
    """The ids of the combined report, and where each input's examples sit among them."""

    ids: list[str]
    rows: list[np.ndarray]
    """Per input, per combined example: its row in that input, -1 when the input lacks it."""
    at: list[np.ndarray]
    """Per input, per row of that input: the combined example it is."""

    def missing(self, k: int) -> np.ndarray:
        return self.rows[k] < 0


def rename_methods(inputs: Sequence[ScoreInput], renames: Sequence[Rename]) -> list[list[Method]]:
    """Each input's methods after `renames`; a name used twice is a UsageError saying how to
    rename one."""
    new: list[dict[str, str]] = [{} for _ in inputs]
    for r in renames:
        k = _which(inputs, r)
        if r.old in new[k]:
            raise UsageError(f"--method-name {r}: {r.old!r} of {inputs[k].path} renamed twice")
        new[k][r.old] = r.new
    out: list[list[Method]] = []
    owner: dict[str, str] = {}
    for inp, names in zip(inputs, new):
        methods = [replace(m, name=names.get(m.name, m.name)) for m in inp.methods]
        for m in methods:
            if m.name == COMBINED:
                raise UsageError(
                    f"{inp.path}: a method named {COMBINED!r} (the combined score's name): "
                    f"rename it with --method-name {inp.path}:{COMBINED}=NEW"
                )
            if m.name in owner:
                raise UsageError(
                    f"method {m.name!r} is in both {owner[m.name]} and {inp.path}: rename one "
                    f"with --method-name INPUT:{m.name}=NEW (INPUT: a path or its position)"
                )
            owner[m.name] = inp.path
        out.append(methods)
    return out


def _which(inputs: Sequence[ScoreInput], r: Rename) -> int:
    """The input a rename names (an input that has the method, when it names none)."""
    if r.input is None:
        found = [k for k, inp in enumerate(inputs) if r.old in inp.names]
    elif r.input.isdigit():
        k = int(r.input) - 1
        found = [k] if 0 <= k < len(inputs) else []
    else:
        found = [k for k, inp in enumerate(inputs) if _names_input(r.input, inp.path)]
    if len(found) != 1:
        what = "no input" if not found else "more than one input"
        raise UsageError(f"--method-name {r}: {what} matches (inputs: {_listing(inputs)})")
    if r.old not in inputs[found[0]].names:
        raise UsageError(
            f"--method-name {r}: {inputs[found[0]].path} has no method {r.old!r} "
            f"(it has {', '.join(inputs[found[0]].names)})"
        )
    return found[0]


def _names_input(ref: str, path: str) -> bool:
    if ref == path or ref == Path(path).name:
        return True
    try:
        return Path(ref).resolve() == Path(path).resolve()
    except OSError:
        return False


def _listing(inputs: Sequence[ScoreInput]) -> str:
    return ", ".join(f"{k} {inp.path}" for k, inp in enumerate(inputs, 1))


def join(inputs: Sequence[ScoreInput]) -> Joined:
    """The combined ids and each input's place among them."""
    order: dict[str, int] = {}
    for inp in inputs:
        for i in inp.ids:
            order.setdefault(i, len(order))
    at = [np.array([order[i] for i in inp.ids], dtype=np.int64) for inp in inputs]
    rows = []
    for a in at:
        r = np.full(len(order), -1, dtype=np.int64)
        r[a] = np.arange(len(a))
        rows.append(r)
    return Joined(ids=list(order), rows=rows, at=at)


def joined_column(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """An input's score column laid out on the combined examples (NaN where it lacks one)."""
    out = np.full(len(rows), np.nan)
    has = rows >= 0
    out[has] = values[rows[has]]
    return out


def id_fingerprint(example_id: str) -> str:
    """The fingerprint of an example known only from scores files (no text): a hash of its id.

    >>> len(id_fingerprint("q1"))
    32
    """
    data = b"contam-id/1\0" + example_id.encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()[:32]


def example_columns(
    inputs: Sequence[ScoreInput], joined: Joined, *, redact: bool
) -> dict[str, Any]:
    """The keyword arguments of :class:`ExampleTable` besides methods, scores and reasons."""
    n = len(joined.ids)
    paths: list[str | None] = [None] * n
    lines: list[int | None] = [None] * n
    prints: list[str | None] = [None] * n
    reports = [k for k, inp in enumerate(inputs) if inp.report is not None]
    files = [k for k, inp in enumerate(inputs) if inp.report is None]
    for k in reversed(reports + files):  # NOTE: reversed, so the first input writes last.
        inp, at = inputs[k], joined.at[k].tolist()
        table = inp.report.examples if inp.report is not None else None
        for j, e in enumerate(at):
            if table is not None:
                paths[e], lines[e], prints[e] = (
                    table.eval_paths[j],
                    table.eval_lines[j],
                    table.fingerprints[j],
                )
            else:
                paths[e], lines[e], prints[e] = inp.path, inp.lines[j], None
    texts: dict[int, str] = {}
    details: dict[str, dict[int, Any]] = {}
    for k in reports:
        table = inputs[k].report.examples  # type: ignore[union-attr]
        at = joined.at[k]
        if not redact:
            for j, t in table.texts.items():
                texts.setdefault(int(at[j]), t)
        for key, rows in table.details.items():
            if key not in RECOMPUTED:
                mine = details.setdefault(key, {})
                for j, v in rows.items():
                    mine.setdefault(int(at[j]), scrubbed(v) if redact else v)
    return {
        "ids": joined.ids,
        "eval_paths": paths,
        "eval_lines": lines,
        "fingerprints": [p or id_fingerprint(i) for p, i in zip(prints, joined.ids)],
        "texts": texts,
        "details": details,
        "ngram": _ngram(inputs, joined, redact),
    }


def scrubbed(value: Any) -> Any:
    """A detector's details without the texts they quote (for a redacted report): every string
    under a key that holds text (``text``, ``completion``, ...) becomes None, at any depth.

    >>> scrubbed({"guided": {"completion": "leaked", "recall": 0.9}, "spans": [{"text": "x"}]})
    {'guided': {'completion': None, 'recall': 0.9}, 'spans': [{'text': None}]}
    """
    if isinstance(value, dict):
        return {
            k: None if k in TEXT_KEYS and isinstance(v, str) else scrubbed(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [scrubbed(v) for v in value]
    return value


def _ngram(inputs: Sequence[ScoreInput], joined: Joined, redact: bool) -> NgramColumns | None:
    """The n-gram details of the first input with n-gram columns that has each example; an
    example none has reads unscorable with no tokens (its n-gram scores are null)."""
    sources = [
        (k, inp.report.examples.ngram)
        for k, inp in enumerate(inputs)
        if inp.report is not None and inp.report.examples.ngram is not None
    ]
    if not sources:
        return None
    n = len(joined.ids)
    owner = np.full(n, -1, dtype=np.int64)
    for k, _ in reversed(sources):
        owner[~joined.missing(k)] = k
    dense = {
        name: np.zeros(n, dtype=bool if name == "scorable" else np.int64)
        for name in ("scorable", "n_tokens", "total_ngrams", "matched_ngrams", "ignored_ngrams")
    }
    zscore = np.zeros(n)
    sparse: dict[str, dict[int, Any]] = {"best_source": {}, "per_source": {}, "evidence": {}}
    for k, cols in sources:
        mine = owner == k
        rows = joined.rows[k][mine]
        for name, out in dense.items():
            out[mine] = getattr(cols, name)[rows]
        zscore[mine] = cols.zscore[rows]
        at = joined.at[k]
        for name, out_map in sparse.items():
            for j, v in getattr(cols, name).items():
                e = int(at[j])
                if owner[e] == k:
                    out_map[e] = replace(v, text=None) if name == "evidence" and redact else v
    return NgramColumns.build(
        scorable=dense["scorable"],
        n_tokens=dense["n_tokens"],
        total_ngrams=dense["total_ngrams"],
        matched_ngrams=dense["matched_ngrams"],
        ignored_ngrams=dense["ignored_ngrams"],
        zscore=zscore,
        best_source=sparse["best_source"],
        per_source=sparse["per_source"],
        evidence=sparse["evidence"],
    )


def table_for(
    inputs: Sequence[ScoreInput],
    joined: Joined,
    methods: Sequence[Method],
    scores: dict[str, np.ndarray],
    reasons: dict[int, list[Any]],
    details: dict[str, dict[int, Any]],
    *,
    redact: bool,
) -> ExampleTable:
    """The combined report's examples."""
    cols = example_columns(inputs, joined, redact=redact)
    merged = cols.pop("details")
    for key, rows in details.items():
        merged.setdefault(key, {}).update(rows)
    return ExampleTable(methods=methods, scores=scores, reasons=reasons, details=merged, **cols)
