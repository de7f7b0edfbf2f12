"""Every output of one clean appears together with the others, or none does."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from conftest import CD, DECONTAM

import contam_cli.features.clean.corpus as corpus_module
import contam_cli.features.clean.eval as eval_module
from contam_cli import OutputError, UsageError, clean_corpus, clean_eval


def _full_disk(*args: object, **kwargs: object) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_report_that_cannot_be_written_leaves_no_cleaned_eval_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(eval_module, "write_json", _full_disk)
    with pytest.raises(OutputError, match="r.json: cannot write"):
        clean_eval(
            DECONTAM / "eval.jsonl", DECONTAM / "train.jsonl", tmp_path / "clean.jsonl",
            dirty_output=tmp_path / "dirty.jsonl", report_path=tmp_path / "r.json", n=8,
        )  # fmt: skip
    assert os.listdir(tmp_path) == []


def test_a_report_that_cannot_be_written_leaves_no_cleaned_corpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(corpus_module, "write_json", _full_disk)
    with pytest.raises(OutputError):
        clean_corpus(
            CD / "examples" / "benchmark.jsonl", CD / "examples" / "corpus", tmp_path / "out",
            report_path=tmp_path / "r.json", flagged_only=True, window=20, min_piece=40,
        )  # fmt: skip
    assert os.listdir(tmp_path) == []


def test_all_outputs_when_all_succeed(tmp_path: Path) -> None:
    clean_eval(
        DECONTAM / "eval.jsonl", DECONTAM / "train.jsonl", tmp_path / "clean.jsonl",
        dirty_output=tmp_path / "dirty.jsonl", report_path=tmp_path / "sub" / "r.json", n=8,
    )  # fmt: skip
    assert sorted(os.listdir(tmp_path)) == ["clean.jsonl", "dirty.jsonl", "sub"]
    c = clean_corpus(
        CD / "examples" / "benchmark.jsonl", CD / "examples" / "corpus", tmp_path / "out",
        manifest=tmp_path / "m.json", window=20, min_piece=40,
    )  # fmt: skip
    assert c.manifest.exists() and (tmp_path / "out" / "doc_contaminated.txt").exists()


def test_a_visible_manifest_inside_outdir_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="must be hidden"):
        clean_corpus(
            CD / "examples" / "benchmark.jsonl", CD / "examples" / "corpus", tmp_path / "out",
            manifest=tmp_path / "out" / "manifest.json",
        )  # fmt: skip
    assert os.listdir(tmp_path) == []
