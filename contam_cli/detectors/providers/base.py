"""The provider interface: what every model back end gives the detectors.

A provider scores texts token by token (for Min-K%, Min-K%++, perplexity, zlib) and completes
prefixes (for guided prompting). Providers are plain objects; :func:`contam_cli.detectors.providers
.load_provider` builds one from a spec such as ``hf:gpt2``, ``openai:http://127.0.0.1:8000/v1`` or
``ngram-lm:corpus.txt``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from contam_cli.errors import ContamError

__all__ = ["Provider", "ProviderError", "TextScores", "provider_cache_dir"]


class ProviderError(ContamError):
    """A model back end failed or answered something unusable (unreachable server, malformed
    answer, exhausted retries). The message is one line, names the endpoint, never a secret."""


def provider_cache_dir(name: str) -> Path:
    """Where provider ``name`` keeps its on-disk cache: ``$CONTAM_CACHE_DIR/<name>`` or, when the
    variable is unset or empty, ``~/.cache/contam/<name>``."""
    root = os.environ.get("CONTAM_CACHE_DIR") or os.path.join("~", ".cache", "contam")
    return Path(root).expanduser() / name


@dataclass(frozen=True, eq=False)
class TextScores:
    """The per-token scores of one text under a model (all arrays of one length T, float64).

    Every token is scored given the tokens before it, so a token without any context is not
    scored: a model without a beginning-of-text context (GPT-2 through hf, most openai servers)
    scores every token but the first (a text of one model token scores nothing: T = 0), while
    one that has it (a BOS token, the n-gram LM's sentence start) scores every token.
    """

    logprob: np.ndarray
    """log p(observed token | context), natural log."""
    mu: np.ndarray
    """E[log p] under the model's own next-token distribution at that position (-entropy)."""
    sigma: np.ndarray
    """sqrt(E[(log p - mu)^2]) under the same distribution."""
    full_distribution: bool = True
    """False when mu and sigma come from a truncated (top-k) distribution, not the full one."""
    tokens: tuple[str, ...] = field(default=())
    """The scored tokens as text, when the provider knows them (for details and debugging)."""

    def __len__(self) -> int:
        return len(self.logprob)


@runtime_checkable
class Provider(Protocol):
    """A model back end. Implementations must be safe to call with any batch size >= 1."""

    spec: str
    """The spec it was built from (never holds a secret)."""

    def describe(self) -> dict[str, Any]:
        """What the report records about the model (name, revision/hash, device, dtype...).
        Never an API key or other secret."""
        ...

    def token_scores(self, texts: Sequence[str]) -> list[TextScores]:
        """Per-token scores of every text, in order."""
        ...

    def complete(self, prefixes: Sequence[str], *, max_tokens: int) -> list[str]:
        """A greedy (temperature 0) continuation of every prefix, in order."""
        ...
