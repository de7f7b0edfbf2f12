"""What every command shares: option declarations, error handling, progress, output writing."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.text import Text

from contam_cli.engine.options import ScanOptions
from contam_cli.errors import ContamError, UsageError
from contam_cli.io import TextSpec
from contam_cli.policy import FlagPolicy
from contam_cli.policy.thresholds import load_thresholds
from contam_cli.report import Report
from contam_cli.text import NormConfig

err_console = Console(stderr=True, highlight=False, soft_wrap=True)

EXIT_CLEAN, EXIT_FOUND, EXIT_ERROR = 0, 1, 2

# -- shared options (declared once, used by scan and clean) --------------------------------------

EvalArg = Annotated[
    list[Path],
    typer.Argument(
        help="Eval set(s): .jsonl .json .txt, a directory, compressed or not.", show_default=False
    ),
]
CorpusOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--corpus",
        "-c",
        help="Corpus file or directory (repeatable; together one source named 'corpus').",
        show_default=False,
    ),
]
SourceOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--source",
        "-s",
        help="Named corpus source NAME=PATH (repeatable); results are kept per source.",
        show_default=False,
    ),
]
NgramOpt = Annotated[int, typer.Option("--ngram-size", "-n", min=1, help="n-gram size in tokens.")]
FieldOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--field",
        help="Eval text field, dotted path (repeatable; joined with newlines). Default: auto.",
        show_default=False,
    ),
]
CorpusFieldOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--corpus-field",
        help="Corpus text field, dotted path (repeatable). Default: auto-detect.",
        show_default=False,
    ),
]
IdFieldOpt = Annotated[
    str | None,
    typer.Option(
        "--id-field",
        help="Eval id field, dotted path. Default: id-like keys, else the line number.",
        show_default=False,
    ),
]
RolesOpt = Annotated[
    str | None,
    typer.Option(
        "--roles",
        help="Chat roles to keep, comma-separated (e.g. user,assistant). Default: all turns.",
        show_default=False,
    ),
]
IncludeOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--include",
        help="Only files matching this glob in directories (repeatable).",
        show_default=False,
    ),
]
ExcludeOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--exclude",
        help="Skip files matching this glob in directories (repeatable).",
        show_default=False,
    ),
]
MinOverlapOpt = Annotated[
    float,
    typer.Option("--min-overlap", min=0.0, max=1.0, help="Flag when overlap fraction >= this."),
]
MinRunOpt = Annotated[
    int, typer.Option("--min-run", min=1, help="Flag when the longest exact run (tokens) >= this.")
]
ThresholdOpt = Annotated[
    float | None,
    typer.Option(
        "--threshold",
        help="Also flag overlap z-score outliers >= Z among examples with a match (default: off).",
        show_default=False,
    ),
]
ThresholdsOpt = Annotated[
    Path | None,
    typer.Option(
        "--thresholds",
        help="Per-source thresholds JSON (from contam calibrate).",
        show_default=False,
    ),
]
JobsOpt = Annotated[
    int,
    typer.Option("--jobs", "-j", min=0, help="Worker processes for corpus shards (0 = all cores)."),
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
        "--report", help="Write the JSON report to this path (atomically).", show_default=False
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


def text_spec(fields: list[str] | None, roles: str | None, id_field: str | None = None) -> TextSpec:
    role_list = tuple(r.strip() for r in roles.split(",") if r.strip()) if roles else None
    return TextSpec(fields=tuple(fields or ()), roles=role_list, id_field=id_field)


def norm_config(no_nfkc: bool, no_casefold: bool) -> NormConfig:
    return NormConfig(nfkc=not no_nfkc, casefold=not no_casefold)


def corpus_argument(corpus: list[Path] | None, sources: list[str] | None) -> dict[str, list[Path]]:
    """--corpus paths form the source 'corpus'; --source NAME=PATH adds named sources."""
    out: dict[str, list[Path]] = {}
    if corpus:
        out["corpus"] = list(corpus)
    for spec in sources or ():
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise UsageError(f"--source expects NAME=PATH, got {spec!r}")
        out.setdefault(name, []).append(Path(path))
    if not out:
        raise UsageError("no corpus given: use --corpus PATH or --source NAME=PATH")
    return out


def flag_policy(
    min_overlap: float, min_run: int, threshold: float | None, thresholds: Path | None
) -> FlagPolicy:
    per_source = load_thresholds(thresholds) if thresholds else {}
    return FlagPolicy(
        min_overlap=min_overlap, min_run=min_run, zscore=threshold, thresholds=per_source
    )


def write_table(text: str, contaminated: bool) -> None:
    """A rendered table on stdout: as it is into a pipe or file, coloured on a terminal (the
    flags and the summary line)."""
    if not sys.stdout.isatty():
        sys.stdout.write(text)
        return
    out = Console(highlight=False, soft_wrap=True)
    body, _, summary = text.rstrip("\n").rpartition("\n")
    if body:
        shown = Text(body)
        shown.highlight_words(["FLAGGED"], style="bold red")
        out.print(shown)
    out.print(Text(summary, style="bold red" if contaminated else "bold green"))


def print_warnings(report: Report) -> None:
    """The report's warnings, one line each on stderr (they are in the JSON report too)."""
    for w in report.warnings:
        err_console.print(f"contam: warning: {w}", markup=False)


@contextmanager
def handle_errors(debug: bool) -> Iterator[None]:
    """Turn every failure into one line on stderr and exit code 2 (never 0 or 1)."""
    try:
        yield
    except typer.Exit:
        raise
    except ContamError as e:
        if debug:
            traceback.print_exc()
        err_console.print(f"contam: error: {e}", markup=False)
        raise typer.Exit(EXIT_ERROR) from None
    except KeyboardInterrupt:
        err_console.print("contam: interrupted; nothing was written", markup=False)
        raise typer.Exit(EXIT_ERROR) from None
    except Exception as e:  # noqa: BLE001 - a crash must still exit 2, never 0 or 1
        if debug:
            traceback.print_exc()
        err_console.print(
            f"contam: internal error: {type(e).__name__}: {e} (rerun with --debug)", markup=False
        )
        raise typer.Exit(EXIT_ERROR) from None


@contextmanager
def progress_bar(
    enabled: bool | None, total: int, label: str
) -> Iterator[Callable[[int], None] | None]:
    """A Rich progress bar on stderr; yields a callback taking a byte count (or None)."""
    show = sys.stderr.isatty() if enabled is None else enabled
    if not show or total <= 0:
        yield None
        return
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=err_console,
        transient=True,
    ) as bar:
        task = bar.add_task(label, total=total)
        yield lambda k: bar.advance(task, k)


def tune_allocator() -> None:
    """Keep freed chunk-sized arrays in the heap instead of returning them to the OS.

    NOTE: every corpus chunk allocates and frees a few MB of temporaries; with glibc's defaults
    those are fresh mmaps, and page faults then cost about a sixth of a scan's time (measured
    with scripts/bench_scan.py). Only the command line does this: a library must not change
    process-wide settings. A no-op outside glibc.
    """
    import ctypes
    import ctypes.util

    if sys.platform != "linux":
        return
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return
    m_trim_threshold, m_mmap_threshold = -1, -3
    # Chunk temporaries (up to a few MB) stay in the heap; big arrays (an eval index for 100k
    # examples) are still mapped separately, so freeing them returns the memory.
    mallopt(m_mmap_threshold, 16 << 20)
    mallopt(m_trim_threshold, 64 << 20)


def scan_options(
    *,
    ngram_size: int,
    no_nfkc: bool,
    no_casefold: bool,
    field: list[str] | None,
    corpus_field: list[str] | None,
    id_field: str | None,
    roles: str | None,
    include: list[str] | None,
    exclude: list[str] | None,
    chunk_size: int,
    jobs: int,
    redact: bool,
    **more: Any,
) -> ScanOptions:
    """The ScanOptions of the options scan and clean share (`more`: other ScanOptions fields)."""
    return ScanOptions(
        n=ngram_size,
        norm=norm_config(no_nfkc, no_casefold),
        eval_spec=text_spec(field, roles, id_field),
        corpus_spec=text_spec(corpus_field, roles),
        include=tuple(include or ()),
        exclude=tuple(exclude or ()),
        chunk_bytes=chunk_size,
        jobs=jobs,
        redact=redact,
        **more,
    )
