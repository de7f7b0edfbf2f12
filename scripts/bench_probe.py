"""Measure probe scoring throughput: tokens scored per second by the model providers.

    python scripts/bench_probe.py [--texts 128] [--words 120] [--threads 1] [--rounds 3]
    python scripts/bench_probe.py --gpt2-small --device cuda [--dtype bfloat16]

Rows (a Markdown table on stdout, the machine above it):

* ``hf`` with a tiny GPT-2-shaped model (2 layers, 32 dims, context 64, so the default 120-word
  texts go through strided windows) and a word-level tokenizer, both built here from configs
  (random weights, no download), batch size 1 and 16;
* ``ngram-lm`` (the built-in n-gram language model, trained on the same synthetic corpus), one
  text per call and 16 per call; a "not available" row when that provider is not there;
* with ``--gpt2-small``: a GPT-2-small-sized model (12 layers, 768 dims, vocab 50,257, context
  1,024) with random weights, on ``--device``, for a throughput figure at a real vocabulary size.

"Batch" is both the provider's ``batch_size`` and how many texts go into one ``token_scores``
call. Each figure is the best of ``--rounds`` timed passes over all texts after one warm-up
call. Texts are synthetic (Zipf-distributed words), so only throughput means anything here.
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import random
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

BATCHES = (1, 16)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def synthetic_texts(n_texts: int, n_words: int, seed: int, vocab: int = 400) -> list[str]:
    """Texts of Zipf(1.1)-distributed pseudo-words (deterministic for a seed)."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(vocab)]
    weights = [1.0 / (rank + 1) ** 1.1 for rank in range(vocab)]
    return [" ".join(rng.choices(words, weights, k=n_words)) for _ in range(n_texts)]


def build_tokenizer(corpus: Sequence[str]) -> Any:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(corpus, trainers.WordLevelTrainer(special_tokens=["<unk>", "<eos>"]))
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", eos_token="<eos>")


def save_model(directory: Path, tokenizer: Any, *, small: bool) -> Path:
    """A GPT-2-shaped model with random weights, saved with its tokenizer into ``directory``."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    if small:  # GPT-2 small: 12 layers, 12 heads, 768 dims, context 1024, vocab 50257
        eos = tokenizer.eos_token_id
        config = GPT2Config(bos_token_id=eos, eos_token_id=eos)
        if len(tokenizer) > config.vocab_size:
            raise SystemExit("the word-level tokenizer outgrew GPT-2's vocabulary")
    else:
        config = GPT2Config(
            n_layer=2,
            n_head=2,
            n_embd=32,
            n_positions=64,
            vocab_size=len(tokenizer),
            bos_token_id=tokenizer.eos_token_id,
            eos_token_id=tokenizer.eos_token_id,
        )
    GPT2LMHeadModel(config).eval().save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def time_scoring(
    score: Callable[[Sequence[str]], list[Any]], texts: list[str], batch: int, rounds: int
) -> tuple[int, float]:
    """(tokens scored, best seconds over ``rounds`` passes), calling ``score`` per batch."""
    score(texts[:batch])  # warm-up: first-call allocations, lazy initialisation
    best, tokens = float("inf"), 0
    for _ in range(rounds):
        start = time.perf_counter()
        tokens = sum(
            len(s) for i in range(0, len(texts), batch) for s in score(texts[i : i + batch])
        )
        best = min(best, time.perf_counter() - start)
    return tokens, best


def _row(
    provider: str,
    model: str,
    device: str,
    dtype: str,
    batch: int,
    n_texts: int,
    tokens: int,
    seconds: float,
) -> str:
    rate = tokens / seconds if seconds > 0 else float("inf")
    return (
        f"| {provider} | {model} | {device} | {dtype} | {batch} | {n_texts} | {tokens} "
        f"| {seconds:.3f} | {rate:,.0f} |"
    )


def bench_hf(directory: Path, label: str, texts: list[str], args: argparse.Namespace) -> list[str]:
    from contam_cli.detectors.providers.hf import HFProvider

    rows = []
    for batch in BATCHES:
        provider = HFProvider(
            "hf:" + str(directory), device=args.device, dtype=args.dtype, batch_size=batch
        )
        info = provider.describe()
        tokens, seconds = time_scoring(provider.token_scores, texts, batch, args.rounds)
        rows.append(
            _row("hf", label, info["device"], info["dtype"], batch, len(texts), tokens, seconds)
        )
    return rows


def bench_ngram(corpus_path: Path, texts: list[str], args: argparse.Namespace) -> list[str]:
    try:  # written beside the hf provider; absent in older trees
        providers = importlib.import_module("contam_cli.detectors.providers")
        cache = corpus_path.parent / "ngram-cache"  # not the user's ~/.cache
        provider = providers.load_provider("ngram-lm:" + str(corpus_path), cache_dir=cache)
    except Exception as exc:  # the provider is optional here: say why the row is missing
        reason = f"{type(exc).__name__}: {exc}".replace("|", "/").splitlines()[0][:80]
        return [f"| ngram-lm | not available ({reason}) | - | - | - | - | - | - | - |"]
    rows = []
    for batch in BATCHES:
        tokens, seconds = time_scoring(provider.token_scores, texts, batch, args.rounds)
        rows.append(
            _row("ngram-lm", corpus_path.name, "cpu", "float64", batch, len(texts), tokens, seconds)
        )
    return rows


def machine_lines(args: argparse.Namespace) -> list[str]:
    import torch
    import transformers

    lines = [
        f"- CPU: {_cpu_model()}, {os.cpu_count()} logical cores, torch threads "
        f"{torch.get_num_threads()}",
        f"- Python {platform.python_version()}, torch {torch.__version__}, "
        f"transformers {transformers.__version__}",
    ]
    if args.device != "cpu" and torch.cuda.is_available():
        lines.append(f"- GPU: {torch.cuda.get_device_name(0)}")
    return lines


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--texts", type=int, default=128, help="texts per pass (default 128)")
    parser.add_argument("--words", type=int, default=120, help="words per text (default 120)")
    parser.add_argument("--rounds", type=int, default=3, help="timed passes, best kept")
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda", "auto"])
    parser.add_argument(
        "--dtype", default="auto", choices=["auto", "float32", "float16", "bfloat16"]
    )
    parser.add_argument(
        "--gpt2-small",
        action="store_true",
        help="also time a GPT-2-small-sized model (random weights)",
    )
    parser.add_argument("--gpt2-texts", type=int, default=16, help="texts for --gpt2-small")
    parser.add_argument("--gpt2-words", type=int, default=256, help="words per --gpt2-small text")
    parser.add_argument("--seed", type=int, default=1234)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    import torch
    import transformers

    transformers.utils.logging.disable_progress_bar()  # save_pretrained's bars
    if args.threads:
        torch.set_num_threads(args.threads)
    corpus = synthetic_texts(2000, 40, args.seed)
    texts = synthetic_texts(args.texts, args.words, args.seed + 1)
    tokenizer = build_tokenizer(corpus)
    rows = []
    with tempfile.TemporaryDirectory(prefix="contam-bench-probe-") as tmp:
        root = Path(tmp)
        tiny = save_model(root / "tiny", tokenizer, small=False)
        rows += bench_hf(tiny, "tiny gpt2 (2x32, ctx 64)", texts, args)
        corpus_path = root / "corpus.txt"
        corpus_path.write_text("\n".join(corpus) + "\n", encoding="utf-8")
        rows += bench_ngram(corpus_path, texts, args)
        if args.gpt2_small:
            small = save_model(root / "gpt2-small", tokenizer, small=True)
            long_texts = synthetic_texts(args.gpt2_texts, args.gpt2_words, args.seed + 2)
            rows += bench_hf(small, "gpt2-small size (random)", long_texts, args)
    print("\n".join(machine_lines(args)))
    print(
        f"- texts: {args.texts} x {args.words} words (gpt2-small: {args.gpt2_texts} x "
        f"{args.gpt2_words}), best of {args.rounds}\n"
    )
    print("| provider | model | device | dtype | batch | texts | tokens | seconds | tokens/s |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
