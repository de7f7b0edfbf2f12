"""`contam app`: serve the browser page (Streamlit) on this machine; exit 2 without the extra."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from typing import Annotated

import typer

from contam_cli.app.launch import streamlit_argv
from contam_cli.app.limits import (
    DEFAULT_CORPUS_BYTES,
    DEFAULT_EVAL_BYTES,
    DEFAULT_SECONDS,
    ENV_CORPUS,
    ENV_EVAL,
    ENV_SECONDS,
    Limits,
)
from contam_cli.cli import common as c
from contam_cli.errors import MissingExtraError

HostOpt = Annotated[
    str,
    typer.Option(
        "--host",
        metavar="ADDRESS",
        help="Address to listen on (0.0.0.0: every interface, e.g. in a container).",
    ),
]
PortOpt = Annotated[
    int, typer.Option("--port", min=1, max=65535, metavar="PORT", help="Port to listen on.")
]
MaxEvalOpt = Annotated[
    int,
    typer.Option(
        "--max-eval-bytes",
        min=1,
        envvar=ENV_EVAL,
        metavar="N",
        help="Largest eval input accepted, in bytes (checked before parsing).",
    ),
]
MaxCorpusOpt = Annotated[
    int,
    typer.Option(
        "--max-corpus-bytes",
        min=1,
        envvar=ENV_CORPUS,
        metavar="N",
        help="Largest corpus accepted, all pasted text and files together, in bytes.",
    ),
]
MaxSecondsOpt = Annotated[
    float,
    typer.Option(
        "--max-seconds",
        min=0.001,
        envvar=ENV_SECONDS,
        metavar="S",
        help="Time budget of one scan; a scan past it is stopped with a message.",
    ),
]


def app_command(
    host: HostOpt = "127.0.0.1",
    port: PortOpt = 8501,
    max_eval_bytes: MaxEvalOpt = DEFAULT_EVAL_BYTES,
    max_corpus_bytes: MaxCorpusOpt = DEFAULT_CORPUS_BYTES,
    max_seconds: MaxSecondsOpt = DEFAULT_SECONDS,
    debug: c.DebugOpt = False,
) -> None:
    """Serve the browser page: paste or upload eval examples and a corpus, get the per-example
    table, the evidence and the downloads. Input is processed in memory only.

    Runs until stopped (Ctrl-C). Exit code 2: streamlit missing (pip install "contam-cli[app]")
    or a bad option.
    """
    with c.handle_errors(debug):
        if importlib.util.find_spec("streamlit") is None:
            raise MissingExtraError("streamlit", "app")
        limits = Limits(max_eval_bytes, max_corpus_bytes, max_seconds)
        argv = streamlit_argv(host, port, limits)
        env = {**os.environ, **limits.to_env()}
    c.err_console.print(
        f"contam app: http://{host}:{port} ({limits.describe()}); Ctrl-C stops it", markup=False
    )
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "posix":
        # NOTE: the server takes this process's place, so a signal to it (Ctrl-C, SIGTERM
        # from a container runtime) reaches Streamlit itself.
        os.execve(argv[0], argv, env)
    raise typer.Exit(subprocess.call(argv, env=env))
