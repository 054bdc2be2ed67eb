"""How fast a reply's bytes in a memory file reach the judge's GPU, by how the file's pages are
made and how the judge maps it; prints a table.

    python benchmarks/mapped_copy.py [--mb 256] [--repeats 5] [--device cuda|cpu]

A candidate process copies its outputs off its GPU into a memory file, seals it and passes it
(kgb.evaluate.memory_file); the judge maps it privately, read and write, and copies each buffer
onto its own GPU (`tensor_storage.on_device`). Here one process plays both parts, a fresh
file each repetition:
- the writer's copy off the GPU into pages not yet made, or made ahead (`MemoryFile.make_pages`,
  as `SealedOutbox.make_spare` does while the judge reads the reply before), or from host memory
  into pages made ahead (as the judge writes its inputs into its kept file);
- the reader's copy onto the GPU through a fresh mapping of the sealed file: private read and
  write (as the judge maps it), private read-only, shared read-only, private read and write with
  its page table filled first (madvise MADV_POPULATE_READ), private read and write locked for the
  GPU's copy engine first (cudaHostRegister, read-only: the lock and its release counted), and a
  second copy through the first mapping, whose pages are in its page table by then.
On the CPU (`--device cpu`) the GPU's part is a copy into fresh host memory: what reading the
mapping costs the host.
"""

from __future__ import annotations

import argparse
import mmap
import os
import statistics
import sys
import time
import warnings
from contextlib import nullcontext
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kgb.evaluate import memory_file, tensor_storage  # noqa: E402

MADV_POPULATE_READ = 22  # Linux 5.14; Python's mmap module may not name it

CUDA_HOST_REGISTER_READ_ONLY = 8
# How the reader maps the file (flags, protection), and what it does before its copy: nothing,
# "fill" the page table, or "lock" the pages for the GPU's copy engine (not on the CPU)
READS = {
    "private, read and write (the judge's)": (mmap.MAP_PRIVATE, mmap.PROT_READ | mmap.PROT_WRITE, ""),
    "private, read only": (mmap.MAP_PRIVATE, mmap.PROT_READ, ""),
    "shared, read only": (mmap.MAP_SHARED, mmap.PROT_READ, ""),
    "private, read and write, page table filled first": (mmap.MAP_PRIVATE, mmap.PROT_READ | mmap.PROT_WRITE, "fill"),
    "private, read and write, locked for the GPU": (mmap.MAP_PRIVATE, mmap.PROT_READ | mmap.PROT_WRITE, "lock"),
}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    args = parser.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("no CUDA GPU here: --device cpu measures the host's part")
    n = args.mb << 20
    source = torch.randint(0, 256, (n,), dtype=torch.uint8, device=args.device)
    times: dict[str, list[float]] = {}
    on_host = source.cpu()
    for _ in range(args.repeats):
        for writer, (data, made) in {"off the GPU, pages not made": (source, False),
                                     "off the GPU, pages made": (source, True),
                                     "from the host, pages made": (on_host, True)}.items():
            fd = _written(data, made, times)
            first = None
            for name, (flags, prot, before) in READS.items():
                if before == "lock" and args.device != "cuda":
                    continue
                mapped = mmap.mmap(fd, n, flags=flags, prot=prot)
                if before == "fill":
                    started = time.perf_counter()
                    mapped.madvise(MADV_POPULATE_READ)
                    _add(times, f"filling the page table (madvise); {writer}", started)
                _add(times, f"onto the GPU: {name}; {writer}", _onto(mapped, n, args.device, before == "lock"))
                if first is None:
                    first = mapped
                else:
                    mapped.close()
            _add(times, f"onto the GPU: the first mapping again (its pages mapped); {writer}",
                 _onto(first, n, args.device))
            first.close()
            os.close(fd)
    print(f"| step ({args.mb} MB) | median | best |\n|---|---|---|")
    for name, seconds in times.items():
        print(f"| {name} | {statistics.median(seconds):.4f} s | {min(seconds):.4f} s |")
    where = torch.cuda.get_device_name() if args.device == "cuda" else "the CPU (copies into host memory)"
    print(f"\n{where}, {args.repeats} repetitions, a fresh memory file each")
    return 0


def _written(data: torch.Tensor, made: bool, times: dict[str, list[float]]) -> int:
    """A sealed memory file holding data's bytes, copied into its pages, made ahead or not;
    its descriptor."""
    n = data.numel()
    file = memory_file.MemoryFile.made(n, sealed_later=True)
    if made:
        started = time.perf_counter()
        file.make_pages(lambda: False)
        _add(times, "the writer: making the pages ahead", started)
    (buffer,) = file.buffers([n])
    started = time.perf_counter()
    tensor_storage.copied(data, buffer, _synchronized if data.is_cuda else nullcontext)
    _add(times, f"the writer: {'off the GPU' if data.is_cuda else 'from the host'} into pages "
                f"{'made ahead' if made else 'not yet made'}", started)
    del buffer
    if not file.seal_writes():
        raise SystemExit("the kernel would not seal the memory file")
    return file.fd


def _onto(mapped: mmap.mmap, n: int, device: str, lock: bool = False) -> float:
    """When the copy of the mapping's bytes onto the device began (it has ended on return)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a read-only mapping: torch warns that the buffer is not writable
        host = torch.frombuffer(mapped, dtype=torch.uint8, count=n)
    started = time.perf_counter()
    if lock:
        cudart = torch.cuda.cudart()
        err = cudart.cudaHostRegister(host.data_ptr(), n, CUDA_HOST_REGISTER_READ_ONLY)
        if int(err) != 0:
            raise SystemExit(f"cudaHostRegister: error {err}")
        tensor_storage.on_device(host, device, _synchronized)
        cudart.cudaHostUnregister(host.data_ptr())
    elif device == "cuda":
        tensor_storage.on_device(host, device, _synchronized)
    else:
        host.clone()
    del host
    return started


class _synchronized:
    """A `copying()` that waits for its chunk's copy, as the judge's work section does."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        torch.cuda.synchronize()


def _add(times: dict[str, list[float]], name: str, started: float) -> None:
    times.setdefault(name, []).append(time.perf_counter() - started)


if __name__ == "__main__":
    sys.exit(main())
