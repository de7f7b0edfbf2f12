"""The probe's model: a provider built from a spec (or given), checked before any work.

A wrong or unreachable model must fail at once with one clear line, not after the eval set has
been read and half scored: a spec that names no scheme, a local path that does not exist, an
OpenAI-compatible endpoint that does not answer (its ``check()``), an API key variable that is
not set.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from contam_cli.detectors.providers import SCHEMES, Provider, load_provider
from contam_cli.errors import ArgumentError, InputError, UsageError

__all__ = ["model_paths", "open_provider", "provider_options"]

#: Options of the command line that apply to one scheme only.
_SCHEME_OPTIONS = {
    "device": "hf",
    "dtype": "hf",
    "api_key_env": "openai",
    "served_model": "openai",
    "max_retries": "openai",
}


def _scheme(spec: str) -> str:
    return spec.partition(":")[0] if ":" in spec else ""


def provider_options(spec: str, **given: Any) -> dict[str, Any]:
    """The provider options of the command line's model options (None: not given) for ``spec``;
    an option given for another scheme's model is a UsageError. An openai: model gets an API
    key only from the variable ``api_key_env`` names (none when not given).

    >>> provider_options("hf:gpt2", device="cpu", dtype=None, api_key_env=None)
    {'device': 'cpu'}
    >>> provider_options("ngram-lm:a.txt", device="cuda")
    Traceback (most recent call last):
    ...
    contam_cli.errors.UsageError: --device applies to hf: models only
    """
    scheme = _scheme(spec)
    out: dict[str, Any] = {}
    for name, value in given.items():
        if value is None:
            continue
        owner = _SCHEME_OPTIONS.get(name)
        if owner is None:
            raise ArgumentError(f"provider_options(): unknown option {name!r}")
        if scheme in SCHEMES and owner != scheme:
            raise UsageError(f"--{name.replace('_', '-')} applies to {owner}: models only")
        out["model" if name == "served_model" else name] = value
    key_env = out.get("api_key_env")
    if key_env is not None and not os.environ.get(key_env):
        raise UsageError(f"--api-key-env {key_env}: that environment variable is not set")
    if scheme == "openai" and key_env is None:
        # NOTE: the key comes only from a variable the user named: an OPENAI_API_KEY that
        # happens to be set is not sent to a local server nobody meant to give it to.
        out["api_key_env"] = ""
    return out


def open_provider(
    model: str | Provider, options: dict[str, Any] | None, batch_size: int
) -> Provider:
    """The provider ``model`` names (built with ``options``), checked to answer."""
    if isinstance(model, str):
        options = dict(options or {})
        _check_local_path(model)
        if _scheme(model) == "hf":
            options.setdefault("batch_size", batch_size)
        provider = load_provider(model, **options)
    elif isinstance(model, Provider):
        if options:
            raise ArgumentError("provider_options go with a model spec, not a built provider")
        provider = model
    else:
        raise ArgumentError(f"model must be a spec or a Provider, got {type(model).__name__}")
    check = getattr(provider, "check", None)
    if callable(check):
        check()  # NOTE: OpenAI-compatible endpoints: GET /models before any scoring
    return provider


def _check_local_path(spec: str) -> None:
    """A spec that is plainly a local path (``ngram-lm:`` always; ``hf:`` starting with /, ./,
    ../ or ~) must exist: a missing directory would otherwise be looked up on the Hub."""
    scheme, _, rest = spec.partition(":")
    local = scheme == "ngram-lm" or (
        scheme == "hf" and rest.startswith(("/", "./", "../", "~", "\\"))
    )
    if local and rest and not Path(rest).expanduser().exists():
        raise InputError(rest, f"no such model file or directory (from --model {spec})")


def model_paths(model: object) -> list[Path]:
    """The local files a model spec reads (``ngram-lm:PATH``, ``hf:`` a model directory): inputs
    too, which no output may land over or inside; none for a Hub id, an endpoint or a built
    provider.

    >>> [p.name for p in model_paths("ngram-lm:lm/model.npz")], model_paths("openai:http://x/v1")
    (['model.npz'], [])
    """
    if not isinstance(model, str):
        return []
    scheme, _, rest = model.partition(":")
    if scheme == "ngram-lm" and rest:
        return [Path(rest)]
    if scheme == "hf" and rest and Path(rest).expanduser().is_dir():
        return [Path(rest).expanduser()]
    return []
