"""Questions asked of the MLflow store: the leaderboard and the best kernels."""

from __future__ import annotations

from typing import Any

DEFAULT_URI = "sqlite:///outputs/mlflow.db"


def trial_runs(uri: str, filter_string: str = "") -> list[Any]:
    """Every complete trial run in every experiment of the store."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    experiments = [e.experiment_id for e in client.search_experiments()]
    if not experiments:
        return []
    query = "tags.`kgb.kind` = 'trial' and tags.`kgb.complete` = '1'"
    if filter_string:
        query += f" and {filter_string}"
    runs: list[Any] = []
    token = None
    while True:
        page = client.search_runs(experiments, filter_string=query, max_results=1000, page_token=token)
        runs.extend(page)
        token = page.token
        if not token:
            return runs
