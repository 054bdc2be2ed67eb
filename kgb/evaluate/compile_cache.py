"""The compile cache: what Triton compiled for a source, kept for its next evaluation.

A candidate process compiles its kernels into `<workspace>/triton-cache`, and each
evaluation has a new workspace, so every evaluation compiled from nothing (on the H200,
18% of all evaluation time; 177 s per evaluation of cublas::cublasZtrsmBatched). The
harness keeps the files an evaluation left there as the entry of its source, and the next
evaluation of the same source starts with a copy of them. This module says where the store
is and which entries an evaluation uses; the store's entries, and how they are copied in
and out, are kgb.evaluate.compile_store's.

An entry's key hashes the source text with what makes its compiled code differ: the
Triton version, the device and the host's GPU model. Only an evaluation of a source makes
that source's entry, and only the harness reads or writes the store (the sandbox keeps
candidate processes out of it, and `root` refuses a folder they could read): a candidate
reaches no other source's kernels and plants no file for them. Triton finds its files in
the cache by hashes of its own (kernel, options, target), so a file that no longer fits is
left unused, never run.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from importlib import metadata
from pathlib import Path

from kgb.evaluate.compile_store import FORMAT, Entry

# eval.compile_cache's default: $XDG_CACHE_HOME/kgb/compile, else ~/.cache/kgb/compile
AUTO = "auto"
TRITON_DISTRIBUTIONS = ("triton", "pytorch-triton", "pytorch-triton-rocm")


def users_cache(name: str) -> Path:
    """kgb's folder `name` in the user's cache: under $XDG_CACHE_HOME where it is absolute (the
    XDG rule: a relative one is ignored), else under ~/.cache."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    return (Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache") / "kgb" / name


def root(setting: str | None) -> Path | None:
    """The store's folder for the `eval.compile_cache` setting; None where it is off (None
    or ""). Raises ValueError for a folder that candidates could read: the entries hold
    every source's compiled kernels, the expert solutions' among them."""
    if not setting:
        return None
    if setting == AUTO:
        folder = users_cache("compile")
    else:
        folder = Path(setting).expanduser()
    from kgb.evaluate.sandbox import default_paths

    where = folder.resolve()
    for readable in default_paths(Path("/nonexistent"), allow_exec=False).read:
        shared = Path(readable).resolve()
        if where == shared or shared in where.parents:
            raise ValueError(
                f"eval.compile_cache={setting}: {where} lies in {readable}, which candidates may "
                "read; choose a folder outside the Python environment and the system's folders "
                "(auto: ~/.cache/kgb/compile), or null for no cache"
            )
    return folder


def key(source: str, device: str, hidden: bool = False) -> str:
    """The entry of `source` judged on `device` (a torch device type), by evaluations that ran
    cases an agent is not shown (`hidden`: the `check` cases) or by those that did not.

    The two are kept apart because an entry holds whatever files its candidate left, and a
    candidate judged first on the hidden cases (a final kernel never checked) noted their
    shapes there, which a later `./check` of the same text (another sample, a later run,
    `method.baseline`'s start) restored and raised into the report the agent reads (session
    47's agent red team). An evaluation that runs the hidden cases may restore either
    (`entries`); one that does not, only the entries of its kind."""
    parts = {
        "format": FORMAT,
        "source": source,
        "device": device,
        "triton": _triton_version(),
        "gpu": "" if device == "cpu" else _gpu_models(),
        **({"cases": "hidden"} if hidden else {}),  # the visible cases' keys are as before
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def entries(store: Path, source: str, device: str, hidden: bool) -> list[Entry]:
    """The entries an evaluation may restore, its own kind's first: it keeps what it compiled
    as the first. One that runs the hidden cases starts from the visible cases' entry where
    its own kind has none (an agent's checks compiled it), and can only add to it."""
    own = Entry(store, key(source, device, hidden))
    return [own, Entry(store, key(source, device))] if hidden else [own]


@functools.cache
def _triton_version() -> str:
    """Triton's version from its distribution's metadata (Triton is not imported here)."""
    for name in TRITON_DISTRIBUTIONS:
        try:
            return f"{name} {metadata.version(name)}"
        except metadata.PackageNotFoundError:
            continue
    return ""


@functools.cache
def _gpu_models() -> str:
    """This host's NVIDIA GPU models as the driver lists them, without a CUDA call; "" where
    it lists none. Triton's own hashes name the target; this keeps hosts' entries apart."""
    models = set()
    for info in Path("/proc/driver/nvidia/gpus").glob("*/information"):
        try:
            lines = info.read_text().splitlines()
        except OSError:
            continue
        models |= {line.partition(":")[2].strip() for line in lines if line.startswith("Model:")}
    return ",".join(sorted(models))
