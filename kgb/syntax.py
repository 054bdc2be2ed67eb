"""Python source parsed into an AST, from any number of threads at once.

CPython 3.11 keeps the AST converter's recursion depth in state that threads share: two
`ast.parse` calls at once in one process can fail with "SystemError: AST constructor
recursion depth mismatch" (CPython issue 106905). kgb parses candidates and specs in
parallel trials, agents' checks and sweep threads; one lock makes the calls take turns
(a parse takes about a millisecond).
"""

from __future__ import annotations

import ast
import threading

_one_at_a_time = threading.Lock()


def parse(source: str) -> ast.Module:
    """`ast.parse(source)`; raises SyntaxError as it does, and for a source the parser cannot
    hold: nested or chained too deep (`1+1+...+1` 300,000 times raised RecursionError, which
    the harness took for its own failure, session 45's red team), or holding a NUL byte."""
    with _one_at_a_time:
        try:
            return ast.parse(source)
        except (RecursionError, MemoryError) as exc:
            raise SyntaxError(f"too deeply nested to parse ({type(exc).__name__})") from None
        except ValueError as exc:
            raise SyntaxError(str(exc)) from None
