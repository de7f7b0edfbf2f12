"""The Hugging Face transformers provider: ``hf:NAME_OR_PATH`` (extra ``[hf]``).

A causal LM (``AutoModelForCausalLM`` + ``AutoTokenizer``) from the Hub or, offline, from a local
directory written by ``save_pretrained``. torch and transformers are imported when a provider is
built; without them :class:`~contam_cli.errors.MissingExtraError` names the extra. Scoring:

* **What is scored.** A text is tokenized with the tokenizer's leading special tokens (BOS), not
  its trailing ones (an appended EOS is not part of the text). Every token after the first is
  scored given all tokens before it: with a BOS, scoring starts at the first real token; a
  tokenizer that adds no BOS (GPT-2's) leaves the text's first token unscored.
* **The statistics.** Per scored position: log p of the observed token, μ = Σ p·log p and
  σ = sqrt(Σ p·(log p − μ)²) over the whole vocabulary under the model's own distribution, in
  float32 (whatever the model's dtype) in chunks of rows, returned as float64.
* **Batching.** Windows are sorted by length, right-padded with an attention mask and run
  ``batch_size`` at a time. With right padding and a causal model no real token attends to a pad
  and positions are unchanged, so batch results equal one-at-a-time results (to float rounding).
* **Long texts.** A text longer than ``max_length`` tokens (default: the model's context) is
  scored in strided windows: the first window scores its tokens 1..L−1; each next window ends
  ``stride`` tokens later (the last one at the text's end), holds the L tokens before its end
  and scores only the tokens not scored yet, so every token is scored exactly once and, past the
  first window, with at least L − stride tokens of context. When the tokenizer adds a BOS, later
  windows start with that BOS too (and hold one text token less).
"""

from __future__ import annotations

import hashlib
import importlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from contam_cli.detectors.providers.base import TextScores
from contam_cli.errors import MissingExtraError, UsageError

__all__ = ["HFProvider", "plan_windows"]

DEVICES = ("auto", "cpu", "cuda")
DTYPES = ("auto", "float32", "float16", "bfloat16")
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")
_CONTEXT_KEYS = ("max_position_embeddings", "n_positions", "n_ctx", "seq_length")
_CHUNK_ELEMENTS = 1 << 24  # logits elements per float32 chunk of the vocabulary statistics
_LOGP_FLOOR = -1.0e4  # log p below this has p == 0 in float32; clamps -inf to keep sums finite


def _require(module: str) -> Any:
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")  # NOTE: nothing leaves the machine
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(module, "hf") from exc


def plan_windows(
    n_tokens: int, max_length: int, stride: int, keep: int = 0
) -> list[tuple[int, int, int]]:
    """The windows that score a text of ``n_tokens`` tokens: ``(start, end, n_new)`` each.

    A window's tokens are ``ids[start:end]``, preceded by ``ids[:keep]`` (the BOS) for every
    window but the first (whose start is 0); it scores its last ``n_new`` targets, tokens
    ``end - n_new .. end - 1``. Together the windows score tokens 1..n_tokens−1 once each.

    >>> plan_windows(10, 4, 2)
    [(0, 4, 3), (2, 6, 2), (4, 8, 2), (6, 10, 2)]
    >>> plan_windows(3, 4, 2)
    [(0, 3, 2)]
    """
    if n_tokens < 2:
        return []
    end = min(max_length, n_tokens)
    windows = [(0, end, end - 1)]
    while end < n_tokens:
        new_end = min(end + stride, n_tokens)
        start = max(keep, new_end - (max_length - keep))
        windows.append((start, new_end, new_end - end))
        end = new_end
    return windows


def _resolve_device(torch: Any, device: str) -> str:
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.split(":")[0] not in DEVICES[1:]:
        raise UsageError(f"device must be one of {', '.join(DEVICES)} (got {device!r})")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise UsageError(f"device {device!r}: torch sees no CUDA device")
    return device


def _load_dtype(torch: Any, dtype: str, device: str) -> Any:
    """What ``from_pretrained`` gets: auto is float32 on CPU, the checkpoint's dtype on a GPU."""
    if dtype not in DTYPES:
        raise UsageError(f"dtype must be one of {', '.join(DTYPES)} (got {dtype!r})")
    if dtype == "auto":
        return torch.float32 if device == "cpu" else "auto"
    return getattr(torch, dtype)


def _sha256_weights(directory: Path) -> dict[str, str]:
    """The sha256 of every weights file directly inside a local model directory."""
    digests: dict[str, str] = {}
    for path in sorted(directory.iterdir()):
        if path.is_file() and path.name.endswith(_WEIGHT_SUFFIXES):
            digest = hashlib.sha256()
            with path.open("rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
            digests[path.name] = digest.hexdigest()
    return digests


def _local_directory(name: str) -> Path | None:
    """The model directory ``name`` names, or None for a Hub id (``gpt2``, ``org/model``)."""
    path = Path(name).expanduser()
    if path.is_dir():
        return path
    if name.startswith((".", "/", "~")) or name.count("/") > 1:
        raise UsageError(f"hf: no model directory at {name!r}")
    return None


def _hub_revision(repo_id: str) -> str | None:
    """The commit of the cached snapshot a Hub model was loaded from (None when unknown)."""
    from huggingface_hub import try_to_load_from_cache  # a dependency of transformers

    found = try_to_load_from_cache(repo_id, "config.json")
    return Path(found).parent.name if isinstance(found, str) else None


def _vocab_size(model: Any) -> int | None:
    """Rows of the model's output layer (the distribution μ and σ run over)."""
    weight = getattr(model.get_output_embeddings(), "weight", None)
    return int(weight.shape[0]) if weight is not None else getattr(model.config, "vocab_size", None)


class HFProvider:
    """A transformers causal LM as a :class:`~contam_cli.detectors.providers.base.Provider`.

    ``spec`` is ``hf:NAME_OR_PATH``: a Hub model id, or a local directory (loaded with
    ``local_files_only``, so it works offline). ``device`` is cpu, cuda (or cuda:N) or auto;
    ``dtype`` is float32, float16, bfloat16 or auto (float32 on CPU, the checkpoint's dtype on
    a GPU). ``max_length`` caps a scoring window (default: the model's context length) and
    ``stride`` is how far each next window moves (default ``max_length // 2``).
    """

    def __init__(
        self,
        spec: str,
        *,
        device: str = "auto",
        dtype: str = "auto",
        batch_size: int = 8,
        max_length: int | None = None,
        stride: int | None = None,
    ) -> None:
        name = spec[3:] if spec.startswith("hf:") else spec
        if not name:
            raise UsageError("hf: spec needs a model name or path, e.g. hf:gpt2")
        if batch_size < 1:
            raise UsageError(f"batch_size must be at least 1 (got {batch_size})")
        self.spec = f"hf:{name}"
        self.name, self.batch_size = name, batch_size
        self._torch, self._transformers = _require("torch"), _require("transformers")
        self.device = _resolve_device(self._torch, device)
        self._local = _local_directory(name)
        self._model, self._tokenizer = self._load(_load_dtype(self._torch, dtype, self.device))
        self._lead = self._leading_special_ids()
        self.max_length, self.stride = self._window_sizes(max_length, stride)
        self._weights: dict[str, str] | None = None

    # -- loading -------------------------------------------------------------------------------

    def _load(self, load_dtype: Any) -> tuple[Any, Any]:
        tf = self._transformers
        offline = self._local is not None or os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0")
        source = str(self._local) if self._local is not None else self.name
        bars = tf.utils.logging.is_progress_bar_enabled()
        tf.utils.logging.disable_progress_bar()
        try:
            tokenizer = tf.AutoTokenizer.from_pretrained(source, local_files_only=offline)
            model = tf.AutoModelForCausalLM.from_pretrained(
                source, local_files_only=offline, dtype=load_dtype
            )
        except (OSError, ValueError) as exc:
            raise UsageError(f"hf: cannot load model {self.name!r}: {exc}") from exc
        finally:
            if bars:
                tf.utils.logging.enable_progress_bar()
        model.to(self.device).eval()  # eval: no dropout, deterministic scores
        if tokenizer.pad_token is None:  # padding is masked out: any existing token will do
            tokenizer.pad_token = tokenizer.eos_token or tokenizer.unk_token
        return model, tokenizer

    def _leading_special_ids(self) -> list[int]:
        """The ids the tokenizer puts before a text (its BOS), found by encoding a probe."""
        probe = "Hello world"
        plain = self._tokenizer(probe, add_special_tokens=False)["input_ids"]
        full = self._tokenizer(probe, add_special_tokens=True)["input_ids"]
        for k in range(len(full) - len(plain) + 1):
            if full[k : k + len(plain)] == plain:
                return list(full[:k])
        return []

    def _window_sizes(self, max_length: int | None, stride: int | None) -> tuple[int, int]:
        config = self._model.config
        limits = [getattr(config, key, None) for key in _CONTEXT_KEYS]
        context = next((v for v in limits if isinstance(v, int) and v > 0), None)
        if context is None:
            model_max = getattr(self._tokenizer, "model_max_length", None)
            context = model_max if isinstance(model_max, int) and model_max < 10**7 else None
        if max_length is None:
            if context is None:
                raise UsageError(f"hf: {self.name!r} states no context length; give max_length")
            max_length = context
        if context is not None and max_length > context:
            raise UsageError(f"max_length {max_length} exceeds the model's context ({context})")
        keep = len(self._lead)
        if max_length < keep + 2:
            raise UsageError(f"max_length must be at least {keep + 2} (got {max_length})")
        stride = max_length // 2 if stride is None else stride
        if not 1 <= stride <= max_length - 1 - keep:
            raise UsageError(f"stride must be in 1..{max_length - 1 - keep} (got {stride})")
        return max_length, stride

    @property
    def pad_id(self) -> int:
        """The id written into padding (never attended to, so any valid id would do)."""
        tok = self._tokenizer
        for value in (tok.pad_token_id, tok.eos_token_id, tok.unk_token_id):
            if isinstance(value, int):
                return value
        return 0

    def describe(self) -> dict[str, Any]:
        """Model name/path, revision (Hub) or weights sha256 (local), device, dtype, sizes."""
        if self._local is not None and self._weights is None:
            self._weights = _sha256_weights(self._local)
        return {
            "provider": "hf",
            "model": self.name,
            "model_type": getattr(self._model.config, "model_type", None),
            "revision": None if self._local is not None else _hub_revision(self.name),
            "weights_sha256": self._weights,
            "device": self.device,
            "dtype": str(self._model.dtype).removeprefix("torch."),
            "vocab_size": _vocab_size(self._model),
            "context_length": self.max_length,
            "stride": self.stride,
            "bos": bool(self._lead),
            "torch": self._torch.__version__,
            "transformers": self._transformers.__version__,
        }

    # -- scoring -------------------------------------------------------------------------------

    def _encode(self, texts: Sequence[str]) -> list[list[int]]:
        if not texts:
            return []
        plain = self._tokenizer(list(texts), add_special_tokens=False, verbose=False)["input_ids"]
        return [self._lead + list(ids) for ids in plain]

    def token_scores(self, texts: Sequence[str]) -> list[TextScores]:
        """Per-token logprob, μ and σ of every text (see the module docstring for what counts)."""
        encoded = self._encode(texts)
        items: list[tuple[int, list[int], int]] = []  # (text index, window ids, n_new)
        keep = len(self._lead)
        for t, ids in enumerate(encoded):
            for start, end, n_new in plan_windows(len(ids), self.max_length, self.stride, keep):
                window = ids[start:end] if start == 0 else ids[:keep] + ids[start:end]
                items.append((t, window, n_new))
        order = sorted(range(len(items)), key=lambda i: -len(items[i][1]))  # less padding
        results: dict[int, np.ndarray] = {}
        for lo in range(0, len(order), self.batch_size):
            batch = order[lo : lo + self.batch_size]
            stats = self._score_windows([items[i][1] for i in batch], [items[i][2] for i in batch])
            results.update(zip(batch, stats))
        per_text: list[list[np.ndarray]] = [[] for _ in encoded]
        for i, (t, _, _) in enumerate(items):  # items are in text order, windows left to right
            per_text[t].append(results[i])
        return [self._text_scores(ids, blocks) for ids, blocks in zip(encoded, per_text)]

    def _text_scores(self, ids: list[int], blocks: list[np.ndarray]) -> TextScores:
        stats = np.concatenate(blocks, axis=1) if blocks else np.zeros((3, 0), dtype=np.float64)
        tokens = tuple(self._tokenizer.convert_ids_to_tokens(ids[1:])) if len(ids) > 1 else ()
        return TextScores(logprob=stats[0], mu=stats[1], sigma=stats[2], tokens=tokens)

    def _score_windows(self, windows: list[list[int]], n_new: list[int]) -> list[np.ndarray]:
        """Run one right-padded batch; per window a (3, n_new) float64 array: logprob, μ, σ."""
        torch = self._torch
        ids, mask = self._padded(windows, left=False)
        rows = [b for b, new in enumerate(n_new) for _ in range(new)]
        cols = [c for w, new in zip(windows, n_new) for c in range(len(w) - 1 - new, len(w) - 1)]
        with torch.no_grad():
            logits = self._model(input_ids=ids, attention_mask=mask, use_cache=False).logits
            index = torch.tensor([rows, cols], dtype=torch.long, device=logits.device)
            targets = ids.to(logits.device)[index[0], index[1] + 1]
            stats = _distribution_stats(torch, logits, index, targets)
        return list(np.split(stats, np.cumsum(n_new)[:-1], axis=1))

    def _padded(self, sequences: list[list[int]], *, left: bool) -> tuple[Any, Any]:
        """``(input_ids, attention_mask)`` on the device, padded to the longest sequence."""
        torch = self._torch
        width = max(len(seq) for seq in sequences)
        ids = torch.full((len(sequences), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(sequences), width), dtype=torch.long)
        for b, seq in enumerate(sequences):
            cols = slice(width - len(seq), width) if left else slice(0, len(seq))
            ids[b, cols] = torch.tensor(seq, dtype=torch.long)
            mask[b, cols] = 1
        return ids.to(self.device), mask.to(self.device)

    # -- completion ----------------------------------------------------------------------------

    def complete(self, prefixes: Sequence[str], *, max_tokens: int) -> list[str]:
        """Greedy continuations (decoded continuation only), ``batch_size`` prefixes at a time.

        A prefix longer than the context allows is cut from the left (its BOS kept); generation
        stops at the model's EOS or after ``max_tokens`` tokens.
        """
        if max_tokens < 0:
            raise UsageError(f"max_tokens must be >= 0 (got {max_tokens})")
        room = self.max_length - max_tokens
        if max_tokens and room < len(self._lead) + 1:
            raise UsageError(f"max_tokens {max_tokens} leaves no room in {self.max_length} tokens")
        if max_tokens == 0:
            return ["" for _ in prefixes]
        out: list[str] = []
        encoded = self._encode(prefixes)
        for lo in range(0, len(encoded), self.batch_size):
            out.extend(self._complete_batch(encoded[lo : lo + self.batch_size], max_tokens, room))
        return out

    def _complete_batch(self, encoded: list[list[int]], max_tokens: int, room: int) -> list[str]:
        keep, tok = len(self._lead), self._tokenizer
        starter = next((i for i in (tok.bos_token_id, tok.eos_token_id) if isinstance(i, int)), 0)
        encoded = [ids or [starter] for ids in encoded]
        encoded = [ids[:keep] + ids[keep:][-(room - keep) :] for ids in encoded]  # cut left
        ids, mask = self._padded(encoded, left=True)  # every prefix ends at the last column
        with self._torch.no_grad():
            generated = self._model.generate(
                input_ids=ids,
                attention_mask=mask,
                max_new_tokens=max_tokens,
                do_sample=False,
                num_beams=1,
                pad_token_id=self.pad_id,
                eos_token_id=sorted(self._stop_ids()) or None,
            )
        new = generated[:, ids.shape[1] :].tolist()
        return [self._decode_continuation(ids, cont) for ids, cont in zip(encoded, new)]

    def _stop_ids(self) -> set[int]:
        """EOS ids of the tokenizer and of the model's generation config (where it stops)."""
        config = getattr(self._model, "generation_config", None)
        ids: set[int] = set()
        for value in (self._tokenizer.eos_token_id, getattr(config, "eos_token_id", None)):
            if isinstance(value, int):
                ids.add(value)
            elif isinstance(value, (list, tuple)):
                ids.update(v for v in value if isinstance(v, int))
        return ids

    def _decode_continuation(self, prefix: list[int], continuation: list[int]) -> str:
        """The text the continuation adds, decoded in context (keeps a leading space)."""
        stops = self._stop_ids()
        cut = next((i for i, token in enumerate(continuation) if token in stops), None)
        continuation = continuation[:cut]
        decode = self._tokenizer.decode
        head = decode(prefix, skip_special_tokens=True)
        full = decode(prefix + continuation, skip_special_tokens=True)
        if full.startswith(head):
            return str(full[len(head) :])
        return str(decode(continuation, skip_special_tokens=True))


def _distribution_stats(torch: Any, logits: Any, index: Any, targets: Any) -> np.ndarray:
    """(3, N) float64: log p[target], μ = Σ p·log p, σ = sqrt(Σ p·(log p − μ)²) per position.

    ``index`` is (2, N): the (batch row, position) of each scored prediction in ``logits``
    (B, W, V). Positions go through float32 in chunks of about ``_CHUNK_ELEMENTS`` logits, so a
    half-precision model and a 100k+ vocabulary neither lose precision nor allocate (N, V)
    float32 at once.
    """
    n_rows, vocab = index.shape[1], logits.shape[-1]
    out = np.empty((3, n_rows), dtype=np.float64)
    step = max(1, _CHUNK_ELEMENTS // max(1, vocab))
    for lo in range(0, n_rows, step):
        rows, cols = index[:, lo : lo + step]
        logp = torch.log_softmax(logits[rows, cols].float(), dim=-1)
        observed = logp.gather(1, targets[lo : lo + step, None]).squeeze(1)
        logp.clamp_(min=_LOGP_FLOOR)
        p = logp.exp()
        mu = torch.linalg.vecdot(p, logp)  # Σ p·log p without an (n, V) product temporary
        var = torch.linalg.vecdot(p, logp.sub_(mu[:, None]).square_())  # two-pass: no cancellation
        chunk = torch.stack([observed, mu, var.clamp(min=0.0).sqrt()])
        out[:, lo : lo + step] = chunk.double().cpu().numpy()
    return out
