"""kgb's entry point: `python run.py [-m] method=... source=... chip=...` (see README)."""

import hydra
from omegaconf import DictConfig, OmegaConf

from kgb.config import register
from kgb.run import run_job

register()


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg: DictConfig) -> float:
    summary = run_job(OmegaConf.to_object(cfg))
    return summary.accuracy


if __name__ == "__main__":
    main()
