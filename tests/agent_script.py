"""Scripted agents for tests: what a model behind tests/fake_llm_server.py answers in each
conversation of an agent trial, turn by turn, with tool calls in the provider's format.

A script maps a conversation's key ("session 2", "experiment 1", read from its first user
message, or "agent" for a method of one session) to a list of steps; step n answers the
conversation's n-th model call. A step is an Answer, or a function of the Call (to read
tool results)."""

from __future__ import annotations

import re
from collections.abc import Callable

from fake_llm_server import Answer, Call, ToolCall

from kgb.operators import REPO_ROOT

ADD = (REPO_ROOT / "operators/aten/add/solution.py").read_text()
WRONG_ADD = ADD.replace("r = a + alpha * b", "r = a - alpha * b")
NO_KERNEL_ADD = "import torch\n\n\ndef add_Tensor(self, other, *, alpha=1):\n    return self + alpha * other\n\n\ndef add_Scalar(self, other, alpha=1):\n    return self + alpha * other\n"

Step = Answer | Callable[[Call], Answer]


def conversation(call: Call) -> str:
    first = call.messages[0]["content"]
    text = first if isinstance(first, str) else str(first)
    match = re.search(r"This is ((?:session|experiment) \d+)", text)
    return match.group(1) if match else "agent"


def scripted(script: dict[str, list[Step]]) -> Callable[[Call], Answer]:
    def respond(call: Call) -> Answer:
        steps = script[conversation(call)]
        step = steps[min(call.exchange, len(steps)) - 1]
        return step(call) if callable(step) else step
    return respond


def write(source: str, path: str = "kernel.py", **tokens: int) -> Answer:
    return Answer("I write the kernel.", tools=(ToolCall("write_file", {"path": path, "content": source}),), **tokens)


def check(**tokens: int) -> Answer:
    return Answer("", tools=(ToolCall("check", {}),), **tokens)


def done(text: str = "kernel.py is finished.", **tokens: int) -> Answer:
    return Answer(text, **tokens)
