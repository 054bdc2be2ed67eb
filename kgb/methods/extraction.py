"""From a completion to a candidate: find the code, or say why there is none.

Models answer with one fenced block, several (a draft and a fix, a kernel and a usage
example), prose only, or a reply cut at max_tokens. Each outcome is an `Extraction`,
recorded in a CompletionParsed event; none of them is a crash.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from kgb import syntax
from kgb.models import Completion
from kgb.tracking.events import CompletionParsed, Extraction
from kgb.trial import Evaluation, TrialContext

PYTHON_TAGS = {"", "python", "py", "python3", "triton"}


@dataclass(frozen=True)
class Block:
    lang: str
    code: str
    closed: bool


@dataclass(frozen=True)
class Extracted:
    """What extraction found: the code (None where unusable) and the reason, in words."""

    outcome: Extraction
    code: str | None
    reason: str
    blocks: int = 0


@dataclass(frozen=True)
class Attempt:
    """One round of a method: what was extracted and, if code was found, its evaluation."""

    extracted: Extracted
    evaluation: Evaluation | None


def fenced_blocks(text: str) -> list[Block]:
    """Markdown code blocks (``` or ~~~), in order; an unclosed last one is kept as such."""
    blocks: list[Block] = []
    fence: str | None = None
    lang = ""
    lines: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if fence is None:
            if match := re.match(r"(`{3,}|~{3,})\s*([\w+.-]*)", stripped):
                fence, lang, lines = match.group(1), match.group(2).lower(), []
        elif stripped == fence or (stripped.startswith(fence[0] * 3) and set(stripped) == {fence[0]}):
            blocks.append(Block(lang, "\n".join(lines) + "\n", closed=True))
            fence = None
        else:
            lines.append(line)
    if fence is not None:
        blocks.append(Block(lang, "\n".join(lines) + "\n", closed=False))
    return blocks


def defines(code: str, name: str) -> bool:
    return re.search(rf"(?m)^\s*def\s+{re.escape(name)}\s*\(", code) is not None


def extract(text: str, entry_points: tuple[str, ...], truncated: bool) -> Extracted:
    """The candidate source in a completion, chosen by the rules of this module's doc."""
    if not text.strip():
        return Extracted(Extraction.EMPTY, None, "the reply is empty" + (" (max_tokens reached)" if truncated else ""))
    blocks = fenced_blocks(text)
    if blocks and not blocks[-1].closed:
        if truncated:
            return Extracted(Extraction.TRUNCATED, None, "max_tokens was reached inside a code block", len(blocks))
        blocks[-1] = Block(blocks[-1].lang, blocks[-1].code, closed=True)  # an unclosed fence at a normal end
    python = [b for b in blocks if b.lang in PYTHON_TAGS and b.code.strip()]
    if not python:
        if not blocks and _is_python(text):
            return Extracted(Extraction.UNFENCED, text, "no code fence; the whole reply is Python source")
        if truncated:
            return Extracted(Extraction.TRUNCATED, None, "max_tokens was reached before any code", len(blocks))
        other = f" (only {', '.join(sorted({b.lang or 'untagged' for b in blocks}))} blocks)" if blocks else ""
        return Extracted(Extraction.PROSE, None, f"the reply has no Python code{other}", len(blocks))
    cut = " (the reply was cut at max_tokens after the code)" if truncated else ""
    if len(python) == 1:
        return Extracted(Extraction.ONE_BLOCK, python[0].code, "one code block" + cut, len(blocks))
    whole = [i for i, b in enumerate(python) if _whole(b.code, entry_points)]
    if whole:
        # the last whole module: models put a corrected version after a first draft
        i = whole[-1]
        why = f"{len(python)} code blocks; took block {i + 1}, the last with a kernel and {', '.join(entry_points)}"
        return Extracted(Extraction.CHOSEN_BLOCK, python[i].code, why + cut, len(blocks))
    joined = "\n\n".join(b.code for b in python)
    if _whole(joined, entry_points):
        why = f"{len(python)} code blocks hold the kernel and the entry points only together; joined in order"
        return Extracted(Extraction.JOINED_BLOCKS, joined, why + cut, len(blocks))
    # nothing whole: the evaluator will say what is missing from the likeliest block
    entries = [i for i, b in enumerate(python) if any(defines(b.code, e) for e in entry_points)]
    i = entries[-1] if entries else max(range(len(python)), key=lambda i: len(python[i].code))
    why = f"{len(python)} code blocks, none with a kernel and {', '.join(entry_points)}; took block {i + 1}"
    return Extracted(Extraction.CHOSEN_BLOCK, python[i].code, why + cut, len(blocks))


def _whole(code: str, entry_points: tuple[str, ...]) -> bool:
    """A module that defines a Triton kernel and every entry point."""
    return "triton.jit" in code and all(defines(code, e) for e in entry_points)


def _is_python(text: str) -> bool:
    try:
        tree = syntax.parse(text)
    except SyntaxError:
        return False
    return any(isinstance(node, ast.FunctionDef | ast.Import | ast.ImportFrom) for node in tree.body)


def propose(ctx: TrialContext, completion: Completion, round: int, parents: tuple[str, ...] = ()) -> Attempt:
    """Extract the code of `completion`, record how, and evaluate it if there is any."""
    found = extract(completion.text, ctx.problem.entry_points, completion.truncated)
    ctx.emit(CompletionParsed(
        job=ctx.job, request_hash=completion.request_hash, round=round,
        outcome=found.outcome, reason=found.reason, blocks=found.blocks,
    ))
    if found.code is None:
        return Attempt(found, None)
    return Attempt(found, ctx.evaluate(found.code, parents=parents, origin=f"round {round}"))


def no_candidate_reason(attempts: list[Attempt]) -> str:
    """Why a method ended without any candidate, e.g. `no code in 3 replies: prose x2, truncated x1`."""
    counts: dict[str, int] = {}
    for a in attempts:
        counts[a.extracted.outcome.value] = counts.get(a.extracted.outcome.value, 0) + 1
    detail = ", ".join(f"{k} x{v}" for k, v in counts.items())
    last = attempts[-1].extracted.reason if attempts else "no reply"
    return f"no code in {len(attempts)} repl{'y' if len(attempts) == 1 else 'ies'}: {detail} (last: {last})"
