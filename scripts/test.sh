#!/usr/bin/env bash
# The whole test suite from a clean clone: deps, build, then every lit suite and unit test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"
