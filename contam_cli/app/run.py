"""The page's scan: the library's calls on bytes in memory, in a child process with a time budget.

:func:`scan_request` is what the command line does, on named bytes: the records read as files
of those names would be (:func:`contam_cli.io.memory.records_from_bytes`), :func:`contam_cli.scan`,
the eval texts attached, and the outputs rendered by the same renderers (table, JSON, HTML) with
the cleaned eval set beside them.

:func:`run_scan` runs it in a child process (spawned: the server runs threads), the
request and the outcome passing through a pipe (never a file), and kills the child when it runs
past the time budget, so a scan too big for the server ends with a message instead of a hung
page. At most :data:`MAX_PARALLEL` scans run at once in one server.
"""

from __future__ import annotations

import multiprocessing
import signal
import threading
import time
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from typing import Any

from contam_cli.app.inputs import NamedBytes
from contam_cli.engine.executor import start_method
from contam_cli.engine.options import ScanOptions
from contam_cli.errors import ContamError, UsageError
from contam_cli.features.clean.memory import cleaned_eval_bytes
from contam_cli.features.eval_side import eval_warnings
from contam_cli.features.eval_texts import attach_eval_texts
from contam_cli.features.scan import scan
from contam_cli.io.extract import TextSpec
from contam_cli.io.memory import check_roles_in_memory, records_from_bytes
from contam_cli.io.model import ReadNotes
from contam_cli.io.output import split_compression
from contam_cli.policy import FlagPolicy
from contam_cli.render.html import render_html
from contam_cli.render.json import iter_json
from contam_cli.render.table import evidence_where, render_table
from contam_cli.report import Report

__all__ = ["MAX_PARALLEL", "ScanOutcome", "ScanRequest", "Settings", "run_scan", "scan_request"]

#: Scans one server runs at once; others wait for a slot (within their time budget).
MAX_PARALLEL = 2
_SLOTS = threading.BoundedSemaphore(MAX_PARALLEL)


@dataclass(frozen=True)
class Settings:
    """The page's scan settings (the command line's ``-n --min-overlap --min-run --roles``)."""

    n: int = 13
    min_overlap: float = 0.5
    min_run: int = 30
    roles: tuple[str, ...] | None = None


@dataclass(frozen=True)
class ScanRequest:
    eval: NamedBytes
    corpus: tuple[NamedBytes, ...]
    settings: Settings = Settings()


@dataclass(frozen=True)
class ScanOutcome:
    """Everything the page shows and offers for download, as plain values."""

    rows: tuple[dict[str, Any], ...]
    """Scorable examples, most suspicious first: id, overlap, run, z, flag, reasons, where."""
    unscorable: tuple[dict[str, Any], ...]
    summary: str
    contaminated: bool
    warnings: tuple[str, ...]
    table: str
    json: bytes
    html: str
    cleaned: bytes
    flagged_only: bytes
    cleaned_name: str
    flagged_name: str
    seconds: float


def scan_request(request: ScanRequest) -> ScanOutcome:
    """The scan of `request`, in this process (see the module docstring)."""
    started = time.perf_counter()
    s = request.settings
    spec = TextSpec(roles=s.roles)
    check_roles_in_memory(
        [(x.data, x.name) for x in (request.eval, *request.corpus)], s.roles, "inputs"
    )
    notes = ReadNotes()
    ev = request.eval
    eval_records = records_from_bytes(ev.data, ev.name, role="eval", spec=spec, notes=notes)
    corpus = [
        r
        for x in request.corpus
        for r in records_from_bytes(x.data, x.name, role="corpus", spec=spec, notes=notes)
    ]
    opts = ScanOptions(n=s.n, eval_spec=spec, corpus_spec=spec, jobs=1)
    policy = FlagPolicy(min_overlap=s.min_overlap, min_run=s.min_run)
    report = scan(eval_records, corpus, policy=policy, options=opts)
    report = attach_eval_texts(report, eval_records, opts)
    # NOTE: records in memory carry no reading notes into scan(): its warning for files read
    # with lone surrogate escapes, added here for the named inputs.
    replaced = [{"path": p, "lone_surrogates": n} for p, n in sorted(notes.surrogates.items())]
    report = replace(report, warnings=(*report.warnings, *eval_warnings(replaced)))
    return _outcome(report, request.eval, spec, time.perf_counter() - started)


def _outcome(report: Report, eval: NamedBytes, spec: TextSpec, seconds: float) -> ScanOutcome:
    base = split_compression(eval.name)[0]
    stem, dot, ext = base.rpartition(".")
    stem = stem if dot else base
    return ScanOutcome(
        rows=tuple(_row(e) for e in report.ranked()),
        unscorable=tuple(
            {"id": e.id, "tokens": e.n_tokens, "where": f"{e.eval_path}:{e.eval_line}"}
            for e in report.unscorable
        ),
        summary=report.summary_line(),
        contaminated=report.contaminated,
        warnings=tuple(report.warnings),
        table=render_table(report, flagged_rows=None),
        json=b"".join(iter_json(report)),
        html=render_html(report),
        cleaned=cleaned_eval_bytes(eval.data, eval.name, report, spec=spec),
        flagged_only=cleaned_eval_bytes(eval.data, eval.name, report, spec=spec, dirty=True),
        cleaned_name=f"{stem}.clean{dot}{ext}",
        flagged_name=f"{stem}.flagged{dot}{ext}",
        seconds=seconds,
    )


def _row(e: Any) -> dict[str, Any]:
    return {
        "id": e.id,
        "overlap": None if e.overlap_fraction is None else round(e.overlap_fraction, 3),
        "run": e.longest_run,
        "z": None if e.zscore is None else round(e.zscore, 2),
        "flag": "FLAGGED" if e.flagged else "",
        "reasons": "; ".join(str(r) for r in e.reasons),
        "where": evidence_where(e.evidence),
    }


# -- the child process -------------------------------------------------------------------------


def _context() -> Any:
    # NOTE: the server runs threads (one per session, and its event loop), so no child is
    # forked from it: a lock one of them held would stay held in the child, stuck until the
    # budget killed it. Each child is spawned, a fresh interpreter (a few tenths of a second
    # of imports per scan; the request goes through the pipe either way).
    return multiprocessing.get_context(start_method(threaded=True))


def _child(conn: Connection) -> None:
    """The child's whole life: one request in, one outcome (or error) out."""
    try:
        # NOTE: a forked child holds the server's signal handlers and wakeup fd; a Ctrl-C
        # in the terminal must end it, not reach the server's event loop through the fd.
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    except (ValueError, OSError):
        pass
    try:
        request = conn.recv()
        conn.send(("ok", scan_request(request)))
    except ContamError as e:
        conn.send(("error", e))
    except MemoryError:
        conn.send(("error", UsageError("the scan ran out of memory on this server")))
    except Exception as e:  # noqa: BLE001 - reported to the page, never a silent end
        conn.send(("crash", f"{type(e).__name__}: {e}"))
    finally:
        conn.close()


def run_scan(request: ScanRequest, max_seconds: float) -> ScanOutcome:
    """:func:`scan_request` in a child process, stopped after `max_seconds` (a UsageError
    saying so); the child's errors are raised here as they are."""
    if not _SLOTS.acquire(timeout=max_seconds):
        raise UsageError("the server is busy with other scans; try again in a minute")
    try:
        kind, value = _in_child(request, max_seconds)
    finally:
        _SLOTS.release()
    if kind == "ok":
        return value  # type: ignore[no-any-return]
    if kind == "error":
        raise value
    raise ContamError(f"internal error: {value}")


def _in_child(request: ScanRequest, max_seconds: float) -> tuple[str, Any]:
    ctx = _context()
    ours, theirs = ctx.Pipe(duplex=True)
    proc = ctx.Process(target=_child, args=(theirs,), daemon=True, name="contam-app-scan")
    deadline = time.monotonic() + max_seconds
    proc.start()
    theirs.close()
    # NOTE: sent from a thread, so that a child that never reads cannot block the page past
    # the budget (a big request fills the pipe); killing the child ends the send.
    sender = threading.Thread(target=_send, args=(ours, request), daemon=True)
    sender.start()
    try:
        if not ours.poll(max(0.0, deadline - time.monotonic())):
            raise UsageError(
                f"the scan ran past this server's time budget of {max_seconds:g} s and was "
                "stopped. Try a smaller corpus, or run `contam scan` on your own machine "
                "(no limits there)."
            )
        return ours.recv()  # type: ignore[no-any-return]
    except EOFError:
        raise UsageError("the scan stopped unexpectedly (out of memory on this server?)") from None
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()
        # NOTE: the child is gone, so the send has ended too; only then is the pipe closed.
        sender.join(timeout=5)
        ours.close()


def _send(conn: Connection, request: ScanRequest) -> None:
    try:
        conn.send(request)
    except (OSError, ValueError):
        pass  # NOTE: the child was killed (or ended) before reading it all
