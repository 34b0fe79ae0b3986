#!/usr/bin/env bash
# Installs every Debian 12 package foldc needs to build, test and benchmark.
# Idempotent; run as root (or through sudo). Skips apt when all are present.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache git python3
  antlr4 default-jre-headless libantlr4-runtime-dev   # grammar/ -> parser
  libeigen3-dev                                       # runtime kernels
  libopenblas-dev                                     # runtime: linear layers' GEMMs
  libclang-cpp14-dev libclang-14-dev llvm-14-dev      # import "h.h" via libTooling
  llvm-14-tools                                       # lit + FileCheck
  clang-14 libclang-rt-14-dev libomp-14-dev           # libFuzzer targets, sanitizer builds,
                                                      # generated programs built with clang
  clang-format-14                                     # scripts/format.sh (checked in .ci/run)
  libgtest-dev                                        # unit tests
  nlohmann-json3-dev                                  # JSONL data, safetensors headers
  libcli11-dev                                        # foldc command line
  python3-matplotlib                                  # learning-curve plots (run.sh)
  graphviz                                            # drawing foldc --emit=dot
  libopenmpi-dev openmpi-bin                          # data-parallel training (mpirun)
  pybind11-dev python3-pybind11 python3-dev python3-numpy  # a model as a Python module (PYTHON)
  python3-pytest                                      # the Python module's tests
  python3-nbclient python3-ipykernel                  # the notebook run in the suite
  libboost-dev                                        # NAME_driver serve (Beast, Asio)
  libcpp-httplib-dev pkg-config                       # bench/serve_load's HTTP client
)
# `install-deps.sh --bench` adds what only the benchmarks' peers need.
if [ "${1:-}" = --bench ]; then
  packages+=(python3-torch)                           # bench/decode_bench.sh's PyTorch loop
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
