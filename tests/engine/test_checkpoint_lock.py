"""A checkpoint is held by one run at a time: flock on POSIX, a msvcrt byte lock on Windows
(simulated here with a stand-in msvcrt module: the lock taken and released on the same byte, a
held lock refused with a message naming the checkpoint)."""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

import pytest

from contam_cli.engine import checkpoint
from contam_cli.errors import UsageError


def _fake_msvcrt(held: set[str]) -> types.ModuleType:
    calls: list[tuple[int, int, int]] = []
    mod = types.ModuleType("msvcrt")
    mod.LK_NBLCK, mod.LK_UNLCK = 2, 0  # type: ignore[attr-defined]

    def locking(fd: int, mode: int, nbytes: int) -> None:
        calls.append((fd, mode, nbytes))
        if mode == mod.LK_NBLCK and "other" in held:  # type: ignore[attr-defined]
            raise OSError(13, "Permission denied")

    mod.locking = locking  # type: ignore[attr-defined]
    mod.calls = calls  # type: ignore[attr-defined]
    return mod


def test_windows_takes_and_releases_one_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = _fake_msvcrt(set())
    monkeypatch.setitem(sys.modules, "msvcrt", fake)
    monkeypatch.setattr(os, "name", "nt")
    with checkpoint._locked(tmp_path / "ckpt"):
        pass
    assert [(mode, n) for _, mode, n in fake.calls] == [(2, 1), (0, 1)]  # type: ignore[attr-defined]


def test_windows_refuses_a_held_checkpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "msvcrt", _fake_msvcrt({"other"}))
    monkeypatch.setattr(os, "name", "nt")
    with pytest.raises(UsageError, match="is in use by another run"):
        with checkpoint._locked(tmp_path / "ckpt"):
            pass


@pytest.mark.skipif(os.name != "posix", reason="flock")
def test_posix_refuses_a_second_holder(tmp_path: Path) -> None:
    with checkpoint._locked(tmp_path / "ckpt"):
        with pytest.raises(UsageError, match="is in use by another run"):
            with checkpoint._locked(tmp_path / "ckpt"):
                pass
