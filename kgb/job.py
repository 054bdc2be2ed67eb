"""A job's resolved settings and the facts about where it runs.

A job is one (method, model, source, chip) combination of a sweep. Its id comes from its
identity (kgb/identity.py), so running the same command again finds the same event log
and resumes it.
"""

from __future__ import annotations

import dataclasses
import fcntl
import os
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from kgb import chips
from kgb.config import ChipConfig, Config, ConfigError, EvalConfig, chip_config
from kgb.evaluate import EvalSettings
from kgb.identity import CASE_SETS, Identity, Judging
from kgb.operators import REPO_ROOT, Spec
from kgb.tracking.events import Event, RunStarted, TrialFinished, TrialStarted

PACKAGES = ("kgb", "torch", "triton", "numpy", "mlflow", "hydra-core", "anthropic", "openai")


@dataclass(frozen=True)
class Chip:
    """The job's chip after `auto` is resolved, and whether it is present here."""

    name: str
    backend: str
    notes: str
    present: bool
    reason: str


def resolve_chip(cfg: ChipConfig) -> Chip:
    """`auto` becomes the chip config of this machine's device (conf/chip/<name>.yaml), notes
    and all, so that `chip=auto` and `chip=nvidia` on one machine are the same job."""
    if cfg.name == "auto":
        name = chips.detect()
        found_cfg = chip_config(name)
        notes = found_cfg.notes if found_cfg else cfg.notes
        return Chip(name, chips.local_device(), notes, True, f"auto: {chips.device_name()}")
    found = chips.presence(cfg.name, cfg.backend, cfg.device_name_pattern)
    return Chip(cfg.name, cfg.backend, cfg.notes, found.present, found.reason)


def head_start(cfg: Config) -> None:
    """Start the judge's engine for the settings this job will most likely judge under, before
    this process imports torch, MLflow and the specs: the engine imports torch, Triton and
    torch._dynamo itself (11-13 s on the H200 host, session 33) and the job's first trials
    wait for it. The device is guessed without torch, from the chip config and the NVIDIA
    driver's tool; a wrong guess costs a process that nothing uses (the job starts the
    engine it needs when its first evaluation asks)."""
    from kgb.evaluate import start_engine
    from kgb.evaluate.gpus import memory_mib

    backend = cfg.chip.backend
    if backend == "cpu":
        device = "cpu"
    elif backend not in ("cuda", "auto"):
        return  # another vendor's device: no guess
    elif memory_mib():
        device = "cuda"
    elif backend == "auto":
        device = "cpu"
    else:
        return  # a CUDA chip that is not here: its trials are skipped, nothing is judged
    try:
        settings = eval_settings(cfg.eval, Chip(cfg.chip.name, device, cfg.chip.notes, True, "a guess"),
                                 secret_env(cfg))
    except ConfigError:
        return  # reported, with the job's own settings, before any trial
    start_engine(settings)


def secret_env(cfg: Config) -> tuple[str, ...]:
    """The variables that hold this job's secrets whatever their names: the model's key, kept
    from every judge and scrubbed from every verdict (kgb.evaluate.environment). Until session
    46 no job named it, and a key under a name that looks like nothing secret (a `KGB_*` or
    `TORCH_*` one) would have reached every candidate."""
    name = getattr(cfg.model, "api_key_env", "")  # a model without an API (none, a replay) has none
    return (name,) if name else ()


def eval_settings(cfg: EvalConfig, chip: Chip, secret_env: tuple[str, ...] = ()) -> EvalSettings:
    device = chip.backend if chip.present else "cpu"
    cases = cfg.cases if cfg.cases != "auto" else ("smoke" if device == "cpu" else "all")
    if cases not in CASE_SETS:
        raise ConfigError(f"eval.cases={cfg.cases}: choose one of smoke, check, all, auto")
    return EvalSettings(
        device=device,
        case_tags=CASE_SETS[cases],
        time_cases=("bench",) if device != "cpu" else (),
        timeout_s=cfg.timeout_s,
        repeats=cfg.repeats,
        warmup=cfg.warmup,
        compile_for=cfg.compile_for,  # used on the CPU only: a GPU run compiles for real
        compile_cache=cfg.compile_cache or None,
        secret_env=secret_env,
    )


def config_dict(cfg: Config) -> dict[str, Any]:
    return dataclasses.asdict(cfg)


def identity(cfg: Config, chip: Chip, settings: EvalSettings) -> Identity:
    """What the job's trials share: everything that reaches their prompts or verdicts."""
    return Identity(cfg.method.identity(), cfg.model.identity(), chip.name, chip.notes, Judging.of(settings))


def packages() -> dict[str, str]:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def driver_version() -> str | None:
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=20,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else None


def events_path(root: Path, job: str) -> Path:
    return Path(root) / "jobs" / job / "events.jsonl"


class JobRunning(RuntimeError):
    """The job is running in another process."""


@contextmanager
def running(events: Path) -> Iterator[None]:
    """Hold the job whose event log is `events` for this process while it runs. Until session
    44 a second run of a running job (the same command in two terminals, two hosts of a
    cluster given one job) judged its trials again beside the first, paid a model for each
    twice, and interleaved both runs' events in one log under repeated sequence numbers."""
    lock = events.parent / "running.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
            raise JobRunning(f"job {events.parent.name} is already running ({holder}): wait for it to end, "
                             "or stop it, then run the command again to go on where it stopped") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()}".encode(), 0)
        yield
    finally:
        os.close(fd)  # and with it the lock


def spec_record(spec: Spec) -> str:
    """What RunStarted records of a spec: its VERSION, which trial keys name, and its text's digest."""
    return f"v{spec.version}:{spec.digest}"


def changed_specs(events: list[Event], specs: dict[str, Spec], kept: set[str]) -> list[str]:
    """The operators of `kept` (trials an earlier run finished, which this one keeps) whose
    last finished trial was judged under another spec.py than today's of the same VERSION: a
    trial's key names the version, not the text, so an edit that did not bump it (a tolerance,
    a case) leaves such trials standing."""
    run: dict[str, str] = {}
    op_of: dict[str, str] = {}
    judged_under: dict[str, str] = {}
    for e in events:
        if isinstance(e, RunStarted):
            run = e.specs
        elif isinstance(e, TrialStarted):
            op_of[e.trial] = e.op
        elif isinstance(e, TrialFinished) and op_of.get(e.trial) in run:
            judged_under[op_of[e.trial]] = run[op_of[e.trial]]
    return sorted(op for op in kept if op in judged_under and judged_under[op] != spec_record(specs[op]))
