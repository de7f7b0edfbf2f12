"""probe(): methods and directions, unscorable texts, controls, the report, resuming, train_lm.

Everything runs on the built-in n-gram LM trained in tmp_path (and one test on a tiny local
GPT-2 through hf:, skipped without torch/transformers): fast, offline, deterministic.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from conftest import ROOT, assert_valid_report
from hypothesis import given, settings
from hypothesis import strategies as st

from contam_cli.detectors.providers import load_provider
from contam_cli.detectors.providers.base import ProviderError, TextScores
from contam_cli.errors import ArgumentError, InputError, OutputError, UsageError
from contam_cli.features.bench.textmodel import TextModel, TextParams
from contam_cli.features.probe import (
    control_percentiles,
    control_stats,
    probe,
    provider_options,
    sidecar_path,
    train_lm,
)
from contam_cli.features.probe.methods import FLOAT_MAX, parse_methods
from contam_cli.features.scan import scan
from contam_cli.report import iter_json, load_report, save_report
from contam_cli.stats import auc_from_labels
from contam_cli.text import tokenize
from contam_cli.text.fingerprint import text_fingerprint

ALL = "min-k,min-k++,ppl,zlib,guided"
TEXT_PARAMS = TextParams(
    vocab_size=2000,
    n_phrases=200,
    phrase_words=(3, 6),
    phrase_rate=0.75,
    filler_words=(1, 1),
    filler_after_phrase=False,
    non_ascii_share=0.0,
)


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTAM_CACHE_DIR", str(tmp_path / "cache"))


def sentences(seed: int, n: int) -> list[str]:
    """``n`` sentences of 15-29 words from one seeded synthetic text model."""
    rng = np.random.default_rng(seed)
    model = TextModel.build(rng, TEXT_PARAMS)
    return model.prose(rng, rng.integers(15, 30, size=n))


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A training text (one sentence per line), the LM trained on it, members, fresh sentences
    and controls, and an eval file alternating members and fresh sentences."""
    root = tmp_path_factory.mktemp("probe")
    texts = sentences(3, 200 + 30 + 20)
    train, fresh, controls = texts[:200], texts[200:230], texts[230:]
    (root / "train.txt").write_text("\n".join(train) + "\n", encoding="utf-8", newline="\n")
    lm = root / "model.npz"
    mp = pytest.MonkeyPatch()
    mp.setenv("CONTAM_CACHE_DIR", str(root / "cache"))
    try:
        trained = train_lm(root / "train.txt", lm, boundary="line")
    finally:
        mp.undo()
    rows = []
    for i in range(30):
        rows.append({"id": f"m{i}", "text": train[5 * i], "label": 1})
        rows.append({"id": f"f{i}", "text": fresh[i], "label": 0})
    eval_path = root / "eval.jsonl"
    eval_path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return {
        "root": root,
        "lm": lm,
        "spec": f"ngram-lm:{lm}",
        "trained": trained,
        "eval": eval_path,
        "rows": rows,
        "controls": controls,
    }


class Wrapped:
    """A provider passing through to another, counting calls, failing after ``fail_after``
    token_scores calls (raising, or killing the process with ``os._exit``)."""

    def __init__(self, inner: Any, fail_after: int | None = None, hard: bool = False) -> None:
        self.inner, self.spec, self.fail_after, self.hard = inner, inner.spec, fail_after, hard
        self.calls: list[int] = []

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    def token_scores(self, texts: Sequence[str]) -> list[TextScores]:
        if self.fail_after is not None and len(self.calls) >= self.fail_after:
            if self.hard:
                os._exit(9)
            raise ProviderError("the model server went away")
        self.calls.append(len(texts))
        return self.inner.token_scores(texts)

    def complete(self, prefixes: Sequence[str], *, max_tokens: int) -> list[str]:
        return self.inner.complete(prefixes, max_tokens=max_tokens)


class Fixed:
    """A provider returning the same per-token scores for every text."""

    spec = "fixed:"

    def __init__(self, logprob: list[float], full: bool = True) -> None:
        self.logprob, self.full = logprob, full

    def describe(self) -> dict[str, Any]:
        return {"provider": "fixed", "full_distribution": self.full}

    def token_scores(self, texts: Sequence[str]) -> list[TextScores]:
        lp = np.array(self.logprob)
        return [TextScores(lp, lp - 1.0, np.ones_like(lp), full_distribution=self.full)] * len(
            texts
        )

    def complete(self, prefixes: Sequence[str], *, max_tokens: int) -> list[str]:
        return ["" for _ in prefixes]


# -- methods, directions, unscorable ----------------------------------------------------------


def test_every_method_with_its_direction(world: dict[str, Any]) -> None:
    report = probe(world["eval"], model=world["spec"], methods=ALL, k=[20, 10])
    directions = {m.name: m.direction for m in report.methods}
    assert directions == {
        "min_k@20": "higher",
        "min_k@10": "higher",
        "min_k_pp@20": "higher",
        "min_k_pp@10": "higher",
        "perplexity": "lower",
        "zlib": "higher",
        "guided_f1": "higher",
    }
    assert {m.detector for m in report.methods} == {"probe"} and report.command == "probe"
    first = report.examples[0]
    assert all(v is not None for v in first.scores.values())
    details = first.details["probe"]
    assert details["tokens"] == len(tokenize(world["rows"][0]["text"]))
    assert details["full_distribution"] is True
    assert set(details["guided"]) == {"precision", "recall", "completion"}
    config = report.config
    assert config["model"]["provider"] == "ngram-lm" and config["methods"] == ALL.split(",")
    assert config["k"] == [20, 10] and config["batch_size"] == 16
    assert config["full_distribution"] is True and "normalization" in config
    assert (
        report.inputs["eval"][0]["records"] == 60 and len(report.inputs["eval"][0]["sha256"]) == 64
    )


def test_fingerprints_are_the_ones_a_scan_gives(world: dict[str, Any]) -> None:
    report = probe(world["eval"], model=world["spec"], methods="zlib")
    scanned = scan(world["eval"], [Path(world["root"] / "train.txt")])
    assert list(report.examples.fingerprints) == list(scanned.examples.fingerprints)
    assert report.examples.fingerprints[0] == text_fingerprint(world["rows"][0]["text"])


def test_unscorable_texts_get_none_never_a_clean_number(world: dict[str, Any]) -> None:
    texts = ["", "... !!! ...", "lonely", world["rows"][0]["text"]]
    report = probe(texts, model=world["spec"], methods=ALL)
    rows = list(report.examples)
    assert all(v is None for v in rows[0].scores.values())
    assert all(v is None for v in rows[1].scores.values())
    assert rows[2].scores["guided_f1"] is None and rows[2].scores["min_k_pp@20"] is not None
    assert all(v is not None for v in rows[3].scores.values())
    assert report.summary()["unscorable"] == 2 and report.summary()["examples"] == 4
    assert rows[0].details["probe"]["tokens"] == 0
    doc = assert_valid_report(orjson.loads(b"".join(_json(report))))
    assert doc["examples"][0]["scores"]["perplexity"] is None


def _json(report: Any) -> list[bytes]:
    return list(iter_json(report))


def test_truncated_distribution_is_a_warning_and_in_the_config() -> None:
    report = probe(["a b c", "d e f"], model=Fixed([-1.0, -2.0], full=False), methods="min-k++")
    assert report.config["full_distribution"] is False
    assert "truncated" in report.warnings[0]


def test_infinite_scores_keep_their_order_in_strict_json(tmp_path: Path) -> None:
    report = probe(
        ["a b"], model=Fixed([-np.inf, -1.0]), methods="min-k,ppl", output=tmp_path / "r.json"
    )
    assert report.examples[0].scores == {"min_k@20": -FLOAT_MAX, "perplexity": FLOAT_MAX}
    assert any("infinite" in w for w in report.warnings)
    assert load_report(tmp_path / "r.json") == report


def test_methods_and_k_are_checked() -> None:
    assert parse_methods("min-k++, ppl,min-k++") == ("min-k++", "ppl")
    with pytest.raises(UsageError, match="unknown probe method 'mink'"):
        probe(["a b"], model=Fixed([-1.0]), methods="mink")
    with pytest.raises(UsageError, match="between 0 and 100"):
        probe(["a b"], model=Fixed([-1.0]), k=[120])
    with pytest.raises(ArgumentError, match="batch_size"):
        probe(["a b"], model=Fixed([-1.0]), batch_size=0)


# -- guided prompting ---------------------------------------------------------------------------


def test_guided_with_the_ngram_lm(tmp_path: Path) -> None:
    seen = "the archivist folded seven maps into the cedar chest before dawn"
    other = "a violin repairer in the harbour town tunes old strings slowly"
    corpus = tmp_path / "t.txt"
    corpus.write_text(seen + "\n" + other + "\n", encoding="utf-8", newline="\n")
    lm = tmp_path / "lm.npz"
    train_lm(corpus, lm, boundary="line")
    fresh = "my neighbour painted the fence green on a windy afternoon"
    report = probe([seen, fresh], model=f"ngram-lm:{lm}", methods="guided")
    a, b = report.examples
    assert a.scores["guided_f1"] == 1.0 and a.details["probe"]["guided"]["recall"] == 1.0
    assert a.details["probe"]["guided"]["completion"] == "chest before dawn"
    assert b.scores["guided_f1"] < 0.5
    redacted = probe([seen], model=f"ngram-lm:{lm}", methods="guided", redact=True)
    assert redacted.examples[0].details["probe"]["guided"]["completion"] is None
    assert redacted.redact and redacted.examples[0].scores == a.scores
    capped = probe([seen], model=f"ngram-lm:{lm}", methods="guided", max_tokens=1)
    assert capped.examples[0].details["probe"]["guided"]["completion"] == "chest"


# -- controls -----------------------------------------------------------------------------------


def test_controls_give_percentiles_and_statistics(world: dict[str, Any]) -> None:
    report = probe(
        world["eval"], model=world["spec"], methods="min-k++,ppl", controls=world["controls"]
    )
    names = [m.name for m in report.methods]
    assert names == [
        "min_k_pp@20",
        "perplexity",
        "min_k_pp@20:control_pct",
        "perplexity:control_pct",
    ]
    assert all(m.direction == "higher" for m in report.methods[2:])
    alone = probe(world["controls"], model=world["spec"], methods="min-k++,ppl")
    for name, direction in (("min_k_pp@20", "higher"), ("perplexity", "lower")):
        c = alone.examples.scores[name]
        x = report.examples.scores[name]
        oriented_c, oriented_x = (c, x) if direction == "higher" else (-c, -x)
        want = [100 * np.mean((oriented_c < v) + 0.5 * (oriented_c == v)) for v in oriented_x]
        assert report.examples.scores[f"{name}:control_pct"] == pytest.approx(want)
        stats = report.stats["controls"][name]
        assert stats["n"] == 20 and stats["mean"] == pytest.approx(float(c.mean()))
        assert stats["sd"] == pytest.approx(float(c.std()))
        q99 = 99 if direction == "higher" else 1
        assert stats["percentiles"]["99"] == pytest.approx(float(np.percentile(c, q99)))
    pct = report.examples.scores["min_k_pp@20:control_pct"]
    assert pct[0::2].mean() > 80 > 60 > pct[1::2].mean()  # members vs fresh
    assert report.inputs["controls"][0]["records"] == 20
    doc = assert_valid_report(orjson.loads(b"".join(_json(report))))
    assert doc["summary"]["controls"]["perplexity"]["n"] == 20


def test_controls_no_control_scored_is_a_warning() -> None:
    report = probe(["a b"], model=Fixed([-1.0]), methods="guided", controls=["x"])
    assert report.examples.scores["guided_f1"][0] == 0.0  # an empty completion: scored, 0
    assert np.isnan(report.examples.scores["guided_f1:control_pct"][0])
    assert report.stats["controls"]["guided_f1"]["n"] == 0
    assert any("no control example" in w for w in report.warnings)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(-1e6, 1e6) | st.just(float("nan")), min_size=1, max_size=12),
    st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=12),
)
def test_control_percentiles_are_oriented_midranks(
    values: list[float], controls: list[float]
) -> None:
    high = control_percentiles(values, controls, "higher")
    low = control_percentiles([-v for v in values], [-c for c in controls], "lower")
    assert np.array_equal(high, low, equal_nan=True)
    known = ~np.isnan(np.array(values))
    assert np.all((high[known] >= 0) & (high[known] <= 100)) and np.isnan(high[~known]).all()
    order = np.argsort(np.array(values)[known], kind="stable")
    assert np.all(np.diff(high[known][order]) >= 0)  # more suspicious, higher percentile
    stats = control_stats(controls, "higher")
    assert stats["n"] == len(controls)


# -- the report ---------------------------------------------------------------------------------


@pytest.mark.parametrize("redact", [False, True])
def test_report_round_trips_and_validates(
    world: dict[str, Any], tmp_path: Path, redact: bool
) -> None:
    out = tmp_path / "scores.json"
    report = probe(
        world["eval"],
        model=world["spec"],
        methods=ALL,
        controls=world["controls"],
        output=out,
        redact=redact,
    )
    assert load_report(out) == report
    doc = assert_valid_report(out.read_bytes())
    assert doc["command"] == "probe" and doc["redacted"] is redact
    completions = [e["details"]["probe"]["guided"]["completion"] for e in doc["examples"]]
    assert all((c is None) == redact for c in completions)
    assert not sidecar_path(out).exists()
    again = tmp_path / "again.json"
    save_report(load_report(out), again)
    assert again.read_bytes() == out.read_bytes()


# -- resuming -----------------------------------------------------------------------------------


def test_a_run_stopped_half_way_resumes_to_the_same_report(
    world: dict[str, Any], tmp_path: Path
) -> None:
    whole = probe(
        world["eval"], model=world["spec"], methods=ALL, batch_size=8, controls=world["controls"]
    )
    out = tmp_path / "scores.json"
    failing = Wrapped(load_provider(world["spec"]), fail_after=3)
    with pytest.raises(ProviderError):
        probe(
            world["eval"],
            model=failing,
            methods=ALL,
            batch_size=8,
            controls=world["controls"],
            output=out,
        )
    assert not out.exists()
    lines = sidecar_path(out).read_bytes().splitlines()
    assert len(lines) == 1 + 3 * 8  # the header, then three batches of eight
    counting = Wrapped(load_provider(world["spec"]))
    resumed = probe(
        world["eval"],
        model=counting,
        methods=ALL,
        batch_size=8,
        controls=world["controls"],
        output=out,
    )
    assert resumed == whole and load_report(out) == whole
    assert sum(counting.calls) == 60 + 20 - 24  # only what was not scored yet
    assert not sidecar_path(out).exists()


def test_a_killed_process_resumes_to_the_same_report(world: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "scores.json"
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(ROOT / "tests" / "features")!r})
        from test_probe_feature import Wrapped
        from contam_cli.detectors.providers import load_provider
        from contam_cli.features.probe import probe
        killer = Wrapped(load_provider({world["spec"]!r}), fail_after=2, hard=True)
        probe({str(world["eval"])!r}, model=killer, methods="min-k++,ppl", batch_size=16,
              output={str(out)!r})
        """
    )
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'tests'}")
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, timeout=120)
    assert proc.returncode == 9, proc.stderr.decode()
    assert not out.exists() and len(sidecar_path(out).read_bytes().splitlines()) == 1 + 32
    with sidecar_path(out).open("ab") as fh:
        fh.write(b'{"set":"eval","i":40,"id":"m2')  # a line cut short by the kill
    resumed = probe(
        world["eval"], model=world["spec"], methods="min-k++,ppl", batch_size=16, output=out
    )
    assert resumed == probe(
        world["eval"], model=world["spec"], methods="min-k++,ppl", batch_size=16
    )


def test_a_sidecar_of_another_config_or_model_is_refused(
    world: dict[str, Any], tmp_path: Path
) -> None:
    out = tmp_path / "scores.json"
    failing = Wrapped(load_provider(world["spec"]), fail_after=1)
    with pytest.raises(ProviderError):
        probe(world["eval"], model=failing, methods="min-k++", output=out)
    with pytest.raises(UsageError, match=r"another configuration \(k\).*--restart"):
        probe(world["eval"], model=world["spec"], methods="min-k++", k=[10], output=out)
    other = tmp_path / "other.txt"
    other.write_text("\n".join(world["controls"]), encoding="utf-8", newline="\n")
    with pytest.raises(UsageError, match="another model"):
        probe(world["eval"], model=f"ngram-lm:{other}", methods="min-k++", output=out)
    with pytest.raises(UsageError, match="other eval or control examples"):
        probe(world["controls"], model=world["spec"], methods="min-k++", output=out)
    restarted = probe(
        world["eval"], model=world["spec"], methods="min-k++", k=[10], output=out, resume=False
    )
    assert restarted == probe(world["eval"], model=world["spec"], methods="min-k++", k=[10])
    sidecar_path(out).write_bytes(b"not json\n")
    with pytest.raises(InputError, match="not a contam probe sidecar"):
        probe(world["eval"], model=world["spec"], methods="min-k++", output=out)


def test_outputs_never_go_over_an_input(world: dict[str, Any]) -> None:
    with pytest.raises(OutputError, match="refusing"):
        probe(world["eval"], model=world["spec"], output=world["eval"])
    with pytest.raises(OutputError, match="refusing"):
        probe(
            world["root"],
            model=world["spec"],
            include=["eval.jsonl"],
            output=world["root"] / "x.json",
        )


# -- the model ----------------------------------------------------------------------------------


def test_a_wrong_or_unreachable_model_fails_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="unknown model spec"):
        probe(["a b"], model="gpt2")
    with pytest.raises(InputError, match="no such model file"):
        probe(["a b"], model=f"ngram-lm:{tmp_path / 'missing.npz'}")
    with pytest.raises(InputError, match="no such model file"):
        probe(["a b"], model=f"hf:{tmp_path / 'missing'}")
    with pytest.raises(ProviderError, match="cannot connect"):
        probe(
            ["a b"],
            model=f"openai:http://127.0.0.1:{closed_port()}/v1",
            provider_options={"max_retries": 0},
        )


def closed_port() -> int:
    """A local port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_provider_options_per_scheme(monkeypatch: pytest.MonkeyPatch) -> None:
    assert provider_options("hf:gpt2", device="cpu", dtype=None) == {"device": "cpu"}
    assert provider_options("openai:http://x/v1") == {"api_key_env": ""}
    monkeypatch.setenv("MY_KEY", "sk-1")
    got = provider_options("openai:http://x/v1", api_key_env="MY_KEY", served_model="m")
    assert got == {"api_key_env": "MY_KEY", "model": "m"}
    with pytest.raises(UsageError, match="--dtype applies to hf"):
        provider_options("openai:http://x/v1", dtype="float16")
    with pytest.raises(UsageError, match="NOT_SET_ANYWHERE.*not set"):
        provider_options("openai:http://x/v1", api_key_env="NOT_SET_ANYWHERE")


# -- train_lm -----------------------------------------------------------------------------------


def test_train_lm_writes_a_model_the_provider_loads(world: dict[str, Any], tmp_path: Path) -> None:
    trained = world["trained"]
    assert trained.documents == 1 and trained.tokens > 3000 and trained.config["boundary"] == "line"
    direct = load_provider(f"ngram-lm:{world['root'] / 'train.txt'}", boundary="line")
    text = world["rows"][0]["text"]
    [a] = load_provider(world["spec"]).token_scores([text])
    [b] = direct.token_scores([text])
    assert np.array_equal(a.logprob, b.logprob) and np.array_equal(a.sigma, b.sigma)
    memory = train_lm(["one two three", {"text": "two three four"}], tmp_path / "m.npz", order=2)
    assert (memory.documents, memory.tokens, memory.vocab_size) == (2, 6 + 2, 4 + 3)
    assert memory.config["order"] == 2
    with pytest.raises(UsageError, match=r"\.npz"):
        train_lm(["a b"], tmp_path / "model.lm")
    with pytest.raises(OutputError, match="refusing"):
        train_lm(world["root"], world["root"] / "inside.npz")


# -- the end-to-end acceptance ------------------------------------------------------------------


def test_min_k_plus_plus_separates_training_sentences_from_fresh_ones(
    world: dict[str, Any],
) -> None:
    report = probe(world["eval"], model=world["spec"], methods="min-k++")
    labels = [r["label"] for r in world["rows"]]
    auc = auc_from_labels(report.examples.scores["min_k_pp@20"], labels)
    assert auc is not None and auc > 0.9  # 0.993 here; the fixture: make_probe_fixture --measure


# -- hf -----------------------------------------------------------------------------------------


def test_the_hf_provider_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    tokenizers = pytest.importorskip("tokenizers")
    words = "the cat sat on the mat and a dog ran in the park while sun was low".split()
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(unk_token="<unk>"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tok.train_from_iterator(
        [" ".join(words)], tokenizers.trainers.WordLevelTrainer(special_tokens=["<unk>", "<eos>"])
    )
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", eos_token="<eos>"
    )
    torch.manual_seed(0)
    config = transformers.GPT2Config(
        n_layer=1, n_head=2, n_embd=16, n_positions=32, vocab_size=len(fast)
    )
    model_dir = tmp_path / "tiny-gpt2"
    transformers.GPT2LMHeadModel(config).eval().save_pretrained(model_dir)
    fast.save_pretrained(model_dir)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        report = probe(
            ["the cat sat on the mat", "a dog ran", "park"],
            model=f"hf:{model_dir}",
            methods="min-k++,ppl,guided",
            provider_options={"device": "cpu"},
            max_tokens=4,
        )
    finally:
        torch.set_num_threads(threads)
    assert report.config["model"]["provider"] == "hf" and report.config["full_distribution"]
    first, _, last = report.examples
    assert first.details["probe"]["tokens"] == 5 and first.scores["min_k_pp@20"] is not None
    assert last.scores["perplexity"] is None and last.scores["guided_f1"] is None  # one token
    assert_valid_report(orjson.loads(b"".join(_json(report))))
