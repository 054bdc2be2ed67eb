"""The harness runs `git` in the agent's workspace inside the agent's sandbox.

`Workspace.git` runs `git add -A`, `git commit`, `git checkout` with the workspace as working
directory and HOME the trial's home folder, both the agent's to write: its commands may write
`.git/` (only the file tools refuse it) and `$HOME/.gitconfig`. A hook, `core.hooksPath`,
`core.fsmonitor` or a filter driver is a program git runs; until session 42 the harness ran
git as itself, so such a program ran unconfined at the agent's next commit."""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_script import ADD, check, done
from fake_llm_server import Answer, FakeLLMServer, ToolCall
from test_agent_methods import fake_judge  # noqa: F401 - the judge reads a speed from the candidate
from test_agents import events, model, of

from kgb.agents.config import IterativeConfig
from kgb.config import ChipConfig, Config, EvalConfig, SourceConfig, TrackingConfig
from kgb.evaluate.sandbox import landlock_abi
from kgb.run import run_job
from kgb.tracking.blobs import BlobStore
from kgb.tracking.events import ToolCalled

pytestmark = pytest.mark.skipif(landlock_abi() == 0, reason="this kernel has no Landlock")


def _job(method, llm, root: Path) -> Config:
    return Config(method=method, model=llm, source=SourceConfig("aten"), chip=ChipConfig(name="cpu", backend="cpu"),
                  eval=EvalConfig(cases="smoke"), tracking=TrackingConfig(root=str(root), mlflow=False), ops=["aten::add"])


def run(command: str) -> Answer:
    return Answer("", tools=(ToolCall("run", {"command": command}),))


PLANTS = {
    # a hook in the workspace's own repository (the file tools refuse .git, a command does not)
    "hook": "printf '#!/bin/sh\\necho escaped > {marker}\\n' > .git/hooks/post-commit && chmod +x .git/hooks/post-commit",
    # git's global config under the agent's HOME
    "home gitconfig": "mkdir -p $HOME/hooks && printf '#!/bin/sh\\necho escaped > {marker}\\n' > $HOME/hooks/pre-commit "
                      "&& chmod +x $HOME/hooks/pre-commit && git config --global core.hooksPath $HOME/hooks",
    # fsmonitor runs at `git add -A`
    "fsmonitor": "git config core.fsmonitor 'echo escaped > {marker}; false'",
}


@pytest.mark.parametrize("plant", PLANTS)
def test_what_the_agent_writes_for_git_does_not_run_outside_its_sandbox(plant, tmp_path):
    outside = tmp_path / "outside"  # a folder no agent command can write (the sandbox proves it first)
    outside.mkdir()
    marker = outside / "escaped"
    script = [
        Answer("", tools=(ToolCall("write_file", {"path": "kernel.py", "content": ADD + "# SPEED=2.0\n"}),)),
        check(),
        run(f"echo x > {marker}; test -e {marker} && echo WROTE || echo REFUSED"),  # the sandbox holds
        run(PLANTS[plant].format(marker=marker)),
        done(),
    ]
    with FakeLLMServer(lambda call: script[min(call.exchange, len(script)) - 1]) as server:
        run_job(_job(IterativeConfig(sessions=1), model(server, "anthropic"), tmp_path / "out"))
    results = [BlobStore(tmp_path / "out" / "blobs").get(t.result_blob) for t in of(ToolCalled, events(tmp_path / "out"))]
    assert "REFUSED" in results[2] and "exit code 0" in results[3], results  # confined, and planted
    assert not marker.exists(), f"{plant}: git ran the agent's program outside the sandbox, as the harness"
