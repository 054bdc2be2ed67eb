"""How a check's report is printed for the agent: kgb's own `key: value` lines, one JSON
object, or the dialect of another harness's benchmark script, so that a protocol written
for that harness reads the lines it expects.

- `kgb`: one `key: value` line per key of the report, in a fixed order, the error last.
- `json`: the report as one JSON object.
- `autokernel`: the greppable summary lines of AutoKernel's bench.py (`correctness:
  PASS|FAIL`, `kernel_latency_us:`, `pytorch_latency_us:`, `speedup_vs_pytorch: 1.234x`),
  where the reference is kgb's baseline, whatever it is (torch, cuBLAS, vLLM).
- `ako`: the lines of AKO4ALL's bench script (`COMPILED: True`, `CORRECT: False`,
  `RUNTIME:` and `REF_RUNTIME:` in milliseconds, `SPEEDUP:`).

Where the chip times nothing (the CPU interpreter), times and speedups read `n/a` in
every dialect: no number stands for a time that was not measured.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

NOT_TIMED = "n/a (not timed on this chip)"


class Dialect(StrEnum):
    KGB = "kgb"
    JSON = "json"
    AUTOKERNEL = "autokernel"
    AKO = "ako"


def render(report: dict[str, Any], dialect: Dialect = Dialect.KGB) -> str:
    return {Dialect.KGB: _kgb, Dialect.JSON: _json, Dialect.AUTOKERNEL: _autokernel, Dialect.AKO: _ako}[dialect](report)


def _kgb(report: dict[str, Any]) -> str:
    def show(value: object) -> str:
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, float):
            return f"{value:.4g}"
        return NOT_TIMED if value is None else str(value)

    lines = [f"{k}: {show(v)}" for k, v in report.items() if k not in ("error", "note")]
    if report.get("note"):
        lines.append(f"note: {report['note']}")
    if report.get("error"):
        lines.append(f"error: |\n{report['error']}")
    return "\n".join(lines)


def _json(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=1)


def _number(value: Any, scale: float, digits: int, suffix: str = "") -> str:
    return "n/a" if value is None else f"{value * scale:.{digits}f}{suffix}"


def _tail(report: dict[str, Any]) -> list[str]:
    lines = [f"note: {report['note']}"] if report.get("note") else []
    return lines + ([f"ERROR: {report['error']}"] if report.get("error") else [])


def _autokernel(report: dict[str, Any]) -> str:
    return "\n".join([
        f"kernel_candidate: {report['candidate']}",
        f"tests_passed: {report['tests']}",
        f"correctness: {'PASS' if report['correct'] else 'FAIL'}",
        f"kernel_latency_us: {_number(report['kernel_us'], 1, 2)}",
        f"pytorch_latency_us: {_number(report['baseline_us'], 1, 2)}",
        f"baseline: {report.get('baseline') or 'n/a'}",
        f"speedup_vs_pytorch: {_number(report['speedup'], 1, 3, 'x')}",
        *_tail(report),
    ])


def _ako(report: dict[str, Any]) -> str:
    return "\n".join([
        f"COMPILED: {bool(report['compiled'])}",
        f"CORRECT: {bool(report['correct'])}",
        f"RUNTIME: {_number(report['kernel_us'], 1e-3, 4)}",
        f"REF_RUNTIME: {_number(report['baseline_us'], 1e-3, 4)}",
        f"SPEEDUP: {_number(report['speedup'], 1, 3)}",
        f"TESTS: {report['tests']}",
        *_tail(report),
    ])
