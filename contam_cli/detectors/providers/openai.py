"""The OpenAI-compatible provider: ``openai:BASE_URL`` (vLLM, llama.cpp, OpenAI and the like).

* **Scores** come from the completions endpoint with ``echo: true, logprobs: K, max_tokens: 0``
  (a server that refuses 0 gets 1, and the generated token is dropped). Only the top K
  log-probs of each position come back, so mu and sigma are those of the RAW log-probs under
  the returned set renormalized (the observed token added when missing): the expectation given
  the top K (:meth:`TokenScore.from_truncated`), marked ``full_distribution=False``. With small
  K this overestimates mu and underestimates sigma; compare such scores only with scores from
  the same server and K.
* **Guided prompting** asks ``/completions`` (``mode="completions"``, the raw prefix) or
  ``/chat/completions`` (``mode="chat"``, the prefix inside ``chat_template``), temperature 0.
* **The API key** is read from the environment variable ``api_key_env`` (never the command
  line) and never appears in :meth:`describe`, errors, logs or the cache.
* **Robustness**: a timeout per request, retries with exponential backoff and jitter on 429,
  5xx and connection errors, a thread pool of ``concurrency`` requests, and an on-disk cache of
  answers keyed by a hash of (base URL, model, request body).
* **Who answered**: every answer must name the model and ``system_fingerprint`` the first did
  (or :meth:`pin_served` gave): a cached one is asked again, a fresh one is ServedModelChanged.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import random
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

import orjson

from contam_cli.detectors.providers import openai_answers as answers
from contam_cli.detectors.providers.base import ProviderError, TextScores, provider_cache_dir
from contam_cli.detectors.scores import TokenScore, text_scores_from_token_scores
from contam_cli.errors import UsageError
from contam_cli.io import atomic_writer
from contam_cli.io.formats import StrPath

__all__ = ["DEFAULT_CHAT_TEMPLATE", "OpenAIProvider"]

Mode = Literal["completions", "chat"]
DEFAULT_CHAT_TEMPLATE = (
    "Here is the first part of a text. Continue it exactly as it continues in its original "
    "source, word for word. Reply with the continuation only.\n\n{prefix}"
)
"""The chat prompt for guided prompting; ``{prefix}`` is replaced by the example's prefix."""


class _Retryable(Exception):
    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason, self.retry_after = reason, retry_after


class _StatusError(ProviderError):
    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def _public_url(url: str) -> str:
    """``url`` with no trailing slash, as messages and the report show it."""
    parts = urllib.parse.urlsplit(url.rstrip("/"))
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    return parts._replace(netloc=host + (f":{parts.port}" if parts.port else "")).geturl()


def _retry_after(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None  # NOTE: the HTTP-date form is rare from model servers; backoff applies


class OpenAIProvider:
    """An OpenAI-compatible HTTP endpoint as a provider (see the module docstring)."""

    def __init__(
        self,
        spec: str,
        *,
        model: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        top_logprobs: int = 5,
        mode: Mode = "completions",
        chat_template: str = DEFAULT_CHAT_TEMPLATE,
        timeout_s: float = 60.0,
        max_retries: int = 4,
        backoff_s: float = 0.5,
        max_backoff_s: float = 30.0,
        concurrency: int = 4,
        cache: bool = True,
        cache_dir: StrPath | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rand: Callable[[], float] = random.random,
    ) -> None:
        base = spec.removeprefix("openai:")
        parts = urllib.parse.urlsplit(base)
        try:
            parts.port  # noqa: B018  NOTE: raises ValueError for a port out of range or not a number
        except ValueError:
            parts = parts._replace(scheme="")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(
                "openai: spec needs an http(s) base URL, e.g. openai:http://127.0.0.1:8000/v1"
            )
        if parts.username is not None or parts.password is not None:
            raise UsageError(  # NOTE: never sent (urllib took them for the host name), and a
                # secret on the command line: the key comes from --api-key-env only
                "openai: a base URL with a user name or password is refused: "
                "put the key in an environment variable and name it with --api-key-env"
            )
        if mode not in ("completions", "chat"):
            raise UsageError(f"openai: mode must be completions or chat, got {mode!r}")
        if top_logprobs < 1 or concurrency < 1 or max_retries < 0 or timeout_s <= 0:
            raise UsageError(
                "openai: top_logprobs, concurrency >= 1, max_retries >= 0, timeout_s > 0"
            )
        self.base_url = _public_url(base)
        self.spec = f"openai:{self.base_url}"
        self._url = base.rstrip("/")
        self.model, self.top_logprobs, self.mode = model, top_logprobs, mode
        self.chat_template, self.timeout_s, self.concurrency = chat_template, timeout_s, concurrency
        self.max_retries, self.backoff_s, self.max_backoff_s = max_retries, backoff_s, max_backoff_s
        self._key = os.environ.get(api_key_env) or None
        self._cache = Path(cache_dir or provider_cache_dir("openai")) if cache else None
        self._sleep, self._rand = sleep, rand
        self._lock = threading.Lock()
        self._checked = False
        self._echo_tokens = 0  # max_tokens for scoring: 0, or 1 once the server refused 0
        self._served: answers.Served | None = None  # who answered, as every answer must say
        self._served_by: answers.PinnedBy = "answer"

    def __repr__(self) -> str:
        return f"OpenAIProvider({self.spec!r}, model={self.model!r})"

    def describe(self) -> dict[str, Any]:
        return {
            "provider": "openai",
            "base_url": self.base_url,
            "model": self.model,
            "mode": self.mode,
            "top_logprobs": self.top_logprobs,
            "full_distribution": False,
        }

    # -- public API ------------------------------------------------------------------------------

    def served(self) -> answers.Served | None:
        """The model and ``system_fingerprint`` the answers name (None before any answer)."""
        with self._lock:
            return None if self._served is None else dict(self._served)

    def pin_served(self, served: answers.Served, by: answers.PinnedBy = "partial") -> None:
        """Hold every answer to ``served`` (a resumed run's earlier answers named it)."""
        with self._lock:
            self._served, self._served_by = dict(served), by

    def check(self) -> None:
        """Verify the endpoint answers before any work (GET /models), and pick the served model
        when none was named; ProviderError naming the URL otherwise."""
        with self._lock:
            if self._checked:
                return
            try:
                answer = self._send("GET", "/models", None)
            except _StatusError as exc:
                if exc.status != 404 or self.model is None:
                    raise
                self._checked = True  # NOTE: reachable, but it does not list its models
                return
            data = answer.get("data") if isinstance(answer, dict) else None
            items = data if isinstance(data, list) else []
            ids = [m["id"] for m in items if isinstance(m, dict) and isinstance(m.get("id"), str)]
            if not ids:
                raise self._error("/models", "malformed answer (no model list)")
            if self.model is None:
                self.model = ids[0]
            elif self.model not in ids:
                served = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
                raise self._error("/models", f"does not serve model {self.model!r} ({served})")
            self._checked = True

    def token_scores(self, texts: Sequence[str]) -> list[TextScores]:
        return self._map(self._score_one, texts)

    def complete(self, prefixes: Sequence[str], *, max_tokens: int) -> list[str]:
        return self._map(lambda prefix: self._complete_one(prefix, max_tokens), prefixes)

    # -- requests ------------------------------------------------------------------------------

    def _map(self, fn: Callable[[str], Any], items: Sequence[str]) -> list[Any]:
        if self.model is None:
            self.check()  # NOTE: the model name is part of every request and cache key
        if len(items) <= 1 or self.concurrency == 1:
            return [fn(item) for item in items]
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            futures = [pool.submit(fn, item) for item in items]
            try:
                return [future.result() for future in futures]
            except BaseException:
                for future in futures:
                    future.cancel()
                raise

    def _score_one(self, text: str) -> TextScores:
        body = {"model": self.model, "prompt": text, "echo": True, "logprobs": self.top_logprobs}
        body.update(max_tokens=0, temperature=0)

        def send() -> tuple[Any, dict[str, Any]]:
            sent = {**body, "max_tokens": self._echo_tokens}
            try:
                return self._send("POST", "/completions", sent), sent
            except _StatusError as exc:
                if exc.status != 400 or sent["max_tokens"] != 0:
                    raise
            self._echo_tokens = 1  # NOTE: this server wants max_tokens >= 1 even with echo
            sent = {**body, "max_tokens": 1}
            return self._send("POST", "/completions", sent), sent

        return self._cached("/completions", body, send, lambda a, s: self._parse_scores(a, s))

    def _complete_one(self, prefix: str, max_tokens: int) -> str:
        body: dict[str, Any] = {"model": self.model, "max_tokens": max_tokens, "temperature": 0}
        if self.mode == "chat":
            path = "/chat/completions"
            prompt = self.chat_template.replace("{prefix}", prefix)
            body["messages"] = [{"role": "user", "content": prompt}]
        else:
            path, body["prompt"] = "/completions", prefix

        def send() -> tuple[Any, dict[str, Any]]:
            return self._send("POST", path, body), body

        return self._cached(path, body, send, lambda a, _: self._parse_completion(path, a))

    def _cached(
        self,
        path: str,
        body: dict[str, Any],
        send: Callable[[], tuple[Any, dict[str, Any]]],
        parse: Callable[[Any, dict[str, Any]], Any],
    ) -> Any:
        """``parse(answer, sent body)`` from the cache, or from ``send()`` then cached (only an
        answer that parses is ever cached)."""
        key = {"base_url": self.base_url, "model": self.model, "path": path, "body": body}
        digest = hashlib.sha256(orjson.dumps(key, option=orjson.OPT_SORT_KEYS)).hexdigest()
        file = self._cache / digest[:2] / f"{digest}.json" if self._cache else None
        if file is not None and file.is_file():
            try:
                entry = orjson.loads(file.read_bytes())
                result = parse(entry["answer"], entry["sent"])
            except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ProviderError):
                pass  # NOTE: a damaged entry is fetched again and overwritten
            else:
                if self._agrees(entry["answer"], cached=True):
                    return result
                # NOTE: an answer of another model or deployment than this run's: asked again
        self.check()
        answer, sent = send()
        result = parse(answer, sent)
        if file is not None:
            with atomic_writer(file) as fh:
                fh.write(orjson.dumps({"sent": sent, "answer": answer}))
        self._agrees(answer, cached=False)
        return result

    def _agrees(self, answer: Any, *, cached: bool) -> bool:
        """Whether ``answer`` names who the run's answers name (the first one sets it); a fresh
        answer that does not is ServedModelChanged."""
        got = answers.served_by(answer)
        with self._lock:
            if self._served is None:
                self._served, self._served_by = got, "cache" if cached else "answer"
            if got == self._served or cached:
                return got == self._served
            pinned = (self._served, got, self._served_by, self._cache)
            raise answers.ServedModelChanged(self.base_url, *pinned)

    def _send(self, method: str, path: str, body: dict[str, Any] | None) -> Any:
        """One API call with retries; returns the decoded JSON answer."""
        attempts = self.max_retries + 1
        for attempt in range(attempts):
            try:
                return self._once(method, path, body)
            except _Retryable as exc:
                failure = exc
            if attempt == attempts - 1:
                tries = f"{attempts} attempt{'s' if attempts > 1 else ''}"
                raise self._error(path, f"{failure.reason} (gave up after {tries})")
            delay = min(self.max_backoff_s, self.backoff_s * 2**attempt)
            delay *= 0.5 + 0.5 * self._rand()  # NOTE: jitter spreads concurrent retries apart
            if failure.retry_after is not None:
                delay = max(delay, min(failure.retry_after, self.max_backoff_s))
            self._sleep(delay)
        raise AssertionError("unreachable")

    def _once(self, method: str, path: str, body: dict[str, Any] | None) -> Any:
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        data = orjson.dumps(body) if body is not None else None
        request = urllib.request.Request(self._url + path, data, headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            detail = self._detail(exc)
            if exc.code == 429 or exc.code >= 500:
                raise _Retryable(
                    f"HTTP {exc.code}{detail}", _retry_after(exc.headers.get("Retry-After"))
                ) from None
            raise _StatusError(self._message(path, f"HTTP {exc.code}{detail}"), exc.code) from None
        except TimeoutError:
            raise _Retryable(f"no answer within {self.timeout_s:g} s (timed out)") from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                raise _Retryable(f"no answer within {self.timeout_s:g} s (timed out)") from None
            raise _Retryable(f"cannot connect ({self._scrub(str(exc.reason))})") from None
        except (http.client.HTTPException, OSError) as exc:  # resets, refused reads, bad status
            raise _Retryable(f"connection failed ({type(exc).__name__})") from None
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            text = self._scrub(raw.decode("utf-8", "replace"))  # NOTE: masked BEFORE it is cut
            raise self._error(path, f"malformed answer (not JSON): {text[:60]!r}") from None

    # -- answers and messages --------------------------------------------------------------------

    def _parse_scores(self, answer: Any, sent: dict[str, Any]) -> TextScores:
        choice = self._choice("/completions", answer)
        logprobs = choice.get("logprobs")
        if not isinstance(logprobs, dict):
            raise self._error("/completions", "answer has no logprobs (is echo supported?)")
        positions = answers.positions(logprobs)
        if positions is None:
            raise self._error("/completions", "malformed logprobs in the answer")
        keep = answers.prompt_length(answer, logprobs, sent, len(positions))
        usage = answer.get("usage") if isinstance(answer, dict) else None
        prompt = usage.get("prompt_tokens") if isinstance(usage, dict) else None
        if isinstance(prompt, int) and prompt > keep:  # NOTE: else scored on part of the text
            raise self._error("/completions", f"log-probs for {keep} of {prompt} prompt tokens")
        scores, tokens = [], []
        for token, logprob, top in positions[:keep]:
            if logprob is None:
                continue  # NOTE: the first token (or a BOS) has no context, so no log-prob
            if not top:
                raise self._error("/completions", "answer has no top logprobs for a token")
            values = dict(top)
            values.setdefault(token, logprob)
            scores.append(TokenScore.from_truncated(list(values.values()), logprob))
            tokens.append(token)
        return text_scores_from_token_scores(scores, full_distribution=False, tokens=tokens)

    def _parse_completion(self, path: str, answer: Any) -> str:
        choice = self._choice(path, answer)
        message = choice.get("message")
        text = message.get("content") if isinstance(message, dict) else choice.get("text")
        if not isinstance(text, str):
            raise self._error(path, "answer has no completion text")
        return text

    def _choice(self, path: str, answer: Any) -> dict[str, Any]:
        choices = answer.get("choices") if isinstance(answer, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise self._error(path, "malformed answer (no choices)")
        return choices[0]

    def _detail(self, exc: urllib.error.HTTPError) -> str:
        try:
            raw = exc.read()
            error = orjson.loads(raw).get("error", {}) if raw else {}
            text = error.get("message", "") if isinstance(error, dict) else str(error)
        except Exception:  # NOTE: an error body is a courtesy; its absence is not a new error
            text = ""
        return f": {self._scrub(str(text))[:200]}" if text else ""

    def _scrub(self, text: str) -> str:
        """``text`` on one line, with the API key (should a server echo it) masked."""
        if self._key:
            text = text.replace(self._key, "***")
        return " ".join(text.split())

    def _message(self, path: str, what: str) -> str:
        return f"openai: {self.base_url}{path}: {self._scrub(what)}"

    def _error(self, path: str, what: str) -> ProviderError:
        return ProviderError(self._message(path, what))
