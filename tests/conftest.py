"""How the suite is spread over pytest-xdist's workers (pyproject.toml's addopts: -n auto
--dist loadgroup), so that CPU CI stays under 15 minutes (issue 11).

Each test goes to whichever worker is free, but the tests of a file that share one of its
module-scoped fixtures (a sweep through run.py, a browser on `mlflow ui`, a batch built for
sm_90) go to one worker together, so that the fixture is made once. xdist's own
`--dist loadgroup` cannot do this with pytest 9, which ignores the group it appends to a
test's id: the groups are read here from the test files' source instead.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import os
import time
from pathlib import Path

import pytest

MAX_WORKERS = 8  # each holds torch and warm engines (1-2 GB)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """Two workers per CPU: many tests wait on subprocesses (a run.py, an engine's judge, a
    server starting), and with one worker per CPU the CPUs were often idle; with two they
    are busy to the end."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own hook reads it
    return min(2 * len(os.sched_getaffinity(0)), MAX_WORKERS)


def _fixture_scope(function: ast.FunctionDef) -> str | None:
    """The scope of a fixture defined as @pytest.fixture(...); None for anything else."""
    for decorator in function.decorator_list:
        call = decorator if isinstance(decorator, ast.Call) else None
        if ast.unparse(call.func if call else decorator) in ("pytest.fixture", "fixture"):
            scopes = [k.value for k in (call.keywords if call else []) if k.arg == "scope"]
            return scopes[0].value if scopes and isinstance(scopes[0], ast.Constant) else "function"
    return None


@functools.cache
def _shared_units(rootpath: Path, file: str) -> dict[str, str]:
    """The tests of a file that use one of its module-scoped fixtures (directly or through
    its other fixtures), each mapped to its unit: tests joined by the fixtures they share."""
    try:
        tree = ast.parse((rootpath / file).read_text())
    except (OSError, SyntaxError, UnicodeDecodeError):
        return {}
    functions = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    uses = {name: {a.arg for a in f.args.args + f.args.kwonlyargs} for name, f in functions.items()}
    scopes = {name: scope for name, f in functions.items() if (scope := _fixture_scope(f))}

    @functools.cache
    def shared(name: str) -> frozenset[str]:
        """The module-scoped fixtures a function needs."""
        own = {name} if scopes.get(name, "function") != "function" else set()
        return frozenset(own.union(*(shared(u) for u in uses.get(name, ()) if u in scopes)))

    units: dict[str, str] = {}  # fixture -> the fixture naming its unit

    def find(f: str) -> str:
        while units.setdefault(f, f) != f:
            f = units[f]
        return f
    tests = {name: shared(name) for name in functions if name.startswith("test") and shared(name)}
    for fixtures in tests.values():
        first, *rest = sorted(fixtures)
        for f in rest:
            units[find(f)] = find(first)
    return {name: f"{file}::{find(min(fixtures))}" for name, fixtures in tests.items()}


def _unit(rootpath: Path, nodeid: str) -> str:
    """The unit of work a test belongs to: the tests sharing its fixtures, else itself."""
    file, _, name = nodeid.partition("::")
    return _shared_units(rootpath, file).get(name.split("[", 1)[0], nodeid)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """addopts' --dist loadgroup, with the groups above."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SharedFixtureScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _unit(config.rootpath, nodeid)

    config.option.loadscopereorder = False  # keep the order of pytest_collection_modifyitems
    return SharedFixtureScheduling(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tests marked slow and those sharing a fixture are handed out first: one of them
    left for the end would keep one worker busy while the others have nothing to do."""
    def first(item: pytest.Item) -> bool:
        return item.get_closest_marker("slow") is not None or _unit(config.rootpath, item.nodeid) != item.nodeid

    items.sort(key=lambda item: not first(item))


@pytest.fixture(autouse=True)
def _each_test_checks_its_own_model_endpoints():
    """kgb.models checks an endpoint and model name once per process. A test's fake server
    can get the port of an earlier test's, in the same worker, once that one has closed: the
    check that should have met a refused key found the earlier success and skipped the call
    (seen once in CI, tests/test_models.py)."""
    from kgb import models

    models._checked.clear()


# What a judge sets of its own process (kgb.evaluate.judge._keep_out_of_the_workspace): its
# scratch folder under the test's tmp_path. A test that runs the judge in its own process
# (tests/test_redraw.py) left them for every later test of its worker, whose trial folders
# were then made there: an agent trial's check socket path ran past AF_UNIX's 108 bytes, and
# the trial ended method_error, in one test order of CI's (session 47).
JUDGE_SETS = ("TMPDIR", "TRITON_CACHE_DIR", "PYTORCH_KERNEL_CACHE_PATH", "HOME", "TRITON_HOME", "CUDA_CACHE_PATH",
              "TORCHINDUCTOR_CACHE_DIR")


@pytest.fixture(autouse=True)
def _each_test_leaves_the_temporary_folder_as_it_found_it(monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", tempfile.tempdir)
    for key in JUDGE_SETS:
        if key in os.environ:
            monkeypatch.setenv(key, os.environ[key])  # put back as it is, at the test's end
        else:  # monkeypatch removes at the end only what it saw absent when it set it
            monkeypatch.setenv(key, "")
            monkeypatch.delenv(key)


@pytest.fixture
def job_log(tmp_path):
    """Writes a job's event log, gzipped as docs/results keeps them, of one trial per
    (operator, verdict) given: what the tools that read a job's log (the tables of
    operators/, benchmarks/agreement.py) are given."""
    import gzip
    import json

    from kgb.tracking.encoding import to_json
    from kgb.tracking.events import CandidateEvaluated, CandidateProposed, TrialStarted

    def write(judged: list) -> Path:
        events = []
        for n, (op, verdict) in enumerate(judged):
            trial = f"t{n}"
            events += [TrialStarted(job="j", trial=trial, op=op, spec_version=1, sample=0),
                       CandidateProposed(job="j", trial=trial, candidate="c1", source_blob="b"),
                       CandidateEvaluated(job="j", trial=trial, candidate="c1", verdict=verdict)]
        path = tmp_path / "events.jsonl.gz"
        path.write_bytes(gzip.compress("".join(json.dumps(to_json(e)) + "\n" for e in events).encode()))
        return path

    return write


# The judge's timing code on the CPU (tests/test_staged_replay.py, tests/test_bench_timing.py)
class _Event:
    def __init__(self, enable_timing: bool = False, external: bool = False):
        self.at = 0.0

    def record(self) -> None:
        self.at = time.perf_counter()

    def elapsed_time(self, end: _Event) -> float:
        return (end.at - self.at) * 1000.0

    def synchronize(self) -> None:
        pass


class _NoReading:
    error, count, activities = "no kernel clock on the CPU", 0, 0

    def repetition(self):
        return contextlib.nullcontext()

    def samples(self) -> None:
        return None


class _NoClock:
    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass

    def reading(self) -> _NoReading:
        return _NoReading()


@pytest.fixture
def cpu_as_gpu(monkeypatch):
    """The judge's timing code (kgb.evaluate.timing) run on the CPU: events read the host's
    clock, there is no L2 to flush, no CUDA graph, no kernel clock and no GPU clocks to wait for."""
    import torch

    from kgb.evaluate import l2_flush, timing

    monkeypatch.setattr(torch.cuda, "Event", _Event)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a, **k: None)
    monkeypatch.setattr(torch.cuda, "_sleep", lambda cycles: None)
    monkeypatch.setattr(l2_flush, "_FLUSHES", {True: lambda: None, False: lambda: None})
    monkeypatch.setattr(timing, "capture", lambda fn, flush=None: "no CUDA graphs on the CPU")
    monkeypatch.setattr(timing, "KernelClock", _NoClock)
    monkeypatch.setattr(timing.nvml, "wait_for_clocks", lambda: 0.0)
