#!/usr/bin/env bash
# A/B of the tcp transport's 1 MiB write throughput against iperf3, cases interleaved so that drift hits all alike.
# Prints one line per run (case name, GB/s, p50 us); full JSON lines go to $LOG.
#   JAVA=...  IPERF3=...  RUNS=3  DURATION=3s  BEFORE=before.jar (tcp classes put first on the class path: "before")
#   CASES="name|args;name|args"  (default: 1 NIC as is (auto-tuned buffers), fixed 4 MiB buffers, spin, a 16 MiB
#   region; 4 NICs)
set -uo pipefail
cd "$(dirname "$0")"
JAVA=${JAVA:-java}
IPERF3=${IPERF3:-iperf3}
RUNS=${RUNS:-3}
DURATION=${DURATION:-3s}
LOG=${LOG:-/tmp/tcp-ab.log}
JAR=target/te-bench.jar
CASES=${CASES:-"1nic|--nics 1;1nic-fixed4M|--nics 1 --option tcp.socketBufferBytes=4194304;1nic-spin|--nics 1 --idle spin;\
1nic-region16M|--nics 1 --region 16MiB;4nic|--nics 4;4nic-pinned|--nics 4 --routing pinned"}

bench() {
  local name=$1 cp=$2; shift 2
  local line
  line=$("$JAVA" --enable-native-access=ALL-UNNAMED -cp "$cp" dev.transferengine.bench.TeBench write \
    --transport tcp --size 1MiB --duration "$DURATION" "$@" 2>/dev/null | tail -1)
  echo "$name $line" >>"$LOG"
  echo "$name $(grep -o '"gb_per_s":[0-9.]*' <<<"$line" | cut -d: -f2) $(grep -o '"p50_us":[0-9.]*' <<<"$line" | cut -d: -f2)"
}

for run in $(seq "$RUNS"); do
  "$IPERF3" -s -1 -D >/dev/null 2>&1
  sleep 0.3
  echo "iperf3 $("$IPERF3" -c 127.0.0.1 -t "${DURATION%s}" -f g | grep receiver)" | tee -a "$LOG"
  IFS=';' read -ra cases <<<"$CASES"
  for entry in "${cases[@]}"; do
    read -ra args <<<"${entry#*|}"
    [[ -n "${BEFORE:-}" ]] && bench "before-${entry%%|*}" "$BEFORE:$JAR" "${args[@]}"
    bench "${entry%%|*}" "$JAR" "${args[@]}"
  done
done
