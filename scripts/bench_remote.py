"""A scan of a corpus in S3 against the same scan of the files on disk, with the same report.

    python scripts/bench_remote.py [--mb 50] [--repeat 3] [--jobs 2]

Starts moto's S3 server (``pip install "moto[server]" s3fs``) on a free localhost port, points
the environment at it (``AWS_ENDPOINT_URL_S3``, dummy credentials), uploads the bundled fixture
corpora and a generated JSONL corpus of ``--mb`` MB (one object, cut into byte-range shards),
then times, in this process and after one warm-up run each, ``scan()`` of each eval set against
the local files (with the default sha256 of every corpus file, and with ``hash_corpus=False``)
and against the ``s3://`` URL. Prints a Markdown table: corpus bytes, the best wall seconds of
``--repeat`` runs, the remote time over the local ones, and whether the reports are the same
(the JSON byte for byte once the corpus file records are left out and the URL is read as the
local path). moto serves from Python on this machine: the remote column measures contam's
remote path (listing, ranged reads, the checks) plus a local server, not a real store's network.

Exit status: 0 normally; 1 if a remote report differs from the local one.
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BUCKET = "contam-bench"
WORDS = "the cat sat on a mat with hat bat rat dog fox ran far and near over under".split()


def start_server() -> Any:
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    nowhere = os.path.join(tempfile.gettempdir(), "contam-bench-no-aws-config")
    os.environ.update(
        AWS_ACCESS_KEY_ID="bench",
        AWS_SECRET_ACCESS_KEY="bench",
        AWS_DEFAULT_REGION="us-east-1",
        AWS_CONFIG_FILE=nowhere,
        AWS_SHARED_CREDENTIALS_FILE=nowhere,
        AWS_ENDPOINT_URL_S3=f"http://{host}:{port}",
    )
    return server


def generate(path: Path, mb: int) -> list[str]:
    """A JSONL corpus of about `mb` MB with 20 of 200 eval examples planted."""
    rng = random.Random(3)
    evals = [" ".join(rng.choices(WORDS, k=30)) for _ in range(200)]
    with open(path, "wb") as fh:
        size, i = 0, 0
        while size < mb << 20:
            text = " ".join(rng.choices(WORDS, k=rng.randint(50, 400)))
            if i % 997 == 0:
                text += " " + evals[(i // 997) % 20]
            line = f'{{"id": "d{i}", "text": "{text}"}}\n'.encode()
            fh.write(line)
            size, i = size + len(line), i + 1
    return evals


def upload(fs: Any, local: Path, key: str) -> str:
    files = [local] if local.is_file() else sorted(p for p in local.rglob("*") if p.is_file())
    for f in files:
        rel = f.name if local.is_file() else f.relative_to(local).as_posix()
        with open(f, "rb") as fh:
            fs.pipe(f"{BUCKET}/{key}/{rel}", fh.read())
    return f"s3://{BUCKET}/{key}/" + (local.name if local.is_file() else "")


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    fn()  # NOTE: a warm-up: imports, caches, the server's first requests
    times, result = [], None
    for _ in range(repeat):
        began = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - began)
    return min(times), result


def comparable(report: Any, url: str | Path, local: Path) -> bytes:
    import orjson

    d = report.to_dict()
    corpus = [{**s, "files": None} for s in d["inputs"]["corpus"]]
    d = {**d, "inputs": {**d["inputs"], "corpus": corpus}}
    return orjson.dumps(d).replace(str(url).rstrip("/").encode(), str(local).encode())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=50, help="generated corpus size (0: none)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2, help="worker processes for --mb")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    server = start_server()
    try:
        return run(args)
    finally:
        server.stop()


def run(args: argparse.Namespace) -> int:
    import s3fs

    from contam_cli import scan
    from contam_cli.engine.executor import InProcess, LocalProcesses

    fs = s3fs.S3FileSystem(skip_instance_cache=True)
    fs.mkdir(BUCKET)
    cd, decontam = REPO / "fixtures/contamination_detector", REPO / "fixtures/decontam_example"
    cases: list[tuple[str, Any, Path, dict[str, Any]]] = [
        ("fixtures: benchmark.jsonl", cd / "examples/benchmark.jsonl", cd / "examples/corpus", {}),
        ("fixtures: decontam eval", decontam / "eval.jsonl", decontam / "train_chat.jsonl",
         {"n": 8}),
    ]  # fmt: skip
    tmp = Path(tempfile.mkdtemp(prefix="contam-bench-remote-"))
    if args.mb:
        evals = generate(tmp / "generated.jsonl", args.mb)
        kw = {"n": 13, "executor": LocalProcesses(args.jobs) if args.jobs > 1 else InProcess()}
        cases.append((f"generated {args.mb} MB, jobs {args.jobs}", evals, tmp / "generated.jsonl",
                      kw))  # fmt: skip
    print("| corpus | bytes | local s | local s, no sha256 | s3 s | s3 / local | same report |")
    print("|---|--:|--:|--:|--:|--:|---|")
    differs = False
    for k, (name, ev, local, kw) in enumerate(cases):
        url = upload(fs, local, f"c{k}")
        size = local.stat().st_size if local.is_file() else sum(
            p.stat().st_size for p in local.rglob("*") if p.is_file()
        )  # fmt: skip
        t_local, here = best(lambda: scan(ev, local, **kw), args.repeat)
        t_nohash, _ = best(lambda: scan(ev, local, hash_corpus=False, **kw), args.repeat)
        t_remote, there = best(lambda: scan(ev, url, **kw), args.repeat)
        same = comparable(there, url, local) == comparable(here, local, local)
        differs |= not same
        print(f"| {name} | {size:,} | {t_local:.3f} | {t_nohash:.3f} | {t_remote:.3f} | "
              f"{t_remote / t_local:.2f}× | {'yes' if same else 'NO'} |")  # fmt: skip
    if args.mb:
        t_read, size = best(lambda: read_through(url), args.repeat)
        print(f"\nReading the generated object alone ({size:,} bytes, 4 MiB reads, no scan): "
              f"{t_read:.3f} s, {size / t_read / 1e6:.0f} MB/s (the server's speed).")  # fmt: skip
    return 1 if differs else 0


def read_through(url: str) -> int:
    """The bytes of an object read as the corpus reader reads it (open_object, 4 MiB reads)."""
    from contam_cli.io.remote import open_object

    size = 0
    with open_object(url) as fh:
        while block := fh.read(4 << 20):
            size += len(block)
    return size


if __name__ == "__main__":
    sys.exit(main())
