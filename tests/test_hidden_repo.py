"""Where the candidates' sandbox cannot hide kgb's checkout (it lies under a folder the sandbox
must leave readable, such as /opt), kgb judges nothing but the known-good solutions: any other
candidate could read every operator's spec and solution there."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgb.evaluate import sandbox
from kgb.operators import REPO_ROOT

pytestmark = pytest.mark.skipif(sandbox.landlock_abi() == 0, reason="this kernel has no Landlock: nothing is hidden")


@pytest.fixture
def checkout_in_a_readable_folder(monkeypatch):
    """The sandbox's readable folders as if this checkout lay under one of them."""
    real = sandbox.default_paths

    def with_the_repo(workspace: Path, allow_exec: bool) -> sandbox.Paths:
        paths = real(workspace, allow_exec)
        return sandbox.Paths((*paths.read, str(REPO_ROOT.parent)), paths.execute, paths.write, paths.devices)

    monkeypatch.setattr(sandbox, "default_paths", with_the_repo)


def test_a_checkout_elsewhere_is_hidden():
    sandbox.check_hidden_from_candidates(REPO_ROOT)


def _job(*overrides: str):
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from kgb.config import register

    register()
    with initialize_config_dir(config_dir=str(REPO_ROOT / "conf"), version_base="1.3"):
        return OmegaConf.to_object(compose("config", overrides=list(overrides)))


def test_a_checkout_under_a_readable_folder_judges_only_the_known_good_solutions(checkout_in_a_readable_folder,
                                                                                   tmp_path):
    from kgb.run import prepare

    with pytest.raises(ValueError, match=f"kgb's checkout at {REPO_ROOT} lies under {REPO_ROOT.parent}, which the "
                                         "candidates' sandbox leaves readable"):
        prepare(_job("method=files", f"method.dir={tmp_path}", "ops=[aten::neg]"))
    ops, _, _ = prepare(_job("ops=[aten::neg]"))  # method=expert by default
    assert ops == ["aten::neg"]
