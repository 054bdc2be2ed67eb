"""How fast tensors cross between the judge and a candidate process (kgb.evaluate.codec);
prints a table.

    python benchmarks/wire.py [--mb 256] [--repeats 5] [--device cpu|cuda] [--ways socket,file,kept]

The judge's side (this process) sends a message holding one tensor of the given size over a
socket pair to a peer it starts (the candidate's side), three ways: all through the socket,
in a new memory file per message (as the judge sent a candidate process its inputs until
session 24), in a memory file kept from one message to the next (`memory_file.Outbox`, as it
sends them since). For each way:
- one way: the peer puts what it received on `--device` (as a candidate process puts its
  inputs on its GPU) and says so;
- round trips without the call: the peer sends the tensor back from `--device` and this side
  puts it on `--device`: back through the socket (as a candidate process replied until judge
  v33), through the socket from page-locked memory (an experiment), in a new memory file the
  peer seals against writes, in one it made once it had sent the reply before, while this side
  read that (as it replies since).
On the CPU this measures the host part; with `--device cuda` the copies to and from the GPU too.
The last figure puts the making of the next file on the round trip's way (this side does
nothing between messages); in the judge it runs while the judge reads and checks the reply.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import sys
import time
from multiprocessing.connection import Connection
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kgb.evaluate import codec, memory_file, tensor_storage  # noqa: E402

WAYS = {"socket": "socket", "file": "a new memory file each time",
        "kept": "one memory file, kept (judge to candidate)"}
BACKS = {"": "one way, put on the device", "socket": "round trip, back through the socket",
         "pinned": "round trip, back through the socket from page-locked memory",
         "sealed": "round trip, back in a new sealed file",
         "spare": "round trip, back in a sealed file made after the reply before (`memory_file.SealedOutbox`)"}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--ways", default=",".join(WAYS), help="paths there, of: " + ", ".join(WAYS))
    parser.add_argument("--peer", nargs=3, metavar=("FD", "DEVICE", "BACK"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peer:
        fd, device, back = args.peer
        return _peer(int(fd), device, back)
    backs = [b for b in BACKS if b != "pinned" or args.device != "cpu"]
    x = torch.randn(args.mb * 1024 * 1024 // 4)
    print("| path there | " + " | ".join(BACKS[b] for b in backs) + " |\n" + "|---" * (len(backs) + 1) + "|")
    for how in args.ways.split(","):
        name = WAYS[how]
        figures = [_timed(x, args.repeats, how, back, args.device) for back in backs]
        print(f"| {name} | " + " | ".join(f"{median:.3f} / {best:.3f} s" for median, best in figures) + " |")
    print(f"\n{args.mb} MB of float32 on {args.device}; median / best of {args.repeats} (seconds)")
    return 0


def _timed(x: torch.Tensor, repeats: int, how: str, back: str, device: str) -> tuple[float, float]:
    """Median and best seconds of sending x to a new peer until it has put it on `device` and
    said so, or (`back`) sent it back and it is on `device` here."""
    ours, theirs = socket.socketpair()
    peer = subprocess.Popen([sys.executable, __file__, "--peer", str(theirs.fileno()), device, back or "-"],
                            pass_fds=[theirs.fileno()])
    theirs.close()
    conn = Connection(ours.detach())
    rounds = []
    outbox = memory_file.Outbox() if how == "kept" else None
    for _ in range(repeats):
        started = time.perf_counter()
        codec.write(conn, codec.encode("call", x, memory_file=how != "socket", outbox=outbox))
        reply = codec.receive(conn, device, memory_files=memory_file.Accepted.SEALED)
        _placed(reply.value, device)
        rounds.append(time.perf_counter() - started)
    conn.close()
    peer.wait(60)
    assert not back or torch.equal(reply.value.cpu(), x)
    return statistics.median(rounds), min(rounds)


def _peer(fd: int, device: str, back: str) -> int:
    """The candidate's side: each message's tensor onto `device`, then a word or the tensor back."""
    torch.set_num_threads(1)  # as a candidate process does
    if back == "pinned":
        def pinned(storage, copying=None):
            flat = tensor_storage.storage_bytes(storage)
            host = torch.empty(flat.numel(), dtype=torch.uint8, pin_memory=True)  # kept by PyTorch's host cache
            return host.copy_(flat)
        tensor_storage.host_bytes = pinned
    conn = Connection(fd)
    replies = memory_file.SealedOutbox()
    while True:
        try:
            msg = codec.receive(conn, device, memory_files=memory_file.Accepted.ANY)
        except EOFError:
            return 0
        _placed(msg.value, device)
        if back == "-":
            codec.send(conn, "copied")
        elif back == "sealed":
            codec.send(conn, "back", msg.value, outbox=memory_file.SealedOutbox())  # a new one: no spare
        else:
            codec.send(conn, "back", msg.value, outbox=replies if back == "spare" else None)
            replies.make_spare()  # as a candidate process does, while the judge reads the reply


def _placed(value: torch.Tensor | None, device: str) -> None:
    """Wait for `value`'s copy onto the GPU; on the CPU, copy it once (what the copy onto a GPU
    would cost the host; the codec leaves host bytes where they were read)."""
    if device == "cuda":
        torch.cuda.synchronize()
    elif value is not None:
        value.clone()


if __name__ == "__main__":
    sys.exit(main())
