"""Model back ends for the model-based detectors, built from a spec by :func:`load_provider`.

========================  =========================================================
spec                      provider
========================  =========================================================
``hf:NAME_OR_PATH``       transformers causal LM (extra ``[hf]``), local paths offline
``openai:BASE_URL``       any OpenAI-compatible endpoint (vLLM, llama.cpp, OpenAI)
``ngram-lm:PATH``         the built-in n-gram LM: a saved ``.npz`` or a text to train on
========================  =========================================================

Each module is imported only when its scheme is asked for, so ``hf:`` alone pulls in torch.
"""

from __future__ import annotations

import inspect
from typing import Any

from contam_cli.detectors.providers.base import Provider, ProviderError, TextScores
from contam_cli.errors import UsageError

__all__ = ["SCHEMES", "Provider", "ProviderError", "TextScores", "load_provider"]

SCHEMES = ("hf", "openai", "ngram-lm")


def load_provider(spec: str, **options: Any) -> Provider:
    """Build the provider a spec names; ``options`` go to its constructor (e.g. ``model=`` for
    openai, ``device=`` for hf, ``order=`` for ngram-lm). An unknown scheme or option is a
    UsageError.

    >>> load_provider("gpt2")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    contam_cli.errors.UsageError: unknown model spec 'gpt2': expected hf:..., openai:..., ...
    """
    scheme = spec.partition(":")[0] if ":" in spec else ""
    cls = _provider_class(scheme)
    if cls is None:
        expected = ", ".join(f"{name}:..." for name in SCHEMES)
        raise UsageError(f"unknown model spec {spec!r}: expected {expected}")
    try:
        inspect.signature(cls).bind(spec, **options)
    except TypeError as exc:
        raise UsageError(f"{scheme}: {exc}") from None
    provider: Provider = cls(spec, **options)
    return provider


def _provider_class(scheme: str) -> Any:
    # NOTE: imported here so that a scheme's dependencies load only when it is asked for.
    if scheme == "hf":
        from contam_cli.detectors.providers.hf import HFProvider

        return HFProvider
    if scheme == "openai":
        from contam_cli.detectors.providers.openai import OpenAIProvider

        return OpenAIProvider
    if scheme == "ngram-lm":
        from contam_cli.detectors.providers.ngram_lm import NgramLMProvider

        return NgramLMProvider
    return None
