#!/usr/bin/env bash
# Installs the dependencies, configures and builds foldc into build/: every
# target, or only the targets given (`bash scripts/build.sh foldc`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DFOLDC_WERROR=ON >/dev/null
if [ $# -gt 0 ]; then
  cmake --build build -j"$(nproc)" --target "$@"
else
  cmake --build build -j"$(nproc)"
fi
