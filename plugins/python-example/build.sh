#!/usr/bin/env bash
# Builds py_word_limit.wasm with componentize-py (pip install componentize-py).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
rm -rf build && mkdir build
componentize-py -d ../../wit/0.1.0 -w assertion-plugin bindings build
PYTHONPATH=build componentize-py -d ../../wit/0.1.0 -w assertion-plugin componentize -p build -p . app -o py_word_limit.wasm
