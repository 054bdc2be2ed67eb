"""Typed configuration: dataclass schemas registered in Hydra's ConfigStore.

The YAML files under conf/ fill these schemas in; a key that a schema lacks fails at
compose time. run.py converts the composed config to these plain objects, so the rest
of the package never sees a DictConfig. Every field is documented: this is the schema's
documentation (`python run.py --help` lists the groups).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING, OmegaConf

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"
GROUPS = ("method", "model", "source", "chip")  # Hydra config groups, one folder each under conf/


class ConfigError(ValueError):
    """A setting that cannot be run. The message is one line: the problem and the fix."""


class Keyed:
    """A config part whose fields, minus `not_identity`, go into trial keys and job ids."""

    # Fields that do not change a trial's result, left out of the keys.
    not_identity: ClassVar[tuple[str, ...]] = ()

    def identity(self) -> dict[str, Any]:
        """The fields that decide results: what trial keys and job ids hash. `_target_`
        names the code that runs, not a setting: moving a class keeps its results' keys."""
        return {k: v for k, v in dataclasses.asdict(self).items()  # type: ignore[call-overload]
                if k not in self.not_identity and k != "_target_"}


@dataclass
class MethodConfig(Keyed):
    """Common to every method."""

    # the method's class, built with this config (kgb.methods.build); a YAML that reuses a
    # schema for another method sets its own
    _target_: str = MISSING
    name: str = MISSING  # the method's name in results (method=<name> picks conf/method/<name>.yaml)
    samples: int = 1  # independent trials per operator (raising it runs only the new sample indices)
    concurrency: int | None = None  # trials at once; null: one per CPU core (on a GPU 1.25 per core, at most one per 7 GiB of its memory and 20 per GPU: kgb.run.trials_per_gpu); timing stays one at a time per GPU
    dir: str | None = None  # kernels directory, read by method=files; a sweep may set it for all methods

    # The sample index is part of each trial's key; the count is not, so that raising it
    # keeps the samples already run (kgb/identity.py).
    not_identity: ClassVar[tuple[str, ...]] = ("samples", "concurrency", "dir")


@dataclass
class ExpertConfig(MethodConfig):
    """Evaluates each operator's own solution.py: the dataset's self-test and speed ceiling."""

    _target_: str = "kgb.methods.expert.Expert"
    name: str = "expert"


@dataclass
class FilesConfig(MethodConfig):
    """Evaluates kernels a user brings: DIR/<source>__<op>.py, e.g. aten__softmax.py."""

    _target_: str = "kgb.methods.files.Files"
    name: str = "files"
    dir: str | None = MISSING

    not_identity: ClassVar[tuple[str, ...]] = ("samples", "concurrency")

    def __post_init__(self) -> None:
        # the job's identity names the folder: `dir=k` run from two folders was one job, the
        # second folder's kernels judged as a change of the first's (session 49's user walk)
        if isinstance(self.dir, str) and self.dir:
            self.dir = str(Path(self.dir).expanduser().absolute())


@dataclass
class TransferConfig(MethodConfig):
    """Re-judges on this job's chip the kernels another run produced (no model call).

    `method.from=OUTPUTS_DIR` names that run's tracking root. Where it holds kernels of
    several methods (or configurations of one), models or chips, `from_method`,
    `from_params`, `from_model` and `from_chip` pick one;
    the method pins the values it found, so the job's config and trial keys name its source.
    """

    _target_: str = "kgb.methods.transfer.Transfer"
    name: str = "transfer"
    from_method: str | None = None  # the source runs' method, where the root holds several
    from_params: str | None = None  # the source method's settings off its defaults ("dir=/tmp/k"; "" none), where several
    from_model: str | None = None  # the source runs' model, where the root holds several
    from_chip: str | None = None  # the chip the source runs judged on, where the root holds several
    # `from` is a Python keyword: declared as ReplayConfig declares it (below).
    __annotations__["from"] = "str | None"
    vars()["from"] = field(default=None, init=False, repr=False, compare=False)


@dataclass
class LLMMethodConfig(MethodConfig):
    """Common to methods that sample kernels from a model (`model=` must name one)."""

    temperature: float | None = None  # overrides model.temperature for this method's calls


@dataclass
class OneshotConfig(LLMMethodConfig):
    """One completion per operator; its code is the candidate."""

    _target_: str = "kgb.methods.oneshot.Oneshot"
    name: str = "oneshot"


@dataclass
class PasskConfig(LLMMethodConfig):
    """Up to k independent completions per operator, stopping at the first correct one."""

    _target_: str = "kgb.methods.passk.Passk"
    name: str = "passk"
    k: int = 5  # rounds; round r samples again only where no candidate is correct yet
    temperature: float | None = 0.8  # independent samples need a temperature above 0


@dataclass
class RefineConfig(LLMMethodConfig):
    """A conversation: each reply is judged and the verdict is the next user message."""

    _target_: str = "kgb.methods.refine.Refine"
    name: str = "refine"
    rounds: int = 5  # model replies per operator, the first included
    until_correct: bool = True  # stop at the first correct candidate (false: keep improving speed)


@dataclass
class ModelConfig(Keyed):
    """The LLM behind a method; `none` for methods that call no model."""

    name: str = "none"
    provider: str = "none"


@dataclass
class PriceConfig:
    """US dollars per million tokens, per canonical bucket (docs/design/token-accounting.md)."""

    input: float = 0.0  # input tokens neither read from nor written to the cache
    output: float = 0.0  # generated tokens, reasoning included
    cache_read: float = 0.0  # input tokens read from the provider's prompt cache
    cache_write: float = 0.0  # input tokens written to the provider's prompt cache


@dataclass
class LLMConfig(ModelConfig):
    """A model behind an API: conf/model/anthropic.yaml, openai.yaml and the presets."""

    name: str = MISSING  # the model id the API expects, e.g. claude-opus-4-6
    provider: str = MISSING  # anthropic | openai (any OpenAI-compatible endpoint) | replay
    base_url: str | None = None  # None: the provider's own endpoint
    api_key_env: str = ""  # environment variable holding the key ("" for an endpoint without one)
    temperature: float | None = 0.0  # None: send none (the API's default)
    accepts_temperature: bool = True  # false for models that refuse one (Claude Opus 4.7 and later)
    max_tokens: int = 16384  # cap on generated tokens per call, reasoning included
    timeout_s: float = 600.0  # per HTTP attempt; a hung connection counts as a failed attempt
    retries: int = 6  # further attempts after a 429, a 5xx, a timeout or a malformed body
    backoff_s: float = 2.0  # first wait between attempts, doubled each time (a retry-after wins)
    max_backoff_s: float = 120.0  # longest wait between attempts
    price: PriceConfig = field(default_factory=PriceConfig)
    max_trial_tokens: int | None = None  # budget: no further call once a trial has used this many
    max_job_cost_usd: float | None = None  # budget: no further call once the job has spent this much
    validate: bool = True  # check model.name before the sweep (listing, else one probe call); false: trust it

    # How calls are made, paid for and capped, not what is asked: changing these must not
    # make new trials that pay again for answers already logged.
    not_identity: ClassVar[tuple[str, ...]] = (
        "api_key_env", "timeout_s", "retries", "backoff_s", "max_backoff_s", "price",
        "max_trial_tokens", "max_job_cost_usd", "validate",
    )


@dataclass
class ReplayConfig(LLMConfig):
    """Answers every call from the completions logged under an earlier run's tracking root.

    `model.from=OUTPUTS_DIR` names that root. `name` picks which recorded model to answer
    as where the root holds several (`replay`: the only one). Requests are built with the
    recorded model's name, temperature and max_tokens, so that they match exactly.
    """

    name: str = "replay"
    provider: str = "replay"
    match: str = "request"  # request: the same request; position: the n-th call of the same trial
    # `from` is a Python keyword, so the field cannot be declared the usual way; init=False
    # keeps it out of the generated __init__ (OmegaConf sets it after construction).
    __annotations__["from"] = "str"
    vars()["from"] = field(default=MISSING, init=False, repr=False, compare=False)


@dataclass
class SourceConfig:
    name: str = "all"  # aten | vllm | cublas | all


@dataclass
class SlurmConfig:
    """Where a SLURM cluster runs this chip's jobs (kgb.launch routes each job of a sweep by
    its own chip's values). None: the launcher's own setting (hydra.launcher.*)."""

    partition: str | None = None  # sbatch --partition: the nodes that have this chip
    gres: str | None = None  # sbatch --gres, e.g. gpu:1
    constraint: str | None = None  # sbatch --constraint, e.g. a node feature naming the chip
    account: str | None = None  # sbatch --account
    qos: str | None = None  # sbatch --qos
    timeout_min: int | None = None  # sbatch --time, in minutes: the job's time limit
    gpus_per_node: int | None = None  # sbatch --gpus-per-node
    cpus_per_task: int | None = None  # sbatch --cpus-per-task
    mem_gb: int | None = None  # sbatch --mem, in GB
    setup: list[str] | None = None  # shell lines run before the job, e.g. `module load corex`


@dataclass
class ChipConfig:
    """The chip a job targets. `auto` resolves to this machine's device at run time."""

    name: str = "auto"  # the chip's config name (conf/chip/)
    backend: str = "auto"  # torch device type: cpu (Triton interpreter), cuda, npu, musa
    device_name_pattern: str = ""  # regex on the device name that recognises this chip
    notes: str = ""  # advice shown to methods in the Problem (e.g. warp size, no fp64)
    slurm: SlurmConfig = field(default_factory=SlurmConfig)  # where a cluster runs it (not in any key)


@dataclass
class EvalConfig:
    """How candidates are judged."""

    cases: str = "auto"  # smoke | check | all | auto (smoke on cpu, all on a GPU)
    timeout_s: float = 300.0  # wall-clock bound on one candidate's whole evaluation
    repeats: int = 100  # timed repetitions per bench case (GPU only)
    warmup: int = 10  # untimed runs before the timed repetitions (GPU only)
    # On the CPU, also compile each correct candidate's kernels for this NVIDIA compute
    # capability (90: H100/H200), which catches what only the interpreter accepts.
    compile_for: int | None = None  # e.g. 90: also compile correct kernels for sm_90 (CPU runs)
    # Triton's compiled kernels, kept per candidate source for its next evaluation
    # (docs/design/evaluation.md); in no trial key: it changes how long a compile takes.
    compile_cache: str | None = "auto"  # folder of compiled kernels kept per source; auto: $XDG_CACHE_HOME/kgb/compile (else ~/.cache/kgb/compile); null or empty: off
    # Time the baselines of operators whose trials have not begun while the GPU stands idle
    # (kgb.baseline_scout), where the chip's book lacks them; in no trial key: the same
    # measurement, made earlier.
    baselines_ahead: bool = True


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
class ProgressConfig:
    """What a job prints while its trials run (kgb.progress)."""

    heartbeat_s: float = 60.0  # seconds without a line, while trials run, before a `still running` block (and between them); 0: none


@dataclass
class PlacementConfig:
    """Where this start of the job runs, as kgb's launcher tells it on the host that runs it
    (kgb.launch): recorded in RunStarted.config, in no key. Not set by hand."""

    scheduler_job: str | None = None  # the scheduler's job id (SLURM: <array job>_<task>); None: run here
    requeues: int = 0  # times the job was requeued (preempted, or at its time limit) before this start


@dataclass
class Config:
    """One job: conf/config.yaml picks the default option of each group."""

    method: Any = MISSING  # one of the method schemas above
    model: Any = MISSING
    source: SourceConfig = MISSING
    chip: ChipConfig = MISSING
    eval: EvalConfig = field(default_factory=EvalConfig)
    tracking: TrackingConfig = field(default_factory=TrackingConfig)
    progress: ProgressConfig = field(default_factory=ProgressConfig)
    ops: list[str] = field(default_factory=list)  # restrict a job, e.g. [aten::softmax]
    placement: PlacementConfig = field(default_factory=PlacementConfig)


def choices(group: str) -> list[str]:
    """The options of a config group: conf/<group>/*.yaml (the schemas' base_* are not options)."""
    return sorted(p.stem for p in (CONF_DIR / group).glob("*.yaml"))


def chip_config(name: str) -> ChipConfig | None:
    """The chip config conf/chip/<name>.yaml, or None where there is none; `chip=auto`
    resolves through it, so that auto and the chip it finds send the same notes."""
    path = CONF_DIR / "chip" / f"{name}.yaml"
    if not path.exists():
        return None
    values = {k: v for k, v in OmegaConf.to_container(OmegaConf.load(path)).items() if k != "defaults"}  # type: ignore[union-attr]
    return OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(ChipConfig), values))  # type: ignore[return-value]


def register() -> None:
    """Put the schemas in Hydra's ConfigStore; conf/<group>/*.yaml extend them."""
    cs = ConfigStore.instance()
    cs.store(name="kgb_config", node=Config)
    cs.store(group="method", name="base_expert", node=ExpertConfig)
    cs.store(group="method", name="base_files", node=FilesConfig)
    cs.store(group="method", name="base_oneshot", node=OneshotConfig)
    cs.store(group="method", name="base_passk", node=PasskConfig)
    cs.store(group="method", name="base_refine", node=RefineConfig)
    cs.store(group="method", name="base_transfer", node=TransferConfig)
    cs.store(group="model", name="base_none", node=ModelConfig)
    cs.store(group="model", name="base_llm", node=LLMConfig)
    cs.store(group="model", name="base_replay", node=ReplayConfig)
    cs.store(group="source", name="base_source", node=SourceConfig)
    cs.store(group="chip", name="base_chip", node=ChipConfig)
    from kgb.agents import config as agent_methods  # they extend the schemas above

    agent_methods.register()
