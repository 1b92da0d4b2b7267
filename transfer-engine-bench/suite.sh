#!/usr/bin/env bash
# Runs the benchmark table of docs/benchmarks.md: iperf3 beside te-bench on loopback, every case RUNS times.
# Prints one line per run: the case name, then iperf3's summary or te-bench's JSON line.
#   JAVA=/path/to/java  IPERF3=/path/to/iperf3  RUNS=2  DURATION=5s  FABRIC=1 (also the fabric transport)
set -uo pipefail
cd "$(dirname "$0")"
JAVA=${JAVA:-java}
IPERF3=${IPERF3:-iperf3}
RUNS=${RUNS:-2}
DURATION=${DURATION:-5s}
JAR=target/te-bench.jar

bench() {
  local name=$1; shift
  local line
  line=$("$JAVA" -jar "$JAR" write --duration "$DURATION" "$@" 2>/tmp/te-bench-$$.err | tail -1)
  if [[ -z "$line" ]]; then line="failed: $(grep -m1 -E 'Exception|Error' /tmp/te-bench-$$.err)"; fi
  echo "$name $line"
  grep -m1 -E 'requests failed' /tmp/te-bench-$$.err | sed "s/^/  $name: /"
}

iperf() {
  "$IPERF3" -s -1 -D >/dev/null 2>&1
  sleep 1
  echo "iperf3 $("$IPERF3" -c 127.0.0.1 -t "${DURATION%s}" -f g | grep receiver)"
}

for run in $(seq "$RUNS"); do
  echo "# run $run"
  command -v "$IPERF3" >/dev/null && iperf
  bench tcp-write-1MiB-1nic --nics 1 --size 1MiB
  bench tcp-write-1MiB-4nic --nics 4 --size 1MiB
  bench tcp-write-1MiB-4nic-pinned --nics 4 --size 1MiB --routing pinned
  bench tcp-paged-1KiBx256 --op paged --page-size 1KiB --pages 256
  bench tcp-imm-backoff --op imm
  bench tcp-imm-spin --op imm --idle spin
  if [[ "${FABRIC:-0}" == 1 ]]; then
    for provider in shm tcp; do
      bench fabric-$provider-write-1MiB --transport fabric --provider $provider --size 1MiB
      # 32 x 256 pages stays under the transport's 16384 outstanding operations (fabric.maxOps)
      bench fabric-$provider-paged-1KiBx256 --transport fabric --provider $provider --op paged --window 32
      bench fabric-$provider-imm-spin --transport fabric --provider $provider --op imm --idle spin
    done
  fi
done
rm -f /tmp/te-bench-$$.err
