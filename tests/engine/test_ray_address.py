"""`--ray-address` is checked before Ray is asked: a ``ray://HOST`` without a port gets the Ray
Client's default (10001), and a malformed address is one line, exit 2, at once (``ray://HOST``
and ``ray://HOST:abc`` waited out Ray's 30 s client timeout; a port over 65535 failed in the
socket call)."""

from __future__ import annotations

import re
import time

import pytest
from conftest import ROOT
from typer.testing import CliRunner

from contam_cli.engine.ray_address import check_reachable, ray_address
from contam_cli.errors import ArgumentError, ContamError

EXAMPLES = ROOT / "fixtures" / "contamination_detector" / "examples"


@pytest.mark.parametrize(
    "given, used",
    [
        ("ray://head", "ray://head:10001"),
        ("ray://head:10002", "ray://head:10002"),
        ("ray://[::1]", "ray://[::1]:10001"),
        ("head:6379", "head:6379"),
        ("[fe80::1]:6379", "[fe80::1]:6379"),
        ("auto", "auto"),
        ("local", "local"),
    ],
)
def test_an_address_is_given_to_ray_with_its_port(given: str, used: str) -> None:
    assert ray_address(given) == used


@pytest.mark.parametrize(
    "given, says",
    [
        ("ray://head:abc", "the port must be a number from 1 to 65535, got 'abc'"),
        ("ray://head:0", "got '0'"),
        ("ray://head:65536", "got '65536'"),
        ("head:99999", "got '99999'"),
        ("ray://head:10001/", "got '10001/'"),
        ("ray://head:", "got ''"),
        ("ray://head:١٢", "got '١٢'"),
        ("ray://", "names no host"),
        ("ray://:10001", "names no host"),
        ("ray://[]:10001", "names no host"),
        ("ray://::1:10001", r"write an IPv6 host as \[ADDRESS\]:PORT"),
        ("ray://[::1", r"write an IPv6 host as \[ADDRESS\]:PORT"),
        ("[::1]6379", r"write an IPv6 host as \[ADDRESS\]:PORT"),
        ("[::1]", r"needs a port \(the GCS's: HOST:6379\)"),
    ],
)
def test_a_malformed_address_is_refused(given: str, says: str) -> None:
    with pytest.raises(ArgumentError, match=f"^Ray address '{re.escape(given)}':? .*{says}"):
        ray_address(given)


def test_the_defaulted_port_is_the_one_checked() -> None:
    # NOTE: 1 is a port nobody listens on; the check names the address Ray would be given.
    with pytest.raises(ContamError, match="cannot reach the Ray cluster at ray://127.0.0.1:1:"):
        check_reachable(ray_address("ray://127.0.0.1:1"))


def test_the_command_refuses_an_address_without_its_port_at_once() -> None:
    pytest.importorskip("ray", reason="the Ray engine needs its extra")
    from contam_cli.cli import app

    start = time.monotonic()
    result = CliRunner().invoke(
        app,
        ["scan", str(EXAMPLES / "benchmark.jsonl"), "--corpus", str(EXAMPLES / "corpus"),
         "--engine", "ray", "--ray-address", "ray://127.0.0.1:http"],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().splitlines() == [
        "contam: error: Ray address 'ray://127.0.0.1:http': the port must be a number from 1 "
        "to 65535, got 'http'"
    ]
    assert time.monotonic() - start < 10
