"""A Ray cluster's address checked before connecting: its form at once, its server in seconds.

Ray itself waits out its 30 s timeout on a ``ray://`` address that is malformed or where nobody
listens, and retries for minutes (a warning a second) on a ``HOST:PORT`` where no GCS answers;
here either is one :class:`~contam_cli.errors.ContamError` line, before any work.
"""

from __future__ import annotations

import os
import socket

from contam_cli.errors import ArgumentError, ContamError

__all__ = ["RAY_CLIENT_PORT", "check_reachable", "ray_address"]

RAY_CLIENT_PORT = 10001
"""The Ray Client server's port when ``ray start --head`` is not told another (Ray's default)."""

_CLIENT = "ray://"


def ray_address(address: str) -> str:
    """`address` as it is given to Ray: ``ray://HOST`` gets the Ray Client's default port
    (``ray://HOST:10001``); a host without a port in any other form, an empty host, an IPv6
    address outside brackets, or a port that is not a number from 1 to 65535 is refused
    (:class:`~contam_cli.errors.ArgumentError`). A word such as ``auto`` is left to Ray.

    >>> ray_address("ray://head"), ray_address("[::1]:6379"), ray_address("auto")
    ('ray://head:10001', '[::1]:6379', 'auto')
    """
    client = address.startswith(_CLIENT)
    rest = address.removeprefix(_CLIENT)
    if not client and ":" not in rest and not rest.startswith("["):
        return address  # NOTE: "auto", "local"; a bare host Ray refuses at once itself
    host, port = _split(address, rest)
    if not host.strip("[]"):
        raise ArgumentError(f"Ray address {address!r} names no host")
    if port is None:
        if not client:
            raise ArgumentError(f"Ray address {address!r} needs a port (the GCS's: HOST:6379)")
        return f"{address}:{RAY_CLIENT_PORT}"
    if not (port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
        raise ArgumentError(
            f"Ray address {address!r}: the port must be a number from 1 to 65535, got {port!r}"
        )
    return address


def _split(address: str, rest: str) -> tuple[str, str | None]:
    """(host, port or None) of `rest`, an address without its scheme."""
    if rest.startswith("["):
        end = rest.find("]")
        after = rest[end + 1 :] if end > 0 else "?"
        if after and not after.startswith(":"):
            raise ArgumentError(f"Ray address {address!r}: write an IPv6 host as [ADDRESS]:PORT")
        return rest[: end + 1], after[1:] if after else None
    if rest.count(":") > 1:
        raise ArgumentError(f"Ray address {address!r}: write an IPv6 host as [ADDRESS]:PORT")
    host, sep, port = rest.partition(":")
    return host, port if sep else None


def check_reachable(address: str, timeout: float = 10.0) -> None:
    """Fail in seconds on a ``HOST:PORT`` or ``ray://HOST:PORT`` (as :func:`ray_address` gives
    them) nobody listens on, or where what listens speaks no gRPC (a dashboard's port, say).
    ``auto`` and the like, and TLS clusters, are left to Ray.

    >>> check_reachable("auto")
    """
    rest = address.removeprefix(_CLIENT)
    if ":" not in rest:
        return
    host, port = _split(address, rest)
    try:
        with socket.create_connection((host.strip("[]"), int(port or 0)), timeout=timeout) as conn:
            if os.environ.get("RAY_USE_TLS", "0").lower() in ("0", "false", ""):
                # NOTE: HTTP/2's client preface and an empty SETTINGS frame; a gRPC server (the
                # GCS, the Ray Client server) answers with a frame of its own, type 4.
                conn.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\4\0\0\0\0\0")
                head = conn.recv(9, socket.MSG_WAITALL)
                if len(head) < 9 or head[3] != 4:
                    raise ContamError(f"no Ray cluster at {address}: it does not speak gRPC")
    except OSError as e:
        raise ContamError(f"cannot reach the Ray cluster at {address}: {e}") from None
