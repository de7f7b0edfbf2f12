"""The Ray engine gives the local engine's results: the same report (==, byte-identical JSON) and
the same cleaned corpus on the bundled fixtures and on a corpus cut into many shards; a flaky
task is retried to the same result; an input error surfaces at once with its file and line; a
task that keeps failing names itself and nothing is written; a checkpointed run resumes."""

from __future__ import annotations

import hashlib
import random
import socket
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest

ray = pytest.importorskip(
    "ray", reason="the Ray engine needs its extra: pip install 'contam-cli[ray]'"
)

import contam_cli.engine.shards as shards  # noqa: E402
from contam_cli import InputError, clean_corpus, scan  # noqa: E402
from contam_cli.engine.checkpoint import Checkpointed  # noqa: E402
from contam_cli.engine.executor import Executor, InProcess, LocalProcesses  # noqa: E402
from contam_cli.engine.ray_executor import RayExecutor, runtime_env_for, task_name  # noqa: E402
from contam_cli.errors import ContamError  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CD = FIXTURES / "contamination_detector"
DECONTAM = FIXTURES / "decontam_example"
CASES = [
    (CD / "examples/benchmark.jsonl", CD / "examples/corpus", {}),
    (CD / "derived/mixed_examples.jsonl", CD / "examples/corpus", {}),
    (DECONTAM / "eval.jsonl", DECONTAM / "train_chat.jsonl", {"n": 8}),
]
WORDS = "the cat sat on a mat with hat bat rat dog fox ran far and near".split()


def same(a: Any, b: Any) -> bool:
    return bool(a == b) and orjson.dumps(a.to_dict()) == orjson.dumps(b.to_dict())


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


# NOTE: the work functions of this module travel by value: workers cannot import tests/.
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


def test_a_local_ray_is_started_for_the_run_and_shut_down_after(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    # NOTE: first in the module, before the shared cluster exists: the CLI's path. Each task
    # fails once, and Ray's retry messages stay off stdout (it carries the JSON report).
    assert not ray.is_initialized()
    ev, corpus, kw = CASES[0]
    flaky = Wrapped(RayExecutor(num_cpus=2), "flaky", tmp_path)
    report = scan(ev, corpus, executor=flaky, **kw)
    assert not ray.is_initialized()
    assert same(report, scan(ev, corpus, executor=InProcess(), **kw))
    assert [len(p.read_text(encoding="utf-8").splitlines()) for p in tmp_path.iterdir()] == [2]
    assert capfd.readouterr().out == ""


def test_an_unreachable_cluster_fails_in_seconds() -> None:
    # NOTE: before the shared cluster exists too (an initialized Ray is used as it is).
    assert not ray.is_initialized()
    start = time.monotonic()
    with pytest.raises(ContamError, match="cannot reach the Ray cluster at 127.0.0.1:1"):
        list(RayExecutor("127.0.0.1:1").map(_sleep_and_echo, "ctx", [0.0]))
    assert time.monotonic() - start < 15


def test_an_address_where_no_ray_listens_fails_in_seconds() -> None:
    # NOTE: a dashboard's port, say: Ray retried for minutes, writing a warning a second.
    assert not ray.is_initialized()
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]

        def answer() -> None:
            conn, _ = server.accept()
            with conn:
                conn.recv(64)
                conn.sendall(b"HTTP/1.0 400 Bad Request\r\n\r\n")

        threading.Thread(target=answer, daemon=True).start()
        start = time.monotonic()
        with pytest.raises(ContamError, match=f"no Ray cluster at 127.0.0.1:{port}: .* gRPC"):
            list(RayExecutor(f"127.0.0.1:{port}").map(_sleep_and_echo, "ctx", [0.0]))
    assert time.monotonic() - start < 15
    assert not ray.is_initialized()


def make_corpus(d: Path, files: int = 3, docs: int = 150) -> tuple[list[str], list[Path]]:
    rng = random.Random(1)
    evals = [" ".join(rng.choices(WORDS, k=20)) for _ in range(4)]
    paths = []
    for f in range(files):
        lines = []
        for i in range(docs):
            text = " ".join(rng.choices(WORDS, k=rng.randint(5, 40)))
            if i in (11, docs - 2):
                text += " " + evals[(f + i) % 3]
            lines.append(orjson.dumps({"text": text}) + b"\n")
        paths.append(d / f"part{f}.jsonl")
        paths[-1].write_bytes(b"".join(lines))
    return evals, paths


@pytest.fixture
def small_shards(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shards, "SHARD_BYTES", 4000)
    monkeypatch.setattr(shards, "MIN_SHARD_BYTES", 4000)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_ray_gives_the_local_report_and_clean_on_the_fixtures(
    cluster: None, tmp_path: Path, case: int
) -> None:
    ev, corpus, kw = CASES[case]
    assert same(scan(ev, corpus, executor=RayExecutor(), **kw), scan(ev, corpus, **kw))
    rule = {"window": 20, "min_piece": 40, **kw}
    local = clean_corpus(ev, corpus, tmp_path / "local", executor=InProcess(), **rule)
    remote = clean_corpus(ev, corpus, tmp_path / "ray", executor=RayExecutor(), **rule)
    assert tree(tmp_path / "local") == tree(tmp_path / "ray") and local.totals == remote.totals


def _shard_bytes(_: None, __: int) -> int:
    return shards.SHARD_BYTES


def test_ray_gives_the_local_report_on_many_shards_planned_in_the_driver(
    cluster: None, tmp_path: Path, small_shards: None
) -> None:
    evals, files = make_corpus(tmp_path)
    # NOTE: a worker does not see the monkeypatch; the shards are planned here and sent along.
    assert list(RayExecutor().map(_shard_bytes, None, [0])) == [64 << 20]
    planned = len(shards.plan_shards(0, shards.Source("corpus", tuple(files))))
    finished: list[int] = []
    ray3 = RayExecutor(max_in_flight=3)
    report = scan(evals, files, n=5, executor=ray3, progress=finished.append)
    assert planned >= 10 and len(finished) == planned
    assert same(report, scan(evals, files, n=5, executor=LocalProcesses(2)))
    assert same(report, scan(evals, files, n=5, executor=InProcess()))
    assert report.examples[0].flagged
    rule = {"n": 5, "window": 5, "min_piece": 3}
    clean_corpus(evals, files, tmp_path / "a", executor=RayExecutor(), **rule)
    clean_corpus(evals, files, tmp_path / "b", executor=LocalProcesses(2), **rule)
    assert tree(tmp_path / "a") == tree(tmp_path / "b")


def test_ray_ranged_evidence_is_the_whole_read_evidence(
    cluster: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # NOTE: a range read by a worker knows neither the lines nor the records before it; the
    # evidence's line, record ordinal and doc_id are still those of the file read whole.
    evals, files = make_corpus(tmp_path)
    whole = scan(evals, files, n=5, executor=InProcess())
    monkeypatch.setattr(shards, "SHARD_BYTES", 4000)
    monkeypatch.setattr(shards, "MIN_SHARD_BYTES", 4000)
    plan = shards.plan_shards(0, shards.Source("corpus", tuple(files)))
    assert sum(1 for sh in plan for item in sh.items if item[2] is not None) >= 6
    ranged = scan(evals, files, n=5, executor=RayExecutor())
    assert ranged.to_dict()["examples"] == whole.to_dict()["examples"]
    found = [e.evidence for e in ranged.examples if e.evidence is not None]
    assert found and all(ev.record is not None for ev in found)
    assert {ev.doc_id for ev in found} == {str(ev.line) for ev in found}


def _sleep_and_echo(context: str, seconds: float) -> tuple[str, float]:
    time.sleep(seconds)
    return context, seconds


def test_results_come_in_task_order_with_a_bounded_number_in_flight(cluster: None) -> None:
    tasks = [0.3, 0.0, 0.1, 0.0, 0.05, 0.0]
    done: list[int] = []
    got = list(RayExecutor(max_in_flight=2).map(_sleep_and_echo, "ctx", tasks, on_done=done.append))
    assert got == [("ctx", t) for t in tasks]
    assert sorted(done) == list(range(len(tasks)))


class Wrapped(Executor):
    """Runs every task through `_wrapped`, which first calls ``mode`` on the task."""

    def __init__(self, inner: Executor, mode: str, state: Path) -> None:
        self.inner, self.mode, self.state = inner, mode, state

    def map(self, work: Any, context: Any, tasks: Sequence[Any], **kw: Any) -> Iterator[Any]:
        payload = (self.mode, str(self.state), work, context)
        return self.inner.map(_wrapped, payload, tasks, **kw)


def _wrapped(payload: tuple[str, str, Any, Any], task: Any) -> Any:
    mode, state, work, context = payload
    mark = Path(state) / hashlib.sha256(task_name(task).encode()).hexdigest()[:16]
    with open(mark, "a") as fh:  # one line per attempt
        fh.write("x\n")
    attempts = len(mark.read_text(encoding="utf-8").splitlines())
    if mode == "flaky" and attempts == 1:
        raise OSError("flaky disk")
    if mode == "broken":
        raise OSError("the disk is gone")
    if mode == "slow-unless-bad" and "bad" not in task_name(task):
        time.sleep(20)
    return work(context, task)


def test_a_task_that_fails_once_is_retried_to_the_same_result(
    cluster: None, tmp_path: Path, small_shards: None
) -> None:
    evals, files = make_corpus(tmp_path)
    state = tmp_path / "state"
    state.mkdir()
    flaky = Wrapped(RayExecutor(max_retries=2), "flaky", state)
    report = scan(evals, files, n=5, executor=flaky)
    assert same(report, scan(evals, files, n=5))
    attempts = sorted(len(p.read_text(encoding="utf-8").splitlines()) for p in state.iterdir())
    assert attempts and set(attempts) == {2}


def test_a_task_that_keeps_failing_names_itself_and_nothing_is_written(
    cluster: None, tmp_path: Path
) -> None:
    evals, files = make_corpus(tmp_path, files=2, docs=20)
    state = tmp_path / "state"
    state.mkdir()
    broken = Wrapped(RayExecutor(max_retries=1), "broken", state)
    with pytest.raises(ContamError, match=r"task s0:.*part0\.jsonl.* after 2 attempts: OSError"):
        scan(evals, files, n=5, executor=broken)
    out = tmp_path / "out"
    with pytest.raises(ContamError, match=r"task .*part[01]\.jsonl failed after 2 attempts"):
        clean_corpus(evals, files, out, n=5, executor=broken)
    assert not out.exists() and not list(tmp_path.glob(".out.*"))


def test_an_input_error_surfaces_at_once_with_its_file_and_line(
    cluster: None, tmp_path: Path, small_shards: None
) -> None:
    evals, files = make_corpus(tmp_path, files=3)
    bad = tmp_path / "a_bad.jsonl"
    bad.write_bytes(b'{"text": "fine words here"}\n{"text": "also fine"}\n{"text": broken\n')
    local = pytest.raises(InputError)
    with local as expected:
        scan(evals, [bad, *files], n=5)
    state = tmp_path / "state"
    state.mkdir()
    slow = Wrapped(RayExecutor(), "slow-unless-bad", state)
    start = time.monotonic()
    with pytest.raises(InputError) as got:
        scan(evals, [bad, *files], n=5, executor=slow)
    assert time.monotonic() - start < 15  # not after the 20 s tasks beside it
    assert str(got.value) == str(expected.value) and str(got.value).startswith(f"{bad}:3:")
    assert type(got.value) is InputError and got.value.line == 3
    first = shards.plan_shards(0, shards.Source("corpus", (bad, *files)))[0]
    assert "a_bad.jsonl" in first.key
    mark = state / hashlib.sha256(task_name(first).encode()).hexdigest()[:16]
    assert len(mark.read_text(encoding="utf-8").splitlines()) == 1  # never retried


def test_a_checkpointed_ray_run_resumes_to_the_uninterrupted_report(
    cluster: None, tmp_path: Path, small_shards: None
) -> None:
    evals, files = make_corpus(tmp_path)
    expected = scan(evals, files, n=5)
    ckpt = tmp_path / "ckpt"
    seen = [0]

    def stop_after_five(_: int) -> None:
        seen[0] += 1
        if seen[0] == 5:
            raise KeyboardInterrupt

    one_by_one = Checkpointed(RayExecutor(max_in_flight=1), ckpt)
    with pytest.raises(KeyboardInterrupt):
        scan(evals, files, n=5, executor=one_by_one, progress=stop_after_five)
    assert len(list(ckpt.glob("*/*.pkl"))) == 4
    again = Checkpointed(RayExecutor(), ckpt)
    resumed = scan(evals, files, n=5, executor=again)
    assert same(resumed, expected)
    assert again.damaged == []  # NOTE: Ray's results load back as contam's own types
    local_ckpt = Checkpointed(InProcess(), ckpt)
    local = scan(evals, files, n=5, executor=local_ckpt)
    assert same(local, expected) and local_ckpt.damaged == []


def test_the_runtime_env_makes_contam_importable_on_the_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = runtime_env_for("ray://head:10001", None)
    assert remote is not None
    package = Path(remote["py_modules"][0])
    assert (package / "__init__.py").exists() and package.name == "contam_cli"
    assert runtime_env_for("auto", None, ship_code=False) is None
    local = runtime_env_for(None, {"env_vars": {"X": "1"}})
    assert local is not None and local["env_vars"]["X"] == "1"
    # a checkout put on sys.path at run time, elsewhere than the working directory
    root = str(Path(__file__).resolve().parents[2])
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    monkeypatch.setattr(sys, "path", [root, *sys.path])
    assert runtime_env_for(None, None) == {"env_vars": {"PYTHONPATH": root}}


def test_bad_arguments_are_refused() -> None:
    bad: list[dict[str, Any]] = [
        {"num_cpus": 0},
        {"address": "auto", "num_cpus": 2},
        {"max_in_flight": 0},
        {"max_retries": -1},
    ]
    for kw in bad:
        with pytest.raises(TypeError):
            RayExecutor(**kw)
