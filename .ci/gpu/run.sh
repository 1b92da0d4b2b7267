#!/usr/bin/env bash
# Runs on the GPU machine (no Java there; the bundle from .ci/gpu/bundle.sh brings its own):
#   1. ptxas check of the hand-written kernels, the engine's and the bench's (diagnostic only; the driver JIT-compiles it at run time)
#   2. the GPU tests of the given packages (default: dev.transferengine.cuda; skip with TESTS=0)
#   3. the GPU JMH suites from te-bench.jar (skip with BENCH=0; BENCH=engine runs only EngineStagingBenchmark):
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
if [ "${TESTS:-1}" != 0 ]; then
  "${JAVA[@]}" -cp "$CP" GpuTestLauncher "${@:-dev.transferengine.cuda}" 2>&1 | tee "$LOG/tests.log"
  rc=${PIPESTATUS[0]}
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
