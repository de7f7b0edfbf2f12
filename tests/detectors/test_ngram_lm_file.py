"""The n-gram LM's model file is checked whole when read: a truncated archive, a file that is
no archive, missing arrays, arrays of another size or type or inconsistent with each other are
one line naming the file (exit 2), never a BadZipFile or an IndexError while scoring."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import get_args

import numpy as np
import orjson
import pytest
from typer.testing import CliRunner

from contam_cli.cli import app
from contam_cli.detectors.providers.ngram_lm import Boundary, NgramConfig, NgramLM, train
from contam_cli.detectors.providers.ngram_lm_file import BOUNDARIES
from contam_cli.errors import InputError

TEXTS = [
    "the archivist folded seven maps into the cedar chest before dawn",
    "a violin repairer in the harbour town tunes old strings slowly",
    "every lighthouse keeper writes the weather down twice a day",
]
Arrays = dict[str, np.ndarray]


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "model.npz"
    train(TEXTS, NgramConfig(order=3)).save(path)
    return path


def _edited(model: Path, edit: Callable[[Arrays], None]) -> Path:
    with np.load(model) as data:
        arrays = {name: data[name] for name in data.files}
    edit(arrays)
    out = model.with_name("edited.npz")
    np.savez(out, **arrays)
    return out


def _header(arrays: Arrays, **changes: object) -> None:
    header = {**orjson.loads(arrays["header"].tobytes()), **changes}
    arrays["header"] = np.frombuffer(orjson.dumps(header), dtype=np.uint8)


EDITS: dict[str, tuple[Callable[[Arrays], None], str]] = {
    "p1 too short": (
        lambda a: a.update(p1=a["p1"][:5]),
        r"'p1' is float64\[5\], not float64\[\d+\]",
    ),
    "keys of floats": (
        lambda a: a.update(k2_keys=a["k2_keys"].astype(np.float32)),
        r"'k2_keys' is float32\[\d+\], not int64",
    ),
    "prob too short": (lambda a: a.update(k3_prob=a["k3_prob"][:3]), r"'k3_prob' is float64\[3\]"),
    "gamma missing": (lambda a: a.pop("k3_gamma"), "the array 'k3_gamma' is missing"),
    "an extra array": (lambda a: a.update(k4_keys=a["k3_keys"]), "unexpected array 'k4_keys'"),
    "contexts unsorted": (
        lambda a: a.update(k2_ctx_keys=a["k2_ctx_keys"][::-1].copy()),
        "'k2_ctx_keys' is not increasing",
    ),
    "keys past the contexts": (
        lambda a: a.update(k3_keys=a["k3_keys"] + 10**9),
        r"'k3_keys' is not increasing or names one of more than \d+ contexts",
    ),
    "a NaN moment": (
        lambda a: a.update(k2_m1=np.where(True, np.nan, a["k2_m1"])),
        "'k2_m1' holds NaN or infinite values",
    ),
    "a probability above 1": (lambda a: a.update(k2_prob=a["k2_prob"] * 5), "'k2_prob' holds"),
    "p1 not summing to 1": (lambda a: a.update(p1=a["p1"] / 2), "'p1' sums to"),
    "vocab of another size": (
        lambda a: a.update(vocab=np.frombuffer(b"<unk>\n<s>\n</s>\nx", dtype=np.uint8)),
        r"'p1' is float64\[\d+\], not float64\[4\]",
    ),
    "order out of range": (lambda a: _header(a, order=9), "order is 9, not 1 to 6"),
    "a bad boundary": (lambda a: _header(a, boundary="page"), "boundary is 'page'"),
    "a bad norm": (lambda a: _header(a, norm={"nfkc": 1}), "norm is"),
}


@pytest.mark.parametrize("case", list(EDITS))
def test_inconsistent_arrays_are_refused_naming_the_file(model: Path, case: str) -> None:
    edit, message = EDITS[case]
    path = _edited(model, edit)
    with pytest.raises(InputError, match=message) as info:
        NgramLM.load(path)
    assert str(info.value).startswith(f"{path}: not a usable contam-ngram-lm model: ")


def test_the_trainers_files_load(model: Path) -> None:
    lm = NgramLM.load(model)
    assert len(lm.levels) == 2 and lm.score(TEXTS[0]).logprob.size == 11


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda m: m.read_bytes()[:5000], "truncated or damaged n-gram LM file: File is not a zip"),
        (lambda m: b"hello\n", "not a contam-ngram-lm model file (.npz)"),
        (lambda m: b"", "not a contam-ngram-lm model file (.npz)"),
    ],
    ids=["truncated", "not a zip", "empty"],
)
def test_the_command_line_names_the_file_in_one_line(
    tmp_path: Path, model: Path, make: Callable[[Path], bytes], message: str
) -> None:
    bad = tmp_path / "t.npz"
    bad.write_bytes(make(model))
    eval_path = tmp_path / "eval.jsonl"
    eval_path.write_bytes(orjson.dumps({"id": "a", "text": TEXTS[0]}) + b"\n")
    out = tmp_path / "out.json"
    result = CliRunner().invoke(
        app, ["probe", "run", str(eval_path), "--model", f"ngram-lm:{bad}", "-o", str(out)]
    )
    assert result.exit_code == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"contam: error: {bad}: {message}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["eval.jsonl", "model.npz", "t.npz"]


def test_the_boundaries_the_file_accepts_are_the_configs() -> None:
    assert BOUNDARIES == get_args(Boundary)
