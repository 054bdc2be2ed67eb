"""The harness follows no link the agent leaves in its trial folder.

The agent's sandbox refuses it the repo, yet it can make a link to a path it cannot read or
write, and a process it leaves running can put one in place of a file after the harness has
looked. Until session 42 the harness read and wrote the workspace's files by name, as itself:
kernel.py linked to the expert's solution.py became the agent's final kernel; the best
checked source written back into kernel.py went wherever the link pointed (a module the
harness imports); the tables and `commands.import_root`'s copies went through links too.
Now every file of the trial is opened without following a link (`kgb.agents.nofollow`), and
what a command leaves running is killed when it returns."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from agent_script import ADD, check, done
from fake_llm_server import Answer, FakeLLMServer, ToolCall
from test_agent_methods import fake_judge  # noqa: F401 - the judge reads a speed from the candidate
from test_agents import events, model, of

from kgb.agents.commands import run_command
from kgb.agents.config import AutokernelConfig, CodingAgentConfig, IterativeConfig
from kgb.config import ChipConfig, Config, EvalConfig, SourceConfig, TrackingConfig
from kgb.evaluate.sandbox import landlock_abi
from kgb.operators import REPO_ROOT
from kgb.run import run_job
from kgb.tracking.blobs import BlobStore
from kgb.tracking.events import FinalKernelChosen, ToolCalled

pytestmark = pytest.mark.skipif(landlock_abi() == 0, reason="this kernel has no Landlock")
SOLUTION = REPO_ROOT / "operators/aten/add/solution.py"


def _run_agent(method, script: list[Answer], root: Path) -> list:
    config = Config(method=method, model=None, source=SourceConfig("aten"), chip=ChipConfig(name="cpu", backend="cpu"),
                    eval=EvalConfig(cases="smoke"), tracking=TrackingConfig(root=str(root), mlflow=False),
                    ops=["aten::add"])
    with FakeLLMServer(lambda call: script[min(call.exchange, len(script)) - 1]) as server:
        config.model = model(server, "anthropic")
        run_job(config)
    return events(root)


def run(command: str) -> Answer:
    return Answer("", tools=(ToolCall("run", {"command": command}),))


def outputs(root: Path, evs) -> list[str]:
    return [BlobStore(root / "blobs").get(t.result_blob) for t in of(ToolCalled, evs)]


def test_the_final_kernel_is_not_read_through_a_link_to_the_experts_solution(tmp_path):
    """The agent cannot read solution.py (the sandbox), but a link to it is its kernel.py."""
    link = f"rm kernel.py && ln -s {SOLUTION} kernel.py && (cat kernel.py > /dev/null && echo READ || echo UNREADABLE)"
    evs = _run_agent(CodingAgentConfig(), [run(link), done()], tmp_path)
    assert "UNREADABLE" in outputs(tmp_path, evs)[0]
    [final] = of(FinalKernelChosen, evs)
    source = BlobStore(tmp_path / "blobs").get(final.source_blob) if final.source_blob else ""
    assert source != SOLUTION.read_text(), f"the expert's solution.py was judged as the agent's kernel ({final.rule})"


def test_the_best_kernel_is_not_written_through_a_link_out_of_the_trial(tmp_path):
    """iterative puts the best checked version back into kernel.py: a link there makes the
    harness write the agent's own text anywhere it can write (here: a module's file)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "sitecustomize.py"
    payload = ADD + "# SPEED=2.0\nimport os  # would run in every Python started with this folder on its path\n"
    script = [Answer("", tools=(ToolCall("write_file", {"path": "kernel.py", "content": payload}),)), check(),
              run(f"rm kernel.py && ln -s {target} kernel.py && (echo x > {target} && echo WROTE || echo REFUSED)"), done()]
    evs = _run_agent(IterativeConfig(sessions=1), script, tmp_path / "out")
    assert "REFUSED" in outputs(tmp_path / "out", evs)[2]
    assert not target.exists(), "the harness wrote the agent's source through its link: " + target.read_text()[-200:]


def test_the_harness_tables_are_not_appended_through_a_link(tmp_path):
    precious = tmp_path / "precious.txt"
    precious.write_text("the harness's own file\n")
    script = [run(f"rm EXPERIMENTS.md && ln -s {precious} EXPERIMENTS.md"), done()]
    _run_agent(AutokernelConfig(experiments=1), script, tmp_path / "out")
    assert precious.read_text() == "the harness's own file\n"


def test_the_check_modules_are_not_copied_through_a_link_in_pylib(tmp_path):
    """`confined` copies kgb's check modules into the trial's pylib/ before every command."""
    trial, elsewhere = tmp_path / "trial", tmp_path / "elsewhere"
    for d in (trial / "workspace", trial / "home", elsewhere):
        d.mkdir(parents=True)
    (elsewhere / "check.py").write_text("precious\n")
    env = {"PATH": os.environ["PATH"], "HOME": str(trial / "home")}
    first = run_command(f"rm -r {trial}/pylib/kgb/agents && ln -s {elsewhere} {trial}/pylib/kgb/agents && echo linked",
                        trial / "workspace", env, 60, 4000, confine_to=trial)
    assert "linked" in first.output, first.output
    run_command("true", trial / "workspace", env, 60, 4000, confine_to=trial)  # the next command
    assert (elsewhere / "check.py").read_text() == "precious\n"
    assert not (elsewhere / "dialects.py").exists()


def test_a_file_tool_does_not_follow_a_link_swapped_in_after_its_path_was_checked(tmp_path, monkeypatch):
    """`Workspace.resolve` checks a path, then the tool opens it again by name, following
    links: a process the agent left running (next test) that swaps the file for a link in
    between makes the harness read what it names: the expert's solution.py, or the harness's
    own /proc/self/environ (the API keys it was started with)."""
    from types import SimpleNamespace

    from kgb.agents.tools import call_tool
    from kgb.agents.workspace import Workspace

    ws = Workspace(tmp_path, "cpu")
    ws.root.mkdir()
    (ws.root / "notes.txt").write_text("notes\n")
    checked = Workspace.resolve

    def racing(self, path):
        target = checked(self, path)  # a regular file when it is looked at...
        target.unlink()
        target.symlink_to(SOLUTION)  # ...and a link when it is read
        return target

    monkeypatch.setattr(Workspace, "resolve", racing)
    run = SimpleNamespace(workspace=ws, cfg=SimpleNamespace(agent=SimpleNamespace(output_chars=100_000)))
    shown = call_tool(run, "read_file", {"path": "notes.txt"}, "call").text
    assert "import triton" not in shown, "the harness read the expert's solution for the agent: " + shown[:200]


def test_an_agents_background_process_does_not_outlive_its_command(tmp_path):
    """What makes the race above practical: nothing ends what a command started in the background."""
    import time

    (tmp_path / "workspace").mkdir()
    (tmp_path / "home").mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home")}
    # the command returns before its background process would write: 4 s, which a loaded machine's
    # sandbox start stays well under (1 s did not, session 45)
    done_ = run_command("(sleep 4; echo alive > later.txt) > /dev/null 2>&1 &", tmp_path / "workspace", env, 60, 4000,
                        confine_to=tmp_path)
    assert done_.exit_code == 0 and done_.duration_s < 4
    time.sleep(5.5)
    assert not (tmp_path / "workspace" / "later.txt").exists(), "the agent's process kept running after its command"
