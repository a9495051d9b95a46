#!/usr/bin/env bash
# Set up the project in ./.venv: Python venv, CPU PyTorch, the package with all extras.
# Safe to re-run. Usage: ./setup.sh   (then use .venv/bin/sefora, .venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")"
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
# The CPU build of torch first: a plain `torch` requirement would pull a multi-GB CUDA build.
.venv/bin/python -m pip install --quiet "torch==2.13.0"
.venv/bin/python -m pip install --quiet -e ".[local,report,train,dev,demo]"
echo "setup.sh: ready (.venv)"
