"""Routing a sweep's jobs by chip: each job goes where its own chip's config says.

Hydra gives a launcher one configuration for the whole sweep, so with submitit's own
launcher `chip=nvidia,E` would send both jobs to one partition. kgb's launcher
(hydra_plugins/kgb_launcher) composes each job's config, reads its `chip.slurm`
(kgb.config.SlurmConfig), lays it over the launcher's settings, and submits the jobs in
groups of equal settings: one submitit executor, so one SLURM array, per group. This
module is that logic, apart from Hydra's and submitit's objects.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

# The launcher's settings that submitit takes under their own name on every cluster
# (hydra-submitit-launcher's BaseQueueConf); every other one is SLURM's and is given its
# prefix (`partition` becomes `slurm_partition`), which submitit's local executors ignore.
GENERIC = frozenset({"timeout_min", "cpus_per_task", "gpus_per_node", "tasks_per_node", "mem_gb", "nodes",
                     "name", "stderr_to_stdout"})
# The launcher's settings that are not submission parameters.
LAUNCHER_ONLY = frozenset({"submitit_folder", "max_num_timeout", "cluster"})


@dataclass(frozen=True)
class Route:
    """One job of the sweep and what its chip asks of the cluster."""

    index: int  # the job's number in the sweep (hydra.job.num)
    overrides: tuple[str, ...]  # the job's own overrides, e.g. ("chip=E", "method=expert")
    chip: str  # its chip config's name
    slurm: dict[str, Any]  # the chip's SLURM settings that are set (kgb.config.SlurmConfig)

    @staticmethod
    def of(index: int, overrides: list[str], chip: dict[str, Any]) -> Route:
        """The route of a job from its composed `chip` node (as a plain dict)."""
        wanted = {k: v for k, v in (chip.get("slurm") or {}).items() if v is not None}
        return Route(index, tuple(overrides), str(chip.get("name")), wanted)


@dataclass
class Group:
    """Jobs submitted together: the launcher's settings with their chip's on top."""

    params: dict[str, Any]
    routes: list[Route] = field(default_factory=list)


def group(routes: list[Route], launcher: dict[str, Any]) -> list[Group]:
    """The routes grouped by the settings they are submitted with, in sweep order."""
    groups: dict[str, Group] = {}
    for route in routes:
        params = {**launcher, **route.slurm}
        key = json.dumps(params, sort_keys=True, default=str)
        groups.setdefault(key, Group(params)).routes.append(route)
    return list(groups.values())


def executor_parameters(params: dict[str, Any]) -> dict[str, Any]:
    """A group's settings as submitit's AutoExecutor.update_parameters takes them."""
    return {k if k in GENERIC else f"slurm_{k}": v
            for k, v in params.items() if k not in LAUNCHER_ONLY and v is not None}


def record(group_: Group, cluster: str, scheduler_jobs: list[str]) -> list[dict[str, Any]]:
    """What the sweep's routes.json says of each job of a submitted group: where it went."""
    asked = {k: v for k, v in group_.params.items() if k not in LAUNCHER_ONLY and v is not None}
    return [{"job": r.index, "overrides": list(r.overrides), "chip": r.chip, "cluster": cluster,
             "scheduler_job": job, "params": asked} for r, job in zip(group_.routes, scheduler_jobs, strict=True)]
