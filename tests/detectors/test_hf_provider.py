"""The hf: provider against a tiny GPT-2-shaped model and tokenizer built here (no download).

Every expected value is computed directly with the model: one forward pass per prefix (or per
window), then log_softmax, μ and σ by hand in float64.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from contam_cli.detectors.providers.base import Provider, TextScores  # noqa: E402
from contam_cli.detectors.providers.hf import HFProvider, plan_windows  # noqa: E402
from contam_cli.errors import MissingExtraError, UsageError  # noqa: E402

N_POSITIONS = 64
SENTENCES = [
    "the cat sat on the mat and looked at the door",
    "a dog ran in the park while the sun was low",
    "the quick brown fox jumps over the lazy dog again",
    "we measure how often a model saw a benchmark before",
    "every token after the first one gets a score here",
]
TEXTS = [
    "the cat sat on the mat",
    "a dog ran",
    "the quick brown fox jumps over the lazy dog while we measure the sun",
    "park",
    "",
    "every token gets a score and the model saw the door",
]


def _tokenizer(with_bos: bool) -> Any:
    from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.WordLevelTrainer(special_tokens=["<unk>", "<eos>", "<bos>"])
    tok.train_from_iterator(SENTENCES, trainer)
    special: dict[str, str] = {"unk_token": "<unk>", "eos_token": "<eos>"}  # no pad token
    if with_bos:
        tok.post_processor = processors.TemplateProcessing(
            single="<bos> $A", special_tokens=[("<bos>", tok.token_to_id("<bos>"))]
        )
        special["bos_token"] = "<bos>"
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok, **special)


def _save_model(directory: Path, with_bos: bool) -> Path:
    tokenizer = _tokenizer(with_bos)
    torch.manual_seed(1234 + with_bos)
    config = transformers.GPT2Config(
        n_layer=2,
        n_head=2,
        n_embd=32,
        n_positions=N_POSITIONS,
        vocab_size=len(tokenizer),
        bos_token_id=tokenizer.convert_tokens_to_ids("<bos>"),
        eos_token_id=tokenizer.eos_token_id,
        initializer_range=0.4,  # sharper next-token distributions than the default 0.02
    )
    transformers.GPT2LMHeadModel(config).eval().save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


@pytest.fixture(scope="module", autouse=True)
def _one_thread() -> Iterator[None]:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def model_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("hf-tiny")
    return {
        "plain": _save_model(root / "plain", with_bos=False),
        "bos": _save_model(root / "bos", with_bos=True),
    }


@pytest.fixture(scope="module")
def providers(model_dirs: dict[str, Path]) -> dict[str, HFProvider]:
    mp = pytest.MonkeyPatch()
    mp.setenv("HF_HUB_OFFLINE", "1")
    try:
        return {
            "plain": HFProvider("hf:" + str(model_dirs["plain"]), device="cpu", batch_size=4),
            "bos": HFProvider("hf:" + str(model_dirs["bos"]), device="cpu", batch_size=4),
            "single": HFProvider("hf:" + str(model_dirs["plain"]), device="cpu", batch_size=1),
        }
    finally:
        mp.undo()


def _ids(provider: HFProvider, text: str) -> list[int]:
    """The ids the provider scores: the tokenizer's own encoding, BOS included, EOS not."""
    return list(provider._tokenizer(text)["input_ids"])


def _stats64(logits: Any, target: int) -> tuple[float, float, float]:
    logp = torch.log_softmax(logits.double(), dim=-1)
    p = logp.exp()
    mu = float((p * logp).sum())
    sigma = float((p * (logp - mu) ** 2).sum().sqrt())
    return float(logp[target]), mu, sigma


def _direct(provider: HFProvider, ids: list[int]) -> np.ndarray:
    """Token by token: the model on each prefix alone, its last position's distribution."""
    rows = []
    with torch.no_grad():
        for i in range(1, len(ids)):
            logits = provider._model(input_ids=torch.tensor([ids[:i]])).logits[0, -1]
            rows.append(_stats64(logits, ids[i]))
    return np.array(rows, dtype=np.float64).T.reshape(3, -1)


def _as_array(scores: TextScores) -> np.ndarray:
    return np.stack([scores.logprob, scores.mu, scores.sigma])


def test_is_a_provider_and_describes_itself(providers: dict[str, HFProvider]) -> None:
    provider = providers["plain"]
    assert isinstance(provider, Provider)
    info = provider.describe()
    weights = Path(provider.name) / "model.safetensors"
    assert info["weights_sha256"] == {
        "model.safetensors": hashlib.sha256(weights.read_bytes()).hexdigest()
    }
    assert info["model"] == provider.name and provider.spec == "hf:" + provider.name
    assert (info["device"], info["dtype"], info["context_length"]) == ("cpu", "float32", 64)
    assert info["vocab_size"] == len(provider._tokenizer) and info["stride"] == 32
    assert info["bos"] is False and providers["bos"].describe()["bos"] is True
    assert provider._tokenizer.pad_token == "<eos>"  # set, since the tokenizer had none


@pytest.mark.parametrize("kind", ["plain", "bos"])
def test_scores_equal_a_direct_computation(providers: dict[str, HFProvider], kind: str) -> None:
    provider = providers[kind]
    for text, scores in zip(TEXTS, provider.token_scores(TEXTS)):
        ids = _ids(provider, text)
        real = len(text.split())
        # without a BOS the first word has no context; with one, every word is scored
        assert len(scores) == (real if kind == "bos" else max(0, real - 1))
        assert len(scores) == max(0, len(ids) - 1)
        assert all(a.dtype == np.float64 for a in _as_array(scores))
        np.testing.assert_allclose(_as_array(scores), _direct(provider, ids), rtol=0, atol=1e-5)
        assert scores.tokens == tuple(text.split()[real - len(scores) :])
        assert scores.full_distribution


def test_sigma_and_mu_are_expectations_under_the_model(providers: dict[str, HFProvider]) -> None:
    scores = providers["plain"].token_scores([TEXTS[2]])[0]
    vocab = len(providers["plain"]._tokenizer)
    assert np.all(scores.mu < 0) and np.all(scores.mu > -np.log(vocab) - 1e-9)
    assert np.all(scores.sigma > 0) and np.all(scores.logprob < 0)


def test_batches_equal_one_at_a_time(providers: dict[str, HFProvider]) -> None:
    texts = TEXTS + [TEXTS[2] + " " + TEXTS[0], TEXTS[1]]
    batched = providers["plain"].token_scores(texts)
    alone = [providers["single"].token_scores([text])[0] for text in texts]
    assert [len(s) for s in batched] == [len(s) for s in alone]
    for b, a in zip(batched, alone):
        np.testing.assert_allclose(_as_array(b), _as_array(a), rtol=0, atol=1e-5)
    assert providers["plain"].token_scores([]) == []


def _long_text(n_words: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    words = " ".join(SENTENCES).split()
    return " ".join(rng.choice(words) for _ in range(n_words))


def _expected_windows(provider: HFProvider, ids: list[int], length: int, stride: int) -> Any:
    """The windowing rule written out independently: ends every `stride` tokens, the last at the
    text's end, each holding up to `length` tokens (BOS first), scoring only unscored tokens."""
    keep = 1 if provider.describe()["bos"] else 0
    blocks: list[tuple[float, float, float]] = []
    scored_to = 1
    end = min(length, len(ids))
    while True:
        window = ids[:end] if scored_to == 1 else ids[:keep] + ids[keep:end][-(length - keep) :]
        with torch.no_grad():
            logits = provider._model(input_ids=torch.tensor([window])).logits[0]
        new = end - scored_to
        positions = range(len(window) - 1 - new, len(window) - 1)
        blocks.extend(_stats64(logits[pos], window[pos + 1]) for pos in positions)
        scored_to = end
        if end == len(ids):
            return np.array(blocks).T
        end = min(end + stride, len(ids))


@pytest.mark.parametrize(("kind", "stride"), [("plain", None), ("plain", 20), ("bos", 37)])
def test_long_text_is_scored_completely_in_windows(
    model_dirs: dict[str, Path], kind: str, stride: int | None
) -> None:
    provider = HFProvider("hf:" + str(model_dirs[kind]), device="cpu", stride=stride)
    text = _long_text(3 * N_POSITIONS + 5)
    ids = _ids(provider, text)
    assert len(ids) > 3 * N_POSITIONS
    scores = provider.token_scores([text, TEXTS[0]])[0]
    assert len(scores) == len(ids) - 1
    expected = _expected_windows(provider, ids, N_POSITIONS, provider.stride)
    np.testing.assert_allclose(_as_array(scores), expected, rtol=0, atol=1e-5)
    # the first window is plain full-context scoring
    head = _direct(provider, ids[: N_POSITIONS // 4])
    np.testing.assert_allclose(_as_array(scores)[:, : head.shape[1]], head, rtol=0, atol=1e-5)


def test_plan_windows_covers_every_token_once() -> None:
    for n in range(0, 40):
        for length, stride, keep in [(8, 4, 0), (8, 7, 0), (8, 1, 0), (9, 3, 1), (5, 3, 1)]:
            windows = plan_windows(n, length, stride, keep)
            targets = [t for _, end, new in windows for t in range(end - new, end)]
            assert targets == list(range(1, n))
            for start, end, _ in windows[1:]:
                assert keep + end - start <= length


def _argmax_loop(provider: HFProvider, ids: list[int], steps: int) -> list[str]:
    eos = provider._tokenizer.eos_token_id
    new: list[int] = []
    with torch.no_grad():
        for _ in range(steps):
            token = int(provider._model(input_ids=torch.tensor([ids + new])).logits[0, -1].argmax())
            if token == eos:
                break
            new.append(token)
    return provider._tokenizer.convert_ids_to_tokens(new)


@pytest.mark.parametrize("kind", ["plain", "bos"])
def test_greedy_completion_is_deterministic_argmax(
    providers: dict[str, HFProvider], kind: str
) -> None:
    provider = providers[kind]
    prefixes = ["the cat sat on", "a dog", "the quick brown fox jumps over the lazy"]
    first = provider.complete(prefixes, max_tokens=5)
    assert provider.complete(prefixes, max_tokens=5) == first
    assert [provider.complete([p], max_tokens=5)[0] for p in prefixes] == first  # left padding
    for prefix, continuation in zip(prefixes, first):
        assert continuation.split() == _argmax_loop(provider, _ids(provider, prefix), 5)
    assert provider.complete(prefixes, max_tokens=0) == ["", "", ""]


def test_completion_of_long_and_empty_prefixes(providers: dict[str, HFProvider]) -> None:
    provider = providers["plain"]
    long_prefix = _long_text(2 * N_POSITIONS)  # cut from the left to fit the context
    ids = _ids(provider, long_prefix)[-(N_POSITIONS - 4) :]
    assert provider.complete([long_prefix], max_tokens=4)[0].split() == _argmax_loop(
        provider, ids, 4
    )
    empty = provider.complete([""], max_tokens=3)[0]  # starts from the EOS token
    assert len(empty.split()) <= 3
    with pytest.raises(UsageError, match="max_tokens"):
        provider.complete(["a"], max_tokens=N_POSITIONS)


def test_half_precision_is_scored_in_float32(model_dirs: dict[str, Path]) -> None:
    provider = HFProvider("hf:" + str(model_dirs["plain"]), device="cpu", dtype="bfloat16")
    assert provider.describe()["dtype"] == "bfloat16"
    scores = provider.token_scores([TEXTS[2]])[0]
    reference = HFProvider("hf:" + str(model_dirs["plain"]), device="cpu").token_scores([TEXTS[2]])
    assert scores.logprob.dtype == np.float64 and np.all(np.isfinite(_as_array(scores)))
    np.testing.assert_allclose(_as_array(scores), _as_array(reference[0]), atol=0.5)


def test_load_provider_builds_it_from_the_spec(model_dirs: dict[str, Path]) -> None:
    providers_module = pytest.importorskip("contam_cli.detectors.providers")
    provider = providers_module.load_provider("hf:" + str(model_dirs["plain"]), device="cpu")
    assert isinstance(provider, HFProvider) and provider.describe()["device"] == "cpu"


_HUB_SCRIPT = """
import json
from contam_cli.detectors.providers.hf import HFProvider
from contam_cli.errors import UsageError
info = HFProvider("hf:tiny/gpt2", device="cpu").describe()
try:
    HFProvider("hf:tiny/absent", device="cpu")
except UsageError as exc:
    info["absent"] = str(exc)
print(json.dumps(info))
"""


def test_hub_id_loads_offline_from_the_cache(model_dirs: dict[str, Path], tmp_path: Path) -> None:
    # A fresh interpreter: the Hub libraries read HF_HUB_CACHE and HF_HUB_OFFLINE at import.
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "models--tiny--gpt2"
    shutil.copytree(model_dirs["plain"], repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit, encoding="utf-8", newline="\n")
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    run = subprocess.run(
        [sys.executable, "-c", _HUB_SCRIPT], env=env, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    info = json.loads(run.stdout.strip().splitlines()[-1])
    assert (info["model"], info["revision"], info["weights_sha256"]) == ("tiny/gpt2", commit, None)
    assert "cannot load model 'tiny/absent'" in info["absent"]


def test_bad_options_are_usage_errors(model_dirs: dict[str, Path], tmp_path: Path) -> None:
    spec = "hf:" + str(model_dirs["plain"])
    with pytest.raises(UsageError, match="dtype"):
        HFProvider(spec, device="cpu", dtype="float8")
    with pytest.raises(UsageError, match="device"):
        HFProvider(spec, device="tpu")
    with pytest.raises(UsageError, match="stride"):
        HFProvider(spec, device="cpu", stride=64)
    with pytest.raises(UsageError, match="exceeds"):
        HFProvider(spec, device="cpu", max_length=65)
    with pytest.raises(UsageError, match="no model directory"):
        HFProvider("hf:" + str(tmp_path / "missing"), device="cpu")
    if not torch.cuda.is_available():
        with pytest.raises(UsageError, match="CUDA"):
            HFProvider(spec, device="cuda")


def test_missing_transformers_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(MissingExtraError) as info:
        HFProvider("hf:gpt2", device="cpu")
    assert (info.value.module, info.value.extra) == ("transformers", "hf")
