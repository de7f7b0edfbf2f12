"""`contam probe` and `contam probe train-lm`: outputs, exit codes, one-line errors, the API key."""

from __future__ import annotations

import re
import shutil
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import assert_valid_report
from typer.testing import CliRunner

from contam_cli.cli import app
from contam_cli.report import load_report

runner = CliRunner()
SECRET = "sk-probe-cli-DO-NOT-LEAK-42"
KEY_ENV = "CONTAM_TEST_PROBE_KEY"
TRAIN = [
    "the archivist folded seven maps into the cedar chest before dawn",
    "a violin repairer in the harbour town tunes old strings slowly",
    "every lighthouse keeper writes the weather down twice a day",
]


def run(*args: str) -> Any:
    return runner.invoke(app, list(args))


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTAM_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    train = tmp_path / "train.txt"
    train.write_text("\n".join(TRAIN) + "\n", encoding="utf-8", newline="\n")
    rows = [{"id": f"t{i}", "text": t} for i, t in enumerate(TRAIN)]
    rows += [{"id": "fresh", "text": "my neighbour painted the fence green on a windy day"}]
    rows += [{"id": "tiny", "text": "?!"}]
    eval_path = tmp_path / "eval.jsonl"
    eval_path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return {"train": train, "eval": eval_path, "lm": tmp_path / "lm.npz"}


def _one_line_error(result: Any, *needles: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("contam: error: "), result.stderr
    assert "Traceback" not in result.stderr
    for needle in needles:
        assert needle in lines[0]


def test_train_lm_then_probe_table_and_json(files: dict[str, Path], tmp_path: Path) -> None:
    trained = run(
        "probe", "train-lm", str(files["train"]), "-o", str(files["lm"]), "--boundary", "line"
    )
    assert trained.exit_code == 0, trained.output
    assert trained.stdout.startswith("trained a 3-gram LM on 35 tokens (31 types) from 1 document")
    spec = f"ngram-lm:{files['lm']}"
    table = run(
        "probe",
        str(files["eval"]),
        "--model",
        spec,
        "--method",
        "min-k++,ppl",
        "--k",
        "20",
        "--k",
        "50",
    )
    assert table.exit_code == 0, table.output
    lines = table.stdout.splitlines()
    assert lines[0].split() == ["id", "min_k_pp@20", "min_k_pp@50", "perplexity", "where"]
    assert "Unscorable" in table.stdout and "  tiny  " in table.stdout
    assert (
        lines[-1]
        == "5 examples: 4 scored, 1 unscorable (probe scores flag nothing: see contam report)"
    )
    out = tmp_path / "scores.json"
    as_json = run(
        "probe",
        "run",
        str(files["eval"]),
        "-m",
        spec,
        "-o",
        str(out),
        "--format",
        "json",
        "--method",
        "guided",
    )
    assert as_json.exit_code == 0, as_json.output
    doc = assert_valid_report(as_json.stdout)
    assert orjson.loads(out.read_bytes()) == doc and load_report(out).command == "probe"
    assert [e["scores"]["guided_f1"] for e in doc["examples"]][:3] == [1.0, 1.0, 1.0]
    assert doc["examples"][4]["scores"]["guided_f1"] is None


def test_nothing_scored_is_an_error_and_the_report_says_why(
    files: dict[str, Path], tmp_path: Path
) -> None:
    """A probe that scored no example checked nothing: exit 2, never the 0 of a scored run;
    the report is written all the same, naming each example as unscorable."""
    assert run("probe", "train-lm", str(files["train"]), "-o", str(files["lm"])).exit_code == 0
    bare = tmp_path / "bare.jsonl"
    bare.write_bytes(b'{"id": "a", "text": "?!"}\n{"id": "b", "text": "  "}\n')
    out = tmp_path / "bare.json"
    spec = f"ngram-lm:{files['lm']}"
    result = run("probe", "run", str(bare), "--model", spec, "-o", str(out))
    _one_line_error(result, "bare.jsonl", "no eval example could be scored", "bare.json lists")
    assert result.stdout == ""
    doc = orjson.loads(out.read_bytes())
    assert [e["id"] for e in doc["examples"]] == ["a", "b"]
    assert doc["summary"]["unscorable"] == 2
    _one_line_error(run("probe", str(bare), "--model", spec), "check --field and --roles")


def test_help_lists_train_lm_and_the_default_command() -> None:
    result = run("probe", "--help")
    assert result.exit_code == 0 and "train-lm" in result.stdout and "run" in result.stdout


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("gpt2", "unknown model spec 'gpt2'"),
        ("ngram-lm:nowhere/model.npz", "no such model file or directory"),
        ("hf:./nowhere", "no such model file or directory"),
    ],
)
def test_a_bad_or_missing_model_is_one_line_and_exit_2(
    files: dict[str, Path], spec: str, needle: str
) -> None:
    _one_line_error(run("probe", str(files["eval"]), "--model", spec), needle)


def test_a_closed_openai_port_is_one_line_and_exit_2(files: dict[str, Path]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"openai:http://127.0.0.1:{port}/v1"
    _one_line_error(
        run("probe", str(files["eval"]), "--model", url, "--max-retries", "0"), "cannot connect"
    )


def test_model_options_of_another_scheme_and_unset_key_variables(files: dict[str, Path]) -> None:
    spec = f"ngram-lm:{files['train']}"
    _one_line_error(
        run("probe", str(files["eval"]), "-m", spec, "--device", "cuda"), "--device applies to hf"
    )
    url = "openai:http://127.0.0.1:9/v1"
    _one_line_error(
        run("probe", str(files["eval"]), "-m", url, "--api-key-env", "NOPE_UNSET"), "NOPE_UNSET"
    )
    _one_line_error(run("probe", str(files["eval"]), "-m", spec, "--method", "minkk"), "minkk")


def test_a_sidecar_of_another_config_needs_restart(files: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "scores.json"
    sidecar = tmp_path / "scores.json.partial.jsonl"
    spec = f"ngram-lm:{files['train']}"
    header = {"format": "contam-probe-partial", "version": 1, "config": {"model": {}}, "inputs": {}}
    sidecar.write_bytes(orjson.dumps(header) + b"\n")
    _one_line_error(
        run("probe", str(files["eval"]), "-m", spec, "-o", str(out)), "another model", "--restart"
    )
    result = run("probe", str(files["eval"]), "-m", spec, "-o", str(out), "--restart")
    assert result.exit_code == 0, result.output
    assert out.exists() and not sidecar.exists()


def test_progress_goes_to_stderr_and_stdout_stays_clean(files: dict[str, Path]) -> None:
    spec = f"ngram-lm:{files['train']}"
    quiet = run("probe", str(files["eval"]), "-m", spec, "--format", "json", "--no-progress")
    loud = run("probe", str(files["eval"]), "-m", spec, "--format", "json", "--progress")
    assert quiet.exit_code == loud.exit_code == 0 and quiet.stdout == loud.stdout


# -- the API key, against a local OpenAI-compatible stub -----------------------------------------


class Stub:
    """A vLLM-like server: whitespace tokens, echo with top log-probs, greedy 'completions'."""

    def __init__(self) -> None:
        self.auth: list[str | None] = []
        self.url = ""
        self.fail_on = ""
        self.served: dict[str, str] = {}
        """Added to every completion (``model``, ``system_fingerprint``)."""

    def answer(self, path: str, body: Any) -> Any:
        if path == "/v1/models":
            return {"object": "list", "data": [{"id": "stub-model"}]}
        if not body.get("echo"):
            return {"choices": [{"text": " and so on"}], **self.served}
        words = body["prompt"].split()
        tokens = [w if i == 0 else f" {w}" for i, w in enumerate(words)]
        offsets = [sum(len(t) for t in tokens[:i]) for i in range(len(tokens))]
        values = [None] + [-0.5 * (1 + i % 3) for i in range(1, len(tokens))]
        tops = [None] + [{tokens[i]: values[i], " the": -0.7} for i in range(1, len(tokens))]
        logprobs = {"tokens": tokens, "token_logprobs": values, "top_logprobs": tops}
        logprobs["text_offset"] = offsets
        usage = {"prompt_tokens": len(words), "completion_tokens": 0}
        choices = [{"text": body["prompt"], "logprobs": logprobs}]
        return {"choices": choices, "usage": usage, **self.served}


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[Stub]:
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    fake = Stub()

    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = orjson.loads(self.rfile.read(length)) if length else None
            fake.auth.append(self.headers.get("Authorization"))
            raw = orjson.dumps(fake.answer(self.path, body))
            failing = body and fake.fail_on and fake.fail_on in str(body.get("prompt"))
            self.send_response(400 if failing else 200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        do_GET = do_POST = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    fake.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield fake
    httpd.shutdown()
    httpd.server_close()


def test_the_api_key_is_sent_but_never_written(
    stub: Stub, files: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    out = tmp_path / "scores.json"
    args = ["probe", str(files["eval"]), "-m", f"openai:{stub.url}", "--api-key-env", KEY_ENV]
    result = run(*args, "-o", str(out), "--method", "min-k++,guided", "--format", "json", "--debug")
    assert result.exit_code == 0, result.output
    assert f"Bearer {SECRET}" in stub.auth
    assert SECRET not in result.stdout and SECRET not in result.stderr
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert out in written and not any(SECRET.encode() in p.read_bytes() for p in written)
    doc = assert_valid_report(out.read_bytes())
    assert doc["config"]["full_distribution"] is False and "truncated" in result.stderr
    assert doc["config"]["model"]["model"] == "stub-model"
    # NOTE: without --api-key-env no key is sent, even when OPENAI_API_KEY is set
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    stub.auth.clear()
    plain = run("probe", str(files["eval"]), "-m", f"openai:{stub.url}", "--method", "guided")
    assert plain.exit_code == 0, plain.output
    assert stub.auth and all(a is None for a in stub.auth)


def test_probe_prints_every_format_and_limits_the_table(files: dict[str, Path]) -> None:
    trained = run("probe", "train-lm", str(files["train"]), "-o", str(files["lm"]))
    assert trained.exit_code == 0, trained.output
    spec = f"ngram-lm:{files['lm']}"
    table = run("probe", str(files["eval"]), "-m", spec, "--method", "ppl", "--limit", "1")
    assert table.exit_code == 0, table.output
    assert "... 3 more scored examples not listed" in table.stdout
    assert not re.search(r"\d+ clean", table.stdout), table.stdout
    markdown = run("probe", str(files["eval"]), "-m", spec, "--method", "ppl", "-f", "markdown")
    assert markdown.exit_code == 0, markdown.output
    assert markdown.stdout.startswith("# contam probe")
    assert not re.search(r"\d+ clean", markdown.stdout), markdown.stdout
    sarif = run("probe", str(files["eval"]), "-m", spec, "--method", "ppl", "-f", "sarif")
    assert sarif.exit_code == 0, sarif.output
    assert orjson.loads(sarif.stdout)["version"] == "2.1.0"


def test_a_server_error_names_the_example_and_keeps_the_scored_ones(
    stub: Stub, files: dict[str, Path], tmp_path: Path
) -> None:
    # NOTE: the line named the endpoint only, not which of the eval set's examples failed
    stub.fail_on = "fence"
    out = tmp_path / "scores.json"
    args = ["probe", str(files["eval"]), "-m", f"openai:{stub.url}", "--method", "ppl"]
    result = run(*args, "-o", str(out), "--batch-size", "1")
    _one_line_error(result, f"eval example fresh ({files['eval']}:4)", "HTTP 400", "partial.jsonl")
    partial = (tmp_path / "scores.json.partial.jsonl").read_bytes().splitlines()
    assert [orjson.loads(line)["id"] for line in partial[1:]] == ["t0", "t1", "t2"]
    stub.fail_on = ""
    resumed = run(*args, "-o", str(out), "--batch-size", "1")
    assert resumed.exit_code == 0, resumed.output
    assert len(load_report(out).examples) == 5


def test_a_resumed_run_refuses_answers_of_another_deployment(
    stub: Stub, files: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # NOTE: the partial results knew the model by its name only: a resume after the endpoint
    # was redeployed (same name, other weights) mixed two models' scores in one report.
    stub.served = {"model": "stub-model", "system_fingerprint": "fp_a"}
    stub.fail_on = "fence"
    out = tmp_path / "scores.json"
    args = ["probe", str(files["eval"]), "-m", f"openai:{stub.url}", "--method", "ppl"]
    failed = run(*args, "-o", str(out), "--batch-size", "1")
    assert failed.exit_code == 2, failed.output
    partial = (tmp_path / "scores.json.partial.jsonl").read_bytes().splitlines()
    assert orjson.loads(partial[1]) == {"served": stub.served}
    stub.fail_on = ""
    stub.served = {"model": "stub-model", "system_fingerprint": "fp_b"}
    resumed = run(*args, "-o", str(out), "--batch-size", "1")
    _one_line_error(resumed, "system_fingerprint 'fp_b'", "system_fingerprint 'fp_a'", "--restart")
    cache = tmp_path / "cache" / "openai"
    assert f"the answer cache {cache} removed" in resumed.stderr and not out.exists()
    again = run(*args, "-o", str(out), "--batch-size", "1", "--restart")
    _one_line_error(again, "answers from the cache came from model 'stub-model' (system_")
    shutil.rmtree(cache)
    afresh = run(*args, "-o", str(out), "--batch-size", "1", "--restart")
    assert afresh.exit_code == 0, afresh.output
    assert load_report(out).config["model"]["served"] == stub.served


def _chat(path: Path, role: str, texts: list[str]) -> Path:
    rows = [
        {"id": f"c{i}", "messages": [{"role": role, "content": t}]} for i, t in enumerate(texts)
    ]
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def test_roles_that_no_turn_of_an_input_has_are_refused(
    files: dict[str, Path], tmp_path: Path
) -> None:
    """As scan refuses them: before, probe run scored the eval set and read every control as
    empty (their roles 'User'), exit 0; train-lm trained on the one file that matched."""
    assert run("probe", "train-lm", str(files["train"]), "-o", str(files["lm"])).exit_code == 0
    chat_eval = _chat(tmp_path / "eval_chat.jsonl", "user", TRAIN)
    controls = _chat(tmp_path / "controls.jsonl", "User", TRAIN[:2])
    spec = f"ngram-lm:{files['lm']}"
    args = ["probe", "run", str(chat_eval), "--model", spec, "--roles", "user"]
    assert run(*args).exit_code == 0
    said = "controls.jsonl: --roles user: no chat turn in it has any of these roles"
    _one_line_error(run(*args, "--controls", str(controls)), said)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    _chat(corpus / "a.jsonl", "user", TRAIN)
    _chat(corpus / "b.jsonl", "User", TRAIN)
    lm = str(tmp_path / "chat_lm.npz")
    said = "b.jsonl: --roles user: no chat turn in it has any of these roles"
    _one_line_error(run("probe", "train-lm", str(corpus), "-o", lm, "--roles", "user"), said)
    assert not Path(lm).exists()
