"""method=transfer: a real `python run.py` on the CPU, then its kernels re-judged by a
transfer job into the same store, with the source of every candidate recorded."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kgb.config import ConfigError, TransferConfig
from kgb.methods.transfer import Kernel, SourceRun, Transfer, choose, pick_run
from kgb.operators import REPO_ROOT
from kgb.tracking.events import (
    CandidateEvaluated,
    CandidateProposed,
    ModelCalled,
    RunStarted,
    TrialFinished,
    TrialStarted,
)
from kgb.tracking.log import read_events

pytestmark = pytest.mark.slow
OPS = "ops=[aten::add,aten::silu,aten::cos]"


def run_py(*args: str, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO_ROOT / "run.py"), "chip=cpu", "source=aten", OPS, *args],
                          cwd=cwd, capture_output=True, text=True, timeout=600)


def job_events(root: Path, method: str) -> list:
    (log,) = [p for p in root.glob("jobs/*/events.jsonl") if p.parent.name.startswith(f"{method}-")]
    return read_events(log)


def by_op(events: list) -> dict[str, dict[str, object]]:
    """op -> its trial's proposed candidate, verdict and end."""
    ops = {e.trial: e.op for e in events if isinstance(e, TrialStarted)}
    found: dict[str, dict[str, object]] = {op: {} for op in ops.values()}
    for e in events:
        if isinstance(e, CandidateProposed):
            found[ops[e.trial]]["proposed"] = e
        elif isinstance(e, CandidateEvaluated):
            found[ops[e.trial]]["status"] = e.verdict.status.value
        elif isinstance(e, TrialFinished):
            found[ops[e.trial]]["end"] = e
    return found


def config(root: Path, **choose: str) -> TransferConfig:
    cfg = TransferConfig(**choose)
    setattr(cfg, "from", str(root))
    return cfg


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A files run (add correct, silu wrong, cos without a file), then a transfer of it into the same root."""
    root = tmp_path_factory.mktemp("store")
    kernels = root.parent / f"{root.name}-kernels"
    kernels.mkdir()
    shutil.copy(REPO_ROOT / "operators/aten/add/solution.py", kernels / "aten__add.py")
    silu = (REPO_ROOT / "operators/aten/silu/solution.py").read_text()
    (kernels / "aten__silu.py").write_text(silu.replace("(1.0 + tl.exp(-x))", "(2.0 + tl.exp(-x))"))
    for args in (("method=files", f"method.dir={kernels}"), ("method=transfer", f"method.from={root}")):
        done = run_py(*args, f"tracking.root={root}", "tracking.mlflow=false")
        assert done.returncode == 0, done.stdout + done.stderr
    return root


def test_transfer_rejudges_the_same_kernels_and_names_their_origin(store):
    source, transfer = job_events(store, "files"), job_events(store, "transfer")
    before, after = by_op(source), by_op(transfer)
    source_job = source[0].job
    for op in ("aten::add", "aten::silu"):
        was, now = before[op]["proposed"], after[op]["proposed"]
        assert now.source_blob == was.source_blob  # the very kernel, not a regenerated one
        assert f"job {source_job} trial {was.trial} candidate {was.candidate}" in now.origin
        assert f"files/none on cpu (dir={store.parent / (store.name + '-kernels')})" in now.origin
    assert (after["aten::add"]["status"], after["aten::silu"]["status"]) == ("correct", "wrong_output")
    assert "not correct there" in after["aten::silu"]["proposed"].origin
    cos = after["aten::cos"]
    assert "proposed" not in cos and cos["end"].end == "no_candidate"
    assert "judged no candidate for aten::cos" in cos["end"].reason
    assert not any(isinstance(e, ModelCalled) for e in transfer)
    # the source the method found is pinned in the job's recorded config
    started = next(e for e in transfer if isinstance(e, RunStarted))
    method = started.config["method"]
    assert (method["from_method"], method["from_model"], method["from_chip"], method["from"]) == ("files", "none", "cpu", str(store))
    assert method["from_params"] == f"dir={store.parent / (store.name + '-kernels')}"


def test_a_transfer_job_in_the_same_store_is_never_a_source(store):
    method = Transfer(config(store))  # the root now also holds the transfer job above
    assert method.run == SourceRun("files", f"dir={store.parent / (store.name + '-kernels')}", "none", "cpu")
    assert sorted(method.by_op) == ["aten::add", "aten::silu"]


def ambiguous_root(store: Path, dest: Path) -> Path:
    """`store`'s files job, and the same job again as if `oneshot` had written it."""
    (source,) = [p for p in store.glob("jobs/files-*")]
    for method in ("files", "oneshot"):
        job = dest / "jobs" / source.name.replace("files-", f"{method}-")
        job.mkdir(parents=True)
        lines = (source / "events.jsonl").read_text().splitlines()
        first = json.loads(lines[0])
        assert first["kind"] == "RunStarted"
        first["method"] = method
        first["identity"] = {}  # as an older log: no configuration to tell apart
        (job / "events.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    shutil.copytree(store / "blobs", dest / "blobs")
    return dest


def test_several_source_methods_fail_in_one_line_before_anything_runs(store, tmp_path):
    root = ambiguous_root(store, tmp_path / "two")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    done = run_py("method=transfer", f"method.from={root}", cwd=cwd)
    assert done.returncode != 0
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: ") and "files/none on cpu; oneshot/none on cpu" in line
    assert line.endswith("choose one with method.from_method=files or method.from_method=oneshot")
    assert list(cwd.iterdir()) == []  # nothing was written
    assert Transfer(config(root, from_method="oneshot")).run == SourceRun("oneshot", "", "none", "cpu")
    with pytest.raises(ConfigError, match="no run matches method.from_method=aiko"):
        Transfer(config(root, from_method="aiko"))


def test_two_configurations_of_one_method_are_two_source_runs(store, tmp_path):
    """Two users' `method=files` folders in one root: until session 46 one source run, whose
    kernels mixed (aten::sin from one folder, aten::add from the other, and no error)."""
    (source,) = [p for p in store.glob("jobs/files-*")]
    root = tmp_path / "two-folders"
    for folder in ("/home/a/k", "/home/b/k"):
        job = root / "jobs" / f"{source.name}-{folder.split('/')[2]}"
        job.mkdir(parents=True)
        lines = (source / "events.jsonl").read_text().splitlines()
        first = json.loads(lines[0])
        first["identity"]["method"]["dir"] = folder
        (job / "events.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    shutil.copytree(store / "blobs", root / "blobs")
    with pytest.raises(ConfigError, match=r"files/none on cpu \(dir=/home/a/k\); files/none on cpu \(dir=/home/b/k\)"
                                          r"\): choose one with 'method.from_params=\"dir=/home/a/k\"' "
                                          r"or 'method.from_params=\"dir=/home/b/k\"'$"):
        Transfer(config(root))
    chosen = Transfer(config(root, from_params="dir=/home/b/k"))
    assert chosen.run.params == "dir=/home/b/k" and sorted(chosen.by_op) == ["aten::add", "aten::silu"]


def test_the_settings_that_choose_a_source_run_are_given_as_a_shell_and_hydra_read_them():
    """`choose one with method.from_params=NAME` led to `method.from_params=mode=answer`, which
    Hydra refuses ("mismatched input '='"): each choice is now written out, quoted where Hydra
    reads a value only inside quotes (an `=`, a space, the defaults' "")."""
    import shlex

    from hydra.core.override_parser.overrides_parser import OverridesParser

    runs = {SourceRun("claude_code", params, "opus", "cpu") for params in ("", "mode=answer", "dir=/a b")}
    runs |= {SourceRun("aiko", "", model, "cpu") for model in ("qwen/qwen3.5:27b", "null")}
    parser = OverridesParser.create()
    for chosen in ({"method": "claude_code"}, {"method": "aiko"}):
        with pytest.raises(ConfigError) as e:
            pick_run(Path("r"), runs, TransferConfig(**{f"from_{k}": v for k, v in chosen.items()}))
        offered = str(e.value).split("choose one with ", 1)[1]
        picked = set()
        for choice in offered.split(" or "):
            [word] = shlex.split(choice)  # one word in a shell
            override = parser.parse_override(word)
            setting = override.key_or_group.removeprefix("method.from_")
            cfg = TransferConfig(**{f"from_{k}": v for k, v in chosen.items()}, **{f"from_{setting}": override.value()})
            picked.add(pick_run(Path("r"), runs, cfg))
        assert picked == {r for r in runs if r.method == chosen["method"]}


def test_bad_source_folders_fail_in_one_line(tmp_path):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    done = run_py("method=transfer", f"method.from={tmp_path / 'nowhere'}", cwd=cwd)
    assert done.returncode != 0 and list(cwd.iterdir()) == []
    assert done.stderr.strip().splitlines() == [f"error: method.from={tmp_path / 'nowhere'}: no such folder "
                                                "(give the tracking.root of the run whose kernels to judge)"]
    with pytest.raises(ConfigError, match="no event logs under"):
        Transfer(config(cwd))
    with pytest.raises(ConfigError, match="add method.from=OUTPUTS_DIR"):
        Transfer(TransferConfig())


def kernel(candidate: str, correct: bool, speedup: float, at: float) -> Kernel:
    return Kernel(SourceRun("m", "", "x", "nvidia"), "aten::a", "j", "t", candidate, candidate, correct, speedup, (at, 0))


def test_the_fastest_correct_kernel_is_taken_else_the_last_judged():
    assert choose([kernel("slow", True, 1.2, 1), kernel("fast", True, 2.0, 0), kernel("wrong", False, 0, 3)]).candidate == "fast"
    assert choose([kernel("early", True, 0.0, 1), kernel("late", True, 0.0, 2)]).candidate == "late"  # untimed: the latest
    assert choose([kernel("first", False, 0, 1), kernel("last", False, 0, 5), kernel("mid", False, 0, 3)]).candidate == "last"


def test_several_chips_name_the_setting_that_chooses():
    runs = {SourceRun("aiko", "", "opus", "nvidia"), SourceRun("aiko", "", "opus", "E")}
    with pytest.raises(ConfigError, match=r"choose one with method.from_chip=E or method.from_chip=nvidia$"):
        pick_run(Path("r"), runs, TransferConfig())
    assert pick_run(Path("r"), runs, TransferConfig(from_chip="nvidia")) == SourceRun("aiko", "", "opus", "nvidia")
