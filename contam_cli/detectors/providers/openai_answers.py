"""The OpenAI-compatible provider's answers: the echoed log-probs' positions, how many of them
belong to the prompt, and who answered (the model and ``system_fingerprint`` it names)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from contam_cli.detectors.providers.base import ProviderError

__all__ = [
    "PinnedBy",
    "Served",
    "ServedModelChanged",
    "positions",
    "prompt_length",
    "served_by",
    "served_text",
]

Served = dict[str, str]
"""Who answered: ``model`` as the answer names it and ``system_fingerprint`` when it has one
(both absent: an endpoint that says neither)."""


def served_by(answer: Any) -> Served:
    """The model an answer names and its ``system_fingerprint`` (OpenAI, some vLLM builds).

    >>> served_by({"model": "m", "system_fingerprint": "fp_1", "choices": []})
    {'model': 'm', 'system_fingerprint': 'fp_1'}
    >>> served_by({"choices": [], "system_fingerprint": None})
    {}
    """
    if not isinstance(answer, dict):
        return {}
    keys = ("model", "system_fingerprint")
    return {k: answer[k] for k in keys if isinstance(answer.get(k), str) and answer[k]}


def served_text(served: Served) -> str:
    """``served`` for a message: ``model 'm' (system_fingerprint 'fp_1')``."""
    model = f"model {served['model']!r}" if "model" in served else "no model name"
    fingerprint = served.get("system_fingerprint")
    return model + (f" (system_fingerprint {fingerprint!r})" if fingerprint else "")


PinnedBy = Literal["partial", "cache", "answer"]
_PINNED_BY = {
    "partial": "the partial results were scored by",
    "cache": "this run's answers from the cache came from",
    "answer": "its first answer this run came from",
}


class ServedModelChanged(ProviderError):
    """An answer from another model (or deployment) than the run's earlier ones: scores of two
    models are never mixed in one report. `pinned_by` says what the earlier ones were: the
    partial results of a resumed run, answers from the cache, or the run's first answer."""

    def __init__(
        self, url: str, pinned: Served, answered: Served, pinned_by: PinnedBy, cache: Path | None
    ) -> None:
        self.pinned, self.answered, self.pinned_by, self.cache = pinned, answered, pinned_by, cache
        super().__init__(
            f"openai: {url}: the endpoint now answers as {served_text(answered)}, but "
            f"{_PINNED_BY[pinned_by]} {served_text(pinned)}: scores of two models are not "
            "mixed"
        )


def positions(logprobs: dict[str, Any]) -> list[tuple[str, float | None, dict[str, float]]] | None:
    """(token, log-prob, top log-probs) per position, from the completions form (``tokens``,
    ``token_logprobs``, ``top_logprobs``) or the chat form (``content``); None if malformed."""
    try:
        if "tokens" not in logprobs and isinstance(logprobs.get("content"), list):
            items = logprobs["content"]
            tokens, values = [i["token"] for i in items], [i["logprob"] for i in items]
            tops = [{t["token"]: t["logprob"] for t in i.get("top_logprobs") or []} for i in items]
        else:
            tokens, values = logprobs["tokens"], logprobs["token_logprobs"]
            tops = logprobs.get("top_logprobs") or [None] * len(tokens)
        if not len(tokens) == len(values) == len(tops):
            return None
        return [
            (
                str(t),
                None if v is None else float(v),
                {str(k): float(x) for k, x in (c or {}).items()},
            )
            for t, v, c in zip(tokens, values, tops)
        ]
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def prompt_length(
    answer: dict[str, Any], logprobs: dict[str, Any], sent: dict[str, Any], n: int
) -> int:
    """How many of the ``n`` echoed positions belong to the prompt (the rest were generated)."""
    if not sent.get("max_tokens"):
        return n
    usage = answer.get("usage")
    prompt_tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    if isinstance(prompt_tokens, int) and 0 < prompt_tokens <= n:
        return prompt_tokens
    offsets = logprobs.get("text_offset")
    if isinstance(offsets, list) and len(offsets) == n:
        return sum(1 for o in offsets if isinstance(o, int) and o < len(sent["prompt"]))
    return max(0, n - int(sent["max_tokens"]))
