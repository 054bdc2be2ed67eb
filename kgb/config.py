"""Typed configuration: dataclass schemas registered in Hydra's ConfigStore.

The YAML files under conf/ fill these schemas in; a key that a schema lacks fails at
compose time. run.py converts the composed config to these plain objects, so the rest
of the package never sees a DictConfig. Every field is documented: this is the schema's
documentation (`python run.py --help` lists the groups).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING


@dataclass
class MethodConfig:
    """Common to every method."""

    name: str = MISSING  # registry name in kgb.methods.METHODS
    samples: int = 1  # independent trials per operator (sample index is part of the trial key)
    concurrency: int = 1  # trials run at once (model calls overlap; evaluations stay serial on a GPU)
    dir: str | None = None  # kernels directory, read by method=files; a sweep may set it for all methods

    # Fields that do not change a trial's result, left out of trial and job keys.
    not_identity: ClassVar[tuple[str, ...]] = ("concurrency", "dir")

    def identity(self) -> dict[str, Any]:
        """The fields that decide results: what trial keys and job ids hash."""
        return {k: v for k, v in dataclasses.asdict(self).items() if k not in self.not_identity}


@dataclass
class ExpertConfig(MethodConfig):
    """Evaluates each operator's own solution.py: the dataset's self-test and speed ceiling."""

    name: str = "expert"


@dataclass
class FilesConfig(MethodConfig):
    """Evaluates kernels a user brings: DIR/<source>__<op>.py, e.g. aten__softmax.py."""

    name: str = "files"
    dir: str | None = MISSING

    not_identity: ClassVar[tuple[str, ...]] = ("concurrency",)


@dataclass
class ModelConfig:
    """The LLM behind a method; `none` for methods that call no model."""

    name: str = "none"
    provider: str = "none"


@dataclass
class SourceConfig:
    name: str = "all"  # aten | vllm | cublas | all


@dataclass
class ChipConfig:
    """The chip a job targets. `auto` resolves to this machine's device at run time."""

    name: str = "auto"
    backend: str = "auto"  # torch device type: cpu (Triton interpreter), cuda, npu, musa
    device_name_pattern: str = ""  # regex on the device name that recognises this chip
    notes: str = ""  # advice shown to methods in the Problem (e.g. warp size, no fp64)


@dataclass
class EvalConfig:
    """How candidates are judged."""

    cases: str = "auto"  # smoke | check | all | auto (smoke on cpu, all on a GPU)
    timeout_s: float = 300.0  # wall-clock bound on one candidate's whole evaluation
    repeats: int = 100  # timed repetitions per bench case (GPU only)
    warmup: int = 10


@dataclass
class TrackingConfig:
    root: str = "outputs"  # event logs (outputs/jobs/<job>/events.jsonl) and blobs
    uri: str | None = None  # MLflow tracking URI; default sqlite:///<root>/mlflow.db
    experiment: str = "kgb"  # MLflow experiment (one per campaign)
    mlflow: bool = True  # project into MLflow as trials finish

    def tracking_uri(self) -> str:
        from pathlib import Path

        return self.uri or f"sqlite:///{Path(self.root).resolve() / 'mlflow.db'}"


@dataclass
class Config:
    """One job: conf/config.yaml picks the default option of each group."""

    method: Any = MISSING  # one of the method schemas above
    model: Any = MISSING
    source: SourceConfig = MISSING
    chip: ChipConfig = MISSING
    eval: EvalConfig = field(default_factory=EvalConfig)
    tracking: TrackingConfig = field(default_factory=TrackingConfig)
    ops: list[str] = field(default_factory=list)  # restrict a job, e.g. [aten::softmax]


def register() -> None:
    """Put the schemas in Hydra's ConfigStore; conf/<group>/*.yaml extend them."""
    cs = ConfigStore.instance()
    cs.store(name="kgb_config", node=Config)
    cs.store(group="method", name="base_expert", node=ExpertConfig)
    cs.store(group="method", name="base_files", node=FilesConfig)
    cs.store(group="model", name="base_none", node=ModelConfig)
    cs.store(group="source", name="base_source", node=SourceConfig)
    cs.store(group="chip", name="base_chip", node=ChipConfig)
