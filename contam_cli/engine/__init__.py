"""The engine: the eval index, chunk matching and exact runs, the accumulator, the corpus index."""

from __future__ import annotations

from contam_cli.engine.accumulator import Accumulator
from contam_cli.engine.eval_index import EvalIndex, build_eval_index
from contam_cli.engine.evidence import Evidence, make_evidence
from contam_cli.engine.match import ORDER_FILE_SHIFT, DocBatch, best_runs, iter_batches, match_chunk

__all__ = [
    "ORDER_FILE_SHIFT",
    "Accumulator",
    "DocBatch",
    "EvalIndex",
    "Evidence",
    "best_runs",
    "build_eval_index",
    "iter_batches",
    "make_evidence",
    "match_chunk",
]
