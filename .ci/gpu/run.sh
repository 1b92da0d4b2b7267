#!/usr/bin/env bash
# Runs on the GPU machine (no Java there; the bundle from .ci/gpu/bundle.sh brings its own):
#   1. ptxas check of the hand-written kernels, the engine's and the bench's (diagnostic only; the driver JIT-compiles it at run time)
#   2. libfabric 2.1 with CUDA (FI_HMEM) and its fabtests, built by .ci/gpu/libfabric-cuda.sh from the bundle's
#      prepared tree (.ci/gpu/libfabric-prepare.sh; skip with LIBFABRIC=0): the fabric tests and te-bench load it
#   3. the GPU tests of the given packages or classes (default: dev.transferengine.cuda,
#      dev.transferengine.FabricShmGpuTest and dev.transferengine.FabricShmGpuAttackTest; skip with TESTS=0)
#   4. te-bench's GPU rows (skip with TEBENCH=0): fabric/shm GPU to GPU with --compare against fi_rma_bw -D cuda at
#      1 MiB and 16 MiB (window 16, and 64 as fi_rma_bw's -W), the same host to host, and tcp staging GPU to GPU;
#      one JSON line each in te-bench.jsonl
#   5. the GPU JMH suites from te-bench.jar (skip with BENCH=0; BENCH=engine runs only EngineStagingBenchmark):
#      UvmWatcherLatencyBenchmark (latency.log), StagingBandwidthBenchmark and EngineStagingBenchmark
#      (bandwidth.log), each also as $OUT/jmh-*.json; JMH="..." replaces the JMH options (default -f 1 -wi 2 -i 3,
#      e.g. JMH="-f 1 -wi 1 -i 1 -p chunkMiB=4" for a quick look)
# Logs go to stdout and, when $OUT is set, to $OUT/*.log.
set -uo pipefail
cd "$(dirname "$0")/../.."
B=.ci/gpu/target/bundle
LOG=${OUT:-/tmp}
JAVA=("$B/jre/bin/java" --enable-native-access=ALL-UNNAMED -Xss1m -XX:+UseParallelGC)
CP="$B/classes:$B/test-classes:$B/launcher:$B/lib/*"
nvidia-smi -L || true
PTXAS=$(ls /usr/local/cuda*/bin/ptxas 2>/dev/null | head -1)
if [ -n "$PTXAS" ]; then
  "$PTXAS" -arch=sm_90 -v "$B/classes/dev/transferengine/cuda/watcher-kernels.ptx" -o /tmp/watcher-kernels.cubin 2>&1 \
    | tee "$LOG/ptxas.log"
  "$PTXAS" -arch=sm_90 -v "$B/bench-kernels.ptx" -o /tmp/bench-kernels.cubin 2>&1 | tee -a "$LOG/ptxas.log"
fi
rc=0
FABRIC=/tmp/libfabric-cuda
FABRIC_OPTS=()
if [ "${LIBFABRIC:-1}" != 0 ] && [ -f "$B/libfabric-2.1.0-autogen.tar.xz" ]; then
  start=$(date +%s)
  if .ci/gpu/libfabric-cuda.sh "$FABRIC" 2>&1 | tee "$LOG/libfabric.log"; then
    echo "libfabric with CUDA built in $(($(date +%s) - start)) s" | tee -a "$LOG/libfabric.log"
    CUDA_LIB=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc | head -1)")")")/lib64
    export LD_LIBRARY_PATH=$CUDA_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export TE_FABRIC_LIBRARY=$FABRIC/lib/libfabric.so.1 FABTESTS=$FABRIC
    JAVA+=(-Dte.fabric.version=2.1)
    FABRIC_OPTS=(--option "fabric.library=$TE_FABRIC_LIBRARY")
  else
    echo "libfabric with CUDA failed to build; see libfabric.log" && rc=1
  fi
fi
if [ "${TESTS:-1}" != 0 ]; then
  [ $# != 0 ] || set -- dev.transferengine.cuda dev.transferengine.FabricShmGpuTest \
    dev.transferengine.FabricShmGpuAttackTest
  "${JAVA[@]}" -cp "$CP" GpuTestLauncher "$@" 2>&1 | tee "$LOG/tests.log"
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1
fi
tebench() { # tebench ARGS...: one te-bench write, its JSON line (or the failure) into te-bench.jsonl
  echo "te-bench write $*" | tee -a "$LOG/te-bench.log"
  local line
  line=$("${JAVA[@]}" -jar "$B/te-bench.jar" write --duration 3s --warmup 1s "$@" 2>>"$LOG/te-bench.log" | tail -1)
  echo "${line:-{\"failed\": \"te-bench write $*\"}}" | tee -a "$LOG/te-bench.jsonl"
}
if [ "${TEBENCH:-1}" != 0 ] && [ -n "${TE_FABRIC_LIBRARY:-}" ]; then
  for size in 1MiB 16MiB; do
    tebench --transport fabric --provider shm --device cuda:0 --size "$size" --compare --fabtests "$FABRIC" \
      "${FABRIC_OPTS[@]}"
    tebench --transport fabric --provider shm --device cuda:0 --size "$size" --window 64 --compare \
      --fabtests "$FABRIC" "${FABRIC_OPTS[@]}"
    tebench --transport fabric --provider shm --size "$size" --compare --fabtests "$FABRIC" "${FABRIC_OPTS[@]}"
  done
  tebench --transport tcp --device cuda:0 --size 16MiB
fi
# JMH forks its measuring JVMs with this JVM's options and class path (te-bench.jar alone)
read -r -a JMH_OPTS <<<"${JMH:--f 1 -wi 2 -i 3}"
jmh() { # jmh NAME LOG [tee options]: runs the suites matching NAME, fails on a benchmark error
  "${JAVA[@]}" -jar "$B/te-bench.jar" jmh "$1" "${JMH_OPTS[@]}" -foe true -rf json -rff "$LOG/jmh-$1.json" 2>&1 \
    | tee ${3:-} "$LOG/$2"
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1
}
if [ "${BENCH:-1}" = engine ]; then
  jmh EngineStagingBenchmark bandwidth.log
fi
if [ "${BENCH:-1}" = 1 ]; then
  jmh UvmWatcherLatencyBenchmark latency.log
  jmh StagingBandwidthBenchmark bandwidth.log
  jmh EngineStagingBenchmark bandwidth.log -a
fi
exit $rc
