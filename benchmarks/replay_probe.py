"""The judge's replay of one case's recorded call, timed as the judge times it, but in this
process and without the judge around it: to tell a fault of the replay itself from one
that only the judge's setting brings. Seen on the H200: vllm::swap_blocks's replay faults
inside the judge, and ran clean here with CUDA_LAUNCH_BLOCKING=1.

    python benchmarks/replay_probe.py OP CASE        (on a GPU host)

Prints the recording's size, then the replay timed once and 100 times, or the traceback.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from kgb import operators  # noqa: E402
from kgb.evaluate import tensor_storage  # noqa: E402
from kgb.evaluate.correctness import tensors_in  # noqa: E402
from kgb.evaluate.draws import draw_inputs  # noqa: E402
from kgb.evaluate.integrity import ALLOWED_OPS  # noqa: E402
from kgb.evaluate.phases import Phases  # noqa: E402
from kgb.evaluate.recording import record  # noqa: E402
from kgb.evaluate.staged_replay import time_replay  # noqa: E402
from kgb.evaluate.timing_lock import TimingLock  # noqa: E402


def main() -> int:
    spec = operators.load(sys.argv[1])
    case = next(c for c in spec.cases if c.name == sys.argv[2])
    entry = spec.entry_of(case)
    timed = draw_inputs(spec, case, case.seed, "cuda")
    check = draw_inputs(spec, case, 12345, "cuda")
    module = spec.solution_module()
    # what the judge sent: both sets, storages under ids, and their bytes as sent
    sent = tensor_storage.Storages()
    for inputs in (timed, check):
        for value in tensors_in(list(inputs.values())):
            if sent.id_of(value.untyped_storage()) is None:
                sent.by_id[len(sent.by_id)] = value.untyped_storage()
            sent.tensors.append(value)
    before = {sid: tensor_storage.storage_bytes(s).clone() for sid, s in sent.by_id.items()}
    fn = getattr(module, entry.name)
    args, kwargs = entry.bind(timed)
    fn(*args, **kwargs)  # compiles, as the candidate's staging call does
    torch.cuda.synchronize()
    known = tensor_storage.Storages(by_id=dict(sent.by_id), tensors=list(sent.tensors))
    recording = record(lambda: fn(*args, **kwargs), known).as_json()
    print("problem:", recording.get("problem"), "steps:", len(recording.get("steps", [])), flush=True)
    ops = (ALLOWED_OPS | spec.allowed_torch_ops) - spec.denied_torch_ops
    for repeats, warmup in ((1, 0), (100, 10)):
        try:
            replayed = time_replay(recording, sent, before, timed, check, entry.bind, ops, spec.output_args,
                                   repeats, warmup, TimingLock(None, Phases()))
        except Exception:  # noqa: BLE001 - what this probe is for
            traceback.print_exc()
            return 1
        t = replayed.timing
        print(f"{repeats} repeat(s): {t.mode}, {t.median_us:.1f} us {t.note}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
