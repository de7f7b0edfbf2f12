"""numba's cache is keyed by the defining file alone: load() must notice a changed dependency."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("numba")

_KERNEL = """
from numba import njit

from kpkg.dep import OFFSET, inner


@njit(cache=True)
def outer(x):
    return inner(x) + OFFSET
"""

_CALL = """
import sys
from contam_cli.io.accel import load
print(load("kpkg.kern").outer(1))
"""


def _dep(tmp: Path, body: str) -> None:
    (tmp / "kpkg" / "dep.py").write_text(textwrap.dedent(body))


def _run(tmp: Path) -> str:
    # NOTE: no .pyc files: rewritten within one second at the same size, a module's source
    # would be read from its stale .pyc.
    root = Path(__file__).resolve().parents[2]
    env = {"PYTHONPATH": f"{tmp}:{root}", "CONTAM_ACCEL": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run(
        [sys.executable, "-c", _CALL], env=env, capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def test_a_changed_dependency_is_compiled_again(tmp_path: Path) -> None:
    pkg = tmp_path / "kpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "kern.py").write_text(_KERNEL)
    jit = "from numba import njit\n\n\n@njit(cache=True)\ndef inner(x):\n"
    _dep(tmp_path, f"OFFSET = 10\n{jit}    return x\n")
    assert _run(tmp_path) == "11"
    assert _run(tmp_path) == "11"  # from the cache
    assert list((pkg / "__pycache__").glob("kern.contam-stamp"))
    _dep(tmp_path, f"OFFSET = 10\n{jit}    return x * 100\n")  # kern.py itself unchanged
    assert _run(tmp_path) == "110"
    _dep(tmp_path, f"OFFSET = 20\n{jit}    return x * 100\n")  # a constant it reads
    assert _run(tmp_path) == "120"


_ALLOCATING = """
import numpy as np
from numba import njit


@njit(cache=True)
def running(a):
    return np.cumsum(a * 2)  # allocates: needs numba's runtime (NRT)
"""

_COUNTED = """
import numpy as np
import numba.core.base as base
from contam_cli.io.accel import load

calls = []
real = base.BaseContext.refresh
base.BaseContext.refresh = lambda self: (calls.append(1), real(self))[1]
print(load("kpkg.alloc").running(np.arange(5)).tolist(), len(calls))
"""


def test_a_cached_kernel_loads_without_refreshing_numbas_contexts(tmp_path: Path) -> None:
    """The first run compiles (numba's compiler refreshes its contexts); a later one loads the
    machine code from the cache, starting only the runtime, and computes the same."""
    pkg = tmp_path / "kpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "alloc.py").write_text(_ALLOCATING)
    root = Path(__file__).resolve().parents[2]
    env = {"PYTHONPATH": f"{tmp_path}:{root}", "CONTAM_ACCEL": "1", "PYTHONDONTWRITEBYTECODE": "1"}

    def run() -> tuple[str, int]:
        out = subprocess.run(
            [sys.executable, "-c", _COUNTED], env=env, capture_output=True, text=True, check=True
        ).stdout.split("] ")
        return out[0] + "]", int(out[1])

    compiled, refreshes = run()
    assert compiled == "[0, 2, 6, 12, 20]" and refreshes > 0
    assert list((pkg / "__pycache__").glob("alloc.running-*.nbc"))
    assert run() == (compiled, 0)
