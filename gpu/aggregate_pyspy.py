"""Aggregate py-spy raw stacks: per process kind (judge / candidate / engine / other) and
the innermost kgb frame, the share of samples."""
import collections, re, sys
by_role, by_frame = collections.Counter(), collections.Counter()
for line in open(sys.argv[1]):
    stack, _, n = line.rstrip().rpartition(" ")
    n = int(n)
    frames = stack.split(";")
    procs = [f for f in frames if f.startswith("process ")]
    code = [f for f in frames if not f.startswith("process ")]
    text = ";".join(code)
    role = ("candidate" if "run_forked" in text else "judge" if "kgb/evaluate/judge.py" in text or "spare.py" in text
            else "compile" if "triton/compiler" in text else "engine" if "engine_process" in text else "other")
    by_role[role] += n
    kgb = [f for f in code if "kgb/" in f]
    leaf = code[-1] if code else "?"
    by_frame[(role, kgb[-1].split(" (")[0] + " " + re.sub(r":\d+\)", ")", kgb[-1].split(" (")[1]) if kgb else "-", leaf.split(" (")[0])] += n
total = sum(by_role.values())
print("samples", total)
for r, n in by_role.most_common(): print(f"{r:10s} {n:8d} {100*n/total:5.1f}%")
for k, n in by_frame.most_common(int(sys.argv[2]) if len(sys.argv) > 2 else 40): print(f"{100*n/total:5.1f}% {k}")
