"""Checking every job of a Hydra multirun before the first one starts.

Each job checks its own configuration before its first trial (operators, method, model
key and name). In a sweep such as `-m model=claude-opus-4-6,glm-5` that would let the
first job run for hours before the second finds its key missing. So a Hydra callback,
registered in conf/config.yaml, composes the configuration of every combination when
the multirun starts and runs the same checks on all of them; the multirun stops there,
naming the combination, if one fails.
"""

from __future__ import annotations

from typing import Any

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf


def sweep_overrides(config: DictConfig) -> list[list[str]]:
    """The overrides of every job of the multirun that `config` starts."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper

    # the sweep as BasicSweeper builds it: config-defined params, then the command line
    params = [f"{k}={v}" for k, v in (config.hydra.sweeper.get("params") or {}).items()]
    parsed = OverridesParser.create().parse_overrides([*params, *config.hydra.overrides.task])
    return [combo for batch in BasicSweeper.split_arguments(parsed, None) for combo in batch]


class SweepCheck(Callback):
    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        """Runs each job's own pre-trial checks (kgb.run.prepare) on every combination."""
        from hydra import compose

        from kgb.run import prepare

        for combo in sweep_overrides(config):
            try:
                prepare(OmegaConf.to_object(compose(config_name=config.hydra.job.config_name, overrides=combo)))
            except Exception as exc:  # noqa: BLE001 - any failure stops the sweep with its reason
                raise SystemExit(f"sweep check: the job `{' '.join(combo)}` would fail: {exc}\n"
                                 "No job of this sweep has run; fix that or leave the combination out.") from None
