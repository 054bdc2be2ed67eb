"""kgb's entry point: `python run.py [-m] method=... source=... chip=...` (see README).

Bad input ends here in one line (kgb.preflight) before anything is written; `--help`
describes every group and setting (kgb.manual). HYDRA_FULL_ERROR=1 shows tracebacks.
"""

import os
import signal
import sys

import hydra
from omegaconf import DictConfig, OmegaConf

from kgb.config import register
from kgb.job import head_start
from kgb.manual import print_help, wants_help
from kgb.preflight import main_guard

register()


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg: DictConfig) -> float:
    job = OmegaConf.to_object(cfg)
    head_start(job)
    from kgb.job import JobRunning
    from kgb.run import run_job  # torch and MLflow: imported while the engine imports its own
    from kgb.trial import machine_error

    try:
        return run_job(job).accuracy
    except JobRunning as e:
        sys.exit(f"kgb: {e}")
    except OSError as e:
        if not machine_error(e):
            raise
        # a full disk, say: the job stops where it is, and a later run goes on from there
        sys.exit(f"kgb: {e.strerror} ({e.filename or 'the job folder'}): every trial that finished is kept; "
                 "make room (or fix the disk) and run the same command again to go on")


if __name__ == "__main__":
    if wants_help(sys.argv[1:]):
        print_help()
        sys.exit(0)
    sys.argv[1:] = main_guard(sys.argv[1:])
    try:
        main()
    except KeyboardInterrupt as e:  # Ctrl-C: what is kept, and how to go on, rather than a traceback
        # during the trials, kgb.run.Interrupted counts what its job keeps and names its log
        print(f"\nkgb: {e}" if str(e) else "\nkgb: interrupted. Every trial that finished is kept in its job's event "
              "log (under tracking.root); run the same command again to go on: nothing judged is judged again, and "
              "MLflow catches up.", file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        # not sys.exit: that joins the trials' threads, which may wait minutes on a model's answer;
        # the event log loses at most the line being written, which its readers skip
        os._exit(130)
    # The job is over and said so: a Ctrl-C from here on would land in the interpreter's own
    # ending (engines closed, threads joined) as a traceback, with the job's results all kept.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
