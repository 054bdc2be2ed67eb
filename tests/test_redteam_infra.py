"""Red team, session 49: a candidate that makes the harness raise, or wait, decides that its own
failure does not count. Whatever `evaluate` raises ends the trial as an infrastructure failure
(kgb.trial.InfrastructureFailure): no result, left out of accuracy, retried by every later run;
and a harness that waits for ever stalls the whole job. Each test runs one such attack in a fast
form and asserts that the verdict is the candidate's, that nothing waits, and that the host's
later evaluations still work (docs/design/threat-model.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from kgb import operators
from kgb.evaluate import EvalSettings, Status, compile_cache, crosscompile, evaluate, workdirs
from kgb.evaluate.compile_store import Entry
from kgb.evaluate.sandbox import landlock_abi
from kgb.evaluate.tree_removal import remove_tree

SMOKE = EvalSettings(device="cpu", case_tags=("smoke",), timeout_s=120)
DEPTH = 3_000  # past Python's recursion limit, and a path past PATH_MAX

# Appended to the softmax solution: nests DEPTH folders in the candidate's workspace at import.
NEST = f'''

def _nest():
    import os
    fd = os.open(os.environ["HOME"], os.O_RDONLY | os.O_DIRECTORY)  # HOME is the workspace
    for _ in range({DEPTH}):
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)


_nest()
'''


@pytest.fixture(scope="module")
def softmax():
    return operators.load("aten::softmax")


@pytest.fixture
def scratch(tmp_path):
    """tmp_path, removed after the test: pytest removes the folders of old sessions with
    shutil.rmtree, and a nest left there would make every later session on the host raise."""
    yield tmp_path
    remove_tree(tmp_path)


def nest(folder: Path, depth: int = DEPTH, beside: Path | None = None) -> None:
    """`depth` folders each inside the last, made relative to the last one's descriptor (their
    path is too long for a path); every 500 levels a file, a FIFO and a link to `beside`."""
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    for level in range(depth):
        if beside is not None and level % 500 == 0:
            os.close(os.open("file", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd))
            os.mkfifo("fifo", dir_fd=fd)
            os.symlink(beside, "link", dir_fd=fd)
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)


# ---------------------------------------------------------------- folders removed whatever they hold


def test_a_tree_3000_folders_deep_is_removed_in_seconds_and_no_link_is_followed(scratch):
    beside = scratch / "beside"
    beside.mkdir()
    (beside / "kept").write_text("not the tree's")
    nest(scratch / "tree", beside=beside)
    began = time.monotonic()
    assert remove_tree(scratch / "tree")
    assert time.monotonic() - began < 10
    assert not (scratch / "tree").exists()
    assert (beside / "kept").read_text() == "not the tree's"
    assert remove_tree(scratch / "tree")  # already gone: nothing to do
    (scratch / "link").symlink_to(beside, target_is_directory=True)
    assert not remove_tree(scratch / "link") and (beside / "kept").exists()  # a link is left as it is


def test_a_folder_its_owner_made_unreadable_is_removed(scratch):
    """A candidate may chmod what it made (Landlock does not govern that): a folder of mode 000
    inside one of 500 stayed, and every later harness tried again. The removal runs without
    capabilities, as root's would let it open any folder."""
    script = """
import os, sys
from kgb.evaluate.sandbox import drop_capabilities
from kgb.evaluate.tree_removal import remove_tree

drop_capabilities()
top = sys.argv[1]
for outer, inner in (("shut", "inner"), ("read-only", "inner")):
    os.makedirs(os.path.join(top, outer, inner))
    open(os.path.join(top, outer, inner, "file"), "w").close()
mode = {"shut": 0, "read-only": 0o500}
for outer in mode:
    os.chmod(os.path.join(top, outer, "inner"), mode[outer])
    os.chmod(os.path.join(top, outer), mode[outer])
try:
    os.listdir(os.path.join(top, "shut"))
    print("the folder is readable: nothing is tested")
except PermissionError:
    print("removed" if remove_tree(top) and not os.path.lexists(top) else "left")
"""
    done = subprocess.run([sys.executable, "-c", script, str(scratch / "tree")], capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.strip() == "removed", done.stdout + done.stderr


def test_a_candidate_that_nests_3000_folders_in_its_workspace_gets_its_own_verdict(softmax):
    """shutil.rmtree of the evaluation's folder raised RecursionError (ignore_errors covers
    OSError only) out of `evaluate`; the folder stayed for the next harness to meet."""
    began = time.monotonic()
    verdict = evaluate(softmax.solution_path.read_text() + NEST, softmax, SMOKE)
    assert verdict.status == Status.CORRECT, verdict.message
    assert time.monotonic() - began < 60
    ours = Path(tempfile.gettempdir()).glob(f"{workdirs.host_prefix()}{os.getpid()}-*")
    assert not [folder for folder in ours if (folder / "candidate" / "d").exists()], "the nest stayed behind"


def test_a_nest_a_dead_harness_left_stops_no_later_harness(scratch, monkeypatch):
    """Every harness that starts an engine first removes the folders of dead harnesses; one
    holding a nest made every later evaluation on the host an infrastructure failure."""
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    gone = subprocess.Popen(["true"])
    gone.wait()  # a harness that has ended
    left = scratch / f"{workdirs.host_prefix()}{gone.pid}-x1y2z3"
    nest(left / "candidate")
    assert workdirs.remove_left_behind() == [left]
    assert not left.exists()


# ---------------------------------------------------------------- the compile cache's restore


def test_a_group_file_too_deep_for_json_is_dropped_on_restore(tmp_path):
    """A group file of 200,000 `[` made json.loads raise RecursionError in the harness's
    restore, for every later evaluation of that source."""
    cache = tmp_path / "cache"
    (cache / "zz").mkdir(parents=True)
    (cache / "zz" / "__grp__zz.json").write_text("[" * 200_000)
    (cache / "zz" / "kernel.json").write_text("{}")
    entry = Entry(tmp_path / "store", compile_cache.key("source", "cpu"))
    assert entry.keep(cache) is None and entry.path.exists()
    restored = tmp_path / "workspace" / "triton-cache"
    assert entry.restore(restored)
    assert sorted(p.name for p in (restored / "zz").iterdir()) == ["kernel.json"]  # the group goes, the rest stays


def test_an_entry_whose_restore_fails_in_any_way_counts_as_none_and_is_discarded(scratch):
    """A file 1,500 folders deep is stored (the copy walks the tree), but its restore's
    Path.mkdir(parents=True) recurses once per level: RecursionError, out of `evaluate`."""
    cache = scratch / "cache"
    nest(cache, depth=1_500)
    deepest = os.open(cache / ("d/" * 1_000), os.O_RDONLY | os.O_DIRECTORY)  # a path still fits this far
    try:
        inner = os.open("d/" * 499 + "d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=deepest)
        os.close(os.open("kernel.json", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=inner))
        os.close(inner)
    finally:
        os.close(deepest)
    entry = Entry(scratch / "store", compile_cache.key("source", "cpu"))
    assert entry.keep(cache) is None and entry.path.exists()
    restored = scratch / "workspace" / "triton-cache"
    assert entry.restore(restored) is False
    assert not entry.path.exists(), "the entry stays, to fail the next evaluation the same way"
    assert not restored.exists()


def test_an_evaluation_restoring_a_spoiled_entry_gets_the_candidates_verdict(softmax, tmp_path):
    """The attack whole: the candidate leaves the group file itself; the next evaluation of its
    source restores it (the retry of a trial too)."""
    spoil = '''

def _spoil():
    import os
    group = os.path.join(os.environ["TRITON_CACHE_DIR"], "zz")
    os.makedirs(group, exist_ok=True)
    with open(os.path.join(group, "__grp__zz.json"), "w") as f:
        f.write("[" * 200_000)


_spoil()
'''
    settings = EvalSettings(device="cpu", case_tags=("smoke",), timeout_s=120, compile_cache=str(tmp_path / "store"))
    source = softmax.solution_path.read_text() + spoil
    verdicts = [evaluate(source, softmax, settings) for _ in range(2)]
    assert [v.status for v in verdicts] == [Status.CORRECT] * 2, [v.message for v in verdicts]


# ---------------------------------------------------------------- the compile check's reports


def test_a_compile_check_report_the_candidate_spoiled_is_its_compile_error(softmax):
    """The record step runs the candidate, which can write the step's report: text that is not
    JSON raised JSONDecodeError out of `evaluate`."""
    spoil = '''

import atexit as _atexit
import sys as _sys

if "--step" in _sys.argv and "record" in _sys.argv:
    _report = _sys.argv[_sys.argv.index("--launches") + 1]

    def _spoil():
        with open(_report, "w") as f:
            f.write("this is not json")

    _atexit.register(_spoil)
'''
    settings = EvalSettings(device="cpu", case_tags=("smoke",), timeout_s=120, compile_for=90)
    verdict = evaluate(softmax.solution_path.read_text() + spoil, softmax, settings)
    assert verdict.status == Status.COMPILE_ERROR, verdict.message
    assert "record step's report launches.json is not JSON" in verdict.message, verdict.message


def _fifo(path: Path) -> None:
    path.unlink(missing_ok=True)
    os.mkfifo(path)


def _link(path: Path) -> None:
    path.unlink(missing_ok=True)
    (path.parent / "elsewhere.json").write_text("[]")
    path.symlink_to(path.parent / "elsewhere.json")


# What a step's candidate code can leave as its report, past its sandbox (one without Landlock
# lets it make a FIFO): (the record step's report, the compile step's, what the refusal says)
SPOILED = {
    "a FIFO": (_fifo, "[]", "not a regular file"),
    "a link": (_link, "[]", "cannot be read"),
    "not JSON": ("this is not json", "[]", "not JSON"),
    "too deep": ("[" * 200_000, "[]", "RecursionError"),
    "too large": (" " * (crosscompile.MAX_REPORT_BYTES + 1), "[]", "larger than"),
    "not launches": ('[{"kernel": "k"}]', "[]", "not a list of launches"),
    "an error that is not text": (json.dumps([{"kernel": "k", "signature": [], "constexprs": [], "options": []}]),
                                  "[[1]]", "did not report every launch"),
    "a compile report that is a FIFO": ("[]", _fifo, "not a regular file"),
}


@pytest.mark.parametrize("spoiled", SPOILED)
def test_a_step_report_of_any_other_kind_is_refused_without_waiting(spoiled, tmp_path, monkeypatch):
    """The harness's reading of the steps' reports, with steps that leave only what a candidate
    could: a FIFO in place of the report had `read_text()` wait in open() for ever, the
    step's processes being dead."""
    record, compiled, refusal = SPOILED[spoiled]

    def step(command: list[str], env: dict[str, str], timeout_s: float) -> None:
        report = Path(command[command.index("--launches") + 1])
        if "compile" in command:
            report = report.with_suffix(".results")
        leave = record if "record" in command else compiled
        leave(report) if callable(leave) else report.write_text(leave)

    monkeypatch.setattr(crosscompile, "_run_step", step)
    outcome: list[BaseException | object] = []

    def checked() -> None:
        try:
            outcome.append(crosscompile.check(tmp_path / "spec.py", tmp_path / "candidate.py"))
        except BaseException as e:  # noqa: BLE001 - what it raised is what the test looks at
            outcome.append(e)

    reader = threading.Thread(target=checked, daemon=True)
    reader.start()
    reader.join(20)
    if reader.is_alive():  # let it go: a writer opens the FIFO it waits on
        for fifo in Path(tempfile.gettempdir()).glob("kgb-crosscompile-*/launches.*"):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("the harness waits for ever on the step's report")
    assert isinstance(outcome[0], crosscompile.BadReport), outcome
    assert refusal in str(outcome[0])


@pytest.mark.skipif(landlock_abi() == 0, reason="this kernel has no Landlock")
def test_a_candidate_process_makes_no_fifo_in_its_workspace(softmax):
    """A FIFO is what made the harness wait; a candidate process (and the compile check's
    steps, confined alike) needs none."""
    source = softmax.solution_path.read_text() + '''

def _fifo():
    import os
    try:
        os.mkfifo(os.path.join(os.environ["HOME"], "fifo"))
        return "FIFO made"
    except OSError as e:
        return f"FIFO refused: {e.strerror}"


_FOUND = _fifo()


def softmax_int(self, dim, dtype=None):
    raise RuntimeError(_FOUND)
'''
    verdict = evaluate(source, softmax, SMOKE)
    assert "FIFO refused" in verdict.message, verdict.message


def test_a_compile_check_step_that_prints_without_end_leaves_the_harness_its_tail_alone():
    """A step runs candidate code: 300 MB printed reached the harness whole, read into its
    memory before the step's timeout (session 49's red team). Now only its tail is kept."""
    import subprocess
    import sys

    from kgb.evaluate.crosscompile import STEP_OUTPUT_CHARS, _run_step

    prints = "import sys\nfor _ in range(300): sys.stdout.write('x' * 1_000_000)\nsys.exit(3)"
    with pytest.raises(subprocess.CalledProcessError) as failed:
        _run_step([sys.executable, "-c", prints], {}, 60)
    assert failed.value.returncode == 3
    assert len(failed.value.output) < STEP_OUTPUT_CHARS + 100
    assert failed.value.output.startswith("[... 299936000 characters cut ...]")
