# TEMPORARY (deleted after the GPU run): precision margins of my operators' solutions on a GPU.
import sys, time, traceback
import torch
sys.path.insert(0, ".")
from kgb import operators
from kgb.operators import _import_file, published_tolerance
from kgb.evaluate.correctness import clone_exact
from kgb.evaluate.integrity import audited, ALLOWED_OPS

dev = "cuda"


def ratio(act, exp, reduction):
    if not (exp.is_floating_point() or exp.is_complex()):
        return ("exact" if torch.equal(act.cpu(), exp.cpu()) else "INT-MISMATCH"), 0
    if exp.numel() == 0:
        return 0.0, 0
    wide = torch.complex128 if exp.is_complex() else torch.float64
    e, x = exp.cpu().to(wide), act.cpu().to(wide)
    fin = torch.isfinite(e)
    scale = float(e[fin].abs().pow(2).mean().sqrt()) if fin.any() else 0.0
    tol = published_tolerance(str(exp.dtype).removeprefix("torch."), reduction, scale)
    err = (x - e).abs()
    r = torch.where(fin, err / (tol.atol + tol.rtol * e.abs()), torch.zeros_like(err))
    bad_nonfinite = int((~fin & ~((x == e) | (x.isnan() & e.isnan()))).sum())
    return float(r.max()), bad_nonfinite


for op in sys.argv[1:]:
    spec = operators.load(op)
    sol = _import_file(spec.solution_path, "sol_" + spec.name)
    for case in spec.cases:
        if case.tag not in ("smoke", "check"):
            continue
        try:
            entry = spec.entry_of(case)
            inp = spec.module.make_inputs(case, torch.Generator().manual_seed(case.seed), dev)
            a, k = entry.bind(clone_exact(inp))
            exp = spec.reference_for(entry.name)(*a, **k)
            a, k = entry.bind(clone_exact(inp))
            act = getattr(sol, entry.name)(*a, **k)
            torch.cuda.synchronize()
            r, nf = ratio(act, exp, case.reduction)
            # the CPU reference on the same inputs: how far PyTorch's own kernels disagree
            cin = {kk: (v.cpu() if isinstance(v, torch.Tensor) else v) for kk, v in clone_exact(inp).items()}
            a, k = entry.bind(cin)
            cexp = spec.reference_for(entry.name)(*a, **k)
            rc, nfc = ratio(exp.cpu(), cexp, case.reduction) if isinstance(exp, torch.Tensor) else ("-", 0)
            flag = " <<<" if (isinstance(r, float) and r > 0.5) or nf or r == "INT-MISMATCH" else ""
            print(f"{op:20s} {case.name:28s} gpu/ref={r if isinstance(r,str) else f'{r:.3g}'} nonfinite={nf}  cpuref-vs-gpuref={rc if isinstance(rc,str) else f'{rc:.3g}'} nf={nfc}{flag}", flush=True)
        except Exception as exc:
            print(f"{op:20s} {case.name:28s} ERROR {type(exc).__name__}: {exc}", flush=True)
            traceback.print_exc()
    for lst in ("CONJ_CASES", "NEG_CASES"):
        for case in getattr(spec.module, lst, []):
            mk = lambda: spec.module.make_inputs(case, torch.Generator().manual_seed(case.seed), dev)
            ref_in, cand_in = mk(), mk()
            exp = spec.module.reference(**ref_in)
            t0 = time.time()
            with torch.no_grad(), audited() as au:
                out = getattr(sol, spec.name)(**cand_in)
                torch.cuda.synchronize()
            bad = au.violations(ALLOWED_OPS | spec.allowed_torch_ops, spec.denied_torch_ops)
            msg = spec.module.compare({"return": out}, {"return": exp}, case, cand_in)
            print(f"{op:20s} {case.name:28s} bitpath compare={msg} violations={bad} kernels={au.kernels} {time.time()-t0:.3f}s", flush=True)
