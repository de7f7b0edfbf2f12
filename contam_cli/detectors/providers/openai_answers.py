"""The OpenAI-compatible provider's echoed log-probs: positions read from an answer, and how
many of them belong to the prompt."""

from __future__ import annotations

from typing import Any

__all__ = ["positions", "prompt_length"]


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
