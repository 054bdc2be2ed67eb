"""Questions asked of the tracking store: the leaderboard, the paper's tables, the best
kernels and the plots. They read the jobs' trials tables (kgb.query.store), counted as
kgb.query.scope says (today's operators, jobs not finished, replays); MLflow's trial runs are
what a person browses."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kgb.query.store import StoreError, trial_rows

DEFAULT_URI = "sqlite:///outputs/mlflow.db"

__all__ = ["DEFAULT_URI", "StoreError", "trial_rows", "trial_runs"]


def trial_runs(uri: str, filter_string: str = "", experiments: Sequence[str] = ()) -> list[Any]:
    """Every complete trial run in the experiments named (every active one where none is),
    as MLflow runs; StoreError for a name the store has no experiment of."""
    from mlflow.tracking import MlflowClient

    from kgb.query.store import active_experiments, choose
    from kgb.tracking.mlflow_store import COMPLETE, search_all

    client = MlflowClient(tracking_uri=uri)
    experiments = list(choose(uri, active_experiments(client), experiments))
    if not experiments:
        return []
    query = f"tags.`kgb.kind` = 'trial' and tags.`{COMPLETE}` = '1'"
    if filter_string:
        query += f" and {filter_string}"
    return search_all(client, experiments, query)
