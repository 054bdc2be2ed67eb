"""`./check [FILE] [--json] [--format DIALECT]` in an agent's workspace: asks the harness
to judge FILE (kernel.py by default) on the cases the agent may see, and prints the result
as stable `key: value` lines, one JSON object, or another harness's dialect (AutoKernel's,
AKO4ALL's: kgb/agents/dialects.py). Exit status: 0 correct, 1 not correct, 2 the check
could not be made (no harness, budget reached)."""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys

from kgb.agents.dialects import Dialect, render
from kgb.agents.socket_address import address


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="check", description=__doc__)
    parser.add_argument("file", nargs="?", default="kernel.py")
    parser.add_argument("--json", action="store_true", help="print one JSON object (--format json)")
    parser.add_argument("--format", choices=[d.value for d in Dialect], default=Dialect.KGB.value,
                        help="kgb's key: value lines, json, or the autokernel or ako dialect")
    args = parser.parse_args(argv)
    path = os.environ.get("KGB_CHECK_SOCKET", "")
    if not path:
        print("error: no check server (KGB_CHECK_SOCKET is not set); run this inside a kgb agent workspace", file=sys.stderr)
        return 2
    request = {"ticket": os.environ.get("KGB_CHECK_TICKET", ""), "file": os.path.abspath(args.file)}
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s, address(path) as where:
        s.connect(where)
        s.sendall((json.dumps(request) + "\n").encode())
        answer = json.loads(s.makefile().readline())
    dialect = Dialect.JSON if args.json else Dialect(args.format)
    if not answer.get("ok"):
        print(json.dumps(answer) if dialect == Dialect.JSON else f"error: {answer.get('error')}")
        return 2
    report = answer["report"]
    print(render(report, dialect))
    return 0 if report["correct"] else 1


if __name__ == "__main__":
    sys.exit(main())
