"""contam: check whether an evaluation benchmark leaked into training data, with evidence.

>>> from contam_cli import scan
>>> report = scan(["the quick brown fox jumps over"], ["so the quick brown fox jumps over it"], n=3)
>>> report.examples[0].longest_run
6
"""

from __future__ import annotations

from contam_cli._version import __version__
from contam_cli.engine.eval_index import EvalIndex, build_eval_index
from contam_cli.errors import ContamError, InputError, UsageError
from contam_cli.features.clean import clean_corpus, clean_eval
from contam_cli.features.scan import ScanOptions, scan
from contam_cli.io import TextSpec, extract_text, iter_corpus, iter_records, read_eval
from contam_cli.io.model import Locator, Record
from contam_cli.policy import FlagPolicy, SourceThreshold
from contam_cli.report import ExampleResult, Report
from contam_cli.text import (
    NormConfig,
    Tokenizer,
    ngram_hash,
    ngram_hashes,
    normalize,
    token_hash,
    tokenize,
)

__all__ = [
    "__version__",
    "ContamError",
    "EvalIndex",
    "ExampleResult",
    "FlagPolicy",
    "InputError",
    "Locator",
    "NormConfig",
    "Record",
    "Report",
    "ScanOptions",
    "SourceThreshold",
    "TextSpec",
    "Tokenizer",
    "UsageError",
    "build_eval_index",
    "clean_corpus",
    "clean_eval",
    "extract_text",
    "iter_corpus",
    "iter_records",
    "ngram_hash",
    "ngram_hashes",
    "normalize",
    "read_eval",
    "scan",
    "token_hash",
    "tokenize",
]
