"""The built-in n-gram LM: exact moments, membership signal, file format, cache, dispatch."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import numpy as np
import orjson
import pytest

from contam_cli.detectors.providers import SCHEMES, load_provider
from contam_cli.detectors.providers import ngram_lm as ngram_module
from contam_cli.detectors.providers.base import Provider
from contam_cli.detectors.providers.ngram_lm import NgramConfig, NgramLM, NgramLMProvider, train
from contam_cli.detectors.scores import log_moments, min_k_plus_plus
from contam_cli.errors import ContamError, InputError, UsageError

FOX = "The quick brown fox jumps over the lazy dog."


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("CONTAM_CACHE_DIR", str(cache))
    return cache


def markov_docs(seed: int, n_docs: int, words: int, vocab: int = 400) -> list[str]:
    """Documents in one 'style': Zipfian words, each with three favourite successors, so
    that fresh text shares many bigrams with the training text (as prose does)."""
    rng = np.random.default_rng(12345)  # NOTE: the same style (successor table) for every seed
    ranks = 1.0 / np.arange(1, vocab + 1) ** 1.1
    ranks /= ranks.sum()
    successors = rng.choice(vocab, size=(vocab, 3), p=ranks)
    rng = np.random.default_rng(seed)
    docs = []
    for _ in range(n_docs):
        ids = [int(rng.choice(vocab, p=ranks))]
        for _ in range(words - 1):
            follow = rng.random() < 0.6
            nxt = successors[ids[-1], rng.integers(3)] if follow else rng.choice(vocab, p=ranks)
            ids.append(int(nxt))
        docs.append(" ".join(f"w{i}" for i in ids))
    return docs


def auc(positives: list[float], negatives: list[float]) -> float:
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_scores_equal_the_full_distribution(order: int) -> None:
    lm = train(markov_docs(0, 12, 120), NgramConfig(order=order))
    text = markov_docs(0, 1, 120)[0][:250] + " never seen tokens " + markov_docs(7, 1, 30)[0]
    scores = lm.score(text)
    assert len(scores) == len(scores.tokens) > 40 and scores.full_distribution
    for i, token in enumerate(scores.tokens):
        log_p = lm.log_distribution(scores.tokens[:i])
        assert np.exp(log_p).sum() == pytest.approx(1.0, abs=1e-12)
        assert np.isneginf(log_p[1])  # <s> is never predicted
        _, mu, sigma = log_moments(log_p[None, :])
        observed = log_p[lm.vocab.index(token) if token in lm.vocab else 0]
        got = (scores.logprob[i], scores.mu[i], scores.sigma[i])
        assert got == pytest.approx((observed, mu[0], sigma[0]), abs=1e-9)


def test_training_text_is_a_membership_signal() -> None:
    training = markov_docs(1, 40, 150)
    members = [" ".join(doc.split()[50:90]) for doc in training[:20]]  # from mid-document
    fresh = [" ".join(doc.split()[50:90]) for doc in markov_docs(2, 20, 150)]  # same style
    lm = train(training)
    score = {text: min_k_plus_plus(lm.score(text), [20])[20] or 0.0 for text in members + fresh}
    assert auc([score[t] for t in members], [score[t] for t in fresh]) > 0.9  # measured: 0.98


def test_unknown_tokens_have_probability_above_zero() -> None:
    lm = train([FOX])
    scores = lm.score("the zebra")
    assert np.all(np.isfinite(scores.logprob)) and scores.logprob[1] < scores.logprob[0]


def test_min_count_maps_rare_tokens_to_unk() -> None:
    lm = train(["a b a b a c"], NgramConfig(min_count=2))
    assert lm.vocab == ["<unk>", "<s>", "</s>", "a", "b"]
    assert np.all(np.isfinite(lm.score("a c d").logprob))


def test_boundaries_stop_ngrams() -> None:
    text = "x y\nz w\nx y"
    by_doc, by_line = train([text]), train([text], NgramConfig(boundary="line"))
    # "y z" only exists across a line break
    assert by_doc.score("y z").logprob[1] > by_line.score("y z").logprob[1]
    sentences = train(["One two. Three four! Five"], NgramConfig(boundary="sentence"))
    assert sentences.score("three").logprob[0] > by_doc.score("three").logprob[0]


def test_greedy_completion_reproduces_memorized_text() -> None:
    lm = train([FOX, "Cats sleep all day long."])
    assert lm.complete("the quick brown", 4) == "fox jumps over the"
    assert lm.complete("over the lazy", 10) == "dog"  # stops at the end of the document


def test_empty_training_text_is_an_error() -> None:
    with pytest.raises(ContamError, match="no tokens"):
        train(["", "  !! "])


@pytest.mark.parametrize(
    "kwargs", [{"order": 0}, {"order": 7}, {"min_count": 0}, {"boundary": "page"}]
)
def test_bad_config_is_a_usage_error(kwargs: dict) -> None:
    with pytest.raises(UsageError):
        NgramConfig(**kwargs)


def test_save_load_round_trip(tmp_path: Path) -> None:
    lm = train(markov_docs(3, 5, 80), NgramConfig(order=4, boundary="line"))
    path = tmp_path / "lm.npz"
    lm.save(path)
    back = NgramLM.load(path)
    assert back.config == lm.config and back.vocab == lm.vocab
    assert back.describe() == lm.describe()
    text = markov_docs(3, 1, 80)[0]
    a, b = lm.score(text), back.score(text)
    assert np.array_equal(a.logprob, b.logprob) and np.array_equal(a.sigma, b.sigma)
    header = orjson.loads(np.load(path)["header"].tobytes())
    assert header["format"] == "contam-ngram-lm" and header["version"] == 1
    assert header["data_sha256"] == lm.describe()["data_sha256"]


def test_load_refuses_other_files(tmp_path: Path) -> None:
    other = tmp_path / "other.npz"
    np.savez(other, header=np.frombuffer(b'{"format": "x", "version": 1}', dtype=np.uint8))
    with pytest.raises(InputError, match="not a contam-ngram-lm file"):
        NgramLM.load(other)
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip")
    with pytest.raises(InputError, match="junk.npz"):
        NgramLM.load(junk)


def test_provider_trains_once_and_caches(
    tmp_path: Path, _cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(FOX + "\n", encoding="utf-8", newline="\n")
    first = load_provider(f"ngram-lm:{corpus}")
    assert isinstance(first, NgramLMProvider) and isinstance(first, Provider)
    assert len(list(_cache_dir.glob("ngram-lm/*.npz"))) == 1

    def no_training(*args: object, **kwargs: object) -> NgramLM:
        raise AssertionError("trained again")

    monkeypatch.setattr(ngram_module, "train", no_training)
    second = load_provider(f"ngram-lm:{corpus}")
    assert second.describe() == first.describe()
    assert second.describe()["provider"] == "ngram-lm"
    [a], [b] = first.token_scores(["quick brown fox"]), second.token_scores(["quick brown fox"])
    assert np.array_equal(a.logprob, b.logprob)
    assert second.complete(["the quick"], max_tokens=2) == ["brown fox"]

    monkeypatch.undo()
    monkeypatch.setenv("CONTAM_CACHE_DIR", str(_cache_dir))
    corpus.write_text(
        FOX + " Again.\n", encoding="utf-8", newline="\n"
    )  # new content: a new cache entry
    load_provider(f"ngram-lm:{corpus}")
    load_provider(f"ngram-lm:{corpus}", order=2)  # new config: another one
    assert len(list(_cache_dir.glob("ngram-lm/*.npz"))) == 3


def test_provider_rebuilds_a_damaged_cache_entry(tmp_path: Path, _cache_dir: Path) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text(FOX, encoding="utf-8", newline="\n")
    load_provider(f"ngram-lm:{corpus}")
    [entry] = _cache_dir.glob("ngram-lm/*.npz")
    entry.write_bytes(b"damaged")
    provider = NgramLMProvider(f"ngram-lm:{corpus}")
    assert len(provider.token_scores([FOX])[0]) == 9
    assert NgramLM.load(entry).describe() == provider.model.describe()  # rewritten whole


def test_provider_reads_corpus_directories_and_jsonl(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "a.jsonl").write_bytes(orjson.dumps({"text": FOX}) + b"\n")
    (folder / "b.txt").write_text("Cats sleep all day long.", encoding="utf-8", newline="\n")
    provider = load_provider(f"ngram-lm:{folder}")
    assert provider.describe()["tokens"] == 9 + 1 + 5 + 1  # tokens and </s> per document


def test_provider_loads_a_saved_model(tmp_path: Path) -> None:
    path = tmp_path / "fox.npz"
    train([FOX], NgramConfig(order=2)).save(path)
    provider = load_provider(f"ngram-lm:{path}")
    assert provider.describe()["order"] == 2
    with pytest.raises(UsageError, match="keeps the options"):
        load_provider(f"ngram-lm:{path}", order=4)


@pytest.mark.parametrize("spec", ["ngram-lm:", "ngram-lm:/no/such/file.txt"])
def test_provider_bad_paths(spec: str) -> None:
    with pytest.raises(ContamError):
        load_provider(spec)


def test_load_provider_rejects_unknown_schemes_and_options(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as info:
        load_provider("llama:7b")
    assert all(f"{scheme}:" in str(info.value) for scheme in SCHEMES)
    corpus = tmp_path / "c.txt"
    corpus.write_text(FOX, encoding="utf-8", newline="\n")
    with pytest.raises(UsageError, match="ngram-lm: .*temperature"):
        load_provider(f"ngram-lm:{corpus}", temperature=0)


def test_load_provider_imports_hf_lazily(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = types.ModuleType("contam_cli.detectors.providers.hf")

    class HFProvider:
        def __init__(self, spec: str, *, device: str = "auto") -> None:
            self.spec, self.device = spec, device

    fake.HFProvider = HFProvider  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "contam_cli.detectors.providers.hf", fake)
    provider = load_provider("hf:gpt2", device="cpu")
    assert isinstance(provider, HFProvider) and provider.device == "cpu"
