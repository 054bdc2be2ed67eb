"""How fast tensors cross between the judge and a candidate process (kgb.evaluate.codec);
prints a table.

    python benchmarks/wire.py [--mb 256] [--repeats 5]

One process sends a message holding one tensor of the given size over a socket pair to a
forked peer, which rebuilds it and sends it back (a call's round trip without the call):
once all through the socket, once there in a memory file (as the judge sends a candidate
process its inputs) and back through the socket.
On a GPU host the same path adds a copy to and from the device on each side; this
measures the host part, which a py-spy profile of the H200 sweep put at about a quarter of
the judges' CPU time (docs/gpu-results.md).
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import sys
import time
from multiprocessing.connection import Connection
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kgb.evaluate import codec  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    x = torch.randn(args.mb * 1024 * 1024 // 4)
    print(f"| there / back | round trip, median / best of {args.repeats} | both directions |\n|---|---|---|")
    for memory_file, name in ((False, "socket / socket"), (True, "memory file / socket (judge to candidate)")):
        median, best = _round_trips(x, args.repeats, memory_file)
        print(f"| {name} | {median:.3f} / {best:.3f} s | {2 * args.mb / median / 1024:.2f} GB/s |")
    print(f"\n{args.mb} MB of float32 each way")
    return 0


def _round_trips(x: torch.Tensor, repeats: int, memory_file: bool) -> tuple[float, float]:
    """Median and best seconds of sending x to a forked peer, which rebuilds it and sends it
    back over the socket (a candidate's reply never comes in a memory file)."""
    ours, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        ours.close()
        peer = Connection(theirs.detach())
        for _ in range(repeats):
            msg = codec.receive(peer, "cpu", memory_files=True)
            codec.send(peer, "back", msg.value)
        os._exit(0)
    theirs.close()
    conn = Connection(ours.detach())
    rounds = []
    for _ in range(repeats):
        started = time.perf_counter()
        codec.write(conn, codec.encode("call", x, memory_file=memory_file))
        back = codec.receive(conn, "cpu").value
        rounds.append(time.perf_counter() - started)
    os.waitpid(pid, 0)
    assert torch.equal(back, x)
    return statistics.median(rounds), min(rounds)


if __name__ == "__main__":
    sys.exit(main())
