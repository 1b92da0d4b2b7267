#!/usr/bin/env bash
# Issue 11's table on the h200 host: every te-bench case beside its C anchor, ROUNDS times, plus JFR profiles of the
# slow rows (PROFILE=1). Runs from a folder that holds (see bundle-h200.sh):
#   jre/ (jlink'd Java 25 with jdk.jfr), te-bench.jar, bin/ (iperf3, tcp_pingpong), lib/ (iperf3's libraries),
#   lf/ (libfabric 2.1 with fabtests: lf/bin/fi_rma_bw, fi_rma_pingpong; lf/lib/libfabric.so.1)
# Prints one line per run: the case name, then the JSON line (te-bench) or the anchor's figure. Results and JFR
# recordings go to $OUT when it is set.
set -uo pipefail
cd "$(dirname "$0")"
here=$PWD
OUT=${OUT:-/tmp/h200-table}
mkdir -p "$OUT"
JAVA=$here/jre/bin/java
ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-3s}
LF21=$here/lf/lib/libfabric.so.1
export PATH=$here/bin:$here/lf/bin:$PATH
log=$OUT/table.log

say() { echo "$*" | tee -a "$log"; }

te() {
  local name=$1; shift
  local line
  line=$(JAVA_TOOL_OPTIONS=${JFR:-} timeout 60 "$JAVA" -jar te-bench.jar write --duration "$DURATION" --warmup 1s "$@" \
    2>"$OUT/err.txt" | tail -1)
  [[ -z "$line" ]] && line="failed: $(grep -m1 -E 'Exception|Error' "$OUT/err.txt")"
  say "$name $line"
  grep -m1 -E 'requests failed' "$OUT/err.txt" | sed "s/^/  $name: /" | tee -a "$log"
}

iperf() {
  LD_LIBRARY_PATH=$here/lib iperf3 -s -1 -D >/dev/null 2>&1
  sleep 0.5
  say "anchor-iperf3-1stream $(LD_LIBRARY_PATH=$here/lib iperf3 -c 127.0.0.1 -t 3 -f g | grep receiver)"
}

pingpong() {
  tcp_pingpong server 18515 8 100000 10000 &
  sleep 0.3
  say "anchor-tcp-pingpong-8B $(tcp_pingpong client 127.0.0.1 18515 8 100000 10000)"
  wait
}

# fabtests: server first, then the client; the client's result table goes to the log.
fab() {
  local name=$1 prov=$2; shift 2
  local addr=(-s 127.0.0.1) client_extra=(127.0.0.1)
  if [[ $prov == shm ]]; then addr=(-E); client_extra=(-B 9229 127.0.0.1); fi
  LD_LIBRARY_PATH=$here/lf/lib timeout 30 "$@" -p "$prov" "${addr[@]}" >"$OUT/fab-server.txt" 2>&1 &
  sleep 0.5
  say "$name $(LD_LIBRARY_PATH=$here/lf/lib timeout 30 "$@" -p "$prov" "${addr[@]}" "${client_extra[@]}" 2>&1 | grep -E '^ *[0-9]' | tail -1)"
  wait
}

say "# $(date -u +%FT%TZ) $(uname -r) $(nproc) cpus; $(grep -m1 'model name' /proc/cpuinfo)"
say "# system libfabric: $(ldconfig -p | grep -m1 libfabric.so.1)"
"$JAVA" -version 2>&1 | head -1 | sed 's/^/# /' | tee -a "$log"

if [[ ${SHM_DIAG:-1} == 1 ]]; then
  # which shared-memory names the system libfabric's shm provider announces and creates
  coproc SERVE { exec "$JAVA" -cp te-bench.jar dev.transferengine.bench.TeBench serve --transport fabric \
    --provider shm 2>&1; }
  read -r -t 20 line <&"${SERVE[0]}"; say "# shm serve: $line"
  while read -r -t 1 line <&"${SERVE[0]}"; do say "# shm serve: $line"; done
  say "# /dev/shm: $(ls /dev/shm | tr '\n' ' ')"
  kill "$SERVE_PID" 2>/dev/null; wait "$SERVE_PID" 2>/dev/null
fi

for round in $(seq "$ROUNDS"); do
  say "# round $round"
  iperf
  pingpong
  for prov in tcp shm; do
    fab anchor-fi_rma_bw-writedata-1MiB-$prov $prov fi_rma_bw -e rdm -o writedata -S 1048576 -I 2000 -W 64 -w 100
    fab anchor-fi_rma_pingpong-8B-$prov $prov fi_rma_pingpong -e rdm -o writedata -S 8 -I 20000 -w 1000
  done
  te tcp-write-1MiB-1nic --nics 1 --size 1MiB
  te tcp-write-1MiB-4nic --nics 4 --size 1MiB
  te tcp-write-1MiB-4nic-pinned --nics 4 --size 1MiB --routing pinned
  te tcp-paged-1KiBx256 --op paged --page-size 1KiB --pages 256
  te tcp-imm-spin --op imm --idle spin
  for prov in shm tcp; do
    te fabric-$prov-write-1MiB --transport fabric --provider $prov --size 1MiB
    te fabric-$prov-paged-1KiBx256 --transport fabric --provider $prov --op paged --window 32
    te fabric-$prov-imm-spin --transport fabric --provider $prov --op imm --idle spin
  done
done

if [[ -f $LF21 ]]; then
  say "# the fabric cases on libfabric 2.1 ($LF21)"
  for prov in shm tcp; do
    te fabric21-$prov-write-1MiB --transport fabric --provider $prov --size 1MiB --option fabric.library=$LF21
    te fabric21-$prov-paged-1KiBx256 --transport fabric --provider $prov --op paged --window 32 \
      --option fabric.library=$LF21
    te fabric21-$prov-imm-spin --transport fabric --provider $prov --op imm --idle spin --option fabric.library=$LF21
  done
fi

if [[ ${PROFILE:-0} == 1 ]]; then
  say "# JFR (settings=profile) of the slow rows; both JVMs record"
  mkdir -p /tmp/jfr
  prof() {
    local name=$1; shift
    JFR="-XX:StartFlightRecording=filename=/tmp/jfr/$name-%p.jfr,settings=profile" te "jfr-$name" "$@"
  }
  prof fabric-shm-write --transport fabric --provider shm --size 1MiB
  prof fabric-tcp-imm --transport fabric --provider tcp --op imm --idle spin
  prof fabric-shm-paged --transport fabric --provider shm --op paged --window 32
  prof tcp-imm --op imm --idle spin
  prof tcp-write-1nic --nics 1 --size 1MiB
  prof tcp-paged --op paged --page-size 1KiB --pages 256
  tar -C /tmp -cJf "$OUT/jfr.tar.xz" jfr
fi
rm -f "$OUT/err.txt" "$OUT/fab-server.txt"
