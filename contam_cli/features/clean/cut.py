"""The cut rule: which text of a corpus document holding eval n-grams survives, as edits."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from contam_cli.engine import match_chunk, windows
from contam_cli.engine.eval_index import EvalIndex
from contam_cli.errors import ContamError, UsageError
from contam_cli.features.clean.edits import _PIECE_JOIN, _Edit, _edit_object, _removed, _Unit
from contam_cli.features.clean.fuzzy import FuzzyCut
from contam_cli.io import TextSpec
from contam_cli.text import DEFAULT_NORM, NormConfig, Tokenizer, token_span_array

Mode = Literal["cut-span", "drop-doc"]


@dataclass(frozen=True, slots=True)
class CutRule:
    """How leaked text is removed from a corpus document (GPT-3 / lm-eval defaults).

    With n=3, window=4 and min_piece=4, ``"aaaa bbbb. x y z. cccc dddd"`` holding the eval 3-gram
    ``x y z`` loses ``x y z`` plus 4 characters each side, widened to whole tokens
    (``"bbbb. x y z. cccc"``); the pieces ``"aaaa"`` and ``"dddd"`` remain (whitespace next to a
    cut is trimmed), each its own record.
    """

    mode: Mode = "cut-span"
    """``cut-span``: cut the matched spans out; ``drop-doc``: drop every document with a match."""
    window: int = 200
    """Characters removed on each side of every matched n-gram."""
    min_piece: int = 200
    """Pieces shorter than this (in characters) are dropped."""
    max_splits: int = 10
    """A document needing more cuts than this is dropped whole."""

    def __post_init__(self) -> None:
        if self.mode not in ("cut-span", "drop-doc"):
            raise UsageError(f"--mode must be cut-span or drop-doc, got {self.mode!r}")
        if min(self.window, self.min_piece, self.max_splits) < 0:
            raise UsageError("--window, --min-piece and --max-splits must be >= 0")

    def describe(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "window": self.window,
            "min_piece": self.min_piece,
            "max_splits": self.max_splits,
        }


@dataclass(frozen=True)
class _Context:
    """Everything a worker needs to clean one file."""

    index: EvalIndex
    rule: CutRule
    spec: TextSpec
    norm: NormConfig
    chunk_bytes: int
    inputs: tuple[Path, ...]
    fuzzy: FuzzyCut | None = None
    """Reworded copies to cut besides the n-gram windows (see :mod:`.fuzzy`); None: off."""
    accel: bool | None = None
    """Whether the tokenizers use the compiled kernels (None: when installed)."""


def _plan_batch(batch: list[_Unit], fmt: str, ctx: _Context, tk: Tokenizer) -> list[_Edit | None]:
    """The edit of every record of one batch (None: unchanged), checked against the index."""
    edits: list[_Edit | None] = [None] * len(batch)
    positions = _hit_positions(ctx.index, tk, [u.rec.text.encode("utf-8") for u in batch])
    extra = ctx.fuzzy.spans(tk, [u.rec.text for u in batch]) if ctx.fuzzy is not None else {}
    if not positions and not extra:
        return edits
    if fmt in ("parquet", "arrow"):
        raise UsageError(
            f"{batch[0].rec.locator.path}: clean cannot rewrite .{fmt} corpus files yet "
            "(leave the file out with --exclude, or convert it to JSONL)"
        )
    none = np.zeros(0, dtype=np.int64)
    for d in sorted({*positions, *extra}):
        edits[d] = _edit_record(batch[d], positions.get(d, none), fmt, ctx, extra.get(d, ()))
    _drop_unclean(edits, batch, ctx, tk)
    return edits


def _hit_positions(index: EvalIndex, tk: Tokenizer, raw: list[bytes]) -> dict[int, np.ndarray]:
    """The sorted token positions of the eval n-grams in each document of `raw` that holds
    one. A document longer than LONG_DOC_BYTES is read window by window (the same positions,
    in a few times a window's memory; see :mod:`contam_cli.engine.windows`)."""
    long = {d for d, r in enumerate(raw) if len(r) > windows.LONG_DOC_BYTES}
    out: dict[int, np.ndarray] = {}
    for d in sorted(long):
        found = [
            start[index.lookup(grams, accel=tk.kernels is not None)[0]]
            for grams, start in windows.window_ngrams(raw[d], tk, index.n)
        ]
        pos = np.concatenate(found) if found else np.zeros(0, dtype=np.int64)
        if len(pos):
            out[d] = pos.astype(np.int64, copy=False)
    rest = [d for d in range(len(raw)) if d not in long]
    found_rest = match_chunk(index, tk, [raw[d] for d in rest]) if rest else None
    if found_rest is not None:
        hits = found_rest[0]
        order = np.lexsort((hits.doc_pos, hits.doc))
        doc, pos = hits.doc[order], hits.doc_pos[order]
        starts = np.flatnonzero(np.r_[True, doc[1:] != doc[:-1]])
        for a, b in zip(starts, np.r_[starts[1:], len(doc)]):
            out[rest[int(doc[a])]] = np.unique(pos[a:b])
    return out


def _drop_unclean(
    edits: list[_Edit | None], batch: list[_Unit], ctx: _Context, tk: Tokenizer
) -> None:
    """Drop every record whose cleaned text still holds an eval n-gram (formed by a join), or a
    reworded copy the fuzzy cut would cut."""
    owners = [k for k, e in enumerate(edits) if e is not None for _ in e.checks]
    checks = [t for e in edits if e is not None for t in e.checks]
    unclean = set(_hit_positions(ctx.index, tk, [t.encode("utf-8") for t in checks]))
    if ctx.fuzzy is not None and checks:
        unclean.update(ctx.fuzzy.spans(tk, checks))
    for d in sorted(unclean):
        k = owners[d]
        edits[k] = _dropped(batch[k].rec.text)


def _dropped(text: str) -> _Edit:
    return _Edit([], [], len(text.encode("utf-8")))


def _edit_record(
    unit: _Unit,
    positions: np.ndarray,
    fmt: str,
    ctx: _Context,
    extra: Sequence[tuple[int, int]] = (),
) -> _Edit:
    text = unit.rec.text
    if ctx.rule.mode == "drop-doc":
        return _dropped(text)
    kept = _kept_spans(text, positions, ctx.index.n, ctx.rule, ctx.norm, extra)
    if kept is None:
        return _dropped(text)
    if fmt == "txt":
        new = _PIECE_JOIN.join(text[a:b] for a, b in kept)
        bom = b"\xef\xbb\xbf" if unit.rec.locator.span and unit.rec.locator.span[0] == 3 else b""
        return _Edit([bom + new.encode("utf-8")], [new], _removed(text, [new]))
    try:
        return _edit_object(unit, kept, fmt, ctx.spec)
    except (ValueError, TypeError, KeyError, IndexError, ContamError):
        return _dropped(text)  # NOTE: a record we cannot rewrite exactly is dropped, not kept.


def _kept_spans(
    text: str,
    positions: np.ndarray,
    n: int,
    rule: CutRule,
    norm: NormConfig = DEFAULT_NORM,
    extra: Sequence[tuple[int, int]] = (),
) -> list[tuple[int, int]] | None:
    """Character ranges of `text` left after the cut rule; None when the document is dropped.

    `positions` are the token positions of the matched n-gram windows; `extra`, character spans
    cut the same way (a reworded leak's aligned span).

    >>> t = "aaaa bbbb. x y z. cccc dddd"
    >>> [t[a:b] for a, b in _kept_spans(t, np.array([2]), 3, CutRule(window=4, min_piece=4))]
    ['aaaa', 'dddd']
    >>> rule = CutRule(window=0, min_piece=4)
    >>> [t[a:b] for a, b in _kept_spans(t, np.zeros(0, np.int64), 3, rule, extra=[(11, 16)])]
    ['aaaa bbbb.', '. cccc dddd']
    """
    spans = token_span_array(text, norm)
    bad = len(positions) and int(positions.max()) + n > len(spans)
    if (len(positions) == 0 and not extra) or bad:
        return None  # NOTE: the tokenizers disagree on this text; drop rather than guess.
    if any(not 0 <= x <= y <= len(text) for x, y in extra):
        return None  # NOTE: a span that does not fit this text: drop rather than guess.
    starts, ends = spans[:, 0], spans[:, 1]
    more = np.array(extra, dtype=np.int64).reshape(-1, 2)
    a = np.maximum(np.r_[starts[positions], more[:, 0]] - rule.window, 0)
    b = np.minimum(np.r_[ends[positions + n - 1], more[:, 1]] + rule.window, len(text))
    ia = np.searchsorted(starts, a, side="left") - 1  # the token starting before a, if any
    a = np.where((ia >= 0) & (ends[np.maximum(ia, 0)] > a), starts[np.maximum(ia, 0)], a)
    ib = np.searchsorted(starts, b, side="left") - 1
    b = np.where((ib >= 0) & (ends[np.maximum(ib, 0)] > b), ends[np.maximum(ib, 0)], b)
    cuts = _merge(a, b)
    if len(cuts) > rule.max_splits:
        return None
    edges = [0, *(x for cut in cuts for x in cut), len(text)]
    pieces = (_trim(text, edges[k], edges[k + 1]) for k in range(0, len(edges), 2))
    kept = [(x, y) for x, y in pieces if y - x >= max(rule.min_piece, 1)]
    return kept or None


def _trim(text: str, x: int, y: int) -> tuple[int, int]:
    """The piece [x, y) without the whitespace it has next to a cut (not at the text's ends)."""
    if x > 0:
        while x < y and text[x].isspace():
            x += 1
    if y < len(text):
        while y > x and text[y - 1].isspace():
            y -= 1
    return x, y


def _merge(a: np.ndarray, b: np.ndarray) -> list[tuple[int, int]]:
    """Union of the intervals [a_i, b_i), overlapping or touching ones merged, sorted."""
    order = np.argsort(a, kind="stable")
    a, b = a[order], b[order]
    reach = np.maximum.accumulate(b)
    new = np.r_[True, a[1:] > reach[:-1]]
    first = np.flatnonzero(new)
    last = np.r_[first[1:] - 1, len(a) - 1]
    return list(zip(a[first].tolist(), reach[last].tolist()))
