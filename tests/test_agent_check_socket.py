"""An agent's check server and its `./check` client on a socket path longer than a Unix
socket's address holds (108 bytes): the trial folder lies under $TMPDIR and is named after
the host, so a deep temporary folder or a long host name had every agent trial end
method_error ("AF_UNIX path too long"), counted against the method."""

from __future__ import annotations

from kgb.agents import check
from kgb.agents.checks import CheckServer


def test_a_check_server_on_a_path_past_the_socket_address_limit_answers_its_client(tmp_path, monkeypatch, capsys):
    trial = tmp_path / ("deep-" * 24)
    trial.mkdir()
    path = trial / "check.sock"
    assert len(str(path).encode()) > 108
    with CheckServer(checker=None, socket_path=path, resolve=lambda name: trial / name):  # type: ignore[arg-type]
        monkeypatch.setenv("KGB_CHECK_SOCKET", str(path))
        monkeypatch.setenv("KGB_CHECK_TICKET", "not this trial's")
        assert check.main([]) == 2
    assert "does not come from this trial's workspace" in capsys.readouterr().out  # the server's own answer


def test_an_agent_trial_under_a_deep_temporary_folder_checks_its_kernel(tmp_path, monkeypatch):
    """The whole way: the trial folder made under a deep $TMPDIR, its server bound there, and
    `./check` run by the agent's command in its sandbox (its own PID namespace's /proc)."""
    import tempfile

    from fake_llm_server import Answer, FakeLLMServer, ToolCall
    from test_agents import NO_KERNEL_ADD, SECRET, done, events, job, model, of, scripted, write

    from kgb.agents.config import CodingAgentConfig
    from kgb.run import run_job
    from kgb.tracking.events import CandidateChecked, TrialFinished

    monkeypatch.setenv("KGB_TEST_KEY", SECRET)
    deep = tmp_path / ("deep-" * 16)
    deep.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    outputs: list[str] = []

    def run(call):
        return Answer("", tools=(ToolCall("run", {"command": "./check --json; echo rc=$?"}),))

    script = {"agent": [write(NO_KERNEL_ADD), run, lambda call: outputs.extend(call.tool_results) or done()]}
    with FakeLLMServer(scripted(script)) as server:
        run_job(job(CodingAgentConfig(), model(server, "anthropic"), tmp_path / "out"))
    evs = events(tmp_path / "out")
    [end] = of(TrialFinished, evs)
    assert end.end.value != "method_error", end.reason
    assert '"status": "rejected"' in outputs[0] and outputs[0].strip().endswith("rc=1"), outputs[0]
    [checked] = of(CandidateChecked, evs)  # through the server, from the command's sandbox
