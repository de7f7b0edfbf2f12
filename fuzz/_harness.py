"""What every fuzz target shares: the one allowed failure, and running a check under atheris.

A target is a module with ``check(data: bytes) -> None`` that raises AssertionError (or any
exception but the allowed ones) when contam misbehaves on `data`. ``main(check)`` runs it under
atheris (libFuzzer flags on the command line); tests/hardening/test_fuzz_regressions.py imports
the same targets and replays their inputs without atheris.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from contam_cli.errors import InputError

ALLOWED: tuple[type[BaseException], ...] = (InputError,)
"""The only exceptions a target may see: contam's own report of a bad input."""


def main(check: Callable[[bytes], None]) -> None:
    """Run `check` under atheris with this process's command line (libFuzzer flags)."""
    import atheris

    # NOTE: everything is imported by now (the target imported contam_cli); instrument it all,
    # so that coverage guides the fuzzer through the readers and the text code.
    atheris.instrument_all()
    atheris.Setup(sys.argv, check)
    atheris.Fuzz()
