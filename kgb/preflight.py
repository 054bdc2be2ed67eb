"""Checks that run before anything is written: a bad input costs one line, not a job.

Three layers, earliest first:
- `kgb.command_line.check_command_line`: every group choice and setting on the command line
  names what conf/ and the schemas have, with a value its setting's type takes;
- `check_settings`: every value is one a job can run with (a negative timeout would
  otherwise judge every candidate `timeout` and record that as a result; a chip named as
  another chip that judges elsewhere would file its results under that chip), and every
  key a `+key=value` added is one something reads (kgb.added_keys);
- `SweepCheck`, a Hydra callback (conf/config.yaml): before Hydra makes its output folder,
  it runs each job's own pre-trial checks (kgb.run.prepare: settings, operators, method,
  model key, SDK and name) on the run, or on every combination of a multirun, so that the
  second job of a sweep cannot fail hours after the first started.

A failure is raised as a `ConfigError` (or the ValueError of the module that found it) and
printed as one line by `fail`; `HYDRA_FULL_ERROR=1` shows the traceback instead.
"""

from __future__ import annotations

import contextlib
import copy
import math
import os
import sqlite3
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlparse

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf, open_dict, read_write
from omegaconf.errors import MissingMandatoryValue

from kgb.added_keys import unread_keys
from kgb.command_line import FULL_ERROR, check_command_line, swept_settings
from kgb.config import (
    ChipConfig,
    Config,
    ConfigError,
    LLMConfig,
    LLMMethodConfig,
    ModelConfig,
    ReplayConfig,
    chip_config,
    choices,
)
from kgb.evaluate import compile_cache, cuda_waits, timing_lock
from kgb.tracking.mlflow_store import file_store_refusal, server_silence, sqlite_path

CASES = ("smoke", "check", "all", "auto")
# MLflow tracking URI schemes (a `+driver` suffix, as in postgresql+psycopg2, is allowed)
TRACKING_SCHEMES = ("sqlite", "file", "http", "https", "postgresql", "mysql", "mssql", "databricks")
# What to add where a required value is missing.
REQUIRED = {
    "method.dir": "method=files reads your kernels from a folder: add method.dir=DIR (files named <source>__<op>.py)",
    "model.name": "this model config needs the model id: add model.name=NAME (e.g. model.name=claude-opus-4-6)",
    "model.from": "model=replay answers from an earlier run: add model.from=OUTPUTS_DIR",
}
# The warnings this process has printed: a run checks its job twice (SweepCheck, then the job)
_warned: set[str] = set()


def fail(error: Exception) -> NoReturn:
    """Print the error as one line, or its traceback under HYDRA_FULL_ERROR=1, and exit 1.
    SystemExit, because Hydra turns any other exception of a callback into a warning."""
    if os.environ.get(FULL_ERROR):
        traceback.print_exception(error)
        raise SystemExit(1)
    message = " ".join(str(error).split())
    raise SystemExit(f"error: {message}")


def warn(message: str | None) -> None:
    """One line on stderr for input that is legal but likely a mistake, once per process."""
    if message and message not in _warned:
        _warned.add(message)
        print(f"warning: {message}", file=sys.stderr)


def check_settings(cfg: Config) -> None:
    """Every setting is one a job can run with; the first one that is not is raised."""
    e, m = cfg.eval, cfg.method
    require(e.cases in CASES, "eval.cases", e.cases, f"choose one of {', '.join(CASES)}")
    # from 1 s (a judge takes about that to start: under it a timeout was not enforced alike for
    # all, session 49) to finite (inf was taken, and every judge died converting it)
    require(math.isfinite(e.timeout_s) and e.timeout_s >= 1, "eval.timeout_s", e.timeout_s,
            "the time one candidate's evaluation may take, in seconds: give a positive number such as 300 (1 or more)")
    require(e.repeats >= 1, "eval.repeats", e.repeats, "timed repetitions per bench case: give 1 or more (100 by default)")
    require(e.warmup >= 0, "eval.warmup", e.warmup, "untimed warm-up runs: give 0 or more")
    require(e.compile_for is None or 50 <= e.compile_for <= 130, "eval.compile_for", e.compile_for,
            "an NVIDIA compute capability as a number, e.g. 90 for H100/H200 (or leave it unset)")
    compile_cache.root(e.compile_cache)  # a folder candidates could read is refused
    cuda_waits.mode()  # the judges' environment knobs (docs/gpu.md): a bad one is named here
    timing_lock.gather_s()
    require(cfg.progress.heartbeat_s >= 0, "progress.heartbeat_s", cfg.progress.heartbeat_s,
            "seconds without a line before a `still running` block: give 0 or more (0: none; 60 by default)")
    require(m.samples >= 1, "method.samples", m.samples, "trials per operator: give 1 or more")
    require(m.concurrency is None or m.concurrency >= 1, "method.concurrency", m.concurrency,
            "trials at once: give 1 or more, or null for one per CPU core")
    for name in ("k", "rounds"):
        if hasattr(m, name):
            require(getattr(m, name) >= 1, f"method.{name}", getattr(m, name), "give 1 or more")
    if isinstance(m, LLMMethodConfig):
        require(m.temperature is None or 0 <= m.temperature <= 2, "method.temperature", m.temperature, "give a number from 0 to 2, or null")
    if m.name == "files":
        require(bool(m.dir) and Path(m.dir).is_dir(), "method.dir", m.dir, "no such folder: point it at the folder holding your <source>__<op>.py kernels")
    if isinstance(cfg.model, LLMConfig):
        check_model_settings(cfg.model)
    else:
        check_no_model(cfg.model)
    if isinstance(cfg.model, ReplayConfig) and getattr(cfg.model, "from", "???") in ("???", "", None):
        raise ConfigError(REQUIRED["model.from"])
    check_chip(cfg.chip)
    check_ops(cfg.ops)
    if m.name == "files":
        check_files_dir(Path(m.dir).expanduser(), cfg.source.name, cfg.ops)
    check_tracking_uri(cfg.tracking.tracking_uri())
    if cfg.tracking.mlflow:
        check_tracking_store(cfg.tracking.tracking_uri(), Path(cfg.tracking.root))


def check_chip(chip: ChipConfig) -> None:
    """`chip.name` is what results are filed under (the leaderboard's chip), not what judges
    them (`chip.backend`, `chip.device_name_pattern`). `chip=cpu chip.name=gpu` judged in
    the interpreter and filed the results as a GPU's. Refused: another chip config's name
    on a chip that judges on another device type, and a name of one's own for the
    interpreter (its results are chip cpu's) or for chip=auto (which takes the name of the
    chip it finds). A name of one's own for a device (`chip=nvidia chip.name=h100
    chip.device_name_pattern=H100`) is a chip of one's own, and kept."""
    known = choices("chip")
    how = f"chip.name names the results; chip=NAME chooses the chip, one of {', '.join(known)} (conf/chip/)"
    if chip.name in known:
        named = chip_config(chip.name)
        if named is not None and named.backend != chip.backend:
            where = "the device it finds" if named.backend == "auto" else named.backend
            raise ConfigError(f"chip.name={chip.name} with chip.backend={chip.backend}: the results would be filed under "
                              f"chip {chip.name}, which judges on {where}; {how}")
    elif chip.backend == "cpu":
        raise ConfigError(f"chip.name={chip.name} with chip.backend=cpu: the Triton interpreter judges this job, and its "
                          f"results are chip cpu's; leave chip.name out ({how})")
    elif chip.backend == "auto":
        raise ConfigError(f"chip.name={chip.name} with chip=auto: auto takes the name of the chip it finds on this "
                          f"machine; {how}")


def check_ops(ops: list[str]) -> None:
    from kgb.operators import unknown_operator

    for op in ops:
        if message := unknown_operator(op):
            raise ConfigError(f"ops: {message}")


def check_files_dir(folder: Path, source: str, ops: list[str]) -> None:
    """method=files: warn of a folder with no file for the job's operators, or with files that
    name no operator (a misnamed kernel would otherwise only end its trial no_candidate)."""
    from kgb import operators
    from kgb.methods.files import folder_warning

    warn(folder_warning(folder, operators.select(source, ops)))


def check_no_model(model: ModelConfig) -> None:
    """`model=none` calls no model, so its name and provider run nothing: `model.name=foo`
    made a job of its own whose results, the expert's kernels, were filed under model foo in
    every query (session 50's user walk), and `model.provider=openai` crashed on settings
    model=none lacks. Most likely a model was meant and `model=...` forgotten."""
    for setting in ("name", "provider"):
        value = getattr(model, setting)
        if value != "none":
            raise ConfigError(
                f"model.{setting}={value} with model=none: no model is called, and the results would be filed under "
                f"a model that wrote none of them; to call one, choose it: model=openai or model=anthropic with "
                f"model.name=NAME, or a preset (conf/model/); else leave model.{setting} out")


def check_model_settings(model: LLMConfig) -> None:
    require(model.max_tokens >= 1, "model.max_tokens", model.max_tokens, "give 1 or more")
    require(model.timeout_s > 0, "model.timeout_s", model.timeout_s, "seconds per HTTP attempt: give a positive number")
    require(model.retries >= 0, "model.retries", model.retries, "give 0 or more")
    require(model.backoff_s >= 0 and model.max_backoff_s >= 0, "model.backoff_s", model.backoff_s, "give 0 or more seconds")
    require(model.temperature is None or 0 <= model.temperature <= 2, "model.temperature", model.temperature, "give a number from 0 to 2, or null")
    for bucket in ("input", "output", "cache_read", "cache_write"):
        price = getattr(model.price, bucket)
        require(price >= 0, f"model.price.{bucket}", price, "USD per million tokens: give 0 or more")
    require(model.max_trial_tokens is None or model.max_trial_tokens > 0, "model.max_trial_tokens", model.max_trial_tokens, "give a positive number, or null for no cap")
    require(model.max_job_cost_usd is None or model.max_job_cost_usd > 0, "model.max_job_cost_usd", model.max_job_cost_usd, "give a positive number, or null for no cap")
    # A custom model (model=openai or anthropic with another model.name) has no prices: each of
    # its calls costs $0 to kgb, and a cost budget would never stop one (session 46's user walk)
    if model.max_job_cost_usd is not None and (why := unpriced(model)):
        raise ConfigError(f"model.max_job_cost_usd={model.max_job_cost_usd}: {why}, so its calls cost $0 here and "
                          "this budget would never stop one; set model.price.input and model.price.output (USD per "
                          "million tokens), or cap tokens with model.max_trial_tokens")


def unpriced(model: Any) -> str | None:
    """What says that `model` is paid for but has no price (every model.price.* is 0); None
    where it has one, or costs nothing anyway (no model, a replay of logged calls)."""
    if getattr(model, "provider", "replay") == "replay":
        return None
    prices = [getattr(model.price, b) for b in ("input", "output", "cache_read", "cache_write")]
    return None if any(prices) else f"every model.price.* is 0 for {model.name}"


def store_scheme(uri: str) -> str:
    """The MLflow store's kind: `postgresql` of postgresql+psycopg2://..., "" for a plain path."""
    return urlparse(uri).scheme.split("+")[0]


def check_tracking_uri(uri: str) -> None:
    if refusal := file_store_refusal(uri, "tracking.uri="):
        raise ConfigError(refusal)
    scheme = store_scheme(uri)
    if scheme and scheme not in TRACKING_SCHEMES:
        raise ConfigError(f"tracking.uri={uri}: MLflow has no store for {scheme}://; use sqlite:///PATH.db (the default), "
                          "http(s)://HOST:PORT of an `mlflow server`, or postgresql://...")


def check_tracking_store(uri: str, root: Path) -> None:
    """That the MLflow store can be opened, where that is quick to tell: the projection opens it
    while the first trials run, so a store it could not open failed only once they had been
    judged (an unreachable server after some four minutes of MLflow's retries), and left the
    job's event log behind. `root`: the job's tracking.root, which the job makes."""
    scheme = store_scheme(uri)
    if (path := sqlite_path(uri)) is not None:
        _check_sqlite_folder(uri, path, root)
        _check_sqlite_store(uri, path)
    elif scheme in ("http", "https") and (reason := server_silence(uri)):
        raise ConfigError(f"tracking.uri={uri}: no server answers there ({reason}); start one with "
                          "`mlflow server --port PORT`, or leave tracking.uri out for sqlite:///<root>/mlflow.db")


def _check_sqlite_folder(uri: str, path: Path, root: Path) -> None:
    """A new SQLite store is made in a folder that exists, or in the job's tracking.root (the
    default store, <root>/mlflow.db, which a first run makes with the root). A store under a
    folder that does not exist is most likely a misspelt path: the job made the folders and
    a new store in them, and its results went there, apart from the store they were meant for
    (session 50's user walk)."""
    folder = path.resolve().parent
    if folder.is_dir() or folder == root.resolve():
        return
    raise ConfigError(f"tracking.uri={uri}: the store's folder {folder} does not exist, and a misspelt path would "
                      f"start a new store apart from your results; check the path, or make the folder first "
                      f"(mkdir -p {folder}) for a new store there, or leave tracking.uri out for "
                      f"sqlite:///<tracking.root>/mlflow.db")


def _check_sqlite_store(uri: str, path: Path) -> None:
    if path.exists():
        try:
            with contextlib.closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True)) as db:
                db.execute("select count(*) from sqlite_master").fetchone()
        except sqlite3.Error as exc:
            raise ConfigError(f"tracking.uri={uri}: {path} cannot be opened as an SQLite database ({exc})") from None
        return
    folder = path.resolve().parent
    while not folder.exists():  # the store's folders are made when it is created
        folder = folder.parent
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise ConfigError(f"tracking.uri={uri}: the store cannot be created under {folder} "
                          f"({exc.strerror or exc}); choose a folder you can write") from None


def require(ok: bool, setting: str, value: Any, rule: str) -> None:
    if not ok:
        raise ConfigError(f"{setting}={value}: {rule}")


def to_config(config: DictConfig, context: DictConfig | None = None) -> Config:
    """The typed job config of a composed config that still holds Hydra's own node; a key
    that `+` added and nothing reads is refused here (`unread_keys`), before the schemas'
    objects leave it out."""
    unread_keys(config, context)
    task = copy.deepcopy(config)
    with read_write(task), open_dict(task):
        task.pop("hydra", None)
    try:
        return OmegaConf.to_object(task)  # type: ignore[return-value]
    except MissingMandatoryValue as e:
        key = e.full_key
        raise ConfigError(REQUIRED.get(key, f"{key} has no value: add {key}=...")) from None


class SweepCheck(Callback):
    """Runs each job's pre-trial checks before Hydra writes anything."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        from kgb.run import prepare

        try:
            prepare(to_config(config))
        except ValueError as e:  # ConfigError and the ValueErrors of operators, methods, models
            fail(e)

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        from hydra import compose

        from kgb.run import prepare

        for combo in sweep_overrides(config):
            try:
                prepare(to_config(compose(config_name=config.hydra.job.config_name, overrides=combo), config))
            except ValueError as e:
                if os.environ.get(FULL_ERROR):
                    fail(e)
                fail(ConfigError(f"the job `{' '.join(combo)}` of this sweep would fail, so none has run: {e}"))


def sweep_overrides(config: DictConfig) -> list[list[str]]:
    """The overrides of every job of the multirun that `config` starts."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper

    # the sweep as BasicSweeper builds it: config-defined params, then the command line
    params = [f"{k}={v}" for k, v in (config.hydra.sweeper.get("params") or {}).items()]
    parsed = OverridesParser.create().parse_overrides([*params, *config.hydra.overrides.task])
    return [combo for batch in BasicSweeper.split_arguments(parsed, None) for combo in batch]


def main_guard(args: list[str]) -> list[str]:
    """run.py's first step: one line and exit 1 for a bad group choice or setting name; else
    the command line to give Hydra (`swept_settings`)."""
    try:
        check_command_line(args)
    except ConfigError as e:
        fail(e)
    return swept_settings(args)

