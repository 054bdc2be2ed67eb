"""The tools of kgb's own agent loop: read, write and edit files in the workspace, run a
command there, and check a kernel. Each returns the text the agent is shown and whether
it is an error; none of them can touch a path outside the workspace."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kgb.agents.budget import WALL_SPENT
from kgb.agents.commands import run_command
from kgb.agents.dialects import render
from kgb.agents.nofollow import KERNEL_BYTES, read_text, size_of, write_text
from kgb.agents.workspace import OutsideWorkspace
from kgb.models.content import Tool
from kgb.trial import InfrastructureFailure

if TYPE_CHECKING:
    from kgb.agents.harness import AgentRun

PATH = {"type": "string", "description": "a path relative to the workspace"}

TOOLS: tuple[Tool, ...] = (
    Tool("read_file", "Read a text file of the workspace.",
         {"type": "object", "properties": {"path": PATH}, "required": ["path"]}),
    Tool("write_file", "Create or overwrite a file of the workspace with the given content.",
         {"type": "object", "properties": {"path": PATH, "content": {"type": "string"}}, "required": ["path", "content"]}),
    Tool("edit_file", "Replace one exact, unique occurrence of `old` by `new` in a file of the workspace.",
         {"type": "object", "properties": {"path": PATH, "old": {"type": "string"}, "new": {"type": "string"}},
          "required": ["path", "old", "new"]}),
    Tool("run", "Run a bash command in the workspace and return its exit code and output.",
         {"type": "object", "properties": {"command": {"type": "string"},
                                           "timeout_s": {"type": "number", "description": "default 300"}},
          "required": ["command"]}),
    Tool("check", "Judge a kernel file (default kernel.py) on the test cases you may see: compiled, correct, "
                  "tests passed, speedup over the baseline where the chip times it, and the error if any.",
         {"type": "object", "properties": {"path": PATH}}),
)


@dataclass(frozen=True)
class ToolOutput:
    text: str
    is_error: bool = False


class ToolError(Exception):
    """A tool call that cannot be carried out; its message is shown to the agent."""


def call_tool(run: AgentRun, name: str, args: dict[str, Any], call_id: str) -> ToolOutput:
    """The tool's answer to the agent. Whatever a model puts in a call is the agent's mistake,
    shown to it as an error: until session 50 a `run` with `timeout_s: "abc"`, a path with a
    NUL byte, or arguments that were not an object (an Anthropic-style endpoint's `input`)
    raised out of the session and ended the trial as method_error, a correct kernel already
    checked with it. The harness's own messages never hold the workspace's path (`_relative`).
    Past the wall clock the loop runs no call (kgb.agents.loop.answer_call)."""
    try:
        if not isinstance(args, dict):
            raise ToolError(f"the arguments are not a JSON object: {str(args)[:200]!r}")
        if "_unparsed" in args:
            raise ToolError(f"the arguments are not a JSON object: {args['_unparsed'][:200]!r}")
        handler = HANDLERS.get(name)
        if handler is None:
            raise ToolError(f"no tool {name!r}; the tools are {', '.join(t.name for t in TOOLS)}")
        return handler(run, args, call_id)
    except (ToolError, OutsideWorkspace) as e:
        return ToolOutput(_relative(run, str(e)), is_error=True)
    except (KeyError, TypeError, AttributeError) as e:
        return ToolOutput(_relative(run, f"bad arguments for {name}: {type(e).__name__}: {e}"), is_error=True)
    except (OSError, ValueError) as e:  # ValueError: a NUL byte in a path; UnicodeError is one
        return ToolOutput(_relative(run, f"{name} failed: {e}"), is_error=True)


def _relative(run: AgentRun, text: str) -> str:
    """`text` with the trial's folders in relative words, the ones the agent's tools take.
    Session 50 added it so that a resumed trial's requests repeat the logged ones (the folders
    are new for every attempt); since session 51 the log writes the folder as TRIAL_DIR in
    every request (kgb.models.model.TrialModel), which covers that for any text, the CLIs'
    included, and this keeps the harness's messages in the agent's own terms."""
    ws = run.workspace
    return (text.replace(f"{ws.root}/", "").replace(str(ws.root), ".")
            .replace(f"{ws.trial_dir}/", "../").replace(str(ws.trial_dir), ".."))


# The largest file `edit` rewrites: far above any kernel or note, far below what would fill the
# harness's memory (a `read` of a file of gigabytes once read it whole, session 45's red team).
EDIT_BYTES = 4 << 20


def _read(run: AgentRun, args: dict[str, Any], call_id: str) -> ToolOutput:
    path = run.workspace.resolve(args["path"])
    limit = run.cfg.agent.output_chars * 4
    text = read_text(path, max_bytes=4 * limit + 4)  # a character is 1 to 4 bytes of UTF-8
    if text is None:
        raise ToolError(f"{args['path']}: no such file")
    if (size := size_of(path)) <= 4 * limit + 4:  # read whole
        return ToolOutput(text if len(text) <= limit else text[:limit] + f"\n[... {len(text) - limit} characters cut ...]")
    return ToolOutput(text[:limit] + f"\n[... cut: the file is {size} bytes; this is its first {limit} characters ...]")


def _write(run: AgentRun, args: dict[str, Any], call_id: str) -> ToolOutput:
    write_text(run.workspace.resolve(args["path"]), str(args["content"]), parents=True)
    return ToolOutput(f"wrote {len(str(args['content']))} characters to {args['path']}")


def _edit(run: AgentRun, args: dict[str, Any], call_id: str) -> ToolOutput:
    path = run.workspace.resolve(args["path"])
    text, old = read_text(path, max_bytes=EDIT_BYTES + 1), str(args["old"])
    if text is None:
        raise ToolError(f"{args['path']}: no such file")
    if (size := size_of(path)) > EDIT_BYTES:
        raise ToolError(f"{args['path']} is {size} bytes; edit rewrites files of at most {EDIT_BYTES}")
    count = text.count(old) if old else 0
    if count != 1:
        raise ToolError(f"`old` occurs {count} times in {args['path']}; it must occur exactly once")
    write_text(path, text.replace(old, str(args["new"])))
    return ToolOutput(f"edited {args['path']}")


def _timeout(run: AgentRun, asked: object) -> float:
    """A command's timeout: the agent's `timeout_s`, at most the harness's; a number of seconds."""
    cap = run.cfg.agent.command_timeout_s
    if not asked:
        return cap
    try:
        seconds = float(asked)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        raise ToolError(f"timeout_s={asked!r}: give a positive number of seconds (at most {cap:g}), or none")
    return min(seconds, cap)


def _run(run: AgentRun, args: dict[str, Any], call_id: str) -> ToolOutput:
    asked = _timeout(run, args.get("timeout_s"))
    left = run.budget.remaining_s()  # at most the time left: no floor past the wall clock
    if left <= 0:
        raise ToolError(WALL_SPENT)
    timeout = min(asked, left)
    run.server.current_call = call_id  # a ./check inside the command is linked to this call
    try:
        done = run_command(str(args["command"]), run.workspace.root, run.workspace.env(run.server.ticket),
                           timeout, run.cfg.agent.output_chars, confine_to=run.workspace.trial_dir)
    finally:
        run.server.current_call = ""
    head = f"killed after {timeout:g} s" if done.timed_out else f"exit code {done.exit_code}"
    return ToolOutput(f"{head}\n{done.output}", is_error=done.exit_code != 0)


def _check(run: AgentRun, args: dict[str, Any], call_id: str) -> ToolOutput:
    if reason := run.budget.take_check():
        raise ToolError(f"check refused: {reason}")
    path = run.workspace.resolve(args.get("path") or "kernel.py")
    source = read_text(path, max_bytes=KERNEL_BYTES)
    if source is None:
        raise ToolError(f"{args.get('path') or 'kernel.py'}: no such file")
    try:
        checked, note = run.checker.check(source, call_id, origin=f"check of {path.name}")
    except InfrastructureFailure as e:  # the machine's failure, as ./check says it (kgb.agents.checks)
        raise ToolError(f"{e}; no verdict on this kernel: check it again") from e
    return ToolOutput(render(checked.report(note)))


HANDLERS = {"read_file": _read, "write_file": _write, "edit_file": _edit, "run": _run, "check": _check}
