"""oneshot, passk and refine: code extraction, prompts, feedback, and end-to-end sweeps
through `python run.py -m ...` against tests/fake_llm_server.py, whose scripted answers
(correct kernels, wrong ones, prose) imply the accuracy, pass@k and token totals checked
here. Kernels are judged for real, in the Triton interpreter."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from fake_llm_server import Answer, Call, Fail, FakeLLMServer, Hang
from mlflow.tracking import MlflowClient

from kgb import operators
from kgb.config import (
    ChipConfig,
    Config,
    EvalConfig,
    LLMConfig,
    OneshotConfig,
    PasskConfig,
    PriceConfig,
    SourceConfig,
    TrackingConfig,
)
from kgb.evaluate.verdict import CaseResult, Status, Verdict
from kgb.methods import prompts
from kgb.methods.extraction import Attempt, Extracted, extract
from kgb.operators import REPO_ROOT, CaseTag
from kgb.query import trial_rows, trial_runs
from kgb.query.leaderboard import rows
from kgb.run import run_job
from kgb.tracking.events import CompletionParsed, Extraction, ModelCalled, TrialEnd, TrialFinished
from kgb.tracking.log import read_events
from kgb.trial import Evaluation

SECRET = "sk-ant-test-0123456789-never-logged"
SOFTMAX = (REPO_ROOT / "operators/aten/softmax/solution.py").read_text()
ADD = (REPO_ROOT / "operators/aten/add/solution.py").read_text()
ENTRY = ("softmax_int",)


def fenced(code: str, lang: str = "python") -> str:
    return f"```{lang}\n{code.rstrip()}\n```"


# --- extraction ----------------------------------------------------------------------

def test_one_block_is_the_candidate():
    found = extract(f"Here it is:\n{fenced(SOFTMAX)}\nIt uses one program per row.", ENTRY, truncated=False)
    assert (found.outcome, found.code, found.blocks) == (Extraction.ONE_BLOCK, SOFTMAX, 1)


def test_of_several_blocks_the_last_complete_one_is_taken():
    draft, final = "def softmax_int(x, dim):\n    return 1\n", SOFTMAX
    text = f"{fenced(draft)}\nOops, fixed:\n{fenced(final)}\nUsage:\n{fenced('y = softmax_int(x, 1)', 'py')}\n{fenced('pip install triton', 'bash')}"
    found = extract(text, ENTRY, truncated=False)
    assert (found.outcome, found.code, found.blocks) == (Extraction.CHOSEN_BLOCK, final, 4)
    assert "took block 2" in found.reason


def test_blocks_that_define_the_entry_points_only_together_are_joined():
    kernel, wrapper = "import triton\n\n@triton.jit\ndef k(x):\n    pass\n", "def softmax_int(x, dim):\n    k[(1,)](x)\n"
    found = extract(f"{fenced(kernel)}\nand\n{fenced(wrapper)}", ENTRY, truncated=False)
    assert found.outcome == Extraction.JOINED_BLOCKS and found.code == f"{kernel}\n\n{wrapper}"


@pytest.mark.parametrize(("text", "truncated", "outcome"), [
    ("I would use a two-pass online softmax; write it yourself.", False, Extraction.PROSE),
    (f"Run this:\n{fenced('pip install triton', 'bash')}", False, Extraction.PROSE),
    (f"Sure:\n```python\n{SOFTMAX[:300]}", True, Extraction.TRUNCATED),
    ("Let me think about the tiling first, then the", True, Extraction.TRUNCATED),
    ("   \n", False, Extraction.EMPTY),
])
def test_replies_without_usable_code_give_a_reason(text, truncated, outcome):
    found = extract(text, ENTRY, truncated)
    assert found.outcome == outcome and found.code is None and found.reason
    assert not outcome.usable


def test_unfenced_python_and_an_unclosed_fence_at_a_normal_end_are_used():
    assert extract(SOFTMAX, ENTRY, truncated=False).outcome == Extraction.UNFENCED
    found = extract(f"```python\n{SOFTMAX}", ENTRY, truncated=False)
    assert found.outcome == Extraction.ONE_BLOCK and found.code == SOFTMAX


# --- prompts and feedback ----------------------------------------------------------------

@pytest.mark.parametrize("op", [next(op for op in operators.discover() if op.startswith(f"{s}::"))
                                for s in operators.SOURCES if any(o.startswith(f"{s}::") for o in operators.discover())])
def test_prompt_shows_the_problem_and_never_the_solution_or_hidden_cases(op):
    spec = operators.load(op)
    prompt = prompts.initial(spec.problem(chip_notes="Warps have 32 threads.", show_reference=True))
    assert spec.task.splitlines()[0] in prompt.user and "Warps have 32 threads." in prompt.user
    assert all(f"def {entry}(" in prompt.user for entry in spec.signatures)
    solution_lines = {line.strip() for line in spec.solution_path.read_text().splitlines() if len(line.strip()) > 30}
    assert not [line for line in solution_lines if line in prompt.user and line not in spec.path.read_text()]
    # names an English sentence could contain ("one", "vector") prove nothing either way
    hidden = [c.name for c in spec.cases if c.tag != CaseTag.SMOKE and re.search(r"[-_0-9]", c.name)]
    assert not [name for name in hidden if re.search(rf"\b{re.escape(name)}\b", prompt.user)]


def evaluation(verdict: Verdict) -> Attempt:
    return Attempt(Extracted(Extraction.ONE_BLOCK, "src", "one code block"), Evaluation("c1-x", "src", verdict))


def test_feedback_carries_what_the_evaluator_found():
    case = CaseResult("smoke-f32", "smoke", Status.WRONG_OUTPUT, "return value: 3 of 185 elements outside tolerance",
                      max_abs_err=0.25, max_rel_err=0.031)
    wrong = prompts.feedback(evaluation(Verdict(Status.WRONG_OUTPUT, "case smoke-f32 failed", cases=(case,))))
    assert "First mismatching case smoke-f32: return value: 3 of 185" in wrong and "max abs error 0.25" in wrong and "max rel error 0.031" in wrong
    log = "Traceback ...\n  File \"/tmp/kgb-eval-abc123/candidate.py\", line 9\nNameError: name 'tl' is not defined"
    crash = prompts.feedback(evaluation(Verdict(Status.COMPILE_ERROR, "import failed", logs=log)))
    assert "NameError: name 'tl' is not defined" in crash and "kgb-eval-abc123" not in crash
    rejected = prompts.feedback(evaluation(Verdict(Status.REJECTED, "computes with PyTorch", torch_ops=("aten::add.Tensor",))))
    assert "computes with PyTorch" in rejected and "aten::add.Tensor" in rejected
    timed = CaseResult("big", "bench", Status.CORRECT, latency_us=50.0, baseline_us=100.0)
    fast = prompts.feedback(evaluation(Verdict(Status.CORRECT, "ok", cases=(timed,), baseline="torch")), keep_improving=True)
    assert "Speedup 2.00x over the torch" in fast and "Make it faster" in fast
    prose = prompts.feedback(Attempt(Extracted(Extraction.PROSE, None, "the reply has no Python code"), None))
    assert "no usable code: the reply has no Python code" in prose


# --- in-process jobs: a failed call, a budget ----------------------------------------------

def job(method, model, root: Path, ops: list[str], mlflow: bool = False) -> Config:
    return Config(method=method, model=model, source=SourceConfig("aten"), chip=ChipConfig(name="cpu", backend="cpu"),
                  eval=EvalConfig(cases="smoke"), tracking=TrackingConfig(root=str(root), mlflow=mlflow), ops=ops)


def op_of(call: Call) -> str:
    return re.search(r"\(`(\w+::\w+)`\)", call.prompt).group(1)


def test_a_refused_call_ends_only_its_trial_and_mlflow_has_the_servers_figures(tmp_path, monkeypatch, capsys):
    """A 400 is the request's fault (too long, malformed): the method's error, not retried."""
    monkeypatch.setenv("KGB_TEST_KEY", SECRET)
    prose = Answer("A Triton kernel would tile the rows.", input=1500, output=60, cache_read=2500, cache_write=0, reasoning=25)

    def responder(call: Call):
        return Fail(400, message="prompt is too long") if op_of(call) == "aten::add" else prose

    with FakeLLMServer(responder) as server:
        model = LLMConfig(name="fake-model", provider="openai", base_url=server.openai_url, api_key_env="KGB_TEST_KEY",
                          retries=2, backoff_s=0.01, price=PriceConfig(input=2.0, output=8.0, cache_read=0.5))
        summary = run_job(job(OneshotConfig(), model, tmp_path, ["aten::add", "aten::softmax"], mlflow=True))
        assert len(server.calls) == 2  # a refusal is not retried
    runs = {r.data.tags["kgb.op"]: r for r in trial_runs(f"sqlite:///{tmp_path / 'mlflow.db'}")}
    add, softmax = runs["aten::add"], runs["aten::softmax"]
    assert add.data.tags["kgb.status"] == "method_error" and "HTTP 400" in add.data.tags["kgb.reason"]
    assert softmax.data.tags["kgb.status"] == "no_candidate" and "prose" in softmax.data.tags["kgb.reason"]
    cost = (1500 * 2.0 + 60 * 8.0 + 2500 * 0.5) / 1e6
    assert {k: softmax.data.metrics[k] for k in ("input_tokens", "output_tokens", "cache_read_tokens", "reasoning_tokens", "total_tokens")} == {
        "input_tokens": 1500, "output_tokens": 60, "cache_read_tokens": 2500, "reasoning_tokens": 25, "total_tokens": 4060}
    assert softmax.data.metrics["cost_usd"] == pytest.approx(cost)
    assert add.data.metrics["total_tokens"] == 0 and add.data.metrics["model_calls"] == 1
    assert summary.usage.total_tokens == 4060 and summary.accuracy == 0.0
    assert "note: cost $0" not in capsys.readouterr().out  # priced
    failed = [e for p in tmp_path.glob("jobs/*/events.jsonl") for e in read_events(p) if isinstance(e, ModelCalled) and e.error]
    assert [(e.retries, e.error[:8]) for e in failed] == [(0, "HTTP 400")]


def test_a_token_budget_ends_the_trial_with_its_reason(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("KGB_TEST_KEY", SECRET)
    with FakeLLMServer(lambda call: Answer("No code today.", input=700, output=100)) as server:
        model = LLMConfig(name="fake-model", provider="anthropic", base_url=server.url, api_key_env="KGB_TEST_KEY",
                          max_trial_tokens=1500)
        run_job(job(PasskConfig(k=5), model, tmp_path, ["aten::softmax"]))
        assert len(server.calls) == 2  # 800 tokens, then 1600: the third round is not asked for
    events = [e for p in tmp_path.glob("jobs/*/events.jsonl") for e in read_events(p)]
    [end] = [e for e in events if isinstance(e, TrialFinished)]
    assert end.end == TrialEnd.BUDGET and end.reason == "trial token budget reached: 1600 of 1500 tokens used"
    assert [e.outcome for e in events if isinstance(e, CompletionParsed)] == [Extraction.PROSE] * 2
    # a model without prices: the closing line's $0 says why (session 46's user walk)
    assert "note: cost $0 because every model.price.* is 0 for fake-model" in capsys.readouterr().out


# --- end to end through run.py ---------------------------------------------------------------

RATES = dict(input=5.0, output=25.0, cache_read=0.5, cache_write=6.25)  # conf/model/claude-opus-4-6.yaml
TOKENS = {  # kind -> (input, output, cache read, cache write, reasoning), as Anthropic reports them
    "correct": (2100, 1400, 600, 150, 300), "wrong": (2000, 1300, 600, 0, 250),
    "rejected": (1950, 700, 600, 0, 100), "prose": (1900, 80, 0, 0, 0),
}
TEXTS = {
    ("aten::softmax", "correct"): f"Here is the kernel:\n{fenced(SOFTMAX)}",
    ("aten::add", "correct"): f"Fixed:\n{fenced(ADD)}",
    ("aten::add", "wrong"): f"Here:\n{fenced(ADD.replace('r = a + alpha * b', 'r = a - alpha * b'))}",
    ("aten::add", "rejected"): fenced("import torch\n\n\ndef add_Tensor(self, other, *, alpha=1):\n    return self + alpha * other\n\n\n"
                                      "def add_Scalar(self, other, alpha=1):\n    return self + alpha * other\n"),
}
# At temperature 0 the answer depends on the conversation: oneshot and refine's first turn
# get the same one. passk samples one request again and again at 0.8: by occurrence.
AT_ZERO = {"aten::softmax": ["correct"], "aten::add": ["wrong", "prose", "correct"]}
SAMPLED = {"aten::softmax": ["prose", "correct"], "aten::add": ["rejected", "prose", "correct"]}


def kind_of(call: Call) -> str:
    if call.temperature == 0:
        plan = AT_ZERO[op_of(call)]
        return plan[min(call.user_turn, len(plan)) - 1]
    plan = SAMPLED[op_of(call)]
    return plan[min(call.occurrence, len(plan) - 1)]


def scripted(call: Call) -> Answer:
    kind = kind_of(call)
    text = TEXTS.get((op_of(call), kind), "I would tile the rows and reduce in registers; that is the whole idea.")
    i, o, cr, cw, r = TOKENS[kind]
    return Answer(text, input=i, output=o, cache_read=cr, cache_write=cw, reasoning=r)


# What the script implies, by hand: calls (kinds), accuracy, pass@r, tokens, cost.
EXPECTED = {
    "oneshot": dict(kinds=["correct", "wrong"], accuracy=0.5, pass_at={1: 0.5},
                    tokens=(4100, 2700, 1200, 150, 550), total=8150, per_success=8150.0),
    "passk": dict(kinds=["prose", "correct", "rejected", "prose", "correct"], accuracy=1.0,
                  pass_at={1: 0.0, 2: 0.5, 3: 1.0}, tokens=(9950, 3660, 1800, 300, 700), total=15710, per_success=7855.0),
    "refine": dict(kinds=["correct", "wrong", "prose", "correct"], accuracy=1.0, pass_at={1: 0.5, 2: 0.5, 3: 1.0},
                   tokens=(8100, 4180, 1800, 300, 850), total=14380, per_success=7190.0),
}


def cost(tokens: tuple[int, ...]) -> float:
    i, o, cr, cw, _ = tokens
    return (i * RATES["input"] + o * RATES["output"] + cr * RATES["cache_read"] + cw * RATES["cache_write"]) / 1e6


def kgb(*overrides: str, root: Path, server: FakeLLMServer, multirun: bool = False, popen: bool = False):
    cmd = [sys.executable, "run.py", *(["-m"] if multirun else []), f"tracking.root={root}", "source=aten", "chip=cpu",
           "eval.cases=smoke", "model=claude-opus-4-6", f"model.base_url={server.url}", *overrides]
    env = {**os.environ, "ANTHROPIC_API_KEY": SECRET}
    if popen:
        return subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True)
    done = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    return done


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    root = tmp_path_factory.mktemp("llm-sweep")
    with FakeLLMServer(scripted, models=("claude-opus-4-6",), api_key=SECRET) as server:
        args = ("method=oneshot,passk,refine", "ops=[aten::add,aten::softmax]", "method.concurrency=2")
        first = kgb(*args, root=root, server=server, multirun=True)
        calls_first = list(server.calls)
        again = kgb(*args, root=root, server=server, multirun=True)
        yield root, calls_first, server.calls[len(calls_first):], first.stdout + first.stderr + again.stdout + again.stderr


@pytest.mark.slow
def test_sweep_gives_the_accuracy_pass_at_k_and_tokens_the_script_implies(sweep):
    root, calls, _, _ = sweep
    assert sorted(kind_of(c) for c in calls) == sorted(k for e in EXPECTED.values() for k in e["kinds"])
    client = MlflowClient(f"sqlite:///{root / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("kgb").experiment_id
    jobs = {r.data.tags["kgb.method"]: r for r in client.search_runs([experiment], "tags.`kgb.kind` = 'job'")}
    assert set(jobs) == set(EXPECTED)
    for method, want in EXPECTED.items():
        m = jobs[method].data.metrics
        i, o, cr, cw, r = want["tokens"]
        assert (m["input_tokens"], m["output_tokens"], m["cache_read_tokens"], m["cache_write_tokens"], m["reasoning_tokens"]) == (i, o, cr, cw, r), method
        assert m["total_tokens"] == want["total"] and m["tokens_per_success"] == want["per_success"]
        assert m["cost_usd"] == pytest.approx(cost(want["tokens"]))
        assert m["accuracy"] == want["accuracy"]
        assert {int(k.removeprefix("pass_at_")): v for k, v in m.items() if k.startswith("pass_at_")} == want["pass_at"]
    table = {row.method: row for row in rows(trial_rows(f"sqlite:///{root / 'mlflow.db'}"))}
    assert {k: (row.total_tokens, round(row.cost_usd, 9)) for k, row in table.items()} == {
        k: (w["total"], round(cost(w["tokens"]), 9)) for k, w in EXPECTED.items()}


@pytest.mark.slow
def test_trial_runs_hold_tokens_attempts_prompt_and_completions(sweep):
    root, _, _, _ = sweep
    client = MlflowClient(f"sqlite:///{root / 'mlflow.db'}")
    runs = {(r.data.tags["kgb.method"], r.data.tags["kgb.op"]): r for r in trial_runs(f"sqlite:///{root / 'mlflow.db'}")}
    passk_add = runs["passk", "aten::add"]  # rejected, prose, correct
    assert passk_add.data.tags["kgb.status"] == "correct"
    assert {k: passk_add.data.metrics[k] for k in ("attempts", "model_calls", "input_tokens", "cache_write_tokens")} == {
        "attempts": 2, "model_calls": 3, "input_tokens": 1950 + 1900 + 2100, "cache_write_tokens": 150}
    assert runs["oneshot", "aten::add"].data.tags["kgb.status"] == "wrong_output"
    refine_add = runs["refine", "aten::add"]
    artifacts = {a.path for a in client.list_artifacts(refine_add.info.run_id, "calls")}
    assert artifacts == {f"calls/00{i}-{kind}" for i in (1, 2, 3) for kind in ("prompt.json", "completion.txt")}
    third = client.download_artifacts(refine_add.info.run_id, "calls/003-prompt.json")
    text = Path(third).read_text()
    assert "First mismatching case smoke-" in text and "no usable code: the reply has no Python code" in text
    assert "r = a + alpha * b" not in text  # the solution is never shown


@pytest.mark.slow
def test_rerunning_a_finished_sweep_calls_no_model_and_no_key_is_recorded(sweep):
    root, _, rerun_calls, output = sweep
    assert rerun_calls == []
    assert SECRET not in output
    leaks = [p for p in root.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert leaks == []


@pytest.mark.slow
def test_killed_midway_then_rerun_makes_no_call_twice(tmp_path):
    """refine on add: wrong, prose, then the server holds the third request and the run is
    killed; the re-run answers the first two turns from the log and pays only for the third."""

    def responder(call: Call):
        if call.user_turn == 3 and call.occurrence == 0:
            return Hang(120)
        return scripted(call)

    with FakeLLMServer(responder, models=("claude-opus-4-6",), api_key=SECRET) as server:
        args = ("method=refine", "ops=[aten::add]", "tracking.mlflow=false")
        proc = kgb(*args, root=tmp_path, server=server, popen=True)
        assert server.hanging.wait(240), proc.communicate()[0]
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        assert [kind_of(c) for c in server.answered] == ["wrong", "prose"]
        done = kgb(*args, root=tmp_path, server=server)
        assert [kind_of(c) for c in server.answered] == ["wrong", "prose", "correct"]
        assert [c.user_turn for c in server.calls] == [1, 2, 3, 3]  # the held one, then once more
    events = [e for p in tmp_path.glob("jobs/*/events.jsonl") for e in read_events(p)]
    calls = [e for e in events if isinstance(e, ModelCalled)]
    assert len(calls) == 3 and sum(c.usage.input_tokens for c in calls) == 2000 + 1900 + 2100
    assert sum(1 for e in events if type(e).__name__ == "CandidateEvaluated") == 2  # the wrong one is not judged again
    assert [e.end for e in events if isinstance(e, TrialFinished)] == [TrialEnd.COMPLETED]
    assert "correct 1/1" in done.stdout
