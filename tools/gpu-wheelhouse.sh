#!/usr/bin/env bash
# Collect, on a machine with internet, the wheels that an offline GPU host lacks to run kgb.
#
# The GPU host is assumed to have Python 3.12 with its own CUDA builds of torch and Triton
# (and numpy, pandas). Everything else kgb imports is downloaded here as x86-64 manylinux
# wheels for CPython 3.12 into .whl/ at the repository root; the host's own torch, triton,
# numpy and pandas are never replaced.
#
# usage (from the repository root):   tools/gpu-wheelhouse.sh [MORE_REQUIREMENTS ...]
# then on the GPU host, from the repository root:
#   python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
#   export PYTHONPATH=/tmp/site:$PWD
set -euo pipefail

root=$(git rev-parse --show-toplevel)
out="$root/.whl"
mkdir -p "$out"  # ignored by .gitignore

# Hydra's grammar runtime is published as a source archive only; it is pure Python, so a
# wheel built here installs anywhere.
python3 -m pip wheel -q --no-deps --wheel-dir "$out" 'antlr4-python3-runtime==4.9.3'

# mlflow-skinny: the tracking client and its SQLite store without the UI server's weight.
python3 -m pip download -q --only-binary=:all: \
  --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  --find-links "$out" --dest "$out" \
  'hydra-core==1.3.2' 'omegaconf>=2.3' 'mlflow-skinny>=3.17,<3.18' sqlalchemy alembic pydantic \
  anthropic openai rich hydra-submitit-launcher submitit cloudpickle "$@"

# pip pulls numpy (and friends) in as dependencies: the host's builds must win
rm -f "$out"/numpy-* "$out"/torch-* "$out"/triton-* "$out"/pandas-* "$out"/nvidia_*
du -sh "$out"
