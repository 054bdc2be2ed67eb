"""How much GPU memory one spare judge holds before its request; prints nvidia-smi's count
per process.

    python benchmarks/spare_memory.py

Starts what a spare starts (`kgb.evaluate.spare.start`), in this process: its candidate
process (forked, confined, CUDA up), then this process's own CUDA context, the kernel
clock and the draws' checksum kernels. Every spare the engine keeps waiting
(`kgb.evaluate.engine.pool_size`) costs this much of the GPU's memory.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from kgb.evaluate import spare  # noqa: E402
from kgb.evaluate.engine_process import _warm  # noqa: E402
from kgb.evaluate.sandbox import Limits  # noqa: E402


def main() -> int:
    _warm()  # what the engine imports before it forks a spare
    workspace = Path(tempfile.mkdtemp()) / "workspace"
    workspace.mkdir()
    began = time.monotonic()
    started = spare.start("cuda", workspace, Limits())
    torch.cuda.synchronize()
    print(f"spare started in {time.monotonic() - began:.2f} s; this process {os.getpid()}, "
          f"its candidate process {started.pid}")
    time.sleep(1)  # nvidia-smi's count lags a little
    print(subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv"],
                         capture_output=True, text=True).stdout)
    started.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
