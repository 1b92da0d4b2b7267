#!/usr/bin/env bash
# Runs on the GPU host: builds libfabric 2.1.0 with CUDA (FI_HMEM; shm, tcp and rxm) and its fabtests from the tree
# that .ci/gpu/libfabric-prepare.sh packed, into $1 (default /tmp/libfabric-cuda), in about two minutes on 16 cores,
# and checks that shm offers FI_HMEM. Needs gcc, make and the CUDA toolkit (nvcc's include/ and lib64/) there.
#   .ci/gpu/libfabric-cuda.sh [prefix]     (then: export TE_FABRIC_LIBRARY=<prefix>/lib/libfabric.so.1)
set -euo pipefail
cd "$(dirname "$0")/../.."
prefix=${1:-/tmp/libfabric-cuda}
tree=.ci/gpu/target/bundle/libfabric-2.1.0-autogen.tar.xz
cuda=${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc | head -1)")")")}
[ -f "$cuda/include/cuda.h" ] || { echo "no CUDA toolkit (include/cuda.h) at $cuda; set CUDA_HOME" >&2; exit 1; }
[ -f "$tree" ] || { echo "$tree is missing: run .ci/gpu/libfabric-prepare.sh on a machine with autotools" >&2; exit 1; }
src=$(mktemp -d)
tar -C "$src" -xf "$tree"
jobs=$(nproc)
cd "$src/libfabric-2.1.0"
./configure -q --prefix="$prefix" --with-cuda="$cuda" --disable-efa --disable-verbs --disable-psm2 --disable-psm3 \
  --disable-opx --disable-usnic --disable-ucx --disable-cxi --disable-lpp --enable-tcp --enable-shm --enable-rxm \
  >/dev/null
make -s -j"$jobs" >/dev/null 2>&1
make -s install >/dev/null
cd fabtests
./configure -q --prefix="$prefix" --with-libfabric="$prefix" --with-cuda="$cuda" >/dev/null
make -s -j"$jobs" >/dev/null 2>&1
make -s install >/dev/null
export LD_LIBRARY_PATH=$prefix/lib:$cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
"$prefix/bin/fi_info" --version
"$prefix/bin/fi_info" -p shm -c FI_HMEM | head -8
