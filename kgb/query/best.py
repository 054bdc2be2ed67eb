"""The best kernel for one operator on one chip: the fastest correct one, or any
correct one where nothing was timed."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def best_run(runs: list[Any]) -> Any | None:
    correct = [r for r in runs if r.data.metrics.get("correct") == 1]
    if not correct:
        return None
    return max(correct, key=lambda r: (r.data.metrics.get("speedup", 0.0), r.info.start_time or 0))


def download(uri: str, run: Any, dest: Path) -> list[Path]:
    """Fetch the run's kernel.py and verdict.json into dest."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    dest.mkdir(parents=True, exist_ok=True)
    return [Path(client.download_artifacts(run.info.run_id, name, str(dest))) for name in ("kernel.py", "verdict.json")]
