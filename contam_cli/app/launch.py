"""How the page's server is started and kept private: Streamlit's command line and settings.

``contam app`` runs ``python -m streamlit run PAGE`` with :func:`streamlit_argv`: bound to the
address asked for, headless, Streamlit's usage statistics off, uploads and websocket messages
capped by the limits, no file watching, error details kept off the page, and no welcome
message (which looks up the machine's external address on the network).

:func:`keep_uploads_in_memory` is called by the page itself in the server process: Streamlit's
Starlette server parses an upload with ``python-multipart`` into a spooled temporary file that
goes to disk past 1 MB; raising the spool limit to the upload cap keeps every upload in memory.
"""

from __future__ import annotations

import sys
from pathlib import Path

from contam_cli.app.limits import Limits

__all__ = ["PAGE", "keep_uploads_in_memory", "streamlit_argv", "streamlit_flags"]

PAGE = Path(__file__).with_name("page.py")
"""The Streamlit script of the page."""


def streamlit_flags(host: str, port: int, limits: Limits) -> list[str]:
    """Streamlit's options for a private, bounded server (``--name value`` pairs)."""
    options = {
        "server.address": host,
        "server.port": str(port),
        "server.headless": "true",
        "browser.gatherUsageStats": "false",
        "server.maxUploadSize": str(limits.upload_mb),
        "server.maxMessageSize": str(limits.message_mb),
        # NOTE: nothing to watch in an installed package, and a watcher is a thread per file.
        "server.fileWatcherType": "none",
        "server.runOnSave": "false",
        "global.developmentMode": "false",
        # NOTE: a traceback on a public page can show a visitor's text; errors are one line.
        "client.showErrorDetails": "none",
        "client.toolbarMode": "minimal",
        # NOTE: Streamlit's welcome message, on a wildcard address (0.0.0.0, a container),
        # asks checkip.amazonaws.com for this machine's address; `contam app` prints its URL.
        "logger.hideWelcomeMessage": "true",
    }
    return [part for name, value in options.items() for part in (f"--{name}", value)]


def streamlit_argv(host: str, port: int, limits: Limits) -> list[str]:
    """The command that serves the page (this interpreter's Streamlit)."""
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(PAGE),
        *streamlit_flags(host, port, limits),
    ]


def keep_uploads_in_memory(max_bytes: int) -> None:
    """Make Starlette's multipart parser keep uploads of up to `max_bytes` in memory (see the
    module docstring); a no-op where Streamlit's server is not Starlette's."""
    try:
        from starlette.formparsers import MultiPartParser
    except ImportError:
        return
    if getattr(MultiPartParser, "spool_max_size", 0) < max_bytes:
        # NOTE: a class attribute that each parser reads as self.spool_max_size.
        MultiPartParser.spool_max_size = max_bytes
