"""What an agent's command makes the harness hold stays bounded, however much it writes.

The harness runs many trials and judges in one process: an agent that grows its memory to
the OOM killer loses every trial in flight. Session 45's red team found three ways: a
command's output was read whole before its tail was kept (2 GB of `yes`: 5.7 GB), the check
server read a request line of any length (1.5 GB: 3 GB), and a snapshot copied every file of
up to 1 MB, binaries too, with no count or total (100 MB of random files: 181 MB of blobs).
Memory is measured here with tracemalloc, which sees every thread's Python allocations: the
command's output, the server's request, the snapshot's texts."""

from __future__ import annotations

import json
import os
import socket
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kgb.agents import checks, workspace
from kgb.agents.checks import CheckServer
from kgb.agents.commands import run_command
from kgb.agents.workspace import Workspace
from kgb.evaluate.sandbox import landlock_abi
from kgb.tracking.blobs import BlobStore

FLOOD = 32_000_000  # bytes an agent's process writes: 32 MB, a flood in miniature
BOUND = 4_000_000  # what the harness may hold for it


def _peak(run: Callable[[], object]) -> tuple[object, int]:
    """`run()`'s result and the peak of Python memory allocated while it ran."""
    tracemalloc.start()
    try:
        result = run()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _env() -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "LANG": "C.UTF-8"}


# --- F6: a command's output ---


def test_a_flood_of_output_leaves_the_harness_its_tail_only(tmp_path):
    done, peak = _peak(lambda: run_command(f"head -c {FLOOD} /dev/zero | tr '\\0' x; echo; echo END", tmp_path,
                                           _env(), 60, 1000))
    assert peak < BOUND, f"the harness held {peak} bytes for a command's output"
    assert done.exit_code == 0
    total = FLOOD + len("\nEND\n")
    assert done.output == f"[... {total - 1000} characters cut ...]\n" + "x" * (1000 - 5) + "\nEND\n"


def test_the_tail_is_the_whole_outputs_as_it_was(tmp_path):
    """Multi-byte characters and invalid bytes across the reads' bounds: the tail and the count
    are what decoding the whole output at once gave."""
    pieces = [b"x", "\u00e9".encode(), "\u20ac".encode(), "\U0001f600".encode(), b"\xff", b"\xe2\x82", b"\n"]
    data = b"".join(pieces[(i * 7919) % 97 % len(pieces)] for i in range(300_000))
    (tmp_path / "out.bin").write_bytes(data)
    for chars in (1, 7, 8000, 10**7):
        done = run_command("cat out.bin", tmp_path, _env(), 60, chars)
        whole = data.decode(errors="replace")
        expected = whole if len(whole) <= chars else f"[... {len(whole) - chars} characters cut ...]\n" + whole[-chars:]
        assert done.output == expected


@pytest.mark.parametrize("confine", [False, pytest.param(True, marks=pytest.mark.skipif(
    landlock_abi() == 0, reason="this kernel has no Landlock"))])
def test_a_flood_then_a_hang_is_killed_at_the_timeout_with_its_tail(tmp_path, confine):
    for d in ("workspace", "home"):
        (tmp_path / d).mkdir()
    env = {**_env(), "HOME": str(tmp_path / "home"), "TMPDIR": str(tmp_path / "home")}
    done, peak = _peak(lambda: run_command(f"head -c {FLOOD} /dev/zero | tr '\\0' x; sleep 60", tmp_path / "workspace",
                                           env, 2, 100, confine_to=tmp_path if confine else None))
    assert done.timed_out and done.duration_s < 30
    assert peak < BOUND, f"the harness held {peak} bytes for a command's output"
    assert done.output.startswith("[... ") and done.output.endswith(" characters cut ...]\n" + "x" * 100)


# --- F7: the check server's request ---


@pytest.fixture
def server(tmp_path) -> Iterator[CheckServer]:
    with CheckServer(checker=None, socket_path=tmp_path / "check.sock", resolve=lambda p: tmp_path / p) as s:
        yield s


def _client(tmp_path: Path) -> socket.socket:
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(30)  # no answer in 30 s fails the test, not hangs it
    s.connect(str(tmp_path / "check.sock"))
    return s


def _answer(s: socket.socket) -> dict[str, object]:
    with s, s.makefile("rb") as f:
        return json.loads(f.readline())


def test_a_request_line_past_the_bound_is_refused_unread(tmp_path, server):
    def flood() -> dict[str, object]:
        s = _client(tmp_path)
        try:
            chunk = b"x" * (1 << 20)
            for _ in range(FLOOD // len(chunk)):  # no newline; the server stops reading
                s.sendall(chunk)
            s.shutdown(socket.SHUT_WR)
        except OSError:  # the server closed its end: refused
            pass
        return _answer(s)

    answer, peak = _peak(flood)
    assert peak < BOUND, f"the harness held {peak} bytes for one request"
    assert answer["ok"] is False
    assert f"at most {checks.REQUEST_MAX_BYTES} bytes" in str(answer["error"])


def test_a_client_that_sends_nothing_is_let_go_and_the_next_is_answered(tmp_path, server, monkeypatch):
    monkeypatch.setattr(checks, "REQUEST_TIMEOUT_S", 0.5)
    silent = _client(tmp_path)
    started = time.monotonic()
    answer = _answer(silent)
    assert time.monotonic() - started < 10
    assert answer == {"ok": False, "error": "TimeoutError: no check request within 0.5 s"}
    s = _client(tmp_path)
    s.sendall(json.dumps({"ticket": "not this trial's", "file": "kernel.py"}).encode() + b"\n")
    assert "does not come from this trial" in str(_answer(s)["error"])


def test_a_request_within_the_bound_is_read_as_before(tmp_path, server):
    """A line up to its newline, or all a client sent before it ended its side."""
    for request in (b'{"ticket": "no"}\n{"ignored": 1}', b'{"ticket": "no"}', b"[1]\n"):
        s = _client(tmp_path)
        s.sendall(request)
        s.shutdown(socket.SHUT_WR)
        assert "does not come from this trial" in str(_answer(s)["error"])


# --- F8: a workspace's snapshot ---


def _workspace(tmp_path: Path) -> Workspace:
    ws = Workspace(tmp_path, "cpu")
    ws.root.mkdir()
    (ws.root / "kernel.py").write_text("import triton\n")
    (ws.root / "NOTES.md").write_text("tried BLOCK=128 \u2014 slower\n")
    return ws


def _snapshot(ws: Workspace, tmp_path: Path) -> tuple[dict[str, str], int, BlobStore]:
    blobs = BlobStore(tmp_path / "blobs")
    manifest, files = ws.snapshot(blobs)
    return {path: blobs.get(h) for path, h in json.loads(blobs.get(manifest)).items()}, files, blobs


def _blob_bytes(tmp_path: Path) -> int:
    return sum(p.stat().st_size for p in (tmp_path / "blobs").rglob("*") if p.is_file())


def test_a_snapshot_leaves_out_binaries_and_says_what_it_left_out(tmp_path):
    ws = _workspace(tmp_path)
    (ws.root / "data").mkdir()
    (ws.root / "data" / "dump.bin").write_bytes(bytes(range(256)) * 1000)  # a NUL byte: binary
    (ws.root / "profile.json").write_text("{}" * 600_000)  # over 1 MB
    (ws.root / "link.py").symlink_to(ws.root / "kernel.py")
    files, count, _ = _snapshot(ws, tmp_path)
    assert set(files) == {"kernel.py", "NOTES.md", workspace.SNAPSHOT_NOTE} and count == 2
    assert files["NOTES.md"] == "tried BLOCK=128 \u2014 slower\n"
    note = files[workspace.SNAPSHOT_NOTE]
    assert "data/dump.bin: binary (a NUL byte)" in note
    assert f"profile.json: over {workspace.SNAPSHOT_MAX_BYTES} bytes" in note
    assert "link.py: a link" in note


def test_a_snapshot_stores_at_most_its_count_of_files_kernel_first(tmp_path):
    ws = _workspace(tmp_path)
    (ws.root / "aaa").mkdir()  # sorts before kernel.py, and holds more files than a snapshot takes
    for i in range(workspace.SNAPSHOT_MAX_FILES + 50):
        (ws.root / "aaa" / f"{i:05}.txt").write_text(f"{i}\n")
    files, count, _ = _snapshot(ws, tmp_path)
    assert count == workspace.SNAPSHOT_MAX_FILES and len(files) == count + 1
    assert files["kernel.py"] == "import triton\n" and "NOTES.md" in files  # the top folder's first
    assert f"past {workspace.SNAPSHOT_MAX_FILES} files: 52" in files[workspace.SNAPSHOT_NOTE]


def test_a_snapshot_stores_at_most_its_total_of_bytes(tmp_path):
    ws = _workspace(tmp_path)
    size = workspace.SNAPSHOT_MAX_BYTES - 1000
    over = workspace.SNAPSHOT_MAX_TOTAL // size + 3
    for i in range(over):  # text files, each under the bound of one, all together over the total
        (ws.root / f"log{i:02}.txt").write_text(chr(ord("a") + i % 26) * (size - 1) + "\n")
    files, count, _ = _snapshot(ws, tmp_path)
    assert count < over
    assert _blob_bytes(tmp_path) < workspace.SNAPSHOT_MAX_TOTAL + 100_000
    assert f"past {workspace.SNAPSHOT_MAX_TOTAL} bytes in all" in files[workspace.SNAPSHOT_NOTE]
    assert "kernel.py" in files


def test_a_snapshot_walks_a_bounded_count_of_entries(tmp_path, monkeypatch):
    monkeypatch.setattr(workspace, "SNAPSHOT_MAX_ENTRIES", 100)
    ws = _workspace(tmp_path)
    (ws.root / "many").mkdir()
    for i in range(300):
        (ws.root / "many" / f"{i}").touch()
    files, count, _ = _snapshot(ws, tmp_path)
    assert "kernel.py" in files and count < 100
    assert "stopped after 100 files and folders" in files[workspace.SNAPSHOT_NOTE]


def test_an_ordinary_workspace_is_snapshotted_whole_with_no_note(tmp_path):
    ws = _workspace(tmp_path)
    (ws.root / "scripts").mkdir()
    (ws.root / "scripts" / "bench.py").write_text("print(1)\n")
    (ws.root / "__pycache__").mkdir()
    (ws.root / "__pycache__" / "kernel.cpython-311.pyc").write_bytes(b"\0\0")
    files, count, _ = _snapshot(ws, tmp_path)
    assert set(files) == {"kernel.py", "NOTES.md", "scripts/bench.py"} and count == 3


# --- git's output: a hook of the agent's writes what it likes to git's stderr ---


@pytest.mark.skipif(landlock_abi() == 0, reason="this kernel has no Landlock")
def test_a_git_hooks_flood_leaves_the_harness_its_tail_only(tmp_path):
    ws = _workspace(tmp_path)
    (ws.home / ".cache").mkdir(parents=True)
    ws.git("init", "-q", "-b", "main")
    hook = ws.root / ".git" / "hooks" / "post-commit"
    hook.write_text(f"#!/bin/sh\nhead -c {FLOOD} /dev/zero | tr '\\0' x\necho done > hook-ran\n")
    hook.chmod(0o755)
    commit, peak = _peak(lambda: ws.commit("one"))
    assert peak < BOUND, f"the harness held {peak} bytes of git's output"
    assert len(str(commit)) == 40
    assert (ws.root / "hook-ran").read_text() == "done\n"  # the hook ran, and wrote its flood



# --- a file the agent's tools read ---

def _workspace_with(tmp_path: Path, name: str, size: int) -> tuple[Workspace, object]:
    from types import SimpleNamespace

    ws = Workspace(tmp_path, "cpu")
    ws.root.mkdir(parents=True)
    with open(ws.root / name, "wb") as f:
        f.write(b"x" * size)
    return ws, SimpleNamespace(workspace=ws, cfg=SimpleNamespace(agent=SimpleNamespace(output_chars=1000)))


def test_a_huge_file_is_read_by_its_head_only(tmp_path):
    """`read_file` (and `edit_file`, a check, the final kernel) read a file whole before
    cutting what they show: a file of gigabytes filled the harness's memory (session 45's red
    team). They read what they can use."""
    from kgb.agents.tools import EDIT_BYTES, call_tool

    ws, run = _workspace_with(tmp_path, "big.txt", FLOOD)
    shown, peak = _peak(lambda: call_tool(run, "read_file", {"path": "big.txt"}, "call"))
    assert peak < BOUND, f"reading a {FLOOD}-byte file held {peak} bytes"
    assert shown.text.startswith("x" * 4000) and f"the file is {FLOOD} bytes" in shown.text
    (ws.root / "kernel.py").write_bytes(b"y" * FLOOD)
    kernel, peak = _peak(ws.read_kernel)
    assert peak < BOUND and len(kernel) == (1 << 20) + 1  # one byte past what the judge takes: refused as too large
    (ws.root / "notes.txt").write_bytes(b"z" * (EDIT_BYTES + 1))
    edited = call_tool(run, "edit_file", {"path": "notes.txt", "old": "zz", "new": "a"}, "call")
    assert edited.is_error and f"edit rewrites files of at most {EDIT_BYTES}" in edited.text
