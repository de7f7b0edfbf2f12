"""What every command shares: option declarations, error handling, progress, output writing."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

from contam_cli.cli.exits import (  # noqa: F401 - re-exported for the commands
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FOUND,
    err_console,
    handle_errors,
    say,
    stdout_guard,
)
from contam_cli.cli.options import (  # noqa: F401 - re-exported: commands use c.<Name>Opt
    ChunkOpt,
    CorpusFieldOpt,
    CorpusOpt,
    DebugOpt,
    EvalArg,
    ExcludeOpt,
    FieldOpt,
    FuzzyOpt,
    HtmlOpt,
    IdFieldOpt,
    IncludeOpt,
    JobsOpt,
    MinFuzzyOpt,
    MinOverlapOpt,
    MinRunOpt,
    NgramOpt,
    NoCasefoldOpt,
    NoCorpusHashOpt,
    NoFailOpt,
    NoNfkcOpt,
    ProgressOpt,
    RedactOpt,
    ReportOpt,
    RolesOpt,
    SarifOpt,
    SourceOpt,
    StdoutFileOpt,
    ThresholdOpt,
    ThresholdsOpt,
)
from contam_cli.cli.outputs import (  # noqa: F401 - re-exported for the commands
    Outputs,
    check_outputs,
    option_files,
    print_report,
    require_scored,
    write_table,
)
from contam_cli.engine.fuzzy.config import DEFAULT_MIN_FUZZY
from contam_cli.engine.options import ScanOptions
from contam_cli.errors import UsageError
from contam_cli.io import TextSpec
from contam_cli.io.discover import unread_warnings
from contam_cli.io.remote import Url, is_url
from contam_cli.policy import FlagPolicy
from contam_cli.policy.thresholds import load_thresholds
from contam_cli.report import Report
from contam_cli.text import NormConfig


def text_spec(fields: list[str] | None, roles: str | None, id_field: str | None = None) -> TextSpec:
    role_list = tuple(r.strip() for r in roles.split(",") if r.strip()) if roles else None
    return TextSpec(fields=tuple(fields or ()), roles=role_list, id_field=id_field)


def norm_config(no_nfkc: bool, no_casefold: bool) -> NormConfig:
    return NormConfig(nfkc=not no_nfkc, casefold=not no_casefold)


def corpus_argument(
    corpus: list[str] | None, sources: list[str] | None
) -> dict[str, list[Path | Url]]:
    """--corpus paths form the source 'corpus'; --source NAME=PATH adds named sources; a URL
    (s3://...) stays a URL."""
    out: dict[str, list[Path | Url]] = {}
    if corpus:
        out["corpus"] = [_location(p) for p in corpus]
    for spec in sources or ():
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise UsageError(f"--source expects NAME=PATH, got {spec!r}")
        out.setdefault(name, []).append(_location(path))
    if not out:
        raise UsageError("no corpus given: use --corpus PATH or --source NAME=PATH")
    return out


def _location(value: str) -> Path | Url:
    return Url(value) if is_url(value) else Path(value)


def local_paths(sources: dict[str, list[Path | Url]]) -> list[Path]:
    """The corpus paths on this machine: the inputs that no output may overwrite."""
    return [p for ps in sources.values() for p in ps if isinstance(p, Path)]


def flag_policy(
    min_overlap: float,
    min_run: int,
    threshold: float | None,
    thresholds: Path | None,
    min_fuzzy: float | None = DEFAULT_MIN_FUZZY,
) -> FlagPolicy:
    per_source = load_thresholds(thresholds) if thresholds else {}
    return FlagPolicy(
        min_overlap=min_overlap,
        min_run=min_run,
        zscore=threshold,
        thresholds=per_source,
        min_fuzzy=min_fuzzy,
    )


def warn_unread(inputs: Sequence[object], opts: ScanOptions) -> None:
    """A warning on stderr per directory of `inputs` holding files of no known format, which
    a command without a report passes over (scan's report carries the same warnings)."""
    for w in unread_warnings(inputs, opts.include, opts.exclude):
        say(f"contam: warning: {w}")


def print_warnings(report: Report) -> None:
    """The report's warnings, one line each on stderr (they are in the JSON report too)."""
    for w in report.warnings:
        say(f"contam: warning: {w}")


@contextmanager
def progress_bar(
    enabled: bool | None, total: int, label: str
) -> Iterator[Callable[[int], None] | None]:
    """A Rich progress bar on stderr; yields a callback taking a byte count (or None).

    NOTE: drawn from the callback, without Rich's refresh thread: a scan forks worker processes,
    and nothing may fork while another thread runs.
    """
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
        auto_refresh=False,
    ) as bar:
        task = bar.add_task(label, total=total)
        last = [0.0]

        def tick(k: int) -> None:
            bar.advance(task, k)
            now = time.monotonic()
            if now - last[0] >= 0.1:
                last[0] = now
                bar.refresh()

        yield tick


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
