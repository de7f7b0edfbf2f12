"""The input caps and the time budget of ``contam app``, from its options or the environment.

A hosted page is shared: one visitor's 2 GB corpus must not take the container down for
everyone. The caps are checked on the server on byte lengths alone, before anything is parsed
(a compressed upload's on what it decompresses to, too:
:func:`contam_cli.app.inputs.expanded_size`); the time budget stops a scan that runs over (see
:mod:`contam_cli.app.run`).

>>> Limits.from_env({"CONTAM_APP_MAX_SECONDS": "5"}).max_seconds
5.0
>>> Limits(max_eval_bytes=100).check("eval", 150)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
contam_cli.errors.UsageError: eval: 150 bytes is more than this server accepts (100 bytes). ...
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from contam_cli.errors import ArgumentError, UsageError

__all__ = [
    "DEFAULT_CORPUS_BYTES",
    "DEFAULT_EVAL_BYTES",
    "DEFAULT_SECONDS",
    "ENV_CORPUS",
    "ENV_EVAL",
    "ENV_SECONDS",
    "MB",
    "Limits",
    "human_size",
]

T = TypeVar("T", int, float)

MB = 1 << 20
"""A megabyte as Streamlit counts one (``server.maxUploadSize``)."""
#: Defaults that keep a small shared container (about 1 GB of memory) alive.
DEFAULT_EVAL_BYTES = 4 * MB
DEFAULT_CORPUS_BYTES = 32 * MB
DEFAULT_SECONDS = 20.0
ENV_EVAL = "CONTAM_APP_MAX_EVAL_BYTES"
ENV_CORPUS = "CONTAM_APP_MAX_CORPUS_BYTES"
ENV_SECONDS = "CONTAM_APP_MAX_SECONDS"


def human_size(n: int) -> str:
    """``1536`` -> ``'1.5 KB'``; sizes below a kilobyte in bytes.

    >>> human_size(4 * MB), human_size(999)
    ('4.0 MB', '999 bytes')
    """
    if n < 1024:
        return f"{n} bytes"
    if n < MB:
        return f"{n / 1024:.1f} KB"
    return f"{n / MB:.1f} MB"


@dataclass(frozen=True)
class Limits:
    """What one scan of the page may use: eval bytes, corpus bytes (all inputs together), and
    seconds of scanning."""

    max_eval_bytes: int = DEFAULT_EVAL_BYTES
    max_corpus_bytes: int = DEFAULT_CORPUS_BYTES
    max_seconds: float = DEFAULT_SECONDS

    def __post_init__(self) -> None:
        for name in ("max_eval_bytes", "max_corpus_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ArgumentError(f"{name} must be a whole number of bytes >= 1, got {value!r}")
        seconds = self.max_seconds
        ok = isinstance(seconds, (int, float)) and not isinstance(seconds, bool)
        if not ok or not math.isfinite(seconds) or seconds <= 0:
            raise ArgumentError(f"max_seconds must be a number of seconds > 0, got {seconds!r}")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Limits:
        """The limits set by ``CONTAM_APP_MAX_EVAL_BYTES``, ``..._CORPUS_BYTES`` and
        ``..._SECONDS`` (the defaults for those unset); a bad value is a UsageError naming it."""
        env = os.environ if env is None else env
        return cls(
            max_eval_bytes=_number(env, ENV_EVAL, DEFAULT_EVAL_BYTES, int),
            max_corpus_bytes=_number(env, ENV_CORPUS, DEFAULT_CORPUS_BYTES, int),
            max_seconds=_number(env, ENV_SECONDS, DEFAULT_SECONDS, float),
        )

    def to_env(self) -> dict[str, str]:
        """The environment that gives these limits to the page (see :meth:`from_env`)."""
        return {
            ENV_EVAL: str(self.max_eval_bytes),
            ENV_CORPUS: str(self.max_corpus_bytes),
            ENV_SECONDS: repr(float(self.max_seconds)),
        }

    @property
    def upload_mb(self) -> int:
        """Streamlit's ``server.maxUploadSize`` (MB per file): the larger cap, rounded up."""
        return max(1, math.ceil(max(self.max_eval_bytes, self.max_corpus_bytes) / MB))

    @property
    def message_mb(self) -> int:
        """Streamlit's ``server.maxMessageSize`` (MB): pasted text travels in one message with
        every widget's value, so room for both caps and a margin for the rest."""
        return max(2, math.ceil(2 * (self.max_eval_bytes + self.max_corpus_bytes) / MB))

    def check(self, what: str, size: int) -> None:
        """A UsageError when `size` bytes of `what` (``eval`` or ``corpus``) is over its cap."""
        cap = self.max_eval_bytes if what == "eval" else self.max_corpus_bytes
        if size > cap:
            given, most = human_size(size), human_size(cap)
            if given == most:  # NOTE: 2,002 bytes against 2,000 would read "2.0 KB ... (2.0 KB)"
                given, most = f"{size:,} bytes", f"{cap:,} bytes"
            raise UsageError(
                f"{what}: {given} is more than this server accepts ({most}). For larger "
                "inputs run `contam scan` on your own machine (no limits there)."
            )

    def describe(self) -> str:
        return (
            f"eval up to {human_size(self.max_eval_bytes)}, corpus up to "
            f"{human_size(self.max_corpus_bytes)}, {self.max_seconds:g} s per scan"
        )


def _number(env: Mapping[str, str], name: str, default: T, kind: Callable[[str], T]) -> T:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        return kind(raw)
    except ValueError:
        raise UsageError(f"{name}={raw!r}: expected a number") from None
