"""The environment of an evaluation engine, and so of every judge and candidate process it
starts: what the libraries read of the harness's, never a secret (by name or by value), and
the places a candidate's libraries write to, inside its workspace.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from kgb.evaluate import cuda_waits, timing_lock, workdirs
from kgb.evaluate.compile_cache import users_cache
from kgb.evaluate.verdict import EvalSettings
from kgb.operators import REPO_ROOT

# Names of environment variables a candidate must never see (API keys and the like).
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|AUTH|PASS", re.IGNORECASE)
MIN_SECRET_CHARS = 8  # shorter values (a "1", a "true") would scrub harmless text


def secret_values(settings: EvalSettings, environ: dict[str, str] | None = None) -> set[str]:
    """The secrets this run holds: values of variables named like secrets, and of the
    variables the config says hold one (model.api_key_env), whatever their names."""
    environ = dict(os.environ) if environ is None else environ
    names = {k for k in environ if SECRET_NAME.search(k)} | set(settings.secret_env)
    return {environ[k] for k in names if len(environ.get(k, "")) >= MIN_SECRET_CHARS}


def scrub(text: str, secrets: set[str]) -> str:
    for value in secrets:
        text = text.replace(value, "[secret]")
    return text


# Variables that change between calls without changing what a judge does; kept, each call
# would start its own engine (pytest sets the first one per test).
VOLATILE_ENV = frozenset({"PYTEST_CURRENT_TEST"})


# What an engine's environment keeps of the harness's: what Python, the C toolchain, CUDA,
# PyTorch, Triton, their thread pools and kgb's own settings read. Until session 44 it kept
# everything but the names and values known to be secret: a database URL, a proxy with its
# password or a token under a name like GITHUB_PAT reached every candidate, and through a
# raised error an agent's check report.
KEPT_ENV = re.compile(r"PATH|HOME|TMPDIR|LANG|LANGUAGE|TZ|USER|LOGNAME|TERM|VIRTUAL_ENV|LD_LIBRARY_PATH|LIBRARY_PATH|CPATH"
                      r"|C_INCLUDE_PATH|CPLUS_INCLUDE_PATH|CC|CXX|LC_\w+|PYTHON\w*|CUDA_\w+|NVIDIA_\w+"
                      r"|CONDA_PREFIX(_\d+)?|CONDA_DEFAULT_ENV|CONDA_EXE|CONDA_PYTHON_EXE|CONDA_SHLVL"
                      r"|NV_\w+|TRITON_\w+|TORCH\w*|PYTORCH_\w+|KGB_\w+|OMP_\w+|MKL_\w+|OPENBLAS_\w+|BLIS_\w+"
                      r"|KMP_\w+|GOMP_\w+")


# A URL that carries a password (https://user:token@host/...) or Anaconda's token in its path
# (https://repo.anaconda.cloud/t/<token>/...): Conda's settings (CONDA_CHANNEL_ALIAS and the
# like, no longer kept since session 46) held both, and the second reached a candidate's
# error message, which an agent's check report shows (session 44's and 46's red teams)
URL_WITH_PASSWORD = re.compile(r"://[^/\s:@]+:[^/\s@]+@|://\S*/t/[^/\s]+")


def engine_env(settings: EvalSettings) -> dict[str, str]:
    """The engine's (and so every judge's) environment: what the libraries read (KEPT_ENV),
    less any variable named like a secret or holding a secret's value, whatever its name."""
    secrets = secret_values(settings)
    env = {k: v for k, v in os.environ.items()
           if KEPT_ENV.fullmatch(k) and not SECRET_NAME.search(k) and k not in settings.secret_env
           and k not in VOLATILE_ENV and not any(s in v for s in secrets) and not URL_WITH_PASSWORD.search(v)}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if os.environ.get("PYTHONDONTWRITEBYTECODE") and "KGB_BYTECODE_PREFIX" not in env:
        # the engine's own imports keep their bytecode (engine_process._bytecode_kept), in kgb's
        # cache where this environment says to write none beside the sources
        env["KGB_BYTECODE_PREFIX"] = str(users_cache("pycache"))
    if settings.device == "cpu":
        env["TRITON_INTERPRET"] = "1"
    else:
        env.pop("TRITON_INTERPRET", None)
        # One hardware work queue per CUDA context, where the driver makes eight: a sweep starts
        # and ends two contexts per evaluation, and on the H200 (session 32,
        # benchmarks/start_cost.py) a context started in 0.19 s against 0.37 s alone, and in
        # 1.02 s against 2.36 s sixteen at a time, spending a third of the system CPU time; an
        # end took 0.13 s against 0.48 s. The judge times every call on one stream, so one
        # queue serialises nothing it measures (judge v16).
        env["CUDA_DEVICE_MAX_CONNECTIONS"] = "1"
        cuda_waits.mode()  # a bad KGB_CUDA_WAIT fails here, not in every judge
        timing_lock.gather_s()  # and a bad KGB_GATHER_S
    env["KGB_DRIVER_CACHE"] = str(workdirs.users_own("triton-driver-cache"))
    env["KGB_TORCH_KERNEL_CACHE"] = str(workdirs.users_own("torch-kernel-cache"))
    # numpy's BLAS (the interpreter's tl.dot) must not want threads: the candidate process may
    # not start any, and a pool started in the engine does not survive the fork.
    env.update(OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1", BLIS_NUM_THREADS="1")
    return env


def workspace_env(workspace: Path) -> dict[str, str]:
    """Every cache and scratch place a library might write to, inside the candidate's workspace."""
    return {
        "TRITON_CACHE_DIR": str(workspace / "triton-cache"),
        "TRITON_HOME": str(workspace),
        "TMPDIR": str(workspace),
        "HOME": str(workspace),
        "CUDA_CACHE_PATH": str(workspace / "cuda-cache"),
        "TORCHINDUCTOR_CACHE_DIR": str(workspace / "inductor-cache"),
    }
