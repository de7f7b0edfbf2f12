"""A key given twice in one object of a settings document (a baseline, a thresholds file,
--ray-runtime-env) is refused in one line naming the file and the line of the second one, as
the eval reader refuses a repeated records key: parsers keep the last one silently."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from contam_cli.cli import app
from contam_cli.io.json_keys import check_unique_keys

EXAMPLES = Path(__file__).parents[2] / "fixtures" / "contamination_detector" / "examples"
BENCH, CORPUS = EXAMPLES / "benchmark.jsonl", EXAMPLES / "corpus"


@pytest.mark.parametrize(
    "text, key, line",
    [
        ('{"a": 1, "a": 2}', "a", 1),
        ('[1, {"x": {"a": 1, "b": [{"a": 1}]},\n "y": 2,\n "x": 3}]', "x", 3),
        ('{"o": {"b": 1,\n "b": 2}, "o": 1}', "b", 2),  # the first in the text
        ('{"s\\u0041": 1, "sA": 2}', "sA", 1),  # the same key, escaped or not
        ('{"": [], "": {}}', "", 1),
    ],
)
def test_the_second_of_a_repeated_key_is_found(text: str, key: str, line: int) -> None:
    with pytest.raises(json.JSONDecodeError) as info:
        check_unique_keys(text)
    assert info.value.msg == f"the key {key!r} appears twice in one object"
    assert info.value.lineno == line


@pytest.mark.parametrize(
    "text", ['{"a": {"b": 1}, "b": 2}', '[{"a": 1}, {"a": 2}]', "3", '{"a": NaN}', "{"]
)
def test_the_same_key_in_different_objects_is_fine(text: str) -> None:
    check_unique_keys(text)


def _scan(tmp_path: Path, *extra: str) -> tuple[int, str, list[str]]:
    out = tmp_path / "out"
    out.mkdir()
    args = ["scan", str(BENCH), "--corpus", str(CORPUS), "--report", str(out / "r.json"), *extra]
    result = CliRunner().invoke(app, args)
    return result.exit_code, result.stderr.strip(), sorted(p.name for p in out.iterdir())


def test_a_baseline_with_findings_twice_is_refused(tmp_path: Path) -> None:
    baseline = tmp_path / "base.json"
    code, _, _ = _scan(tmp_path, "--write-baseline", str(baseline))
    assert code == 1
    text = baseline.read_text(encoding="utf-8")
    baseline.write_text(text.replace("{\n", '{\n  "findings": [],\n', 1), encoding="utf-8")
    (tmp_path / "out" / "r.json").unlink()
    (tmp_path / "out").rmdir()
    code, err, written = _scan(tmp_path, "--baseline", str(baseline))
    assert code == 2 and written == []
    assert err == (
        f"contam: error: {baseline}:3: not a baseline: invalid JSON "
        "(the key 'findings' appears twice in one object)"
    )


def test_a_thresholds_file_with_sources_twice_is_refused(tmp_path: Path) -> None:
    thresholds = tmp_path / "t.json"
    source = '{"corpus": {"overlap_fraction": 0.5}}'
    thresholds.write_text(f'{{\n  "sources": {source},\n  "sources": {{}}\n}}\n', "utf-8")
    code, err, written = _scan(tmp_path, "--thresholds", str(thresholds))
    assert code == 2 and written == []
    message = "invalid JSON (the key 'sources' appears twice in one object)"
    assert err == f"contam: error: {thresholds}:3: {message}"


def test_a_thresholds_file_with_sources_once_is_read(tmp_path: Path) -> None:
    thresholds = tmp_path / "t.json"
    thresholds.write_text('{"sources": {"corpus": {"overlap_fraction": 0.5}}}', "utf-8")
    code, err, written = _scan(tmp_path, "--thresholds", str(thresholds))
    assert code in (0, 1) and written == ["r.json"], err


def test_a_ray_runtime_env_with_a_key_twice_is_refused() -> None:
    from contam_cli.cli.engine_options import _runtime_env
    from contam_cli.errors import UsageError

    with pytest.raises(UsageError, match="--ray-runtime-env: not JSON: the key 'pip' appears"):
        _runtime_env('{"pip": ["a"], "pip": ["b"]}')
    assert _runtime_env('{"pip": ["a"]}') == {"pip": ["a"]}
