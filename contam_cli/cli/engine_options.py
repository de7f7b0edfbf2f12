"""Where a command's corpus tasks run: ``--engine local|ray``, the Ray cluster, ``--checkpoint``.

The options are declared here once for every command that passes corpus work through an
executor (scan, clean, index build); :func:`executor_from_options` turns them into the
executor the library call takes (None: the library's own local choice, as without these options).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import orjson
import typer

from contam_cli.cli.exits import say
from contam_cli.engine.checkpoint import Checkpointed, config_key, task_key
from contam_cli.engine.executor import Executor, LocalAuto
from contam_cli.errors import UsageError
from contam_cli.io.json_keys import check_unique_keys

__all__ = [
    "CheckpointOpt",
    "Engine",
    "EngineOpt",
    "RayAddressOpt",
    "RayCpusOpt",
    "RayRuntimeEnvOpt",
    "clean_outputs",
    "executor_from_options",
]

C = TypeVar("C")
T = TypeVar("T")
R = TypeVar("R")


class Engine(str, Enum):
    """Where corpus shards run."""

    local = "local"
    ray = "ray"


EngineOpt = Annotated[
    Engine,
    typer.Option(
        "--engine",
        help="Run corpus shards in local processes (--jobs) or on Ray (extra [ray]; a local Ray "
        "unless --ray-address). The results are identical.",
    ),
]
RayAddressOpt = Annotated[
    str | None,
    typer.Option(
        "--ray-address",
        help="With --engine ray: the cluster to use, 'auto' (this node's) or ray://HOST:10001.",
        show_default=False,
    ),
]
RayCpusOpt = Annotated[
    int | None,
    typer.Option(
        "--ray-cpus",
        min=1,
        help="With --engine ray and no --ray-address: CPUs of the local Ray (default: all).",
        show_default=False,
    ),
]
RayRuntimeEnvOpt = Annotated[
    str | None,
    typer.Option(
        "--ray-runtime-env",
        help='With --engine ray: Ray\'s runtime_env as JSON, e.g. \'{"pip": ["orjson"]}\' '
        "(contam's own code is sent to a remote cluster in any case).",
        show_default=False,
    ),
]
CheckpointOpt = Annotated[
    Path | None,
    typer.Option(
        "--checkpoint",
        help="Keep each finished shard's result in DIR; rerun the same command to resume an "
        "interrupted run (another configuration is refused).",
        show_default=False,
    ),
]


def executor_from_options(
    engine: Engine,
    ray_address: str | None,
    ray_cpus: int | None,
    jobs: int,
    checkpoint: Path | None,
    key_fn: Callable[[Any], str] | None = None,
    config: Any = None,
    *,
    outputs: Callable[[Any], Sequence[Path]] | None = None,
    ray_runtime_env: str | None = None,
    inputs: Sequence[Path] = (),
) -> Executor | None:
    """The executor for these options; None when the library's default (local processes for
    `jobs`) will do. `key_fn`: a task's stable key for checkpoints (default: shards and
    corpus-clean files, see :func:`~contam_cli.engine.checkpoint.task_key`); `config`: the
    command's configuration beyond the library call's context (hashed into the run key);
    `outputs`: the files a task writes (:func:`clean_outputs` for a corpus clean); `inputs`:
    the command's inputs, which the checkpoint directory must stay out of."""
    base = _engine(engine, ray_address, ray_cpus, jobs, ray_runtime_env)
    if checkpoint is None:
        return base
    return Checkpointed(
        base or LocalAuto(jobs),
        checkpoint,
        config_key(config),
        key=key_fn or task_key,
        outputs=outputs,
        inputs=inputs,
        on_damaged=lambda line: say(f"contam: warning: {line}"),
    )


def _engine(
    engine: Engine,
    ray_address: str | None,
    ray_cpus: int | None,
    jobs: int,
    ray_runtime_env: str | None,
) -> Executor | None:
    if engine is Engine.local:
        for flag, value in (
            ("--ray-address", ray_address),
            ("--ray-cpus", ray_cpus),
            ("--ray-runtime-env", ray_runtime_env),
        ):
            if value is not None:
                raise UsageError(f"{flag} applies to --engine ray only")
        return None
    if jobs:
        raise UsageError("--jobs applies to --engine local (use --ray-cpus with a local Ray)")
    if ray_address is not None and ray_cpus is not None:
        raise UsageError("--ray-cpus applies to a local Ray only (not with --ray-address)")
    from contam_cli.engine.ray_executor import RayExecutor

    return RayExecutor(ray_address, ray_cpus, runtime_env=_runtime_env(ray_runtime_env))


def _runtime_env(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = orjson.loads(text)
        check_unique_keys(text)
    except json.JSONDecodeError as e:  # NOTE: orjson's too
        raise UsageError(f"--ray-runtime-env: not JSON: {e}") from None
    if not isinstance(value, dict):
        raise UsageError("--ray-runtime-env: expected a JSON object")
    return value


def clean_outputs(task: Any) -> Sequence[Path]:
    """The file a corpus-clean task writes (its third item); a scan shard writes none."""
    return [task[2]] if isinstance(task, tuple) and len(task) == 3 else []
