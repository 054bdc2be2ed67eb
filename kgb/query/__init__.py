"""Questions asked of the MLflow store: the leaderboard, the best kernels and the plots."""

from __future__ import annotations

from typing import Any

DEFAULT_URI = "sqlite:///outputs/mlflow.db"


def trial_runs(uri: str, filter_string: str = "") -> list[Any]:
    """Every complete trial run in every experiment of the store."""
    from mlflow.tracking import MlflowClient

    from kgb.tracking.mlflow_projection import search_all

    client = MlflowClient(tracking_uri=uri)
    experiments = [e.experiment_id for e in client.search_experiments()]
    if not experiments:
        return []
    query = "tags.`kgb.kind` = 'trial' and tags.`kgb.complete` = '1'"
    if filter_string:
        query += f" and {filter_string}"
    return search_all(client, experiments, query)
