"""How fast tensors cross between the judge and a candidate process (kgb.evaluate.codec);
prints a table.

    python benchmarks/wire.py [--mb 256] [--repeats 5]

One process sends a message holding one tensor of the given size over a socket pair to a
forked peer, once all through the socket, once in a new memory file per message (as the
judge sent a candidate process its inputs until session 24), once in a memory file kept from
one message to the next (`memory_file.Outbox`, as it sends them since). Two figures each: one way, the peer copying what it received
once (as a candidate process copies its inputs onto its GPU) and saying so; and a call's
round trip without the call, the peer sending the tensor back through the socket (a
candidate's reply never comes in a memory file). On a GPU host the same paths add copies to
and from the device; this measures the host part.
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

import numpy
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kgb.evaluate import codec, memory_file  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    x = torch.randn(args.mb * 1024 * 1024 // 4)
    print("| path there | one way, received and copied once | round trip (back through the socket) |"
          "\n|---|---|---|")
    for how, name in (("socket", "socket"), ("file", "a new memory file each time"),
                      ("kept", "one memory file, kept (judge to candidate)")):
        one_way = _timed(x, args.repeats, how, back=False)
        there_and_back = _timed(x, args.repeats, how, back=True)
        print(f"| {name} | {one_way[0]:.3f} / {one_way[1]:.3f} s | {there_and_back[0]:.3f} / {there_and_back[1]:.3f} s |")
    print(f"\n{args.mb} MB of float32; median / best of {args.repeats}")
    return 0


def _timed(x: torch.Tensor, repeats: int, how: str, back: bool) -> tuple[float, float]:
    """Median and best seconds of sending x to a forked peer until it has copied it once
    and said so, or (`back`) sent it back."""
    ours, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        ours.close()
        peer = Connection(theirs.detach())
        for _ in range(repeats):
            msg = codec.receive(peer, "cpu", memory_files=True)
            if back:
                codec.send(peer, "back", msg.value)
            else:
                # numpy's copy, not torch's: torch's thread pool, used by the parent before
                # the fork, can hang a forked child that uses it
                numpy.copyto(numpy.empty(msg.value.shape, dtype=numpy.float32), msg.value.numpy())
                codec.send(peer, "copied")
        os._exit(0)
    theirs.close()
    conn = Connection(ours.detach())
    rounds = []
    outbox = memory_file.Outbox() if how == "kept" else None
    for _ in range(repeats):
        started = time.perf_counter()
        codec.write(conn, codec.encode("call", x, memory_file=how != "socket", outbox=outbox))
        reply = codec.receive(conn, "cpu")
        rounds.append(time.perf_counter() - started)
    os.waitpid(pid, 0)
    assert not back or torch.equal(reply.value, x)
    return statistics.median(rounds), min(rounds)


if __name__ == "__main__":
    sys.exit(main())
