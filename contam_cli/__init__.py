"""contam: check whether an evaluation benchmark leaked into training data, with evidence.

>>> from contam_cli import scan
>>> report = scan(["the quick brown fox jumps over"], ["so the quick brown fox jumps over it"], n=3)
>>> report.examples[0].longest_run
6
"""

from __future__ import annotations

from contam_cli._version import __version__
from contam_cli.engine.eval_index import EvalIndex, build_eval_index
from contam_cli.engine.evidence import Evidence
from contam_cli.engine.options import ScanOptions
from contam_cli.errors import (
    ArgumentError,
    ContamError,
    IndexMismatchError,
    InputError,
    MissingExtraError,
    OutputError,
    UsageError,
)
from contam_cli.features.clean import (
    CorpusCleanResult,
    CutRule,
    EvalCleanResult,
    FileStats,
    clean_corpus,
    clean_eval,
)
from contam_cli.features.scan import scan
from contam_cli.io import (
    Locator,
    Record,
    TextSpec,
    extract_text,
    iter_corpus,
    iter_records,
    read_eval,
)
from contam_cli.policy import FlagPolicy, SourceThreshold
from contam_cli.report import (
    ExampleResult,
    ExampleTable,
    Method,
    NgramResult,
    Reason,
    Report,
    SourceResult,
    load_report,
    save_report,
)
from contam_cli.text import (
    NormConfig,
    Tokenizer,
    ngram_hash,
    ngram_hashes,
    normalize,
    token_hash,
    tokenize,
)
from contam_cli.text.fingerprint import text_fingerprint

__all__ = [
    "ArgumentError",
    "ContamError",
    "CorpusCleanResult",
    "CutRule",
    "EvalCleanResult",
    "EvalIndex",
    "Evidence",
    "ExampleResult",
    "ExampleTable",
    "FileStats",
    "FlagPolicy",
    "IndexMismatchError",
    "InputError",
    "Locator",
    "Method",
    "MissingExtraError",
    "NgramResult",
    "NormConfig",
    "OutputError",
    "Reason",
    "Record",
    "Report",
    "ScanOptions",
    "SourceResult",
    "SourceThreshold",
    "TextSpec",
    "Tokenizer",
    "UsageError",
    "__version__",
    "build_eval_index",
    "clean_corpus",
    "clean_eval",
    "extract_text",
    "iter_corpus",
    "iter_records",
    "load_report",
    "ngram_hash",
    "ngram_hashes",
    "normalize",
    "read_eval",
    "save_report",
    "scan",
    "text_fingerprint",
    "token_hash",
    "tokenize",
]
