#!/usr/bin/env bash
# Runs on the GPU machine (no Java there; the bundle from .ci/gpu/bundle.sh brings its own):
#   1. ptxas check of the hand-written kernel (diagnostic only; the driver JIT-compiles it at run time)
#   2. the GPU tests of the given packages (default: dev.transferengine.cuda)
#   3. the watcher latency and staging bandwidth benchmarks (skip with BENCH=0; BENCH=engine runs only the
#      engine-level device->device staging benchmark)
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
fi
rc=0
"${JAVA[@]}" -cp "$CP" GpuTestLauncher "${@:-dev.transferengine.cuda}" 2>&1 | tee "$LOG/tests.log"
rc=${PIPESTATUS[0]}
if [ "${BENCH:-1}" = engine ]; then
  "${JAVA[@]}" -cp "$CP" dev.transferengine.cuda.EngineStagingBenchmark 256 2 2>&1 | tee "$LOG/bandwidth.log"
fi
if [ "${BENCH:-1}" = 1 ]; then
  "${JAVA[@]}" -cp "$CP" dev.transferengine.cuda.UvmWatcherLatencyBenchmark "${ITERATIONS:-20000}" 2 4 2>&1 \
    | tee "$LOG/latency.log"
  "${JAVA[@]}" -cp "$CP" dev.transferengine.cuda.StagingBandwidthBenchmark 256 2>&1 | tee "$LOG/bandwidth.log"
  "${JAVA[@]}" -cp "$CP" dev.transferengine.cuda.EngineStagingBenchmark 256 2 2>&1 | tee -a "$LOG/bandwidth.log"
fi
exit $rc
