#!/usr/bin/env bash
# The tcp bulk-path A/B of issue 22 item 3 (docs/benchmarks.md, "tcp bandwidth"): the three bandwidth cases, each
# beside its iperf3 anchor (--compare), jars A and B interleaved for 3 rounds, each round also running bin/tcp_stream
# (the C stream with te-bench's 64 MiB footprint, plain and with huge pages, with a 1 MiB one, read into 1 KiB
# pages shuffled over 64 MiB beside the paged 256-page case, issue 22's paged rows, and as 4 streams into one 64 MiB
# region beside the 4-NIC case); then one-round
# variants of the 1-NIC case (region size, socket buffers, spin) and a perf (cpu-clock, all CPUs) + JFR profile of it.
# Runs from a folder holding jre/ (jlink'd, with jdk.jfr), te-bench-main.jar (A), te-bench.jar (B; absent: A again,
# with BOPT), bin/iperf3 + lib/ (as bundle-h200.sh gathers them) and bin/perf + perflib/ (Debian 12's perf with its
# libraries, less libc). About 120 s on the 16-core H200 host. Everything but run.log, the perf reports and two
# tarballs goes to /tmp: a device run returns a limited number of files from $OUT.
#   OUT=/somewhere BOPT="--option tcp.socketBufferBytes=0" ./tcp-bw.sh
set -uo pipefail
cd "$(dirname "$0")"
here=$PWD
OUT=${OUT:-/tmp/tcpbw}
mkdir -p "$OUT"
JAVA=$here/jre/bin/java
export IPERF3=$here/bin/iperf3 LD_LIBRARY_PATH=$here/lib
log=$OUT/run.log
SECONDS=0
LIMIT=${LIMIT:-178}
say() { echo "$*" | tee -a "$log"; }
d=(--duration 1500ms --warmup 500ms)

# run NAME JAR ARGS...: one te-bench write; prints the JSON line (engine and anchor figures)
run() {
  local name=$1 jar=$2; shift 2
  if ((SECONDS >= LIMIT)); then say "$name skipped (time)"; return; fi
  local line
  line=$(timeout 30 "$JAVA" --enable-native-access=ALL-UNNAMED -jar "$jar" write --transport tcp "$@" 2>>/tmp/tcpbw-err.txt | tail -1)
  say "[$SECONDS] $name $line"
}

# stream NAME REGION_MIB HUGE [PAGE_BYTES [STREAMS]]: the C anchor with te-bench's footprint (bin/tcp_stream,
# bundle-h200.sh builds it); with PAGE_BYTES (0: contiguous) the receiver reads into shuffled pages, te-bench's
# `--op paged` footprint; with STREAMS that many connections share the regions, te-bench's `--nics N --routing pinned`
stream() {
  if ((SECONDS >= LIMIT)) || [[ ! -x $here/bin/tcp_stream ]]; then say "$1 skipped"; return; fi
  say "[$SECONDS] $1 $(timeout 10 "$here/bin/tcp_stream" "$2" "$3" 1.5 5298 ${4:-} ${5:-} 2>&1 | tail -1)"
}

say "# $(nproc) cpus; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2); kernel $(uname -r)"
lscpu 2>/dev/null | grep -E 'Thread|Core|Socket|L1d|L2|L3|NUMA node0' | tee -a "$log"
for f in /proc/sys/net/core/rmem_max /proc/sys/net/core/wmem_max /proc/sys/net/ipv4/tcp_rmem /proc/sys/net/ipv4/tcp_wmem \
  /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag /proc/sys/kernel/perf_event_paranoid \
  /proc/sys/kernel/kptr_restrict; do say "$f: $(cat $f 2>&1)"; done
say "$(ldd --version 2>&1 | head -1)"

A=$here/te-bench-main.jar
B=$here/te-bench.jar
[[ -f $B ]] || B=$A
BOPT=${BOPT-}
say "B: $B $BOPT"
for round in 1 2 3; do
  say "# round $round"
  run r$round-1nic-A "$A" "${d[@]}" --nics 1 --size 1MiB --compare
  run r$round-1nic-B "$B" "${d[@]}" --nics 1 --size 1MiB --compare ${BOPT:-}
  stream r$round-stream64 64 0
  stream r$round-stream64-huge 64 1
  stream r$round-stream1 1 0
  stream r$round-stream64-pages1KiB 64 0 1024
  run r$round-4nic-A "$A" "${d[@]}" --nics 4 --size 1MiB --routing pinned --compare
  run r$round-4nic-B "$B" "${d[@]}" --nics 4 --size 1MiB --routing pinned --compare ${BOPT:-}
  stream r$round-stream64-4streams 64 0 0 4
  run r$round-read-A "$A" "${d[@]}" --op read --size 1MiB --compare
  run r$round-read-B "$B" "${d[@]}" --op read --size 1MiB --compare ${BOPT:-}
  run r$round-paged256-A "$A" "${d[@]}" --op paged --page-size 1KiB --pages 256 --window 32 --region 64MiB --compare
  run r$round-paged256-B "$B" "${d[@]}" --op paged --page-size 1KiB --pages 256 --window 32 --region 64MiB --compare ${BOPT:-}
done

say "# variants, 1 NIC, jar A, one round"
run v-region16M "$A" "${d[@]}" --nics 1 --size 1MiB --region 16MiB
run v-region1M "$A" "${d[@]}" --nics 1 --size 1MiB --region 1MiB
# (no GLIBC_TUNABLES=glibc.malloc.hugetlb=1 variant: it gives te-bench's regions no huge page, AnonHugePages 0 kB in
# both JVMs on the 2-core VM; tcp_stream's HUGE 1 is the huge-page variant of the same footprint)
run v-sbb1M "$A" "${d[@]}" --nics 1 --size 1MiB --option tcp.socketBufferBytes=1048576
run v-spin "$A" "${d[@]}" --nics 1 --size 1MiB --idle spin --compare

say "# profile: perf -a (cpu-clock) and JFR of 1 NIC, jar A ($SECONDS)"
if ((SECONDS < LIMIT)); then
  mkdir -p /tmp/jfr
  JAVA_TOOL_OPTIONS="-XX:StartFlightRecording=filename=/tmp/jfr/p-%p.jfr,settings=profile" \
    timeout 30 "$JAVA" --enable-native-access=ALL-UNNAMED -jar "$A" write --transport tcp --nics 1 --size 1MiB \
    --duration 3s --warmup 1s >"$OUT/prof-bench.txt" 2>>/tmp/tcpbw-err.txt &
  bench=$!
  sleep 3
  PERFLIB=$here/perflib
  LD_LIBRARY_PATH=$PERFLIB timeout 10 "$here/bin/perf" record -a -g -e cpu-clock -F 1999 -o /tmp/perf.data -- sleep 2 \
    >"$OUT/perf-record.txt" 2>&1
  ps -eLo pid,tid,comm,pcpu --sort=-pcpu 2>/dev/null | head -25 >"$OUT/threads.txt"
  wait $bench
  tail -1 "$OUT/prof-bench.txt" | tee -a "$log"
  LD_LIBRARY_PATH=$PERFLIB timeout 25 "$here/bin/perf" report -i /tmp/perf.data --no-children --sort comm --stdio \
    >"$OUT/perf-comm.txt" 2>&1
  LD_LIBRARY_PATH=$PERFLIB timeout 25 "$here/bin/perf" report -i /tmp/perf.data --no-children --sort comm,sym -g none \
    --percent-limit 0.4 --stdio >"$OUT/perf-sym.txt" 2>&1
  LD_LIBRARY_PATH=$PERFLIB timeout 25 "$here/bin/perf" report -i /tmp/perf.data --no-children --sort comm,sym -G \
    --percent-limit 3 --stdio 2>&1 | head -600 >"$OUT/perf-callers.txt"
  tar -C /tmp -cJf "$OUT/jfr.tar.xz" jfr 2>/dev/null
fi
if ((SECONDS < LIMIT - 12)); then
  say "# per-thread CPU of 4 NICs pinned, jar A ($SECONDS)"
  timeout 20 "$JAVA" --enable-native-access=ALL-UNNAMED -jar "$A" write --transport tcp --nics 4 --size 1MiB \
    --routing pinned --duration 3s --warmup 1s >"$OUT/prof4-bench.txt" 2>&1 &
  bench=$!
  sleep 3
  LD_LIBRARY_PATH=$here/perflib timeout 5 "$here/bin/perf" record -a -e cpu-clock -F 999 -o /tmp/perf4.data -- sleep 1.5 >/dev/null 2>&1
  wait $bench
  tail -1 "$OUT/prof4-bench.txt" | tee -a "$log"
  LD_LIBRARY_PATH=$here/perflib timeout 15 "$here/bin/perf" report -i /tmp/perf4.data --no-children --sort comm --stdio \
    >"$OUT/perf4-comm.txt" 2>&1
fi
tar -C /tmp -cJf "$OUT/err.tar.xz" tcpbw-err.txt 2>/dev/null
say "# done ($SECONDS s)"
