"""Outputs appear whole or not at all, and every refusal or failure names the path."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from conftest import POSIX_ONLY

from contam_cli import OutputError
from contam_cli.io.output import atomic_writer, check_target, write_atomic


def test_a_path_below_a_file_is_refused_before_anything(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x", encoding="utf-8", newline="\n")
    with pytest.raises(OutputError, match="afile is not a directory"):
        check_target(tmp_path / "afile" / "r.json")


@POSIX_ONLY
def test_a_device_or_fifo_is_never_replaced(tmp_path: Path) -> None:
    with pytest.raises(OutputError, match="not a regular file"):
        write_atomic(os.devnull, "x")
    assert Path(os.devnull).is_char_device()
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "pipe")
        with pytest.raises(OutputError, match="not a regular file"):
            write_atomic(tmp_path / "pipe", "x")


def test_a_failed_write_removes_the_directories_it_made(tmp_path: Path) -> None:
    target = tmp_path / "new" / "deeper" / "r.json"
    with pytest.raises(RuntimeError), atomic_writer(target) as fh:
        fh.write(b"half")
        raise RuntimeError("boom")
    assert os.listdir(tmp_path) == []


def test_a_full_disk_is_an_output_error_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OutputError, match=r"r\.json: cannot write \(No space left on device\)"):
        write_atomic(tmp_path / "r.json", "data")
    assert os.listdir(tmp_path) == []


def test_outputs_keep_the_users_permissions(tmp_path: Path) -> None:
    write_atomic(tmp_path / "sub" / "r.json", "x")
    mask = os.umask(0)
    os.umask(mask)
    assert (tmp_path / "sub" / "r.json").stat().st_mode & 0o777 == 0o666 & ~mask
