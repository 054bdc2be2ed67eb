"""How judges and candidate processes wait for the GPU (kgb.evaluate.cuda_waits)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

from kgb.evaluate import cuda_waits


def test_an_unknown_waiting_mode_is_refused_with_the_choices_before_any_judge_starts(monkeypatch):
    from kgb.evaluate import EvalSettings, engine_env

    monkeypatch.setenv(cuda_waits.WAIT_ENV, "nap")
    with pytest.raises(ValueError, match="auto, spin, yield, block"):
        engine_env(EvalSettings(device="cuda"))
    with pytest.raises(ValueError, match="auto, spin, yield, block"):
        cuda_waits.apply()


def test_cudas_own_choice_touches_no_driver(monkeypatch):
    """`auto` leaves the driver alone: nothing is loaded, nothing said."""
    monkeypatch.setenv(cuda_waits.WAIT_ENV, "auto")
    monkeypatch.setattr(cuda_waits.ctypes, "CDLL", lambda *_: pytest.fail("loaded the driver"))
    cuda_waits.apply()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
@pytest.mark.parametrize("mode", ["yield", "block"])
def test_a_gpu_process_started_after_the_mode_is_set_waits_that_way(mode):
    script = ("import torch\nfrom kgb.evaluate import cuda_waits\ncuda_waits.apply()\n"
              "torch.ones(1, device='cuda').add_(1)\ntorch.cuda.synchronize()\nprint(cuda_waits.current_flags())\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         env={**os.environ, cuda_waits.WAIT_ENV: mode})
    assert int(out.stdout.split()[-1]) == cuda_waits.MODES[mode], out.stderr
