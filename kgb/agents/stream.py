"""What the harness reads from a coding-agent CLI's event stream, in one form for every CLI.

A CLI's stream (Claude Code's stream-json, OpenCode's `--format json`) is read line by line
into `ToolStarted`, `ToolEnded` and `UsageReported` items (claude_cli.py and opencode_cli.py
each know their CLI's format). `CliRecord` folds them: tool calls paired by id, once each
however often a CLI repeats an event (Claude Code sends one assistant event per content
block of a message, each with the message's usage), and the CLI's own token report. That
report is kept and compared with the tokens kgb counted through its proxy; it is never
what the trial is charged.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from kgb.usage import Usage


@dataclass(frozen=True)
class ToolStarted:
    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class ToolEnded:
    id: str
    output: str
    is_error: bool


@dataclass(frozen=True)
class UsageReported:
    """The CLI's tokens: of one model call (`key`: its message or step id), or of the whole
    session (`final`, e.g. Claude Code's result event, which wins over the per-call sum)."""

    key: str
    usage: Usage
    final: bool = False
    error: str | None = None  # the CLI's own word that the session failed
    raw: dict[str, Any] | None = None


Item = ToolStarted | ToolEnded | UsageReported


@dataclass
class OpenTool:
    started: ToolStarted
    at: float


@dataclass
class CliRecord:
    """The session as the CLI told it. Fed from the reader thread, read after the CLI ends."""

    open: dict[str, OpenTool] = field(default_factory=dict)
    ended: set[str] = field(default_factory=set)
    per_call: dict[str, Usage] = field(default_factory=dict)
    final: UsageReported | None = None
    error: str | None = None
    lines: list[str] = field(default_factory=list)  # the stream as the CLI wrote it (its first 64 MB)
    unreadable: int = 0  # lines that were not JSON (a CLI's warnings on stdout)
    overlong: int = 0  # lines past the reader's bound, skipped (kgb.agents.cli.bounded_lines)
    cut: int = 0  # lines read and parsed past the bound of what is kept, not in `lines`

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def take(self, item: Item) -> tuple[ToolStarted, ToolEnded, float] | None:
        """Fold one item; a tool call that has just ended is returned with its duration."""
        with self._lock:
            if isinstance(item, ToolStarted):
                if item.id not in self.open and item.id not in self.ended:
                    self.open[item.id] = OpenTool(item, time.perf_counter())
            elif isinstance(item, ToolEnded):
                opened = self.open.pop(item.id, None)
                if opened is not None:
                    self.ended.add(item.id)
                    return opened.started, item, time.perf_counter() - opened.at
            else:
                if item.final:
                    self.final = item
                else:
                    self.per_call.setdefault(item.key, item.usage)  # a repeated event reports the same call
                self.error = self.error or item.error
            return None

    def usage(self) -> Usage:
        if self.final is not None:
            return self.final.usage
        total = Usage()
        for u in self.per_call.values():
            total += u
        return total

    def report(self, counted: Usage, cli: str, version: str, stream_blob: str) -> str:
        """The CLI's report beside kgb's count, as kept in the log (JSON)."""
        claimed = self.usage()
        return json.dumps({
            "cli": cli, "version": version,
            "cli_tokens": asdict(claimed), "kgb_tokens": asdict(counted),
            "agree": claimed.total_tokens == counted.total_tokens,
            "cli_final": self.final.raw if self.final else None,
            "cli_calls": len(self.per_call), "cli_error": self.error,
            "lines": len(self.lines), "unreadable_lines": self.unreadable, "stream_blob": stream_blob,
            "overlong_lines": self.overlong, "lines_not_kept": self.cut,
            "unfinished_tools": sorted(self.open),
        }, indent=1, sort_keys=True)
