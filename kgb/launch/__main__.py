"""`python -m kgb.launch store --tracking-uri http://HOST:5000 [--experiment kgb]`

The one-time setup of a shared tracking server before many hosts project into it: opens
the experiment the way every job does (kgb.tracking.mlflow_projection), so that the hosts'
jobs, starting at once, all find it made instead of racing to make it.
"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kgb.launch", description=__doc__.splitlines()[2])
    commands = parser.add_subparsers(dest="command", required=True)
    store = commands.add_parser("store", help="prepare a shared MLflow tracking server for a sweep")
    store.add_argument("--tracking-uri", required=True, help="the server, e.g. http://mlflow.cluster:5000")
    store.add_argument("--experiment", default="kgb", help="the jobs' tracking.experiment (default kgb)")
    args = parser.parse_args(argv)

    from kgb.tracking.mlflow_projection import MlflowProjection

    projection = MlflowProjection(args.tracking_uri, args.experiment, background=False)
    print(f"experiment {args.experiment} (id {projection.experiment_id}) is ready at {args.tracking_uri}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
