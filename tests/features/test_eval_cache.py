"""The persisted eval index (--eval-cache): same reports, keyed misses, damage named."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from contam_cli import ScanOptions, scan
from contam_cli.cli import app
from contam_cli.engine.checkpoint import config_key
from contam_cli.engine.eval_index import EvalIndex
from contam_cli.errors import ArgumentError, InputError, OutputError
from contam_cli.features.eval_cache import cache_key, load_entry, store_entry
from contam_cli.features.eval_side import index_eval, index_eval_refs
from contam_cli.io.extract import TextSpec
from contam_cli.report.persist import iter_json
from contam_cli.text import Tokenizer

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron".split()


def _text(seed: int, words: int = 30) -> str:
    rng = np.random.default_rng(seed)
    return " ".join(WORDS[i] for i in rng.integers(0, len(WORDS), words))


@pytest.fixture
def data(tmp_path: Path) -> tuple[Path, Path]:
    """An eval directory (two files, one without ids, one with a lone surrogate) and a corpus
    holding some of its examples."""
    evals = tmp_path / "eval"
    evals.mkdir()
    rows = [{"id": f"q{i}", "text": _text(i)} for i in range(40)]
    (evals / "a.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    (evals / "b.jsonl").write_text(
        '{"text": "' + _text(100) + '"}\n\n{"text": "' + _text(101) + ' \\ud800 x"}\n',
        encoding="utf-8",
    )
    docs = [{"text": f"intro {_text(i)} outro {_text(1000 + i)}"} for i in range(0, 40, 3)]
    docs.append({"text": _text(100)})
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_bytes(b"".join(orjson.dumps(d) + b"\n" for d in docs))
    return evals, corpus


def _json(report: object) -> bytes:
    return b"".join(iter_json(report))  # type: ignore[arg-type]


def _entries(cache: Path) -> list[Path]:
    return sorted(p for p in cache.iterdir() if p.name.startswith("eval-"))


@pytest.mark.parametrize("extra", [{}, {"ignore_common": 1}, {"redact": True}, {"n": 5}])
def test_reports_are_byte_identical_cold_building_and_warm(
    data: tuple[Path, Path], tmp_path: Path, extra: dict
) -> None:
    evals, corpus = data
    cache = tmp_path / "cache"
    cold = _json(scan(evals, corpus, **extra))
    built = _json(scan(evals, corpus, eval_cache=cache, **extra))
    assert len(_entries(cache)) == 1
    warm = _json(scan(evals, corpus, eval_cache=cache, **extra))
    assert cold == built == warm
    assert b"lone surrogate" in warm  # the eval inputs' warnings come back from the entry


def test_the_cached_index_equals_a_fresh_one_field_by_field(
    data: tuple[Path, Path], tmp_path: Path
) -> None:
    evals, _ = data
    opts = ScanOptions(eval_cache=tmp_path / "cache")
    fresh = index_eval(evals, ScanOptions(), Tokenizer())
    index_eval(evals, opts, Tokenizer())
    warm = index_eval(evals, opts, Tokenizer())
    assert warm[0] == fresh[0] and warm[1] == fresh[1]
    for f in dataclasses.fields(EvalIndex):
        a, b = getattr(warm[2], f.name), getattr(fresh[2], f.name)
        if isinstance(b, np.ndarray):
            assert a.dtype == b.dtype and np.array_equal(a, b), f.name
        else:
            assert a == b, f.name
    assert config_key(warm[2]) == config_key(fresh[2])  # checkpoints resume either way


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(texts=st.lists(st.lists(st.sampled_from(WORDS[:5]), max_size=20).map(" ".join), min_size=1))
def test_any_eval_set_round_trips(tmp_path: Path, texts: list[str]) -> None:
    path = tmp_path / "e.txt"
    path.write_text("\n".join(t or "x" for t in texts) + "\n", encoding="utf-8")
    opts = ScanOptions(n=3, eval_cache=tmp_path / "cache")
    fresh = index_eval(path, ScanOptions(n=3), Tokenizer())
    index_eval(path, opts, Tokenizer())
    warm = index_eval(path, opts, Tokenizer())
    assert warm[0] == fresh[0]
    assert np.array_equal(warm[2].grams, fresh[2].grams)
    assert np.array_equal(warm[2].occ_ex, fresh[2].occ_ex)
    assert warm[2].digests == fresh[2].digests


def test_a_changed_eval_file_misses_the_cache(data: tuple[Path, Path], tmp_path: Path) -> None:
    evals, corpus = data
    cache = tmp_path / "cache"
    scan(evals, corpus, eval_cache=cache)
    (evals / "a.jsonl").write_bytes(b'{"id": "q0", "text": "' + _text(7).encode() + b'"}\n')
    changed = scan(evals, corpus, eval_cache=cache)
    assert len(_entries(cache)) == 2
    assert _json(changed) == _json(scan(evals, corpus))
    assert len(changed.examples) == 3


@pytest.mark.parametrize(
    "change",
    [
        {"n": 7},
        {"norm": ScanOptions().norm.__class__(casefold=False)},
        {"eval_spec": TextSpec(fields=("text",))},
        {"exclude": ("b.jsonl",)},
    ],
)
def test_every_option_the_index_depends_on_is_in_the_key(
    data: tuple[Path, Path], change: dict
) -> None:
    evals, _ = data
    files = [(f, "0" * 64) for f in sorted(evals.iterdir())]
    base = cache_key([evals], files, ScanOptions())
    assert cache_key([evals], files, ScanOptions(**change)).name != base.name
    # How fast, not what: neither the jobs nor the cache itself changes the key.
    assert cache_key([evals], files, ScanOptions(jobs=3, eval_cache="x")).name == base.name


def test_an_entry_of_the_token_rule_before_marks_and_format_characters_is_not_used(
    data: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The key holds the normalization's description: an entry made under the rule before "/2"
    # has another name, so a scan now builds the index again instead of reading it.
    evals, _ = data
    files = [(f, "0" * 64) for f in sorted(evals.iterdir())]
    now = cache_key([evals], files, ScanOptions())
    assert now.parts["normalization"]["tokens"] == "letters-digits-marks+segmented-scripts/2"
    old = {**ScanOptions().norm.describe(), "tokens": "letters-digits+segmented-scripts"}
    monkeypatch.setattr(type(ScanOptions().norm), "describe", lambda self: old)
    assert cache_key([evals], files, ScanOptions()).name != now.name


def test_the_cache_does_not_change_checkpoint_keys(tmp_path: Path) -> None:
    assert config_key(ScanOptions(eval_cache=tmp_path)) == config_key(ScanOptions())


def _built(data: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    evals, corpus = data
    cache = tmp_path / "cache"
    scan(evals, corpus, eval_cache=cache)
    return cache, _entries(cache)[0]


@pytest.mark.parametrize(
    "damage",
    [
        lambda e: (e / "grams.bin").write_bytes((e / "grams.bin").read_bytes()[:-8]),
        lambda e: (e / "occ_ex.bin").write_bytes(b"\xff" * (e / "occ_ex.bin").stat().st_size),
        lambda e: (e / "words.bin").unlink(),
        lambda e: (e / "header.json").write_bytes(b'{"key": '),
        lambda e: (e / "ids.bin").write_bytes(b"x" + (e / "ids.bin").read_bytes()[1:]),
    ],
)
def test_a_damaged_entry_is_an_error_naming_it(
    data: tuple[Path, Path], tmp_path: Path, damage: object
) -> None:
    cache, entry = _built(data, tmp_path)
    damage(entry)  # type: ignore[operator]
    with pytest.raises(InputError, match="damaged eval cache entry") as info:
        scan(data[0], data[1], eval_cache=cache)
    assert info.value.path == str(entry)


def test_an_entry_stored_meanwhile_is_kept(data: tuple[Path, Path], tmp_path: Path) -> None:
    cache, entry = _built(data, tmp_path)
    header = (entry / "header.json").read_bytes()
    records, inputs, index = index_eval_refs(data[0], ScanOptions(), Tokenizer())
    key = cache_key(
        [data[0]], [(f, i["sha256"]) for f, i in zip(_files(data[0]), inputs)], ScanOptions()
    )
    assert store_entry(cache, key, records, inputs, index) == entry  # a second writer loses
    assert (entry / "header.json").read_bytes() == header
    assert [p.name for p in cache.iterdir()] == [entry.name]  # no staged directory is left
    assert load_entry(cache, key, ScanOptions()) is not None


def _files(evals: Path) -> list[Path]:
    return sorted(evals.iterdir())


def test_texts_in_memory_are_never_cached(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    scan([_text(1)], [_text(1)], n=5, eval_cache=cache)
    assert not cache.exists()


def test_an_unwritable_cache_is_an_output_error(data: tuple[Path, Path], tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(OutputError, match="eval cache"):
        scan(data[0], data[1], eval_cache=blocker / "cache")


def test_eval_cache_must_be_a_path() -> None:
    with pytest.raises(ArgumentError, match="eval_cache"):
        ScanOptions(eval_cache=3)  # type: ignore[arg-type]


def test_the_command_line_option_and_its_environment_variable(
    data: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    evals, corpus = data
    runner = CliRunner()
    args = ["scan", str(evals), "--corpus", str(corpus), "--json"]
    plain = runner.invoke(app, args)
    by_option = runner.invoke(app, [*args, "--eval-cache", str(tmp_path / "c1")])
    monkeypatch.setenv("CONTAM_EVAL_CACHE", str(tmp_path / "c2"))
    by_env = runner.invoke(app, args)
    assert plain.exit_code == by_option.exit_code == by_env.exit_code == 1
    assert plain.stdout == by_option.stdout == by_env.stdout
    assert len(_entries(tmp_path / "c1")) == len(_entries(tmp_path / "c2")) == 1


def test_a_cache_inside_an_input_directory_is_refused(data: tuple[Path, Path]) -> None:
    evals, corpus = data
    result = CliRunner().invoke(
        app, ["scan", str(evals), "--corpus", str(corpus), "--eval-cache", str(evals / "c")]
    )
    assert result.exit_code == 2
    assert "refusing to keep the eval cache" in result.stderr
    assert not (evals / "c").exists()
