"""The fuzzy (reworded-leak) detector's side of a scan: its eval index, its results in the report.

The eval side is indexed from a second read of the eval set (the exact index drops each text
once hashed, so a large eval set is never in memory whole): files are read again, a list in
memory is walked again; a one-shot iterator cannot be, and ``--fuzzy`` refuses it. After the
corpus pass, the examples with fuzzy evidence are read a third time, only to place their matched
tokens in their own text (character offsets), so that a renderer can highlight them.

:func:`add_fuzzy` adds to an n-gram report the method ``fuzzy`` (score per example, null where
unscorable: fewer than ``min_tokens`` tokens), its details as columns, the rules that fire
(``min-fuzzy``, and per source ``source-fuzzy`` from a thresholds file), the settings and the
count of examples it could not score.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from contam_cli.engine.fuzzy import FuzzyEvidence, FuzzyIndex, build_fuzzy_index
from contam_cli.engine.fuzzy.shared import WithFuzzy
from contam_cli.engine.options import ScanOptions
from contam_cli.errors import ArgumentError, InputError
from contam_cli.io.inputs import as_record, classify
from contam_cli.io.model import Record
from contam_cli.io.readers import iter_eval
from contam_cli.policy import FlagPolicy
from contam_cli.report import FUZZY_METHOD, ExampleTable, FuzzyColumns, FuzzyMatch, Report
from contam_cli.report.values import Reason
from contam_cli.text import NormConfig, Tokenizer, token_spans

__all__ = ["add_fuzzy", "check_fuzzy_input", "fuzzy_eval_index"]


def check_fuzzy_input(eval: Any) -> None:
    """ArgumentError unless `eval` can be read more than once (paths, or a sequence)."""
    given = classify(eval, what="eval")
    if given.memory is not None and not isinstance(given.memory, Sequence):
        raise ArgumentError(
            "eval: the fuzzy detector reads the eval set again; give paths or a list of "
            "texts or records, not a one-shot iterator"
        )


def fuzzy_eval_index(eval: Any, opts: ScanOptions, n_examples: int, tk: Tokenizer) -> FuzzyIndex:
    """The fuzzy detector's index of `eval` (read again; `n_examples` as the exact index)."""
    assert opts.fuzzy is not None
    texts = (r.text for r in _records(eval, opts))
    return build_fuzzy_index(texts, n_examples, tokenizer=tk, config=opts.fuzzy)


def _records(eval: Any, opts: ScanOptions) -> Iterator[Record]:
    given = classify(eval, what="eval")
    if given.paths:
        yield from iter_eval(list(given.paths), opts.eval_spec, opts.include, opts.exclude)
        return
    check_fuzzy_input(eval)
    for i, x in enumerate(given.memory or ()):
        yield as_record(x, i, "<memory>", opts.eval_spec, role="eval")


def add_fuzzy(
    report: Report,
    index: FuzzyIndex,
    acc: WithFuzzy,
    policy: FlagPolicy,
    eval: Any,
    opts: ScanOptions,
) -> Report:
    """`report` (the n-gram detector's, of the same examples) with the fuzzy detector's method,
    details, reasons, settings and counts."""
    fz = acc.fuzzy
    res = fz.results(index)
    names = list(fz.source_names)
    with np.errstate(invalid="ignore", divide="ignore"):
        per = fz.best_h / np.maximum(index.total_weight, 1)
    hit = np.flatnonzero((fz.best_h > 0).any(axis=0)) if len(names) else np.zeros(0, np.int64)
    per_source = {
        e: {names[s]: float(per[s, e]) for s in range(len(names)) if fz.best_h[s, e] > 0}
        for e in hit.tolist()
    }
    texts = _texts(eval, opts, sorted(res.evidence), report.examples.ids)
    evidence = {e: _match(ev, texts.get(e), index.norm) for e, ev in sorted(res.evidence.items())}
    reasons = dict(report.examples.reasons)
    for e in hit.tolist():
        if res.scorable[e]:
            src = names[int(res.source[e])] if res.source[e] >= 0 else None
            found = policy.fuzzy_reasons(
                score=float(res.score[e]), source=src, per_source=per_source[e]
            )
            if found:
                reasons[e] = (*reasons.get(e, ()), *found)
    cols = FuzzyColumns.build(
        scorable=res.scorable,
        aligned_fraction=res.aligned_fraction,
        identity=res.identity,
        per_source=per_source,
        evidence=evidence,
    )
    table = _with_fuzzy(report.examples, res.score, cols, reasons)
    stats = {**report.stats, "fuzzy_unscorable": int((~res.scorable).sum())}
    config = {**report.config, "policy": policy.describe(fuzzy=True)}
    return replace(report, examples=table, stats=stats, config=config)


def _with_fuzzy(
    t: ExampleTable, score: np.ndarray, cols: FuzzyColumns, reasons: dict[int, tuple[Reason, ...]]
) -> ExampleTable:
    return ExampleTable(
        ids=t.ids,
        eval_paths=t.eval_paths,
        eval_lines=t.eval_lines,
        fingerprints=t.fingerprints,
        methods=(*t.methods, FUZZY_METHOD),
        scores={**t.scores, FUZZY_METHOD.name: score},
        reasons=reasons,
        ngram=t.ngram,
        details=t.details,
        texts=t.texts,
        fuzzy=cols,
    )


def _texts(eval: Any, opts: ScanOptions, rows: list[int], ids: Sequence[str]) -> dict[int, str]:
    """The eval texts of examples `rows` (sorted), read again; the ids must not have changed."""
    out: dict[int, str] = {}
    if not rows:
        return out
    want = iter(rows)
    target = next(want, None)
    for k, rec in enumerate(_records(eval, opts)):
        if target is None:
            break
        if k == target:
            if k >= len(ids) or rec.id != ids[k]:
                raise InputError(rec.locator.path, "the eval set changed while it was scanned")
            out[k] = rec.text
            target = next(want, None)
    return out


def _match(ev: FuzzyEvidence, text: str | None, norm: NormConfig) -> FuzzyMatch:
    """The report's value of one fuzzy evidence; `text`: the example's text (None: unknown,
    the eval offsets are -1)."""
    pairs = ev.pairs
    eval_chars = np.full((len(pairs), 2), -1, dtype=np.int64)
    if text is not None and len(pairs):
        spans = np.array(
            token_spans(text, norm, stop=int(pairs[:, 0].max()) + 1), dtype=np.int64
        ).reshape(-1, 2)
        if len(spans) > int(pairs[:, 0].max()):  # NOTE: else not the text that was indexed
            eval_chars = spans[pairs[:, 0]]
    rows = np.concatenate([pairs, eval_chars, ev.pair_chars], axis=1).tolist()
    return FuzzyMatch(
        source=ev.source,
        path=ev.path,
        line=ev.line,
        record=ev.record,
        doc_id=ev.doc_id,
        char_start=ev.char_start,
        char_end=ev.char_end,
        doc_token=ev.doc_token,
        doc_token_end=ev.doc_token_end,
        eval_token=ev.eval_token,
        eval_token_end=ev.eval_token_end,
        eval_char_start=int(eval_chars[:, 0].min()) if len(pairs) else -1,
        eval_char_end=int(eval_chars[:, 1].max()) if len(pairs) else -1,
        text=ev.text,
        pairs=tuple(tuple(r) for r in rows),  # type: ignore[misc]
        byte_offset=ev.byte_offset,
    )
