"""What this user's judges share on a machine and load as code (Triton's driver launchers,
PyTorch's jit kernels) lives in a folder no other user can write (kgb.evaluate.workdirs)."""

from __future__ import annotations

import os
import stat

import pytest

from kgb.evaluate import EvalSettings, engine_env, workdirs


@pytest.fixture
def tmp_as_tempdir(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    return tmp_path


def test_the_judges_shared_caches_are_this_users_alone(tmp_as_tempdir):
    env = engine_env(EvalSettings(device="cuda"))
    for key in ("KGB_DRIVER_CACHE", "KGB_TORCH_KERNEL_CACHE"):
        folder = os.path.realpath(env[key])
        assert folder.startswith(str(tmp_as_tempdir / f"kgb-user-{os.getuid()}"))
        for f in (folder, os.path.dirname(folder)):
            st = os.lstat(f)
            assert st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) & 0o077 == 0


def test_a_folder_others_may_write_is_refused(tmp_as_tempdir):
    workdirs.users_own("triton-driver-cache")
    (tmp_as_tempdir / f"kgb-user-{os.getuid()}").chmod(0o777)  # as another user could have left it
    with pytest.raises(RuntimeError, match="not this user's own folder"):
        workdirs.users_own("triton-driver-cache")


def test_a_link_in_its_place_is_refused(tmp_as_tempdir):
    elsewhere = tmp_as_tempdir / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (tmp_as_tempdir / f"kgb-user-{os.getuid()}").symlink_to(elsewhere)
    with pytest.raises(RuntimeError, match="not this user's own folder"):
        workdirs.users_own("torch-kernel-cache")
