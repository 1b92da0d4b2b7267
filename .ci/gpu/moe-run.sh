#!/usr/bin/env bash
# Runs on the accelerator host from the bundle .ci/gpu/moe-bundle.sh built (no Java there): the ptxas check of
# moe-kernels.ptx, MoeGpuDispatcherTest (tcp staged by the engine, fabric/shm FI_HMEM, fabric/tcp staged by the
# dispatcher, the experts' kernel against the CPU's bytes),
# then te-bench moe --gpu and the CPU rows (routed beside padded) on the same machine, each on tcp, fabric/tcp and
# fabric/shm (LAYERS measured layers, default 40; CPU_ARGS more arguments for the CPU rows, e.g. --stages; IDLES, e.g.
# "yield spin", the CPU rows at IDLE_TOKENS tokens again with those idle strategies). Logs and tables go to $OUT.
set -uo pipefail
B=$(cd "$(dirname "$0")" && pwd)
LOG=${OUT:-/tmp}
LAYERS=${LAYERS:-40}
JAVA=("$B/jre/bin/java" --enable-native-access=ALL-UNNAMED -Xss1m -XX:+UseParallelGC)
CUDA=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc | head -1)")")")
FABRIC=/tmp/libfabric-moe
rc=0
nvidia-smi -L
"$CUDA/bin/ptxas" -arch=sm_90 -v "$B/moe-kernels.ptx" -o /tmp/moe-kernels.cubin 2>&1 | tee "$LOG/ptxas.log" | tail -3
if [ ! -e "$FABRIC/lib/libfabric.so.1" ]; then # libfabric 2.1 with CUDA (FI_HMEM on shm), without its fabtests
  start=$(date +%s)
  src=$(mktemp -d) && tar -C "$src" -xJf "$B/libfabric-2.1.0-autogen.tar.xz"
  (cd "$src/libfabric-2.1.0" && ./configure -q --prefix="$FABRIC" --with-cuda="$CUDA" --disable-efa --disable-verbs \
    --disable-psm2 --disable-psm3 --disable-opx --disable-usnic --disable-ucx --disable-cxi --disable-lpp \
    --enable-tcp --enable-shm --enable-rxm >/dev/null && make -s -j"$(nproc)" >/dev/null 2>&1 && make -s install \
    >/dev/null) || echo "libfabric with CUDA failed to build"
  echo "libfabric built in $(($(date +%s) - start)) s"
fi
export LD_LIBRARY_PATH=$FABRIC/lib:$CUDA/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export TE_FABRIC_LIBRARY=$FABRIC/lib/libfabric.so.1
"$FABRIC/bin/fi_info" -p shm -c FI_HMEM 2>&1 | head -4
if [ "${TESTS:-1}" != 0 ]; then
  timeout 180 "${JAVA[@]}" -cp "$B/te-bench.jar:$B/test-classes:$B/launcher:$B/lib/*" GpuTestLauncher \
    dev.transferengine.moe.MoeGpuDispatcherTest 2>&1 | tee "$LOG/tests.log" | grep -v '^\[' | tail -30
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1
fi
bench() { # bench NAME ARGS...: one te-bench moe table into $LOG/NAME.md
  timeout "${BENCH_TIMEOUT:-200}" "${JAVA[@]}" -jar "$B/te-bench.jar" moe --layers "$LAYERS" --warmup 5 \
    --option "fabric.library=$TE_FABRIC_LIBRARY" "${@:2}" 2>"$LOG/$1.err" | tee "$LOG/$1.md"
  [ "${PIPESTATUS[0]}" = 0 ] || { rc=1; tail -20 "$LOG/$1.err"; }
}
if [ "${BENCH:-1}" != 0 ]; then
  bench moe-gpu --gpu --transports "${TRANSPORTS:-tcp,fabric/tcp,fabric/shm}"
  # shellcheck disable=SC2086 # CPU_ARGS are words, e.g. "--stages"
  [ "${CPU:-1}" = 0 ] || bench moe-cpu --transports "${TRANSPORTS:-tcp,fabric/tcp,fabric/shm}" ${CPU_ARGS:-}
  for idle in ${IDLES:-}; do # the CPU rows again (IDLE_TOKENS, default 1) with the engines' other idle strategies
    # shellcheck disable=SC2086
    bench "moe-cpu-$idle" --transports "${TRANSPORTS:-tcp,fabric/tcp,fabric/shm}" --tokens "${IDLE_TOKENS:-1}" \
      --idle "$idle" ${CPU_ARGS:-}
  done
fi
exit $rc
