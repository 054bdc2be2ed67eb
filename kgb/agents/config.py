"""Typed configuration of the agent methods and of the harness that runs them.

Each agent method's schema extends `AgentMethodConfig`, which nests the harness settings
under `method.agent` (driver, budgets), so that they are part of the method's identity:
a trial run with another driver or budget is another trial. `register()` puts the schemas
into Hydra's ConfigStore beside kgb.config's; conf/method/<name>.yaml extend them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from hydra.core.config_store import ConfigStore

from kgb.config import LLMMethodConfig


class Driver(StrEnum):
    """Who executes an agent method."""

    LOOP = "loop"  # kgb's own tool-use loop over the anthropic and openai SDKs
    CLAUDE = "claude"  # the Claude Code CLI, headless (stream-json), through kgb's model proxy
    OPENCODE = "opencode"  # the OpenCode CLI (run --format json), through kgb's model proxy


class Mode(StrEnum):
    """How a coding-agent method answers."""

    ANSWER = "answer"  # one session without tools; the answer is one fenced kernel
    AGENT = "agent"  # write kernel.py, check, fix until it passes, then optimise


@dataclass
class AgentConfig:
    """The harness around an agent: its driver and the budgets it enforces per trial."""

    driver: str = "loop"  # loop | claude | opencode (Driver)
    wall_s: float = 1800.0  # wall clock of one trial; at the limit the agent is stopped and its work salvaged
    max_turns: int = 60  # model calls per trial, all sessions together
    max_checks: int = 30  # check-tool calls per trial
    max_tokens: int | None = None  # tokens per trial (all buckets), on top of model.max_trial_tokens
    max_cost_usd: float | None = None  # cost per trial
    command_timeout_s: float = 300.0  # one shell command of the agent
    output_chars: int = 8000  # the tail of a command's output or a file the agent is shown


@dataclass
class AgentMethodConfig(LLMMethodConfig):
    """Common to the agent methods."""

    agent: AgentConfig = field(default_factory=AgentConfig)
    baseline: str | None = None  # an earlier run's tracking root: optimise-mode methods start from its best correct kernel of the operator (null: an empty kernel.py)


@dataclass
class CodingAgentConfig(AgentMethodConfig):
    """claude_code and opencode: one coding-agent session, as an answer or as an agent."""

    _target_: str = "kgb.methods.coding_agent.CodingAgent"
    name: str = "claude_code"
    mode: str = "agent"  # answer | agent (Mode)


@dataclass
class IterativeConfig(AgentMethodConfig):
    """Fresh sessions, each writing and checking a new version, until the target speedup."""

    _target_: str = "kgb.methods.iterative.Iterative"
    name: str = "iterative"
    sessions: int = 5  # agent sessions per trial, each writing and checking one new version
    target_speedup: float = 1.5  # stop once the best version is this much faster; where speed is not measured (CPU), a correct kernel ends it


@dataclass
class AutokernelConfig(AgentMethodConfig):
    """Keep-or-revert experiments: one focused edit each, kept only if correct and faster."""

    _target_: str = "kgb.methods.autokernel.Autokernel"
    name: str = "autokernel"
    experiments: int = 20  # keep-or-revert experiments per trial, after the baseline check
    min_gain: float = 0.02  # a kept experiment is this much faster than the best (fraction)
    target_speedup: float = 2.0  # stop once the best version is this much faster (CPU: once one is correct)
    plateau: int = 5  # stop after this many experiments in a row that were not kept


@dataclass
class AikoConfig(AgentMethodConfig):
    """One session under the iteration protocol: the harness logs, commits and restores."""

    _target_: str = "kgb.methods.aiko.Aiko"
    name: str = "aiko"
    iterations: int = 15  # checks after the baseline check
    target_speedup: float = 2.0  # end the session once the best version is this much faster (CPU: once one is correct)


@dataclass
class CudaOptimizedSkillConfig(AgentMethodConfig):
    """Optimise-only from a passing baseline: proposal with strategy tags, strategy memory."""

    _target_: str = "kgb.methods.cuda_optimized_skill.CudaOptimizedSkill"
    name: str = "cuda_optimized_skill"
    sessions: int = 5  # optimisation sessions per trial, each proposing one strategy
    target_speedup: float = 2.0  # stop once the best version is this much faster (CPU: once one is correct)


SCHEMAS: dict[str, type[AgentMethodConfig]] = {
    "base_claude_code": CodingAgentConfig,
    "base_iterative": IterativeConfig,
    "base_autokernel": AutokernelConfig,
    "base_aiko": AikoConfig,
    "base_cuda_optimized_skill": CudaOptimizedSkillConfig,
}


def register() -> None:
    cs = ConfigStore.instance()
    for name, node in SCHEMAS.items():
        cs.store(group="method", name=name, node=node)
