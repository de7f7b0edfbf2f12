"""contam: check whether an evaluation benchmark leaked into training data, with evidence.

>>> from contam_cli import scan
>>> report = scan(["the quick brown fox jumps over"], ["so the quick brown fox jumps over it"], n=3)
>>> report.examples[0].longest_run
6

The public names load on first use, so that ``import contam_cli`` (and the command line's
start) stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from contam_cli._version import __version__

_EXPORTS = {
    "ArgumentError": "contam_cli.errors",
    "ContamError": "contam_cli.errors",
    "CorpusCleanResult": "contam_cli.features.clean",
    "CutRule": "contam_cli.features.clean",
    "EvalCleanResult": "contam_cli.features.clean",
    "EvalIndex": "contam_cli.engine.eval_index",
    "Evidence": "contam_cli.engine.evidence",
    "ExampleResult": "contam_cli.report",
    "ExampleTable": "contam_cli.report",
    "FileStats": "contam_cli.features.clean",
    "FlagPolicy": "contam_cli.policy",
    "IndexMismatchError": "contam_cli.errors",
    "InputError": "contam_cli.errors",
    "Locator": "contam_cli.io",
    "Method": "contam_cli.report",
    "MissingExtraError": "contam_cli.errors",
    "NgramResult": "contam_cli.report",
    "NormConfig": "contam_cli.text",
    "OutputError": "contam_cli.errors",
    "Reason": "contam_cli.report",
    "Record": "contam_cli.io",
    "Report": "contam_cli.report",
    "ScanOptions": "contam_cli.engine.options",
    "SourceResult": "contam_cli.report",
    "SourceThreshold": "contam_cli.policy",
    "TextSpec": "contam_cli.io",
    "Tokenizer": "contam_cli.text",
    "UsageError": "contam_cli.errors",
    "build_eval_index": "contam_cli.engine.eval_index",
    "clean_corpus": "contam_cli.features.clean",
    "clean_eval": "contam_cli.features.clean",
    "extract_text": "contam_cli.io",
    "iter_corpus": "contam_cli.io",
    "iter_records": "contam_cli.io",
    "load_report": "contam_cli.report",
    "ngram_hash": "contam_cli.text",
    "ngram_hashes": "contam_cli.text",
    "normalize": "contam_cli.text",
    "read_eval": "contam_cli.io",
    "save_report": "contam_cli.report",
    "scan": "contam_cli.features.scan",
    "text_fingerprint": "contam_cli.text.fingerprint",
    "token_hash": "contam_cli.text",
    "tokenize": "contam_cli.text",
}

__all__ = [
    "__version__",
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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'contam_cli' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:  # NOTE: what type checkers and IDEs see
    from contam_cli.engine.eval_index import (
        EvalIndex,
        build_eval_index,
    )
    from contam_cli.engine.evidence import (
        Evidence,
    )
    from contam_cli.engine.options import (
        ScanOptions,
    )
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
    from contam_cli.features.scan import (
        scan,
    )
    from contam_cli.io import (
        Locator,
        Record,
        TextSpec,
        extract_text,
        iter_corpus,
        iter_records,
        read_eval,
    )
    from contam_cli.policy import (
        FlagPolicy,
        SourceThreshold,
    )
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
    from contam_cli.text.fingerprint import (
        text_fingerprint,
    )
