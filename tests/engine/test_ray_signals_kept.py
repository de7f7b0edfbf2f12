"""`signals_kept`: through Ray's start and shut-down contam's SIGTERM and Ctrl-C handlers stay
in place (Ray's attempts to install its own do nothing), a signal meanwhile waits until the
block ends and then reaches contam's handler, and Ray's driver-side crash handler is off for the
block alone. With fakes of Ray's two modules: no Ray needed, and fast."""

from __future__ import annotations

import signal
import sys
import types
from collections.abc import Iterator

import pytest

from contam_cli.engine.ray_signals import signals_kept

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


@pytest.fixture
def fake_ray(monkeypatch: pytest.MonkeyPatch) -> Iterator[types.SimpleNamespace]:
    utils = types.ModuleType("ray._private.utils")
    constants = types.ModuleType("ray._private.ray_constants")

    def set_sigterm_handler(handler: object) -> None:
        signal.signal(signal.SIGTERM, handler)  # type: ignore[arg-type]

    utils.set_sigterm_handler = set_sigterm_handler  # type: ignore[attr-defined]
    constants.RAY_DISABLE_FAILURE_SIGNAL_HANDLER = False  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ray._private.utils", utils)
    monkeypatch.setitem(sys.modules, "ray._private.ray_constants", constants)
    yield types.SimpleNamespace(utils=utils, constants=constants, setter=set_sigterm_handler)


@pytest.fixture
def handled() -> Iterator[list[str]]:
    seen: list[str] = []
    before = {
        sig: signal.signal(sig, lambda signum, frame: seen.append(signal.Signals(signum).name))
        for sig in (signal.SIGINT, signal.SIGTERM)
    }
    yield seen
    for sig, handler in before.items():
        signal.signal(sig, handler)


def test_a_signal_during_the_start_waits_for_its_end(
    fake_ray: types.SimpleNamespace, handled: list[str]
) -> None:
    ours = signal.getsignal(signal.SIGTERM)
    with signals_kept():
        assert fake_ray.constants.RAY_DISABLE_FAILURE_SIGNAL_HANDLER is True
        fake_ray.utils.set_sigterm_handler(lambda signum, frame: sys.exit(15))  # Ray's, ignored
        signal.raise_signal(signal.SIGTERM)
        signal.raise_signal(signal.SIGINT)
        signal.raise_signal(signal.SIGTERM)
        assert handled == []
    assert handled == ["SIGTERM", "SIGINT"]  # NOTE: each once, in order of arrival
    assert signal.getsignal(signal.SIGTERM) is ours
    assert fake_ray.utils.set_sigterm_handler is fake_ray.setter
    assert fake_ray.constants.RAY_DISABLE_FAILURE_SIGNAL_HANDLER is False


def test_handlers_set_by_ray_outside_its_setter_are_put_back(handled: list[str]) -> None:
    ours = signal.getsignal(signal.SIGTERM)
    with signals_kept():
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # NOTE: as a Ray without the setter
    assert signal.getsignal(signal.SIGTERM) is ours
    signal.raise_signal(signal.SIGTERM)
    assert handled == ["SIGTERM"]
