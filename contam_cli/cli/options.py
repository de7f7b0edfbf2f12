"""The options several commands share, declared once (``Annotated`` aliases)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

# -- shared options (declared once, used by scan and clean) --------------------------------------

EvalArg = Annotated[
    list[Path],
    typer.Argument(
        help="Eval set(s): .jsonl .json .txt, a directory, compressed or not.",
        show_default=False,
        metavar="EVAL",
    ),
]
CorpusOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--corpus",
        "-c",
        metavar="PATH",
        help="Corpus file, directory or URL such as s3://bucket/prefix/ (repeatable; together "
        "one source named 'corpus').",
        show_default=False,
    ),
]
SourceOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--source",
        "-s",
        metavar="NAME=PATH",
        help="Named corpus source NAME=PATH (repeatable); results are kept per source.",
        show_default=False,
    ),
]
NgramOpt = Annotated[
    int, typer.Option("--ngram-size", "-n", min=1, metavar="N", help="n-gram size in tokens.")
]
FieldOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--field",
        metavar="FIELD",
        help="Eval text field, dotted path (repeatable; joined with newlines). Default: auto.",
        show_default=False,
    ),
]
CorpusFieldOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--corpus-field",
        metavar="FIELD",
        help="Corpus text field, dotted path (repeatable). Default: auto-detect.",
        show_default=False,
    ),
]
IdFieldOpt = Annotated[
    str | None,
    typer.Option(
        "--id-field",
        metavar="FIELD",
        help="Eval id field, dotted path. Default: id-like keys, else the line number.",
        show_default=False,
    ),
]
RolesOpt = Annotated[
    str | None,
    typer.Option(
        "--roles",
        metavar="ROLES",
        help="Chat roles to keep, comma-separated (e.g. user,assistant). Default: all turns.",
        show_default=False,
    ),
]
IncludeOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--include",
        metavar="GLOB",
        help="Only files matching this glob in directories (repeatable).",
        show_default=False,
    ),
]
ExcludeOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--exclude",
        metavar="GLOB",
        help="Skip files matching this glob in directories (repeatable).",
        show_default=False,
    ),
]
MinOverlapOpt = Annotated[
    float,
    typer.Option(
        "--min-overlap", min=0.0, max=1.0, metavar="F", help="Flag when overlap fraction >= this."
    ),
]
MinRunOpt = Annotated[
    int,
    typer.Option(
        "--min-run", min=1, metavar="N", help="Flag when the longest exact run (tokens) >= this."
    ),
]
ThresholdOpt = Annotated[
    float | None,
    typer.Option(
        "--threshold",
        metavar="Z",
        help="Also flag overlap z-score outliers >= Z among examples with a match (default: off).",
        show_default=False,
    ),
]
FuzzyOpt = Annotated[
    bool,
    typer.Option(
        "--fuzzy",
        help="Also find reworded leaks (synonyms, swapped or edited words) by token alignment: "
        "a second detector with its own score, reasons and evidence.",
    ),
]
MinFuzzyOpt = Annotated[
    float,
    typer.Option(
        "--min-fuzzy",
        min=0.0,
        max=1.0,
        metavar="S",
        help="With --fuzzy: flag when the fuzzy score (share of the example aligned to one "
        "corpus passage, rarity-weighted) >= this.",
    ),
]
ThresholdsOpt = Annotated[
    Path | None,
    typer.Option(
        "--thresholds",
        metavar="FILE",
        help="Per-source thresholds JSON (from contam calibrate).",
        show_default=False,
    ),
]
JobsOpt = Annotated[
    int,
    typer.Option(
        "--jobs",
        "-j",
        min=0,
        metavar="N",
        help="Worker processes for corpus shards (0 = all cores).",
    ),
]
ChunkOpt = Annotated[
    int,
    typer.Option("--chunk-size", min=1024, help="Corpus bytes per vectorized chunk.", hidden=True),
]
NoCasefoldOpt = Annotated[
    bool, typer.Option("--no-casefold", help="Keep case (default: casefold).")
]
NoNfkcOpt = Annotated[bool, typer.Option("--no-nfkc", help="Skip Unicode NFKC (default: apply).")]
RedactOpt = Annotated[
    bool, typer.Option("--redact", help="Leave eval and corpus text out of every output.")
]
NoFailOpt = Annotated[
    bool,
    typer.Option(
        "--no-fail", help="Exit 0 even when contamination is found (errors still exit 2)."
    ),
]
ReportOpt = Annotated[
    Path | None,
    typer.Option(
        "--report",
        metavar="PATH",
        help="Write the JSON report to this path (atomically).",
        show_default=False,
    ),
]
ProgressOpt = Annotated[
    bool | None,
    typer.Option(
        "--progress/--no-progress",
        help="Progress bar on stderr (default: only when stderr is a terminal).",
        show_default=False,
    ),
]
NoCorpusHashOpt = Annotated[
    bool,
    typer.Option(
        "--no-corpus-hash",
        help="Skip the sha256 of each corpus file in the report (it reads the files once more).",
    ),
]
DebugOpt = Annotated[bool, typer.Option("--debug", help="Show a traceback on errors.")]
HtmlOpt = Annotated[
    Path | None,
    typer.Option(
        "--html",
        metavar="PATH",
        help="Also write the report as one self-contained HTML page (atomically).",
        show_default=False,
    ),
]
SarifOpt = Annotated[
    Path | None,
    typer.Option(
        "--sarif",
        metavar="PATH",
        help="Also write SARIF 2.1.0, for GitHub code scanning (atomically).",
        show_default=False,
    ),
]
StdoutFileOpt = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        metavar="PATH",
        help="Write to this file (atomically) instead of stdout.",
        show_default=False,
    ),
]
EvalCacheOpt = Annotated[
    Path | None,
    typer.Option(
        "--eval-cache",
        metavar="DIR",
        envvar="CONTAM_EVAL_CACHE",
        help="Keep the eval set's index in DIR and reuse it while the eval files (sha256) and "
        "options are unchanged, so many corpora are scanned against one eval suite without "
        "indexing it again; the report is the same. Default: $CONTAM_EVAL_CACHE.",
        show_default=False,
    ),
]
