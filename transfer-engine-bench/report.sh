#!/usr/bin/env bash
# Regenerates docs/benchmarks.md: every te-bench case with `--compare` (its C anchor measured in the same
# invocation), a message-size sweep 4 KiB..64 MiB per transport, the latency decomposition (--stages), the JMH
# posting rate and allocation suites, optionally a "before" jar on the same cases, then `te-bench report` turns the
# JSON lines into docs/benchmarks.md and PNG plots. Runs from a bundle folder made by bundle-h200.sh:
#   jre/ (jlink'd Java 25 with jdk.jfr), te-bench.jar, [before/ (another build's thin jars)], bin/ (iperf3,
#   tcp_pingpong), lib/ (iperf3's libraries), lf/ (libfabric 2.1 with fabtests)
# The plots need java.desktop, which the bundle's runtime leaves out to stay small: where it is missing, run the last
# step wherever a full JDK is, from the repository root:
#   java -jar transfer-engine-bench/target/te-bench.jar report --in report.jsonl --jmh jmh.json \
#     --template transfer-engine-bench/benchmarks-template.md --out docs      (docs/benchmarks.md, docs/images/)
# On the h200 host:   OUT=/somewhere transfer-engine-bench/report.sh      (bundle = this script's folder)
# Environment: OUT (results; default /tmp/te-report), DURATION (default 3s), SWEEP_DURATION (1s), JFR=1 (profiles),
#   SWEEP=0 / JMH=0 / BEFORE=0 to skip those parts.
# Writes to $OUT: report.jsonl (one JSON line per case), report.log, benchmarks.md, *.png, jmh.json, jfr.tar.xz.
set -uo pipefail
cd "$(dirname "$0")"
here=$PWD
OUT=${OUT:-/tmp/te-report}
mkdir -p "$OUT"
JAVA=$here/jre/bin/java
DURATION=${DURATION:-3s}
SWEEP_DURATION=${SWEEP_DURATION:-1s}
LF21=$here/lf/lib/libfabric.so.1
export FABTESTS=$here/lf IPERF3=$here/bin/iperf3 TCP_PINGPONG=$here/bin/tcp_pingpong
export LD_LIBRARY_PATH=$here/lib # iperf3's libraries only; libfabric is chosen per case (fabric.library)
jsonl=$OUT/report.jsonl
log=$OUT/report.log
: >"$jsonl"
: >"$log"

say() { echo "$*" | tee -a "$log"; }

# case NAME JAR GROUP ARGS...: one te-bench run; its JSON line is wrapped as {"case","jar","group","result"}
run() {
  local name=$1 jar=$2 group=$3; shift 3
  local line
  local cp=$here/te-bench.jar
  [[ $jar == before ]] && cp=$(ls "$here"/before/*.jar | tr '\n' ':')$here/te-bench.jar
  line=$(timeout 120 "$JAVA" --enable-native-access=ALL-UNNAMED -cp "$cp" dev.transferengine.bench.TeBench write "$@" \
    2>"$OUT/err.txt" | tail -1)
  if [[ $line != \{* ]]; then
    say "$name ($jar) failed: $(grep -m1 -E 'Exception|Error|error' "$OUT/err.txt")"
    return
  fi
  say "$name ($jar) $line"
  echo "{\"case\":\"$name\",\"jar\":\"$jar\",\"group\":\"$group\",\"args\":\"$*\",\"result\":$line}" >>"$jsonl"
}

lf=(--option "fabric.library=$LF21")
d=(--duration "$DURATION" --warmup 1s)
meta() {
  local cpu
  cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
  echo "{\"meta\":{\"date\":\"$(date -u +%FT%TZ)\",\"kernel\":\"$(uname -r)\",\"cpus\":$(nproc),\"cpu\":\"$cpu\",\
\"java\":\"$("$JAVA" -version 2>&1 | head -1 | tr -d '"')\",\"libfabric\":\"2.1.0 from the bundle's lf/ (fabtests from the same build)\",\
\"iperf3\":\"$("$IPERF3" --version | head -1)\",\"duration\":\"$DURATION\",\"sweep_duration\":\"$SWEEP_DURATION\"}}" >>"$jsonl"
}
meta
say "# $(tail -1 "$jsonl")"

# the table: every case beside its anchor
table() {
  local jar=$1 cmp=$2
  run tcp-write-1MiB-1nic "$jar" table "${d[@]}" --nics 1 --size 1MiB $cmp
  # iperf3 sends one cache-hot buffer over and over; this row gives the engine the same footprint (one 1 MiB slot)
  run tcp-write-1MiB-1nic-region1MiB "$jar" table "${d[@]}" --nics 1 --size 1MiB --region 1MiB $cmp
  run tcp-write-1MiB-4nic-pinned "$jar" table "${d[@]}" --nics 4 --size 1MiB --routing pinned $cmp
  run tcp-imm "$jar" table "${d[@]}" --op imm --idle spin $cmp
  run tcp-paged-1KiBx256 "$jar" table "${d[@]}" --op paged --page-size 1KiB --pages 256
  for prov in shm tcp; do
    run fabric-$prov-write-1MiB "$jar" table "${d[@]}" --transport fabric --provider $prov --size 1MiB \
      "${lf[@]}" $cmp
    run fabric-$prov-imm "$jar" table "${d[@]}" --transport fabric --provider $prov --op imm --idle spin \
      "${lf[@]}" $cmp
    run fabric-$prov-paged-1KiBx256 "$jar" table "${d[@]}" --transport fabric --provider $prov --op paged \
      --window 32 "${lf[@]}"
  done
}

say "# table"
table te-bench.jar "--compare"
say "# stages (latency decomposition) and variants"
run tcp-imm-stages te-bench.jar stages "${d[@]}" --op imm --idle spin --stages
run tcp-write-1MiB-stages te-bench.jar stages "${d[@]}" --size 1MiB --stages
for prov in shm tcp; do
  run fabric-$prov-imm-stages te-bench.jar stages "${d[@]}" --transport fabric --provider $prov --op imm \
    --idle spin --stages "${lf[@]}"
  run fabric-$prov-write-1MiB-stages te-bench.jar stages "${d[@]}" --transport fabric --provider $prov \
    --size 1MiB --stages "${lf[@]}"
  run fabric-$prov-write-1MiB-backoff te-bench.jar variants "${d[@]}" --transport fabric --provider $prov \
    --size 1MiB --idle backoff "${lf[@]}"
  run fabric-$prov-write-1MiB-transmit-complete te-bench.jar variants "${d[@]}" --transport fabric \
    --provider $prov --size 1MiB --option fabric.deliveryComplete=false "${lf[@]}"
  run fabric-$prov-write-1MiB-window64 te-bench.jar variants "${d[@]}" --transport fabric --provider $prov \
    --size 1MiB --window 64 "${lf[@]}"
  # one 1 MiB slot on each side, every write to the same memory, as fi_rma_bw does (its buffers stay cache-hot)
  run fabric-$prov-write-1MiB-region1MiB te-bench.jar variants "${d[@]}" --transport fabric --provider $prov \
    --size 1MiB --region 1MiB "${lf[@]}"
done
run fabric-tcp-imm-transmit-complete te-bench.jar variants "${d[@]}" --transport fabric --provider tcp --op imm \
  --idle spin --option fabric.deliveryComplete=false "${lf[@]}"
run tcp-write-1MiB-1nic-spin te-bench.jar variants "${d[@]}" --size 1MiB --idle spin
run tcp-write-1MiB-1nic-backoff te-bench.jar variants "${d[@]}" --size 1MiB --idle backoff
run tcp-write-1MiB-1nic-window64 te-bench.jar variants "${d[@]}" --size 1MiB --window 64

if [[ ${BEFORE:-1} == 1 && -d $here/before ]]; then
  say "# before: the same cases with before/'s engine and bench classes first on the class path (no --compare there)"
  table before ""
fi

if [[ ${SWEEP:-1} == 1 ]]; then
  say "# sweep: bandwidth vs message size, each size beside its anchor"
  for size in 4KiB 16KiB 64KiB 256KiB 1MiB 4MiB 16MiB 64MiB; do
    run tcp-sweep-$size te-bench.jar sweep-tcp --duration "$SWEEP_DURATION" --warmup 500ms --size $size \
      --region 256MiB --compare
    for prov in shm tcp; do
      run fabric-$prov-sweep-$size te-bench.jar sweep-fabric-$prov --duration "$SWEEP_DURATION" --warmup 500ms \
        --transport fabric --provider $prov --size $size --region 256MiB --compare "${lf[@]}"
    done
  done
fi

if [[ ${JMH:-1} == 1 ]]; then
  say "# JMH: posting rate (instant transport: writes complete at the posting boundary) and allocation, -prof gc"
  timeout 300 "$JAVA" -jar "$here/te-bench.jar" jmh SubmitPathBenchmark -p transport=instant,tcp -prof gc \
    -wi 2 -w 1s -i 3 -r 1s -f 1 -rf json -rff "$OUT/jmh.json" >"$OUT/jmh.txt" 2>&1
  grep -E '^SubmitPath|gc.alloc.rate.norm' "$OUT/jmh.txt" | tee -a "$log"
fi

if [[ ${JFR:-0} == 1 ]]; then
  say "# JFR (settings=profile) of the slow rows; both JVMs record"
  rm -rf /tmp/jfr && mkdir -p /tmp/jfr
  prof() {
    local name=$1; shift
    JAVA_TOOL_OPTIONS="-XX:StartFlightRecording=filename=/tmp/jfr/$name-%p.jfr,settings=profile" \
      run "jfr-$name" te-bench.jar jfr "${d[@]}" "$@"
  }
  prof fabric-shm-write --transport fabric --provider shm --size 1MiB "${lf[@]}"
  prof fabric-tcp-imm --transport fabric --provider tcp --op imm --idle spin "${lf[@]}"
  prof tcp-imm --op imm --idle spin
  prof tcp-write-1nic --nics 1 --size 1MiB
  prof tcp-paged --op paged --page-size 1KiB --pages 256
  tar -C /tmp -cJf "$OUT/jfr.tar.xz" jfr
fi

if ! "$JAVA" --list-modules | grep -q '^java.desktop'; then
  say "# no java.desktop here: make benchmarks.md and the plots elsewhere with te-bench report (see the top of $0)"
elif "$JAVA" -jar "$here/te-bench.jar" report --in "$jsonl" --jmh "$OUT/jmh.json" --out "$OUT" >>"$log" 2>&1; then
  say "# report: $OUT/benchmarks.md and $OUT/images/*.png"
else
  say "# report generation failed (see above); the JSON lines are in $jsonl"
fi
rm -f "$OUT/err.txt"
