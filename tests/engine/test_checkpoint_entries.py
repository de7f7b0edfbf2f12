"""Checkpoint entries are read back only as contam's own result types: a forged entry (with a
correct sha256, since whoever writes the directory writes the digest too) that would call
``os.system``, ``exec`` or ``subprocess`` is refused before anything runs, named, and its task run
again, and the report is the one of a run without a checkpoint. Every checkpointed pass's real
entries load through the restricted unpickler, and its allowlist is exactly what they name."""

from __future__ import annotations

import hashlib
import io
import pickle
import shlex
import sys
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from index_oracle import build, tree
from index_oracle import make_corpus as make_index_corpus
from test_checkpoint import Counting, clean_outputs, entries, make_corpus, small_shards
from test_index_resume import Counting as CountingBuild
from test_index_resume import small
from typer.testing import CliRunner

from contam_cli import clean_corpus, scan
from contam_cli.cli import app
from contam_cli.engine import checkpoint
from contam_cli.engine.checkpoint import Checkpointed
from contam_cli.engine.checkpoint_entry import (
    ALLOWED,
    HEADER,
    DamagedEntry,
    dump_entry,
    load_entry,
)
from contam_cli.engine.corpus_index.reducer import ReduceTask
from contam_cli.engine.executor import InProcess
from contam_cli.engine.fuzzy import FuzzyConfig

__all__ = ["small", "small_shards"]  # NOTE: fixtures, used by name


def call(module: str, name: str, arg: str) -> bytes:
    """A pickle (protocol 4) that calls `module`.`name`(`arg`) as it is loaded."""

    def text(s: str) -> bytes:
        b = s.encode()
        return b"\x8c" + bytes([len(b)]) + b  # SHORT_BINUNICODE

    return b"\x80\x04" + text(module) + text(name) + b"\x93" + text(arg) + b"\x85R."


def payloads(marker: Path) -> dict[str, tuple[str, str, str]]:
    """Ways a forged entry could run code, each creating `marker` when it does."""
    code = f"open({str(marker)!r}, 'w').close()"
    command = f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}"
    return {
        "exec": ("builtins", "exec", code),
        "os.system": ("os", "system", command),
        "subprocess": ("subprocess", "getoutput", command),
        # NOTE: protocol 4 resolves a dotted name attribute by attribute: an allowed module's
        # import of os would reach os.system if modules, not exact names, were allowed
        "dotted": ("contam_cli.engine.checkpoint", "os.system", command),
    }


def forge(entry: Path, body: bytes) -> None:
    """`entry` holds `body`, under a correct header and sha256."""
    entry.write_bytes(HEADER + hashlib.sha256(body).digest() + body)


@pytest.mark.parametrize("way", ["exec", "os.system", "subprocess", "dotted"])
def test_a_forged_entry_runs_nothing_and_its_task_runs_again(
    tmp_path: Path, small_shards: None, way: str
) -> None:
    evals, corpus = make_corpus(tmp_path)
    expected = scan(evals, corpus, n=5)
    ckpt, marker = tmp_path / "ckpt", tmp_path / "marker"
    scan(evals, corpus, n=5, executor=Checkpointed(InProcess(), ckpt))
    kept = entries(ckpt)
    leak = next(e for e in kept if load_entry(e.read_bytes())["result"].evidence)
    forge(leak, call(*payloads(marker)[way]))
    counting = Counting(InProcess())
    again = Checkpointed(counting, ckpt)
    resumed = scan(evals, corpus, n=5, executor=again)
    assert not marker.exists()
    assert orjson.dumps(resumed.to_dict()) == orjson.dumps(expected.to_dict())
    assert counting.counts == [0]  # NOTE: the refused entry ran again in-process, uncounted
    module, name, _ = payloads(marker)[way]
    assert again.damaged == [
        f"checkpoint entry {leak}: it names {module}.{name}, not one of contam's result "
        "types; its task ran again"
    ]
    assert load_entry(leak.read_bytes())["result"].evidence  # rewritten with the real result


def test_a_forged_entry_through_the_cli_gives_the_report_without_a_checkpoint(
    tmp_path: Path, small_shards: None
) -> None:
    evals, corpus = make_corpus(tmp_path)
    bench = tmp_path / "bench.jsonl"
    bench.write_bytes(b"".join(orjson.dumps({"text": t}) + b"\n" for t in evals))
    ckpt, marker = tmp_path / "ckpt", tmp_path / "marker"
    args = ["scan", str(bench), "--corpus", str(corpus), "-n", "5", "--format", "json"]
    plain = CliRunner().invoke(app, args)
    first = CliRunner().invoke(app, [*args, "--checkpoint", str(ckpt)])
    assert plain.exit_code == first.exit_code == 1
    for entry in entries(ckpt):
        forge(entry, call(*payloads(marker)["exec"]))
    again = CliRunner().invoke(app, [*args, "--checkpoint", str(ckpt)])
    assert not marker.exists()
    assert again.exit_code == 1 and again.stdout == plain.stdout
    # NOTE: each entry run again is named on stderr, once, as a warning
    warned = [line for line in again.stderr.splitlines() if "checkpoint entry" in line]
    assert len(warned) == len(entries(ckpt)), again.stderr
    assert all(w.startswith("contam: warning: ") and "builtins.exec" in w for w in warned)


def test_a_forged_index_build_entry_runs_nothing(tmp_path: Path, small: None) -> None:
    given = make_index_corpus(tmp_path / "corpus", docs=80)
    build(given, tmp_path / "want", True, executor=InProcess())
    ckpt, out, marker = tmp_path / "ckpt", tmp_path / "idx", tmp_path / "marker"
    with pytest.raises(KeyboardInterrupt):
        build(given, out, True, executor=CountingBuild(ReduceTask, 2), checkpoint=ckpt)
    kept = entries(ckpt)
    assert len(kept) > 2
    for entry in kept:
        forge(entry, call(*payloads(marker)["os.system"]))
    build(given, out, True, executor=InProcess(), checkpoint=ckpt)
    assert not marker.exists() and tree(out) == tree(tmp_path / "want")


def _names(data: bytes) -> set[tuple[str, str]]:
    """The globals an entry's pickle names (our own entries: loaded by the full unpickler)."""
    found: set[tuple[str, str]] = set()

    class Names(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            found.add((module, name))
            return super().find_class(module, name)

    Names(io.BytesIO(data[len(HEADER) + 32 :])).load()
    return found


def test_every_pass_s_entries_load_and_name_only_the_allowed_globals(
    tmp_path: Path, small_shards: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Scan (exact, --fuzzy, --ignore-common), corpus clean (plain, --flagged-only) and index
    build (map and reduce, with and without positions): each entry written loads through the
    restricted unpickler, and together they name exactly the allowed contam types."""
    written: dict[str, list[bytes]] = {}
    current = [""]

    def keep(entry: Any) -> bytes:
        data = dump_entry(entry)
        written.setdefault(current[0], []).append(data)
        return data

    monkeypatch.setattr(checkpoint, "dump_entry", keep)
    evals, corpus = make_corpus(tmp_path)
    given = make_index_corpus(tmp_path / "icorpus", docs=60)
    rule = {"n": 5, "window": 5, "min_piece": 3, "force": True}
    runs: dict[str, Any] = {
        "scan": lambda c: scan(evals, corpus, n=5, executor=c()),
        "fuzzy": lambda c: scan(evals, corpus, n=5, fuzzy=FuzzyConfig(), executor=c()),
        "common": lambda c: scan(evals, corpus, n=5, ignore_common=2, executor=c()),
        "clean": lambda c: clean_corpus(evals, corpus, tmp_path / "o1", executor=c(), **rule),
        "flagged": lambda c: clean_corpus(
            evals, corpus, tmp_path / "o2", flagged_only=True, executor=c(), **rule
        ),
    }
    for name, run in runs.items():
        current[0] = name
        ckpt = tmp_path / f"ckpt-{name}"
        run(lambda: Checkpointed(InProcess(), ckpt, outputs=clean_outputs))  # noqa: B023
        counting = Counting(InProcess())
        resumed = Checkpointed(counting, ckpt, outputs=clean_outputs)
        run(lambda: resumed)  # noqa: B023
        assert set(counting.counts) == {0} and resumed.damaged == [], name
    for positions in (False, True):
        current[0] = f"index positions={positions}"
        build(given, tmp_path / f"idx{positions}", positions, checkpoint=tmp_path / "ick")
    index = ["index positions=False", "index positions=True"]
    assert sorted(written) == sorted([*runs, *index])
    seen: set[tuple[str, str]] = set()
    for data in (data for datas in written.values() for data in datas):
        load_entry(data)
        seen |= _names(data)
    assert {g for g in seen if g[0].startswith("contam_cli")} == {
        g for g in ALLOWED if g[0].startswith("contam_cli")
    }
    assert seen <= ALLOWED


def test_numpy_views_scalars_and_object_arrays_load() -> None:
    value = {
        "view": np.arange(12).reshape(3, 4)[:, ::2],
        "scalar": np.int64(7),
        "objects": np.array(["a", 1, None], dtype=object),
        "record": np.zeros(2, dtype=[("gram", "<u8"), ("pos", "<u4")]),
    }
    back = load_entry(dump_entry(value))
    assert all(np.array_equal(back[k], v) for k, v in value.items() if k != "objects")
    assert back["objects"].tolist() == ["a", 1, None] and back["scalar"] == 7


def test_a_damaged_or_foreign_entry_is_named_damaged() -> None:
    good = dump_entry({"key": "k", "result": 1, "outputs": []})
    with pytest.raises(DamagedEntry, match="differ from their sha256"):
        load_entry(good[:-1] + b"!")
    with pytest.raises(DamagedEntry, match="does not unpickle"):
        load_entry(HEADER + hashlib.sha256(b"junk").digest() + b"junk")
    with pytest.raises(DamagedEntry, match="names numpy.load"):
        load_entry(HEADER + hashlib.sha256(b := call("numpy", "load", "x")).digest() + b)
