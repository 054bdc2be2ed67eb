"""An agent's shell commands run in the shell sandbox: its trial folder is the only place
it can write, the operators' specs, their known-good solutions (kgb's family modules among
them) and the harness's files are unreadable, and there is no network (kgb/agents/commands.py)."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from kgb.agents.commands import confined, run_command
from kgb.evaluate.sandbox import landlock_abi
from kgb.operators import REPO_ROOT

pytestmark = pytest.mark.skipif(landlock_abi() == 0, reason="this kernel has no Landlock")


@pytest.fixture
def trial(tmp_path):
    (tmp_path / "workspace").mkdir()
    (tmp_path / "home").mkdir()
    return tmp_path


def _run(trial: Path, command: str):
    env = {"PATH": os.environ["PATH"], "HOME": str(trial / "home"), "TMPDIR": str(trial / "home")}
    return run_command(command, trial / "workspace", env, 60, 8000, confine_to=trial)


def test_the_workspace_is_writable_and_the_check_command_importable(trial):
    done = _run(trial, "echo kernel > kernel.py && cat kernel.py && python3 -m kgb.agents.check --help > /dev/null "
                       "&& echo ok")
    assert done.exit_code == 0, done.output
    assert done.output.split() == ["kernel", "ok"]


# Landlock's refusal, or, for a checkout under /tmp (a clone there, as CI's), the empty folder
# that covers /tmp in the command's mount namespace
HIDDEN = re.compile("Permission denied|No such file or directory")


@pytest.mark.parametrize("command", [
    "cat {repo}/kgb/aten_families/kernels/unary_exp.py",  # a solution's kernels
    "ls {repo}/kgb/vllm/solutions",
    "cat {repo}/kgb/aten_families/copies_solutions.py",
    "python3 -c 'import kgb.aten_families.copies_solutions'",
    "python3 -c 'import kgb.evaluate'",
])
def test_kgbs_own_package_is_unreadable_where_it_holds_the_known_good_solutions(trial, command):
    """Until session 41 the sandbox let agents read all of kgb/ (the check command imports
    from it): the family modules that write every ATen, vLLM and cuBLAS solution.py were there
    for an agent to copy. Now only the check's own modules are, copied into the trial."""
    done = _run(trial, command.format(repo=REPO_ROOT))
    assert done.exit_code != 0, done.output
    assert HIDDEN.search(done.output) or "No module named" in done.output, done.output


def test_agent_methods_refuse_to_run_where_the_sandbox_cannot_hide_kgb(tmp_path, monkeypatch):
    """A copy of kgb installed into the Python environment, which agents' commands must read."""
    import sys

    from kgb.agents.commands import check_hidden_from_agents

    check_hidden_from_agents()  # this checkout, installed editable: hidden
    site = tmp_path / "site-packages"
    (site / "kgb" / "aten_families").mkdir(parents=True)
    monkeypatch.setattr(sys, "path", [*sys.path, str(site)])
    with pytest.raises(ValueError, match=f"kgb's package at {site / 'kgb'} lies under {site}, which an agent's sandbox"):
        check_hidden_from_agents()


@pytest.mark.parametrize("path", ["operators/aten/add/spec.py", "README.md", "kgb/../operators/aten/add/solution.py"])
def test_the_repo_outside_kgb_is_unreadable(trial, path):
    done = _run(trial, f"cat {REPO_ROOT / path}")
    assert done.exit_code != 0 and HIDDEN.search(done.output), done.output


def test_nothing_outside_the_trial_is_writable(trial, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    done = _run(trial, f"touch {outside}/x")
    assert done.exit_code != 0
    assert not (outside / "x").exists()


def test_no_network(trial):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    reached = threading.Event()
    threading.Thread(target=lambda: (server.accept(), reached.set()), daemon=True).start()
    port = server.getsockname()[1]
    done = _run(trial, f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), timeout=3)'")
    assert done.exit_code != 0
    assert not reached.wait(1)
    server.close()


def test_a_cli_may_reach_the_model_proxy_port_and_no_other(tmp_path):
    """An agent CLI keeps the host's network to reach kgb's model proxy: Landlock allows TCP
    to that port alone."""
    import subprocess
    import sys

    from kgb.evaluate.sandbox import landlock_abi

    if landlock_abi() < 4:
        pytest.skip("Landlock before ABI 4 does not restrict TCP")
    servers = []
    for _ in range(2):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen()
        servers.append(s)
    proxy, other = (s.getsockname()[1] for s in servers)
    code = f"""
import socket
from pathlib import Path
from kgb.agents.shell_sandbox import confine_shell
confine_shell(Path({str(tmp_path)!r}), tcp_connect=({proxy},))
for port in ({proxy}, {other}):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=3)
        print(port, "connected")
    except OSError:
        print(port, "refused")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    assert done.stdout.split() == [str(proxy), "connected", str(other), "refused"], done.stderr[-2000:]
    for s in servers:
        s.close()


def test_code_the_agent_plants_for_the_wrapper_does_not_run_outside_the_sandbox(trial, tmp_path_factory):
    """The wrapper that confines each command is a Python started in the workspace, before it
    confines itself: a `kgb` package in the workspace (first on `python -m`'s path) or a .pth
    file in the user site folder under the agent's HOME would run there, unconfined. Until
    session 41 the first did. Both are written here as an agent's command could write them."""
    import sys

    outside = tmp_path_factory.mktemp("outside")
    escape = f"open({str(outside / 'escaped')!r}, 'w').write('out')\n"
    package = trial / "workspace" / "kgb" / "agents"
    package.mkdir(parents=True)
    for name in ("__init__.py", "agents/__init__.py"):
        (package.parent / name).write_text("")
    (package / "commands.py").write_text(escape)
    site = trial / "home" / ".local" / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    site.mkdir(parents=True)
    (site / "planted.pth").write_text(f"import os; exec({escape!r})\n")
    done = _run(trial, "echo still-confined")
    assert done.exit_code == 0 and "still-confined" in done.output, done.output
    assert not (outside / "escaped").exists()


def test_an_agent_cli_sends_no_datagram(tmp_path):
    """An agent CLI keeps the host's network to reach kgb's model proxy, and Landlock limits
    its TCP to the proxy's port; it governs no UDP. Until session 44 a datagram from the CLI's
    sandbox reached any host (DNS tunnelling, QUIC): the shell's seccomp filter now refuses IP
    sockets other than streams."""
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.settimeout(2)
    got: list[bytes] = []

    def listen() -> None:
        with contextlib.suppress(OSError):
            got.append(udp.recvfrom(100)[0])

    listener = threading.Thread(target=listen)
    listener.start()
    for d in ("workspace", "home"):
        (tmp_path / d).mkdir()
    script = ("import socket\n"
              "for family in (socket.AF_INET, socket.AF_INET6):\n"
              "    try:\n"
              "        socket.socket(family, socket.SOCK_DGRAM | socket.SOCK_NONBLOCK)\n"
              "        print('opened')\n"
              "    except OSError as e:\n"
              "        print('refused', e.errno)\n"
              "s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n"
              "print('stream', s.fileno() > 0)\n"
              "try:\n"  # MPTCP: a stream that Landlock's TCP port rules do not govern
              "    socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262)\n"
              "    print('mptcp opened')\n"
              "except OSError as e:\n"
              "    print('mptcp refused', e.errno)\n"
              f"socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'out', ('127.0.0.1', {udp.getsockname()[1]}))\n")
    argv, env = confined(["python3", "-c", script], tmp_path, {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home")},
                         tcp_port=1)
    done = subprocess.run(argv, cwd=tmp_path / "workspace", env=env, capture_output=True, text=True, timeout=60)
    listener.join()
    udp.close()
    assert done.stdout.split("\n")[:4] == ["refused 1", "refused 1", "stream True", "mptcp refused 1"], \
        done.stdout + done.stderr
    assert "PermissionError" in done.stderr
    assert got == []


def test_a_command_reaches_no_unix_socket_of_the_host(tmp_path):
    """Landlock governs no connect() to a socket's path, nor does a network namespace: until
    session 44 a command (and a candidate: threat model, Open) reached a daemon listening
    under /run (docker's, the D-Bus, a database's) or /tmp (ssh-agent). Where the command
    need not see them, they are empty in its mount namespace."""
    from kgb.agents.shell_sandbox import shell_paths, socket_places

    if "/run" not in dict(socket_places(shell_paths(tmp_path))):
        pytest.skip("/run holds what the sandbox grants here")
    try:
        folder = Path("/run") / f"kgb-test-{os.getpid()}"
        folder.mkdir()
    except OSError:
        pytest.skip("/run is not writable here")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(folder / "daemon.sock"))
        server.listen()
        for d in ("workspace", "home"):
            (tmp_path / d).mkdir()
        env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home")}
        done = run_command(f"python3 -c \"import socket; socket.socket(socket.AF_UNIX).connect('{folder}/daemon.sock'); "
                           "print('connected')\" 2>&1 | tail -1", tmp_path / "workspace", env, 60, 4000,
                           confine_to=tmp_path)
        assert "FileNotFoundError" in done.output, done.output  # an empty /run
    finally:
        server.close()
        for f in folder.iterdir():
            f.unlink()
        folder.rmdir()


def test_a_command_has_no_capability_even_as_root():
    """Where the harness runs as root and the kernel refuses a user namespace, a command runs
    as root in the host's namespaces: until session 44 it kept root's capabilities, which
    override the nice limits (it reniced itself to -20 and took SCHED_FIFO) and open packet
    sockets. The shell sandbox drops them all (`kgb.evaluate.sandbox.drop_capabilities`, in its
    `lock_down`, which the candidate's sandbox shares since session 46), from the bounding set too, so that no program it runs regains them.
    (With user namespaces, as here, a command holds capabilities only in namespaces of its own.)"""
    if os.geteuid() != 0:
        pytest.skip("only root holds capabilities to drop")
    code = """
import os
from pathlib import Path
from kgb.evaluate.sandbox import drop_capabilities
os.setpriority(os.PRIO_PROCESS, 0, -1)  # root may, before
drop_capabilities()
status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
print(int(status["CapEff"], 16), int(status["CapBnd"], 16))
try:
    os.setpriority(os.PRIO_PROCESS, 0, -20)
    print("reniced")
except OSError:
    print("refused")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    assert done.stdout.split() == ["0", "0", "refused"], done.stdout + done.stderr


def test_tmp_is_covered_though_the_trial_lies_in_it(tmp_path):
    """Trials are made under $TMPDIR (/tmp by default), and until the second red team of
    session 44 that kept /tmp uncovered, an ssh-agent's socket there reachable: the trial
    folder (and the Python environment, where it lies under /tmp) is mounted again inside the
    cover. A socket in the trial (the check command's) still answers."""
    import tempfile

    from kgb.agents.shell_sandbox import shell_paths, socket_places

    if tempfile.gettempdir() != "/tmp" or str(tmp_path).split("/")[1] != "tmp":
        pytest.skip("the test's folders are not under /tmp here")
    if "/tmp" not in dict(socket_places(shell_paths(tmp_path))):
        pytest.skip("/tmp is granted whole here")
    servers = []
    for folder in (Path(tempfile.mkdtemp(prefix="kgb-test-agent-")), tmp_path):  # the agent's, the trial's
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(folder / "daemon.sock"))
        server.listen()
        servers.append((folder, server))
    try:
        for d in ("workspace", "home"):
            (tmp_path / d).mkdir()
        env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home")}
        connect = "import socket, sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1]); print('connected')"
        command = (f"echo kept > kept.txt && cat kept.txt; for s in {servers[0][0]}/daemon.sock {tmp_path}/daemon.sock; "
                   f"do python3 -c \"{connect}\" $s 2>&1 | tail -1; done")
        done = run_command(command, tmp_path / "workspace", env, 60, 4000, confine_to=tmp_path)
        lines = done.output.strip().splitlines()
        assert lines[0] == "kept" and (tmp_path / "workspace" / "kept.txt").read_text() == "kept\n", done.output
        assert "FileNotFoundError" in lines[1], done.output  # another's socket in /tmp: not there
        assert lines[2] == "connected", done.output  # the trial's own
    finally:
        for folder, server in servers:
            server.close()
            (folder / "daemon.sock").unlink()
        servers[0][0].rmdir()
