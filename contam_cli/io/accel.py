"""The switch for every optional compiled kernel (numba, extra ``fast``), and its cache's upkeep.

Kernel modules (``_kernels.py`` and the like) import numba at their top; they are imported only
through :func:`load`, so that without numba (or with ``CONTAM_ACCEL=0``) nothing compiled runs
and nothing imports numba.

numba's on-disk cache (``cache=True``) is keyed by the source of the file that defines each
function, not by the files it imports: a kernel calling a function (or reading a constant) of
another module would keep running the old code after that module changed -- in a checkout, or
after an upgrade that leaves the cache files behind. So :func:`load` stamps each kernel module's
cache with a digest of its own source and of every module of the package it imports from (and
so on), and empties that module's cache index when the stamp differs.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from contam_cli.errors import OutputError
from contam_cli.io.output import write_atomic

__all__ = ["MIN_BYTES", "chosen", "enabled", "load"]

MIN_BYTES = 24 << 20
"""Below this much input on disk (corpus and eval files together) a run does without the compiled
kernels: their start (numba's import and its first load of a cached kernel) is then more than
they save. ``python scripts/bench_kernel_choice.py`` (``--jobs 1``, mean CPU s of three runs):
16 MB 0.66 with them against 0.64 without, 32 MB 0.75 against 0.88, 64 MB 0.89 against 1.35,
128 MB 1.11 against 2.21, so the two cross a little above 16 MB. (Before the kernels loaded
without numba's context refresh, 0.12 s more with them at every size in the same session.)"""


@functools.cache
def enabled() -> bool:
    """Whether compiled kernels can be used: numba is installed and CONTAM_ACCEL is not 0."""
    if os.environ.get("CONTAM_ACCEL", "1") == "0":
        return False
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def chosen(accel: bool | None, nbytes: int) -> bool:
    """Whether a run over `nbytes` of input uses the compiled kernels: `accel` when given (True
    fails later if numba is missing), else when the input reaches MIN_BYTES and they are
    :func:`enabled`. A run decides once and hands the answer to its tokenizers and workers."""
    if accel is not None:
        return accel
    return nbytes >= MIN_BYTES and enabled()


def load(module: str) -> ModuleType | None:
    """The kernel module `module` (imported on first use), or None when kernels are off."""
    if not enabled():
        return None
    mod = importlib.import_module(module)
    _fresh_cache(module)
    return mod


@functools.cache
def _fresh_cache(module: str) -> None:
    """Empty the cache index of `module`'s compiled functions (and of the modules it imports
    from, in turn) if their sources changed since it was stamped; then stamp it."""
    mod = sys.modules[module]
    deps = _package_imports(mod)
    for dep in deps:
        importlib.import_module(dep)
        _fresh_cache(dep)
    cached = [
        f
        for f in vars(mod).values()
        if getattr(getattr(f, "py_func", None), "__module__", None) == module
        and hasattr(getattr(f, "_cache", None), "_cache_path")
    ]
    if not cached:
        return
    _load_without_refresh(cached)
    import numba

    digest = hashlib.sha256(numba.__version__.encode())
    for name in [module, *sorted(_closure(module))]:
        digest.update(name.encode() + b"\0" + _source(sys.modules[name]) + b"\0")
    stamp = digest.hexdigest()
    path = Path(cached[0]._cache._cache_path) / f"{module.rsplit('.', 1)[-1]}.contam-stamp"
    try:
        if path.read_text() == stamp:
            return
    except OSError:
        pass
    for f in cached:
        f._cache.flush()
    _write(path, stamp)


def _load_without_refresh(functions: list[Any]) -> None:
    """Let each of `functions` load its cached machine code without numba's context refresh.

    NOTE: numba refreshes its typing and target contexts before every load from its cache. The
    first refresh in a process imports and installs every registry numba has (its NumPy,
    cmath, random, typed containers and the rest: 0.25 s here), although a cached function's
    code is already compiled and linked, and needs only the runtime (NRT) that the refresh
    also starts. That was the largest part of a scan's serial start, paid before any worker
    can fork. So each kernel's cache loads after starting the runtime alone; a cache miss
    still compiles through numba's compiler, which refreshes both contexts itself. Where
    numba's cache lacks the methods this relies on, the loads stay numba's own.
    """
    try:
        from numba.core.runtime import rtsys
    except ImportError:  # pragma: no cover - numba without its runtime module
        return
    for f in functions:
        cache = f._cache
        if not all(
            hasattr(cache, m) for m in ("_load_overload", "_guard_against_spurious_io_errors")
        ):
            continue

        def load_overload(sig: Any, target_context: Any, cache: Any = cache) -> Any:
            rtsys.initialize(target_context)
            loaded = None  # NOTE: kept when the guard swallows an I/O error: numba then compiles
            with cache._guard_against_spurious_io_errors():
                loaded = cache._load_overload(sig, target_context)
            return loaded

        cache.load_overload = load_overload


def _closure(module: str) -> set[str]:
    """Every module of the package that `module` imports from, directly or not."""
    out: set[str] = set()
    todo = [module]
    while todo:
        for dep in _package_imports(sys.modules[todo.pop()]):
            if dep not in out:
                out.add(dep)
                importlib.import_module(dep)
                todo.append(dep)
    out.discard(module)
    return out


def _package_imports(mod: ModuleType) -> list[str]:
    """The modules of `mod`'s top-level package named by its top-level ``from ... import``
    statements (where kernel modules take the functions and constants they compile in)."""
    return list(_imports_of(mod.__name__))


@functools.cache
def _imports_of(module: str) -> tuple[str, ...]:
    mod = sys.modules[module]
    top = module.split(".")[0] + "."
    names = [
        node.module
        for node in ast.parse(_source(mod)).body
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(top)
    ]
    return tuple(n for n in dict.fromkeys(names) if importlib.util.find_spec(n) is not None)


def _source(mod: ModuleType) -> bytes:
    file: Any = getattr(mod, "__file__", None)
    return Path(file).read_bytes() if file else b""


def _write(path: Path, text: str) -> None:
    """Write the stamp whole or not at all (a cache directory may be read-only: then numba
    keeps its cache elsewhere, or none, and the next run checks again)."""
    try:
        write_atomic(path, text)
    except (OSError, OutputError):
        pass
