"""Where the judge process keeps what libraries compile for it (kgb.evaluate.judge): out of
the candidate's workspace, which candidates write, and shared by the judges of one machine,
so that what one judge compiled (PyTorch's own jit kernels for a reference, Triton's
driver helper) is not compiled again by the next, inside a work section a timing turn
waits for."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kgb.evaluate import EvalSettings, engine_env, workspace_env

PROBE = """
import json, os, sys, tempfile
from pathlib import Path
from kgb.evaluate.judge import _keep_out_of_the_workspace
_keep_out_of_the_workspace(Path(sys.argv[1]))
print(json.dumps({k: os.environ.get(k) for k in ("PYTORCH_KERNEL_CACHE_PATH", "TRITON_CACHE_DIR", "TMPDIR", "HOME",
                                                "TRITON_HOME", "CUDA_CACHE_PATH", "TORCHINDUCTOR_CACHE_DIR")}))
"""


def _judge_env(private: Path, env: dict[str, str]) -> dict[str, str]:
    done = subprocess.run([sys.executable, "-c", PROBE, str(private)], env=env, capture_output=True, text=True,
                          timeout=120, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_judge_keeps_pytorchs_kernels_in_the_machines_shared_cache(tmp_path):
    workspace = tmp_path / "eval" / "candidate"
    env = {**engine_env(EvalSettings(device="cuda")), "HOME": str(workspace)}  # as a judge gets it
    shared = env["KGB_TORCH_KERNEL_CACHE"]
    assert not Path(shared).is_relative_to(tmp_path)  # no evaluation's folder: it outlives them
    found = _judge_env(tmp_path / "eval" / "judge", env)
    assert found["PYTORCH_KERNEL_CACHE_PATH"] == shared and Path(shared).is_dir()
    assert found["TRITON_CACHE_DIR"] == env["KGB_DRIVER_CACHE"]
    # without the engine's setting, the judge's own folder, never the workspace
    env.pop("KGB_TORCH_KERNEL_CACHE")
    found = _judge_env(tmp_path / "eval" / "judge", env)
    assert found["PYTORCH_KERNEL_CACHE_PATH"] == str(tmp_path / "eval" / "judge" / "torch-kernels")
    assert Path(found["PYTORCH_KERNEL_CACHE_PATH"]).is_dir()
    assert not Path(found["PYTORCH_KERNEL_CACHE_PATH"]).is_relative_to(workspace)



def test_nothing_the_judges_libraries_look_up_is_left_in_the_workspace(tmp_path):
    """The engine points HOME, Triton's home and the CUDA driver's and Inductor's caches at the
    workspace for its candidate processes (workspace_env); the judge's own must not be read
    from there, where a candidate could plant a file."""
    workspace = tmp_path / "eval" / "candidate"
    env = {**engine_env(EvalSettings(device="cuda")), **workspace_env(workspace)}  # as a judge gets it
    found = _judge_env(tmp_path / "eval" / "judge", env)
    for key in ("HOME", "TRITON_HOME", "CUDA_CACHE_PATH", "TORCHINDUCTOR_CACHE_DIR", "TMPDIR", "TRITON_CACHE_DIR"):
        assert Path(env[key]).is_relative_to(workspace)
        assert found[key] and not Path(found[key]).is_relative_to(workspace), (key, found[key])
