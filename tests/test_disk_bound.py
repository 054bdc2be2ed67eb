"""The bound on the disk an agent's command keeps in its trial folder (kgb.evaluate.disk_bound):
the harness measures the folder while the command runs, ends the command past the bound and
takes back what it added, and leaves alone a command under it and what was there before."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from kgb.agents.commands import CommandResult, run_command
from kgb.evaluate.disk_bound import held

MiB = 1 << 20


@pytest.fixture
def trial(tmp_path: Path) -> Path:
    for d in ("workspace", "home"):
        (tmp_path / d).mkdir()
    return tmp_path


def _run(trial: Path, command: str, bound: int) -> CommandResult:
    env = {"PATH": os.environ["PATH"], "LANG": "C.UTF-8", "HOME": str(trial / "home"), "TMPDIR": str(trial / "home")}
    return run_command(command, trial / "workspace", env, 60, 4000, confine_to=trial, disk_bytes=bound)


def _note(output: str) -> str:
    [line] = [line for line in output.splitlines() if line.startswith("[kgb disk bound:")]
    return line


def test_a_command_under_the_bound_is_left_alone(trial):
    done = _run(trial, "head -c 4M /dev/urandom > a.bin && mkdir d && head -c 2M /dev/urandom > d/b.bin && echo done",
                bound=64 * MiB)
    assert done.exit_code == 0 and "done" in done.output and "kgb disk bound" not in done.output, done.output
    assert (trial / "workspace" / "a.bin").stat().st_size == 4 * MiB
    assert (trial / "workspace" / "d" / "b.bin").stat().st_size == 2 * MiB


# 40 files of 1 MiB, a look of the watcher's (every 0.1 s) apart: past a bound of 16 MiB long before the last
FORTY_FILES = "for i in $(seq 40); do head -c 1M /dev/urandom > new-$i; sleep 0.03; done; echo finished"


def _past_the_bound(trial: Path) -> tuple[CommandResult, bytes]:
    """FORTY_FILES run beside an older file larger than each of them."""
    older = os.urandom(6 * MiB)
    (trial / "workspace" / "older.bin").write_bytes(older)
    return _run(trial, FORTY_FILES, bound=16 * MiB), older


def test_a_command_past_the_bound_is_ended_and_what_it_added_removed_what_was_there_kept(trial):
    done, older = _past_the_bound(trial)
    assert "finished" not in done.output and done.exit_code != 0, done.output
    assert held(trial) <= 16 * MiB
    # the largest file, but the command's only by being there: never the clean-up's to take
    assert (trial / "workspace" / "older.bin").read_bytes() == older
    made = sorted((trial / "workspace").glob("new-*"), key=lambda f: int(f.name.removeprefix("new-")))
    assert made, "the clean-up removed all the command added, not what brings the folder under its bound"
    assert all(f.stat().st_size == MiB for f in made[:-1])  # the last may be cut short where the command ended


def test_the_note_says_what_the_folder_held_its_bound_and_what_was_removed(trial):
    done, _ = _past_the_bound(trial)
    note = _note(done.output)
    size, bound, now = re.search(r"held ([\d.]+) MiB, past its bound of ([\d.]+) MiB: .*; it now holds ([\d.]+) MiB\]$",
                                 note).groups()
    assert float(size) > 16 and bound == "16.0" and float(now) <= 16, note
    removed = re.findall(r"workspace/(new-\d+) \(1\.0 MiB, removed\)", note)
    assert removed and not any((trial / "workspace" / name).exists() for name in removed), note
    assert done.output.rstrip().endswith(note)  # the last line, after the command's own output


def test_a_file_the_command_grew_is_cut_back_to_what_it_held_before(trial):
    log = trial / "workspace" / "older.log"
    log.write_text("before the command\n")
    done = _run(trial, "head -c 30M /dev/zero >> older.log; sleep 5", bound=8 * MiB)
    assert log.read_text() == "before the command\n", done.output
    assert "cut back to its 19 bytes before the command" in _note(done.output)


def test_no_file_of_a_command_grows_past_the_bound(trial):
    """RLIMIT_FSIZE, no larger than the bound: one file adds at most the bound between two looks."""
    done = _run(trial, "ulimit -f", bound=8 * MiB)
    assert done.output.split()[-1] == str(8 * MiB // 1024), done.output  # bash counts it in KiB


def test_a_folder_already_past_the_bound_does_not_end_every_command(trial):
    """A folder past the bound when a command starts (what a CLI, unwatched, left) is held to
    that size: the command runs, and may remove what it holds."""
    (trial / "workspace" / "large.bin").write_bytes(os.urandom(12 * MiB))
    done = _run(trial, "sleep 0.5; rm large.bin && echo removed", bound=8 * MiB)
    assert done.exit_code == 0 and "removed" in done.output and "kgb disk bound" not in done.output, done.output


def test_the_walk_counts_a_file_of_many_links_once(tmp_path):
    (tmp_path / "a.bin").write_bytes(os.urandom(MiB))
    alone = held(tmp_path)
    os.link(tmp_path / "a.bin", tmp_path / "b.bin")
    os.link(tmp_path / "a.bin", tmp_path / "c.bin")
    assert alone >= MiB and held(tmp_path) == alone


def test_the_walk_follows_no_link_out_of_the_folder(tmp_path):
    folder, outside = tmp_path / "trial", tmp_path / "outside"
    folder.mkdir()
    outside.mkdir()
    (outside / "big.bin").write_bytes(os.urandom(4 * MiB))
    alone = held(folder)
    (folder / "to-folder").symlink_to(outside)
    (folder / "to-file").symlink_to(outside / "big.bin")
    assert held(folder) < alone + MiB  # the links themselves, a block each at most


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a folder whatever its mode")
def test_the_walk_counts_what_lies_in_a_folder_made_unreadable(tmp_path):
    """A command that takes its own rights from a folder, a file in it still open, would hide
    what it writes there from a walk that could not read it."""
    (tmp_path / "hidden").mkdir()
    (tmp_path / "hidden" / "big.bin").write_bytes(os.urandom(4 * MiB))
    (tmp_path / "hidden").chmod(0)
    assert held(tmp_path) >= 4 * MiB


# written at import, before cos's known-good kernel: 320 MB in the workspace (its HOME)
FILLS_ITS_WORKSPACE = """
import os
import time

with open(os.path.join(os.environ["HOME"], "fill.bin"), "wb") as f:
    for _ in range(40):
        f.write(os.urandom(1 << 20) * 8)
time.sleep(5)  # for the watcher's look, should the verdict otherwise come first
"""


def test_a_candidate_that_fills_its_workspace_is_killed_with_its_judge_and_rejected(monkeypatch):
    """A candidate's workspace lies on the disk of the judges' folders: one that wrote there
    without end could fill it until its evaluation ended, and other trials' writes failed as
    infra_error meanwhile (docs/design/threat-model.md). Its judge is now killed past the
    workspace's bound, and the candidate rejected, saying so."""
    from kgb import operators
    from kgb.evaluate import EvalSettings, Status, disk_bound, evaluate

    monkeypatch.setattr(disk_bound, "WORKSPACE_DISK_BYTES", 64 * MiB)
    cos = operators.load("aten::cos")
    verdict = evaluate(FILLS_ITS_WORKSPACE + cos.solution_path.read_text(), cos,
                       EvalSettings(device="cpu", case_tags=("smoke",), timeout_s=120, compile_cache=None))
    assert verdict.status == Status.REJECTED, verdict.message
    assert verdict.message.startswith("the candidate filled its workspace: [kgb disk bound: the folder "), verdict.message
    assert "past its bound of 64.0 MiB: the judge was ended" in verdict.message, verdict.message


def test_a_command_cannot_take_disk_without_growing_a_file(trial):
    """fallocate --keep-size takes disk and leaves the file's length as it was, so RLIMIT_FSIZE
    does not bound it: one call took any amount at once, past the watcher's next look. It is
    refused now (EOPNOTSUPP, as a filesystem without it answers); a plain fallocate, which
    grows the file, is still allowed and bounded."""
    done = _run(trial, "touch kept; fallocate --keep-size -l 512M kept; echo kept=$?; fallocate -l 1M grown; echo grown=$?",
                bound=64 * MiB)
    assert "kept=1" in done.output and "grown=0" in done.output, done.output
    kept = trial / "workspace" / "kept"
    assert kept.stat().st_blocks == 0
    assert held(trial) < 64 * MiB


# written at import, before cos's known-good kernel: the candidate process's own fallocate(2)
KEEPS_ITS_SIZE = """
import importlib
import os

ctypes = importlib.import_module("c" + "types")  # past the static check, which is a filter only
_libc = ctypes.CDLL(None, use_errno=True)
_fd = os.open(os.path.join(os.environ["HOME"], "kept.bin"), os.O_CREAT | os.O_WRONLY, 0o600)
_said = _libc.fallocate(_fd, 1, ctypes.c_long(0), ctypes.c_long(3 << 30))  # FALLOC_FL_KEEP_SIZE
if _said != 0 and ctypes.get_errno() == 95:  # EOPNOTSUPP: refused
    os.close(_fd)
else:
    raise SystemExit(f"fallocate --keep-size was allowed: {_said}")
"""


def test_a_candidate_cannot_take_disk_without_growing_a_file():
    from kgb import operators
    from kgb.evaluate import EvalSettings, Status, evaluate

    cos = operators.load("aten::cos")
    verdict = evaluate(KEEPS_ITS_SIZE + cos.solution_path.read_text(), cos,
                       EvalSettings(device="cpu", case_tags=("smoke",), timeout_s=120, compile_cache=None))
    assert verdict.status == Status.CORRECT, verdict.message
