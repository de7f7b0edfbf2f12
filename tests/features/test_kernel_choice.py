"""When a run uses the compiled kernels: under MIN_BYTES of corpus and eval files together it does
without them, eval reading included, and never imports numba (scan, scan --index, clean of the
corpus, index build); at or above, it uses them (numba installed); an explicit `accel` always
wins. The report is the same either way."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CD

from contam_cli.engine.options import ScanOptions
from contam_cli.features import scan as scan_module
from contam_cli.io import accel
from contam_cli.text.accel import kernels

BENCH = CD / "examples" / "benchmark.jsonl"
CORPUS = CD / "examples" / "corpus"

needs_numba = pytest.mark.skipif(kernels() is None, reason="numba is not installed")


def _choice(eval_paths: list[Path], corpus: Path, **opts: object) -> bool:
    options = ScanOptions(**opts)  # type: ignore[arg-type]
    sources = scan_module.resolve_sources(corpus, options)
    return scan_module._want_kernels(options, sources, eval_paths)


def _size(*paths: Path) -> int:
    files = [f for p in paths for f in ([p] if p.is_file() else p.rglob("*"))]
    return sum(f.stat().st_size for f in files if f.is_file())


@needs_numba
def test_the_eval_files_count_toward_the_threshold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus_bytes = _size(CORPUS)
    big_eval = tmp_path / "eval.jsonl"
    big_eval.write_bytes(BENCH.read_bytes() * 40)
    monkeypatch.setattr(accel, "MIN_BYTES", corpus_bytes + _size(BENCH) + 1)
    assert not _choice([BENCH], CORPUS)
    assert _choice([big_eval], CORPUS)
    assert _choice([tmp_path], CORPUS)  # a directory of eval files counts what it holds
    assert not _choice([big_eval], CORPUS, accel=False)
    monkeypatch.setattr(accel, "MIN_BYTES", 1 << 40)
    assert _choice([BENCH], CORPUS, accel=True)


def test_small_runs_never_import_numba(tmp_path: Path) -> None:
    b, c, out = str(BENCH), str(CORPUS), tmp_path
    code = (
        "import sys\n"
        "from contam_cli.features.scan import scan\n"
        "from contam_cli.features.clean import clean_corpus\n"
        "from contam_cli.engine.corpus_index import build_corpus_index\n"
        "from contam_cli.features.scan import resolve_sources\n"
        "from contam_cli.engine.options import ScanOptions\n"
        "from contam_cli.text import DEFAULT_NORM\n"
        "from contam_cli.io import TextSpec\n"
        f"flagged = len(scan({b!r}, {c!r}).flagged)\n"
        f"clean_corpus({b!r}, {c!r}, {str(out / 'cleaned')!r})\n"
        f"sources = resolve_sources({c!r}, ScanOptions())\n"
        f"build_corpus_index(sources, {str(out / 'idx')!r}, n=13, norm=DEFAULT_NORM, "
        "positions=False, corpus_spec=TextSpec())\n"
        f"flagged_index = len(scan({b!r}, index={str(out / 'idx')!r}).flagged)\n"
        "print(flagged, flagged_index, 'numba' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.stdout.split() == ["2", "2", "False"], proc.stderr


@needs_numba
def test_the_report_is_the_same_with_and_without_the_kernels() -> None:
    plain = scan_module.scan(BENCH, CORPUS, accel=False).to_dict()
    compiled = scan_module.scan(BENCH, CORPUS, accel=True).to_dict()
    assert plain == compiled
