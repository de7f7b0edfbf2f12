"""Errors the library raises; the CLI turns each into a one-line message and exit code 2."""

from __future__ import annotations


class ContamError(Exception):
    """Base class for every error contam reports to a user (exit code 2)."""


class InputError(ContamError):
    """Bad input: a malformed record, invalid UTF-8, a missing field, an empty file, duplicate ids.

    The message always starts with ``path:line:`` (or ``path:`` when no line applies), so a user can
    jump straight to the offending record.
    """

    def __init__(self, path: object, message: str, line: int | None = None) -> None:
        self.path = str(path)
        self.line = line
        self.detail = message
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")

    def __reduce__(self) -> tuple[type, tuple[str, str, int | None]]:
        # NOTE: errors raised in --jobs worker processes are pickled back to the parent.
        return (type(self), (self.path, self.detail, self.line))


class UsageError(ContamError):
    """A combination of options that cannot work (the CLI maps it to exit code 2)."""


class ArgumentError(UsageError, TypeError):
    """A library argument of the wrong type or value; the message names the argument.

    Also a TypeError, so callers that catch TypeError for bad arguments keep working.
    """


class OutputError(ContamError):
    """A refused or failed write: over an input, into an input directory, a non-empty directory."""


class IndexMismatchError(ContamError):
    """A persisted index was built with a different configuration than the one asked for."""


class MissingExtraError(ContamError):
    """An optional dependency is missing; the message names the extra to install."""

    def __init__(self, module: str, extra: str, path: str | None = None) -> None:
        self.module, self.extra, self.path = module, extra, path
        needs = f'needs the optional dependency {module!r}: pip install "contam-cli[{extra}]"'
        super().__init__(f"{path}: this {needs}" if path else f"this {needs}")

    def __reduce__(self) -> tuple[type, tuple[str, str, str | None]]:
        return (type(self), (self.module, self.extra, self.path))


class NothingScoredError(ContamError):
    """No eval example could be scored (every one shorter than n, say): a gate that checked
    nothing must not pass, so this is an error (exit 2), never a clean verdict."""


class Terminated(BaseException):
    """SIGTERM arrived (the command line raises it from its signal handler, so that every
    ``finally`` runs and no half-written output stays behind). Not an Exception, like
    KeyboardInterrupt."""
