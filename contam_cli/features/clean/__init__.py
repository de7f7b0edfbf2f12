"""clean_eval() and clean_corpus(): the eval set without its leaked examples, the corpus without
the leaked text.

Eval side: scan, then copy every record that was not flagged byte for byte (JSONL/TXT lines, JSON
array elements), in input order, keeping blank lines; the flagged ones go to ``dirty_output``.

Corpus side (the GPT-3 / lm-eval decontamination rule): every corpus document holding an eval
n-gram loses each matched n-gram window plus ``window`` characters on each side (edges snapped
outward to whole tokens); the document is split there, pieces shorter than ``min_piece`` characters
are dropped, and a document needing more than ``max_splits`` cuts is dropped whole. A ``text``
record splits into one record per piece; a chat / multi-field record is cut inside each turn and
stays one record; a ``.txt`` document keeps its pieces separated by a blank line. Any output text
that would still hold an eval n-gram (new n-grams can form where pieces are joined) is dropped, so a
rescan of the cleaned corpus finds nothing. Files without a change are copied byte for byte.

Outputs are written atomically: a single file through a temp file and a rename, a directory by
building it beside the target and renaming it into place, so an interrupted run leaves nothing.
"""

from __future__ import annotations

# NOTE: the `X as X` names are not public API, only importable from here as before the split
# (cli/clean.py uses Mode, tests use _kept_spans).
from contam_cli.features.clean.corpus import (
    MANIFEST_NAME,
    CorpusCleanResult,
    FileStats,
    clean_corpus,
)
from contam_cli.features.clean.corpus import MANIFEST_SCHEMA as MANIFEST_SCHEMA
from contam_cli.features.clean.cut import CutRule
from contam_cli.features.clean.cut import Mode as Mode
from contam_cli.features.clean.cut import _kept_spans as _kept_spans
from contam_cli.features.clean.eval import EvalCleanResult, clean_eval
from contam_cli.features.clean.layout import CorpusArg as CorpusArg

__all__ = [
    "MANIFEST_NAME",
    "CorpusCleanResult",
    "CutRule",
    "EvalCleanResult",
    "FileStats",
    "clean_corpus",
    "clean_eval",
]
