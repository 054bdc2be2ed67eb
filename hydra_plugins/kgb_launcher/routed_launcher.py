"""`hydra/launcher=kgb_slurm`: submitit's SLURM launcher, routing each job by its chip.

    python run.py -m chip=nvidia,E method=expert hydra/launcher=kgb_slurm

submits the nvidia job to the partition (gres, constraint, account, time limit) that
conf/chip/nvidia.yaml names under `slurm:` and the E job to E's, each group of jobs with
equal settings as one SLURM array (kgb.launch.routing). `hydra.launcher.*` are the
defaults a chip leaves unset. `hydra.launcher.cluster=local` runs the same routing on this
machine through submitit's local executor, to try a sweep without a cluster.

A job that SLURM preempts or stops at its time limit is requeued by submitit (this
launcher is checkpointable) and resumes from its event log: finished trials are not run
again, model calls already logged are not paid again. Each start records in its
RunStarted event (config.placement) the scheduler's job id and how many times the job
was requeued before it.

Hydra finds launchers only in the `hydra_plugins` package, hence this module's place. It
loads the module without registering it in sys.modules, so annotations here are not
postponed (dataclasses would not find the module to resolve them).
"""

import copy
import json
import logging
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hydra.core.config_store import ConfigStore
from hydra.core.singleton import Singleton
from hydra.core.utils import JobReturn, filter_overrides
from hydra_plugins.hydra_submitit_launcher.config import SlurmQueueConf
from hydra_plugins.hydra_submitit_launcher.submitit_launcher import BaseSubmititLauncher
from omegaconf import OmegaConf

from kgb.launch.routing import Group, Route, executor_parameters, group, record

log = logging.getLogger(__name__)
ROUTES_FILE = "routes.json"  # in the sweep dir: where each job of the sweep was sent


@dataclass
class RoutedSlurmConf(SlurmQueueConf):
    _target_: str = "hydra_plugins.kgb_launcher.routed_launcher.RoutedSlurmLauncher"
    # submitit's executor: slurm (sbatch), or local (subprocesses on this machine, for trying a sweep)
    cluster: str = "slurm"
    # Requeues after a time limit: kgb resumes a job from its event log, so a requeue pays
    # for nothing twice (preemptions are always requeued).
    max_num_timeout: int = 3


class RoutedSlurmLauncher(BaseSubmititLauncher):
    _EXECUTOR = "slurm"

    def __init__(self, cluster: str = "slurm", **params: Any) -> None:
        super().__init__(**params)
        self.cluster = cluster
        self.requeues = 0  # times this job was requeued: counted in the copy each requeue submits

    def routes(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> list[Route]:
        """Each job's chip, from its own composed config."""
        assert self.hydra_context is not None and self.config is not None
        found = []
        for i, overrides in enumerate(job_overrides):
            job_cfg = self.hydra_context.config_loader.load_sweep_config(self.config, list(overrides))
            chip = OmegaConf.to_container(job_cfg.chip, resolve=True)
            found.append(Route.of(initial_job_idx + i, list(overrides), chip))  # type: ignore[arg-type]
        return found

    def executor(self, group_: Group) -> Any:
        """The submitit executor of one group of jobs."""
        import submitit

        executor = submitit.AutoExecutor(folder=group_.params["submitit_folder"], cluster=self.cluster,
                                         slurm_max_num_timeout=group_.params["max_num_timeout"])
        executor.update_parameters(**executor_parameters(group_.params))
        return executor

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[JobReturn]:
        assert self.config is not None
        sweep_dir = Path(str(self.config.hydra.sweep.dir))
        sweep_dir.mkdir(parents=True, exist_ok=True)
        submitted, where = [], []
        for group_ in group(self.routes(job_overrides, initial_job_idx), self.params):
            asked = {k: v for k, v in group_.params.items() if k in ("partition", "gres", "constraint", "account") and v}
            for route in group_.routes:
                log.info(f"\t#{route.index} : {' '.join(filter_overrides(list(route.overrides)))} -> {asked}")
            args = [(list(r.overrides), "hydra.sweep.dir", r.index, f"job_id_for_{r.index}", Singleton.get_state())
                    for r in group_.routes]
            jobs = self.executor(group_).map_array(self, *zip(*args, strict=True))
            submitted += list(zip(group_.routes, jobs, strict=True))
            where += record(group_, self.cluster, [j.job_id for j in jobs])
        (sweep_dir / ROUTES_FILE).write_text(json.dumps(sorted(where, key=lambda w: w["job"]), indent=1) + "\n")
        return [job.results()[0] for _, job in sorted(submitted, key=lambda s: s[0].index)]

    def __call__(self, sweep_overrides: list[str], job_dir_key: str, job_num: int, job_id: str,
                 singleton_state: dict[type, Singleton]) -> JobReturn:
        """Runs on the host SLURM chose: the job, told where it runs (RunStarted.config.placement)."""
        import submitit

        environment = submitit.JobEnvironment()
        if isinstance(environment, submitit.slurm.slurm.SlurmJobEnvironment):
            # submitit's signal handler, installed before this call, holds an environment
            # of its own: the class is the one place to change how it requeues
            type(environment)._requeue = _requeue_in_place
        placement = [f"placement.scheduler_job={environment.job_id}", f"placement.requeues={self.requeues}"]
        return super().__call__([*sweep_overrides, *placement], job_dir_key, job_num, job_id, singleton_state)

    def checkpoint(self, *args: Any, **kwargs: Any) -> Any:
        """Called by submitit on the job's host when SLURM preempts it or its time is up: the
        job is submitted again as it was, one requeue more, and resumes from its event log."""
        import submitit

        again = copy.copy(self)
        again.requeues = self.requeues + 1
        return submitit.helpers.DelayedSubmission(again, *args, **kwargs)


def _requeue_in_place(environment: Any, countdown: int) -> None:
    """submitit's SLURM requeue, done by turning this process into `scontrol requeue`.

    `scontrol requeue` ends the running job at once: SLURM sends SIGTERM to every process
    of the job, the judge's engine included, while submitit keeps this one alive (it
    ignores SIGTERM) until its signal handler returns. In that gap the trial being judged
    would log its engine's death as an `infra_error` end, blaming the judge for a
    preemption. exec ends every thread of the job before the requeue is asked for: the
    trial in flight stays unfinished in the log, and the requeued job runs it again.
    """
    log.info(f"requeueing job {environment.job_id} ({countdown} time-limit requeues left)")
    sys.stdout.flush()
    sys.stderr.flush()
    os.execvp("scontrol", ["scontrol", "requeue", environment.job_id])


ConfigStore.instance().store(group="hydra/launcher", name="kgb_slurm", node=RoutedSlurmConf(), provider="kgb")
