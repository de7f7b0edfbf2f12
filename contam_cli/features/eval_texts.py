"""The eval texts of the examples a reviewer will look at, put back into a report.

A scan drops every eval text once it is hashed (so 100,000 examples are never in memory at
once); the examples that matched something are then read again, by their place in the input, and
their texts attached to the report, where renderers show the leaked span in place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from contam_cli.engine.options import ScanOptions
from contam_cli.errors import InputError
from contam_cli.io.inputs import as_record, classify
from contam_cli.io.readers import iter_eval
from contam_cli.report import Report

__all__ = ["attach_eval_texts", "review_rows"]


def review_rows(report: Report) -> np.ndarray:
    """The examples worth a reviewer's look: flagged, or with a match in some source."""
    rows = set(np.flatnonzero(report.flagged_mask()).tolist())
    ngram = report.examples.ngram
    if ngram is not None:
        rows.update(ngram.detailed())
    return np.array(sorted(rows), dtype=np.int64)


def attach_eval_texts(report: Report, eval: Any, opts: ScanOptions) -> Report:
    """`report` with the texts of its :func:`review_rows` examples, read again from `eval` (the
    same input the report was made from). A redacted report keeps none; an eval set streamed
    from a generator cannot be read again and keeps none either."""
    wanted = review_rows(report)
    if report.redact or not len(wanted):
        return report
    given = classify(eval, what="eval")
    if given.paths:
        records: Any = iter_eval(list(given.paths), opts.eval_spec, opts.include, opts.exclude)
    elif isinstance(given.memory, Sequence):
        records = (
            as_record(x, i, "<memory>", opts.eval_spec, role="eval")
            for i, x in enumerate(given.memory)
        )
    else:
        return report
    texts = _pick(records, wanted.tolist(), report)
    return replace(report, examples=report.examples.with_texts(texts))


def _pick(records: Any, wanted: list[int], report: Report) -> dict[int, str]:
    out: dict[int, str] = {}
    want = iter(wanted)
    target = next(want, None)
    ids = report.examples.ids
    for k, rec in enumerate(records):
        if target is None:
            break
        if k == target:
            if rec.id != ids[k]:
                raise InputError(
                    rec.locator.path, "the eval set changed while it was being scanned"
                )
            out[k] = rec.text
            target = next(want, None)
    return out
