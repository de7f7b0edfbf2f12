"""Checkpoints: an interrupted scan or corpus clean, rerun with the same checkpoint, gives what an
uninterrupted run gives (running only the tasks that had not finished); a checkpoint made by
another configuration is refused; a changed corpus file or a damaged entry runs again."""

from __future__ import annotations

import os
import pickle
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

import contam_cli.engine.shards as shards
from contam_cli import ScanOptions, clean_corpus, scan
from contam_cli.engine import checkpoint_entry
from contam_cli.engine.checkpoint import MARKER, Checkpointed, config_key, task_key
from contam_cli.engine.executor import Executor, InProcess, LocalProcesses
from contam_cli.errors import ArgumentError, OutputError, UsageError

ROOT = Path(__file__).resolve().parents[2]
WORDS = "the cat sat on a mat with hat bat rat dog fox ran far and near".split()


def make_corpus(d: Path, files: int = 3, docs: int = 120, seed: int = 0) -> tuple[list[str], Path]:
    """A corpus of `files` JSONL files, two eval examples planted in it; (evals, directory)."""
    rng = random.Random(seed)
    evals = [" ".join(rng.choices(WORDS, k=20)) for _ in range(4)]
    corpus = d / "corpus"
    corpus.mkdir()
    for f in range(files):
        lines = []
        for i in range(docs):
            text = " ".join(rng.choices(WORDS, k=rng.randint(5, 40)))
            if (f, i) in ((0, 7), (files - 1, docs - 3)):
                text += " " + evals[f % 2]
            lines.append(orjson.dumps({"text": text}) + b"\n")
        (corpus / f"part{f}.jsonl").write_bytes(b"".join(lines))
    return evals, corpus


@pytest.fixture
def small_shards(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shards, "SHARD_BYTES", 3000)
    monkeypatch.setattr(shards, "MIN_SHARD_BYTES", 3000)


class Counting(Executor):
    """Records how many tasks each pass gave the executor it wraps."""

    def __init__(self, inner: Executor) -> None:
        self.inner = inner
        self.counts: list[int] = []

    def map(self, work: Any, context: Any, tasks: Sequence[Any], **kw: Any) -> Iterator[Any]:
        self.counts.append(len(tasks))
        return self.inner.map(work, context, tasks, **kw)


def interrupt_after(n: int) -> Callable[[int], None]:
    """A progress callback that stops the run (like Ctrl-C) when the n-th task finishes."""
    seen = [0]

    def tick(_: int) -> None:
        seen[0] += 1
        if seen[0] == n:
            raise KeyboardInterrupt

    return tick


def clean_outputs(task: Any) -> list[Path]:
    """The file a corpus-clean task writes; a scan shard writes none (as in the CLI's)."""
    return [task[2]] if isinstance(task, tuple) else []


def entries(directory: Path) -> list[Path]:
    return sorted(directory.glob("*/*.pkl"))


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("inner", [InProcess(), LocalProcesses(2)], ids=["in-process", "local2"])
def test_an_interrupted_scan_resumes_to_the_uninterrupted_report(
    tmp_path: Path, small_shards: None, inner: Executor
) -> None:
    evals, corpus = make_corpus(tmp_path)
    expected = scan(evals, corpus, n=5)
    ckpt = tmp_path / "ckpt"
    with pytest.raises(KeyboardInterrupt):
        scan(evals, corpus, n=5, executor=Checkpointed(inner, ckpt), progress=interrupt_after(4))
    saved = len(entries(ckpt))
    total = sum(len(shards.plan_shards(0, s)) for s in [shards.Source("c", _files(corpus))])
    # NOTE: checkpoints are written in task order, so with workers the tasks finished behind a
    # slower first one may all be lost to the interrupt (saved == 0); in-process, never.
    assert total > 8 and saved < total
    assert saved > 0 or isinstance(inner, LocalProcesses)
    counting = Counting(inner)
    resumed = scan(evals, corpus, n=5, executor=Checkpointed(counting, ckpt))
    assert counting.counts == [total - saved]
    assert resumed == expected
    assert orjson.dumps(resumed.to_dict()) == orjson.dumps(expected.to_dict())
    again = Counting(InProcess())
    assert scan(evals, corpus, n=5, executor=Checkpointed(again, ckpt)) == expected
    assert again.counts == [0]  # NOTE: everything is loaded; the corpus hashes still come out


def _files(corpus: Path) -> tuple[Path, ...]:
    return tuple(sorted(corpus.iterdir()))


def test_more_workers_on_resume_is_the_same_configuration(
    tmp_path: Path, small_shards: None
) -> None:
    evals, corpus = make_corpus(tmp_path)
    ckpt = tmp_path / "ckpt"
    first = Checkpointed(InProcess(), ckpt)
    with pytest.raises(KeyboardInterrupt):
        scan(evals, corpus, n=5, jobs=1, executor=first, progress=interrupt_after(3))
    again = Checkpointed(LocalProcesses(2), ckpt)
    resumed = scan(evals, corpus, n=5, jobs=2, accel=False, executor=again)
    assert resumed == scan(evals, corpus, n=5)


def test_an_interrupted_corpus_clean_resumes_to_the_same_output(
    tmp_path: Path, small_shards: None
) -> None:
    evals, corpus = make_corpus(tmp_path, files=5, docs=30)
    rule = {"n": 5, "window": 5, "min_piece": 3}
    fresh = clean_corpus(evals, corpus, tmp_path / "fresh", **rule)
    ckpt, out = tmp_path / "ckpt", tmp_path / "out"
    first = Checkpointed(InProcess(), ckpt, outputs=clean_outputs)
    with pytest.raises(KeyboardInterrupt):
        clean_corpus(evals, corpus, out, progress=interrupt_after(3), executor=first, **rule)
    assert not out.exists() and len(entries(ckpt)) == 2
    counting = Counting(InProcess())
    again = Checkpointed(counting, ckpt, outputs=clean_outputs)
    resumed = clean_corpus(evals, corpus, out, executor=again, **rule)
    assert counting.counts == [3]
    assert tree(out) == tree(tmp_path / "fresh")
    assert resumed.totals == fresh.totals and resumed.changed


def test_a_flagged_only_clean_resumes_across_its_two_passes(
    tmp_path: Path, small_shards: None
) -> None:
    evals, corpus = make_corpus(tmp_path, files=4, docs=40)
    rule = {"n": 5, "window": 5, "min_piece": 3, "flagged_only": True}
    fresh = clean_corpus(evals, corpus, tmp_path / "fresh", **rule)
    ckpt, out = tmp_path / "ckpt", tmp_path / "out"
    n_shards = len(shards.plan_shards(0, shards.Source("c", _files(corpus))))
    first = Checkpointed(InProcess(), ckpt, outputs=clean_outputs)
    stop = interrupt_after(n_shards + 2)  # in the clean pass, after the whole scan pass
    with pytest.raises(KeyboardInterrupt):
        clean_corpus(evals, corpus, out, progress=stop, executor=first, **rule)
    counting = Counting(InProcess())
    again = Checkpointed(counting, ckpt, outputs=clean_outputs)
    resumed = clean_corpus(evals, corpus, out, executor=again, **rule)
    assert counting.counts == [0, 3]
    assert tree(out) == tree(tmp_path / "fresh")
    assert resumed.report == fresh.report


SLOW_SCAN = """
import sys, time
import contam_cli.engine.shards as shards
from contam_cli import scan
from contam_cli.engine.checkpoint import Checkpointed
from contam_cli.engine.executor import Executor, InProcess
shards.SHARD_BYTES = shards.MIN_SHARD_BYTES = 3000

class Slow(Executor):
    def map(self, work, context, tasks, **kw):
        for result in InProcess().map(work, context, tasks, **kw):
            time.sleep(0.2)
            yield result

scan(sys.argv[1].split("|"), sys.argv[2], n=5, executor=Checkpointed(Slow(), sys.argv[3]))
"""


def test_a_killed_run_resumes_to_the_uninterrupted_report(
    tmp_path: Path, small_shards: None
) -> None:
    evals, corpus = make_corpus(tmp_path)
    ckpt = tmp_path / "ckpt"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    args = [sys.executable, "-c", SLOW_SCAN, "|".join(evals), str(corpus), str(ckpt)]
    proc = subprocess.Popen(args, env=env, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while len(entries(ckpt)) < 3 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        proc.kill()  # NOTE: SIGKILL; TerminateProcess on Windows (no signals there)
        proc.wait()
    saved = len(entries(ckpt))
    killed = -signal.SIGKILL if hasattr(signal, "SIGKILL") else 1
    assert proc.returncode == killed and saved >= 3
    counting = Counting(InProcess())
    resumed = scan(evals, corpus, n=5, executor=Checkpointed(counting, ckpt))
    assert resumed == scan(evals, corpus, n=5)
    assert counting.counts[0] <= len(shards.plan_shards(0, shards.Source("c", _files(corpus)))) - 3


def test_a_checkpoint_of_another_configuration_is_refused(tmp_path: Path) -> None:
    evals, corpus = make_corpus(tmp_path, files=1, docs=10)
    ckpt = tmp_path / "ckpt"
    scan(evals, corpus, n=5, executor=Checkpointed(InProcess(), ckpt))
    refused = "was made by another configuration"
    for change in ({"n": 6}, {"n": 5, "redact": True}, {"n": 5, "eval": evals[:2]}):
        args = dict(change)
        with pytest.raises(UsageError, match=refused):
            scan(args.pop("eval", evals), corpus, executor=Checkpointed(InProcess(), ckpt), **args)
    with pytest.raises(UsageError, match=refused):
        scan(evals, corpus, n=5, executor=Checkpointed(InProcess(), ckpt, config_key("other")))
    accepted = scan(evals, corpus, n=5, executor=Checkpointed(InProcess(), ckpt))
    assert accepted == scan(evals, corpus, n=5)


def test_a_directory_that_is_not_a_checkpoint_or_inside_an_input_is_refused(
    tmp_path: Path,
) -> None:
    evals, corpus = make_corpus(tmp_path, files=1, docs=10)
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine", encoding="utf-8", newline="\n")
    with pytest.raises(UsageError, match="not a contam checkpoint directory"):
        scan(evals, corpus, n=5, executor=Checkpointed(InProcess(), other))
    assert (other / "notes.txt").read_text(encoding="utf-8") == "mine" and not (
        other / MARKER
    ).exists()
    with pytest.raises(OutputError, match="inside the input"):
        Checkpointed(InProcess(), corpus / "ckpt", inputs=[corpus])


@pytest.mark.skipif(sys.platform == "win32", reason="the run lock is fcntl's (POSIX)")
def test_a_checkpoint_in_use_by_another_run_is_refused(tmp_path: Path) -> None:
    import fcntl

    evals, corpus = make_corpus(tmp_path, files=1, docs=10)
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    with open(ckpt / ".contam-checkpoint.lock", "a+b") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        with pytest.raises(UsageError, match="in use by another run"):
            scan(evals, corpus, n=5, executor=Checkpointed(InProcess(), ckpt))


def test_a_changed_file_or_a_damaged_entry_runs_again(tmp_path: Path, small_shards: None) -> None:
    evals, corpus = make_corpus(tmp_path)
    ckpt = tmp_path / "ckpt"
    scan(evals, corpus, n=5, executor=Checkpointed(InProcess(), ckpt))
    first = entries(ckpt)
    first[0].write_bytes(b"not a pickle")
    with open(corpus / "part1.jsonl", "ab") as fh:
        fh.write(orjson.dumps({"text": evals[3]}) + b"\n")
    counting = Counting(InProcess())
    resumed = scan(evals, corpus, n=5, executor=Checkpointed(counting, ckpt))
    assert resumed == scan(evals, corpus, n=5)
    assert resumed.examples[3].longest_run == 20
    plan = shards.plan_shards(0, shards.Source("c", _files(corpus)))
    # NOTE: part1's byte ranges all moved; the damaged entry ran again in-process, uncounted.
    assert counting.counts == [sum("part1" in sh.key for sh in plan)]


def test_a_damaged_entry_that_still_unpickles_runs_again(
    tmp_path: Path, small_shards: None
) -> None:
    """A flipped byte could leave an entry that unpickles to another result (a wrong report,
    a leak gone) or fails in the unpickler (a module name): each entry's pickle is checked
    against its sha256 first, and such an entry runs again."""
    evals, corpus = make_corpus(tmp_path)
    ckpt = tmp_path / "ckpt"
    expected = scan(evals, corpus, n=5, executor=Checkpointed(InProcess(), ckpt))
    start = len(checkpoint_entry.HEADER) + 32
    read = {e: pickle.loads(e.read_bytes()[start:]) for e in entries(ckpt)}
    leak = next(e for e, entry in read.items() if entry["result"].evidence)
    clean = next(e for e, entry in read.items() if not entry["result"].evidence)
    forged = pickle.dumps({**read[leak], "result": read[clean]["result"]})
    leak.write_bytes(leak.read_bytes()[:start] + forged)  # NOTE: a valid pickle, the old digest
    renamed = next(e for e in read if e not in (leak, clean))
    renamed.write_bytes(renamed.read_bytes().replace(b"contam_cli", b"contbm_cli"))
    counting = Counting(InProcess())
    assert scan(evals, corpus, n=5, executor=Checkpointed(counting, ckpt)) == expected
    assert counting.counts == [0]  # NOTE: the damaged entries ran again in-process, uncounted


@pytest.mark.parametrize("url", [False, True], ids=["path", "file-url"])
def test_a_same_size_rewrite_with_the_mtime_put_back_runs_again(
    tmp_path: Path, small_shards: None, url: bool
) -> None:
    """``cp -p``, ``rsync -t``, tar and ``touch -r`` put a file's old mtime back: a rewrite of
    the same size must still run again, or the old content's results would be reused. So too
    through a ``file://`` URL, whose backend lists no ETag (its key was the size alone)."""
    evals, local = make_corpus(tmp_path)
    if url:
        pytest.importorskip("fsspec", reason="needs the extra: pip install 'contam-cli[remote]'")
    corpus: Any = f"file://{local.as_posix()}/" if url else local
    path = local / "part1.jsonl"
    before = path.stat()
    planted = orjson.dumps({"text": evals[3]})
    lines = path.read_bytes().split(b"\n")
    lines[5] = planted + b" " * (len(lines[5]) - len(planted))  # NOTE: the same size
    assert len(lines[5]) == len(path.read_bytes().split(b"\n")[5])
    ckpt = tmp_path / "ckpt"
    clean = scan(evals, corpus, n=5, executor=Checkpointed(InProcess(), ckpt))
    assert clean.examples[3].longest_run < 20
    path.write_bytes(b"\n".join(lines))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    resumed = scan(evals, corpus, n=5, executor=Checkpointed(InProcess(), ckpt))
    assert resumed.examples[3].longest_run == 20
    assert resumed == scan(evals, corpus, n=5)


@given(st.lists(st.integers(0, 5), max_size=6), st.sampled_from(["int32", "int64", "uint64"]))
def test_config_key_tells_arrays_and_values_apart(values: list[int], dtype: str) -> None:
    arr = np.array(values, dtype=dtype)
    assert config_key(arr) == config_key(arr.copy())
    assert config_key(arr) != config_key(arr.astype("float64"))
    assert config_key(values) != config_key(tuple(values) + (0,))
    assert config_key(ScanOptions(n=3, jobs=1)) == config_key(ScanOptions(n=3, jobs=4))
    assert config_key(ScanOptions(n=3)) != config_key(ScanOptions(n=4))


def test_task_keys_name_the_shard_and_its_files_state(tmp_path: Path) -> None:
    f = tmp_path / "a.jsonl"
    f.write_bytes(b'{"text": "x"}\n')
    sh = shards.Shard(0, ((0, str(f), None),), f.stat().st_size)
    key = task_key(sh)
    assert key.startswith(sh.key) and task_key((f, "a.jsonl", tmp_path / "x")).startswith(str(f))
    os.utime(f, ns=(1, 1))
    assert task_key(sh) != key
    with pytest.raises(ArgumentError):
        task_key(3.5)


def test_executor_from_options(tmp_path: Path) -> None:
    from contam_cli.cli.engine_options import Engine, executor_from_options

    assert executor_from_options(Engine.local, None, None, 0, None) is None
    ckpt = executor_from_options(Engine.local, None, None, 2, tmp_path / "c", config={"a": 1})
    assert isinstance(ckpt, Checkpointed) and ckpt.config == config_key({"a": 1})
    for bad in (
        (Engine.local, "auto", None, 0),
        (Engine.local, None, 2, 0),
        (Engine.ray, None, None, 4),
        (Engine.ray, "auto", 2, 0),
    ):
        with pytest.raises(UsageError):
            executor_from_options(*bad, None)
    with pytest.raises(UsageError, match="not JSON"):
        executor_from_options(Engine.ray, None, None, 0, None, ray_runtime_env="{x")
