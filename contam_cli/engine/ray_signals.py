"""The caller's Ctrl-C and SIGTERM handlers kept through Ray's start and shut-down.

``ray.init`` installs handlers of its own for SIGTERM (``sys.exit(15)`` while it connects, then,
for a local Ray it starts, one that stops Ray's processes and exits 1) and Ray's core worker a
C-level one that writes a stack dump: a ``contam ... --engine ray`` run then ended 15 or 1
without its one line, and the local Ray's agents could outlive it. :func:`signals_kept` keeps
the caller's handlers in place, so SIGTERM raises :class:`~contam_cli.errors.Terminated` and
Ctrl-C KeyboardInterrupt where the run is, the executor's cleanups run, and Ray is shut down.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["signals_kept"]

_STOPPING = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM") if hasattr(signal, name))


@contextmanager
def signals_kept() -> Iterator[None]:
    """Ray starts (or stops) inside this block with the caller's signal handlers as they were
    before it; a Ctrl-C or SIGTERM arriving meanwhile waits until the block is done, then goes
    to the caller's handler (half a start is not left behind: the caller shuts Ray down).

    NOTE: Ray installs its Python handlers through ``ray._private.utils.set_sigterm_handler``
    (Ray 2.9 to 2.60 at least), a no-op while the block runs; and the core worker it creates
    installs its C-level crash handler (SIGTERM among the signals) unless
    ``ray_constants.RAY_DISABLE_FAILURE_SIGNAL_HANDLER``, set while the block runs (for this
    process, the driver, alone: Ray's own processes read their environment): the driver's
    shut-down then left SIGTERM at the default action for a second (the process killed
    outright, nothing cleaned up), and a SIGTERM met a stack dump first. Where a Ray
    lacks either name, the handlers are still put back when the block ends. Outside the main
    thread signals are not this thread's to handle: the block runs as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    # NOTE: a handler set outside Python (None) could not be put back: left alone.
    saved = {sig: h for sig in _STOPPING if (h := signal.getsignal(sig)) is not None}
    for sig in saved:
        signal.signal(sig, lambda signum, frame: caught.append(signum))
    patches = [
        (sys.modules.get("ray._private.utils"), "set_sigterm_handler", _not_set),
        (sys.modules.get("ray._private.ray_constants"), "RAY_DISABLE_FAILURE_SIGNAL_HANDLER", True),
    ]
    before = [_patched(module, name, value) for module, name, value in patches]
    try:
        yield
    finally:
        for (module, name, _), old in zip(patches, before):
            _patched(module, name, old)
        for sig, handler in saved.items():
            # NOTE: this also puts back Python's C-level handler over the core worker's.
            signal.signal(sig, handler)
        for sig in dict.fromkeys(caught):
            signal.raise_signal(sig)


_ABSENT = object()


def _patched(module: Any, name: str, value: Any) -> Any:
    """Set `module`'s `name` to `value` where the module has one; what it was (or _ABSENT)."""
    old = getattr(module, name, _ABSENT)
    if old is not _ABSENT and value is not _ABSENT:
        setattr(module, name, value)
    return old


def _not_set(handler: Any) -> None:
    return None
