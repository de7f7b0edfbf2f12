"""`contam app`: Streamlit started with the caps and the private settings, or one line and exit 2
when the ``app`` extra is missing or an option is bad."""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from contam_cli.app import launch
from contam_cli.cli import app

cli_app = importlib.import_module("contam_cli.cli.app_page")
runner = CliRunner()


class Exec:
    """Stands in for os.execve: records the command instead of becoming it."""

    def __init__(self) -> None:
        self.argv: list[str] = []
        self.env: dict[str, str] = {}

    def __call__(self, path: str, argv: list[str], env: dict[str, str]) -> Any:
        assert path == argv[0]
        self.argv, self.env = list(argv), dict(env)
        raise SystemExit(0)


@pytest.fixture
def execs(monkeypatch: pytest.MonkeyPatch) -> Exec:
    fake = Exec()
    monkeypatch.setattr(os, "execve", fake)
    monkeypatch.setattr(os, "name", "posix")
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, *a: object() if n == "streamlit" else real(n, *a)
    )
    for name in (
        "CONTAM_APP_MAX_EVAL_BYTES",
        "CONTAM_APP_MAX_CORPUS_BYTES",
        "CONTAM_APP_MAX_SECONDS",
    ):
        monkeypatch.delenv(name, raising=False)
    return fake


def run(*args: object) -> Result:
    return runner.invoke(app, ["app", *(str(a) for a in args)])


def test_streamlit_is_run_with_the_caps_and_private_settings(execs: Exec) -> None:
    result = run("--port", 8599, "--max-eval-bytes", 1000, "--max-corpus-bytes", 5_000_000)
    assert result.exit_code == 0, result.output
    assert execs.argv[:5] == [sys.executable, "-m", "streamlit", "run", str(launch.PAGE)]
    flags = dict(zip(execs.argv[5::2], execs.argv[6::2]))
    assert flags["--server.address"] == "127.0.0.1" and flags["--server.port"] == "8599"
    assert flags["--server.headless"] == "true"
    assert flags["--browser.gatherUsageStats"] == "false"
    assert flags["--server.maxUploadSize"] == "5"
    assert execs.env["CONTAM_APP_MAX_EVAL_BYTES"] == "1000"
    assert execs.env["CONTAM_APP_MAX_CORPUS_BYTES"] == "5000000"
    assert execs.env["CONTAM_APP_MAX_SECONDS"] == "20.0"
    assert "contam app: http://127.0.0.1:8599 (eval up to 1000 bytes" in result.stderr


def test_the_caps_come_from_the_environment_too(
    execs: Exec, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONTAM_APP_MAX_SECONDS", "3.5")
    assert run("--host", "0.0.0.0").exit_code == 0
    assert execs.env["CONTAM_APP_MAX_SECONDS"] == "3.5"
    assert dict(zip(execs.argv[5::2], execs.argv[6::2]))["--server.address"] == "0.0.0.0"


@pytest.mark.parametrize(
    "args", [["--max-seconds", 0], ["--port", 0], ["--max-eval-bytes", -1], ["--max-seconds", "x"]]
)
def test_a_bad_option_is_exit_2_and_nothing_started(execs: Exec, args: list[object]) -> None:
    result = run(*args)
    assert result.exit_code == 2
    assert execs.argv == []


def test_without_streamlit_one_line_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, *a: None if n == "streamlit" else real(n, *a)
    )
    monkeypatch.setattr(os, "execve", lambda *a: pytest.fail("started without streamlit"))
    result = run()
    assert result.exit_code == 2
    assert result.stderr == (
        "contam: error: this needs the optional dependency 'streamlit': "
        'pip install "contam-cli[app]"\n'
    )
    assert cli_app.app_command.__doc__ and "in memory only" in cli_app.app_command.__doc__
