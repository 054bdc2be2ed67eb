"""What an agent's `./check` costs beyond the judgement itself; prints a table.

    python benchmarks/check_overhead.py [--ops a::b,c::d] [--repeats N]

For each operator, its solution is judged N times through the path an agent takes (a
shell command in the agent sandbox runs `./check` in a trial workspace, which asks the
harness's check server over its socket; the server logs the candidate and the check as
events) and N times by calling `kgb.evaluate` directly with the same visible-case
settings, alternating the two. The overhead per check is the difference of the medians:
the sandboxed shell, the check script's Python start, the socket, the events and blobs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kgb import chips, operators  # noqa: E402
from kgb.agents.checks import Checker, CheckServer, visible_settings  # noqa: E402
from kgb.agents.commands import run_command  # noqa: E402
from kgb.agents.workspace import Workspace  # noqa: E402
from kgb.evaluate import EvalSettings, evaluate  # noqa: E402
from kgb.tracking.blobs import BlobStore  # noqa: E402
from kgb.tracking.log import EventLog  # noqa: E402
from kgb.trial import TrialContext  # noqa: E402

DEFAULT_OPS = "aten::softmax,aten::add,vllm::rms_norm"


def settings_for(device: str) -> EvalSettings:
    if device == "cpu":
        return EvalSettings(device="cpu", case_tags=("smoke", "check"), time_cases=(), timeout_s=600)
    return EvalSettings(device=device, case_tags=("smoke", "check", "bench"), time_cases=("bench",), timeout_s=600)


def measure_op(op: str, settings: EvalSettings, repeats: int, work: Path) -> dict[str, float | str]:
    spec = operators.load(op)
    source = spec.solution_path.read_text()
    ctx = TrialContext(problem=spec.problem(chip_notes="", show_reference=True), spec=spec, settings=settings,
                       log=EventLog(work / op.replace(":", "_") / "events.jsonl"),
                       blobs=BlobStore(work / "blobs"), job="bench", key=op, sample=0)
    ws = Workspace.create(ctx.problem, protocol="benchmark", kernel=source, device=settings.device)
    server = CheckServer(Checker(ctx), ws.socket, ws.resolve)
    visible = visible_settings(settings)
    through_check: list[float] = []
    direct: list[float] = []
    status = ""
    try:
        with server:
            for i in range(repeats):
                # a distinct source each time: the checker would answer a repeat from its log
                ws.kernel.write_text(source + f"\n# check {i}\n")
                result = run_command("./check", ws.root, ws.env(server.ticket), timeout_s=600, output_chars=4000,
                                     confine_to=ws.trial_dir)
                through_check.append(result.duration_s)
                status = next((line for line in result.output.splitlines() if line.startswith("correct:")),
                              f"exit {result.exit_code}: {result.output.strip()[-200:]}")
                if status != "correct: yes":
                    print(f"  {op} check {i}:\n{result.output[-1500:]}", flush=True)
                t0 = time.perf_counter()
                verdict = evaluate(source + f"\n# direct {i}\n", spec, visible)
                direct.append(time.perf_counter() - t0)
                if not verdict.correct:
                    status = f"direct: {verdict.status.value}"
    finally:
        ws.remove()
    check_s, direct_s = statistics.median(through_check), statistics.median(direct)
    return {"op": op, "check_s": check_s, "direct_s": direct_s, "overhead_s": check_s - direct_s, "first_line": status}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", default=DEFAULT_OPS)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    device = chips.local_device()
    settings = settings_for(device)
    spec = operators.load("aten::t")
    evaluate(spec.solution_path.read_text(), spec, visible_settings(settings))  # starts the engine
    rows = []
    with tempfile.TemporaryDirectory(prefix="kgb-check-bench-") as tmp:
        for op in [o for o in args.ops.split(",") if o]:
            rows.append(measure_op(op, settings, args.repeats, Path(tmp)))
            r = rows[-1]
            print(f"  {op}: ./check {r['check_s']:.2f} s, direct {r['direct_s']:.2f} s ({r['first_line']})", flush=True)
    print(f"\ndevice={device}, cases={','.join(visible_settings(settings).case_tags)}, median of {args.repeats}\n")
    print("| operator | ./check s | evaluate() s | overhead s |")
    print("|---|---|---|---|")
    for r in rows:
        print(f"| {r['op']} | {r['check_s']:.2f} | {r['direct_s']:.2f} | {r['overhead_s']:+.2f} |")
    overheads = [float(r["overhead_s"]) for r in rows]
    print(f"\noverhead per check: median {statistics.median(overheads):+.2f} s over {len(rows)} operators")
    return 0


if __name__ == "__main__":
    sys.exit(main())
