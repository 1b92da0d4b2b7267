#!/usr/bin/env bash
# Regenerates the results of docs/benchmarks.md on the benchmark host (issue 22's table): the negative-acknowledgement
# benchmark per transport, then every case of the table ROUNDS times, the rounds interleaved (round 1 runs every case,
# then round 2 ...), each case beside its C anchor in the same `te-bench write --compare` invocation (TLS beside
# plain), the 4-NIC case also beside bin/tcp_stream (C, its memory footprint: 4 streams into one 64 MiB region) and
# tcp-imm beside bin/tcp_pingpong ... split (C, its topology: two one-way connections), then the JMH allocation suite
# (-prof gc). `te-bench report` turns the JSON lines into the page: medians over the rounds, every round's figures, a
# failed case as FAILED with its error (never dropped). About 8 minutes.
# Runs from a bundle folder made by bundle-h200.sh (jre/, te-bench.jar, bin/, lib/, lf/, node.p12, the template).
#   OUT=/somewhere ./report.sh        writes $OUT/benchmarks.md (the whole page), report.jsonl (one JSON line per case
#                                     and round), report.log, jmh.json, nack-*.txt
# Environment: ROUNDS (3), DURATION (1500ms per case) and WARMUP (500ms), LONG_DURATION (5s) and LONG_WARMUP
#   (1500ms) for the 100,000-page rows, BUDGET_S (470: no case starts later, the
#   rest are recorded as skipped; the JMH suite runs only if 30 s of it are left), CASES (a regex: only the table's
#   cases whose name matches), NACK=0 / JMH=0 / FOOTPRINT=0 (the tcp_stream runs beside table cases) / SPLIT=0 (the
#   tcp_pingpong split runs beside tcp-imm) to leave those out, STAGES=1 (--stages of the imm rows), SWEEP=1 (message
#   sizes 4 KiB..64 MiB, one round), JFR=1 (profiles of the slow rows), ECHO=thread (the serve children's pongs
#   posted by a thread of their own that polls the ping counter, as before ImmTrigger, instead of by the worker that
#   counts the ping: ECHO=worker, the default; passed on as TE_BENCH_ECHO, which `te-bench serve --echo` defaults to).
# The plots need java.desktop, which the bundle's runtime leaves out: make them where a full JDK is, from the
# repository root (docs/bench-data holds the copied report.jsonl and jmh.json):
#   java -jar transfer-engine-bench/target/te-bench.jar report --in docs/bench-data/report.jsonl \
#     --jmh docs/bench-data/jmh.json --template transfer-engine-bench/benchmarks-template.md --out docs
set -uo pipefail
cd "$(dirname "$0")"
here=$PWD
OUT=${OUT:-/tmp/te-report}
mkdir -p "$OUT"
JAVA=$here/jre/bin/java
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-1500ms}
WARMUP=${WARMUP:-500ms}
LONG_DURATION=${LONG_DURATION:-5s}
LONG_WARMUP=${LONG_WARMUP:-1500ms}
BUDGET_S=${BUDGET_S:-470}
CASES=${CASES:-.}
export TE_BENCH_ECHO=${ECHO:-worker} # the default of every serve child's --echo
LF21=$here/lf/lib/libfabric.so.1
export FABTESTS=$here/lf IPERF3=$here/bin/iperf3 TCP_PINGPONG=$here/bin/tcp_pingpong
export LD_LIBRARY_PATH=$here/lib # iperf3's libraries only; libfabric is chosen per case (fabric.library)
jsonl=$OUT/report.jsonl
log=$OUT/report.log
: >"$jsonl"
: >"$log"
SECONDS=0

say() { echo "$*" | tee -a "$log"; }

# a JSON string of $1: quotes and backslashes escaped, control characters dropped, the bundle's path made relative
json_string() {
  local s=${1//"$here/"/}
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  printf '"%s"' "$(tr -d '\000-\037' <<<"$s")"
}

# what log $1 says went wrong, at most 400 characters: the exception te-bench ended with and its first cause, else
# its "requests failed" line, else its first warning or error, else its last line
error_of() {
  local line
  line=$(grep -m2 -E '^(Exception in thread|Caused by:|[a-zA-Z_$][a-zA-Z0-9_$.]*(Exception|Error)\b)' "$1" | paste -sd ';')
  [[ -z $line ]] && line=$(grep -m1 'requests failed' "$1")
  [[ -z $line ]] && line=$(grep -m1 -E ' (ERROR|WARN) |<failure>' "$1")
  [[ -z $line ]] && line=$(tail -1 "$1")
  echo "${line:0:400}"
}

# record NAME GROUP ROUND EXTRA ARGS OUTCOME: one JSON line; OUTCOME is '"result":{...}', '"failed":"..."' or
# '"skipped":"..."'; EXTRA holds more fields ('"baseline":"name",' ...) or nothing
record() {
  echo "{\"case\":\"$1\",\"group\":\"$2\",\"round\":$3,$4\"args\":$(json_string "$5"),$6}" >>"$jsonl"
}

# case NAME GROUP ROUND EXTRA ARGS...: one te-bench write run; a run that prints no JSON line is a failed case
case_run() {
  local name=$1 group=$2 round=$3 extra=$4; shift 4
  local line status
  if ((SECONDS >= BUDGET_S)); then
    record "$name" "$group" "$round" "$extra" "$*" "\"skipped\":\"the run's time budget (BUDGET_S=$BUDGET_S s) was spent\""
    say "$name r$round skipped (time budget)"
    return
  fi
  line=$(timeout 60 "$JAVA" --enable-native-access=ALL-UNNAMED -jar "$here/te-bench.jar" write "$@" \
    2>"$OUT/err.txt" | tail -1)
  status=${PIPESTATUS[0]}
  if [[ $status == 124 ]]; then
    record "$name" "$group" "$round" "$extra" "$*" "\"failed\":$(json_string "timed out after 60 s (last: $(tail -1 "$OUT/err.txt"))")"
    say "[$SECONDS s] $name r$round FAILED: timed out"
  elif [[ $line != \{* ]]; then
    record "$name" "$group" "$round" "$extra" "$*" "\"failed\":$(json_string "exit $status: $(error_of "$OUT/err.txt")")"
    say "[$SECONDS s] $name r$round FAILED: $(error_of "$OUT/err.txt")"
  else
    record "$name" "$group" "$round" "$extra" "$*" "\"result\":${line//"$here/"/}"
    say "[$SECONDS s] $name r$round $line"
  fi
}

# beside_run NAME GROUP CASE ROUND ARGS COMMAND...: a C program (COMMAND, which ends itself within 20 s; ARGS is how
# the page shows it) right after the table's CASE in the same round; recorded in GROUP with "beside":CASE (te-bench
# report puts it in a row under CASE's); a run that prints no JSON line as its last is a failed one
beside_run() {
  local name=$1 group=$2 beside=$3 round=$4 args=$5; shift 5
  local extra="\"beside\":\"$beside\"," line status
  if ((SECONDS >= BUDGET_S)); then
    record "$name" "$group" "$round" "$extra" "$args" "\"skipped\":\"the run's time budget (BUDGET_S=$BUDGET_S s) was spent\""
    say "$name r$round skipped (time budget)"
    return
  fi
  line=$("$@" 2>"$OUT/err.txt")
  status=$?
  line=${line##*$'\n'}
  if [[ $status == 0 && $line == \{* ]]; then
    record "$name" "$group" "$round" "$extra" "$args" "\"result\":$line"
    say "[$SECONDS s] $name r$round $line"
  else
    [[ $status == 124 ]] && echo "timed out after 20 s" >>"$OUT/err.txt"
    record "$name" "$group" "$round" "$extra" "$args" "\"failed\":$(json_string "exit $status: $(tail -1 "$OUT/err.txt")")"
    say "[$SECONDS s] $name r$round FAILED: exit $status: $(tail -1 "$OUT/err.txt")"
  fi
}

# a TCP port of loopback nothing listens on, from 18516 up (te-bench's tcp_pingpong anchor takes 18515)
free_port() {
  local port
  for port in $(seq 18516 18615); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return; }
  done
  echo 18516
}

# pingpong_split PORT: bin/tcp_pingpong's server (in the background) and client over two one-way connections, sized as
# te-bench --compare runs the one-connection anchor (8 bytes, 100,000 round trips after 10,000); the client's line on
# stdout, both sides' errors on stderr
pingpong_split() {
  local server status
  timeout 20 "$here/bin/tcp_pingpong" server "$1" 8 100000 10000 split >/dev/null &
  server=$!
  timeout 20 "$here/bin/tcp_pingpong" client 127.0.0.1 "$1" 8 100000 10000 split
  status=$?
  # the server ends once the client has, or by its timeout when the client never connected
  ((status == 0)) || kill "$server" 2>/dev/null
  wait "$server"
  return "$status"
}

lf=(--option "fabric.library=$LF21")
tls=(--tls-keystore "$here/node.p12" --tls-password changeit)
d=(--duration "$DURATION" --warmup "$WARMUP")
# a request of 100,000 pages takes about a second on fabric/tcp, and a request counts when it ends inside the
# interval: in 1.5 s one or two end (+-50%), and the first one (the slot pools growing) falls inside it
long=(--duration "$LONG_DURATION" --warmup "$LONG_WARMUP")

# the table's cases also run beside bin/tcp_stream: CASE -> its arguments (REGION_MIB HUGE SECONDS PORT PAGE_BYTES
# STREAMS); 4 connections into one 64 MiB region as the 4 NICs of the pinned case into te-bench's (docs/benchmarks.md,
# "Beside the table: tcp 4 NICs")
declare -A footprints=([tcp-write-1MiB-4nic-pinned]="64 0 1.5 5298 0 4")

# issue 22's table, one round: NAME|EXTRA|te-bench write arguments
table() {
  local round=$1 entry name extra args port
  local entries=(
    "tcp-write-1MiB-1nic||--nics 1 --size 1MiB --compare"
    "tcp-write-1MiB-1nic-huge||--nics 1 --size 1MiB --huge-pages --compare"
    "tcp-write-1MiB-4nic-pinned||--nics 4 --size 1MiB --routing pinned --compare"
    "tcp-imm||--op imm --idle spin --compare"
    "fabric-tcp-imm||--transport fabric --provider tcp --op imm --idle spin --compare ${lf[*]}"
    "fabric-shm-imm||--transport fabric --provider shm --op imm --idle spin --compare ${lf[*]}"
    "fabric-shm-write-1MiB||--transport fabric --provider shm --size 1MiB --compare ${lf[*]}"
    "fabric-tcp-write-1MiB||--transport fabric --provider tcp --size 1MiB --compare ${lf[*]}"
  )
  # windows: about 1k-8k pages in flight, under fabric.maxOps (16384); 100,000 pages need a 128 MiB region
  local pages window region transport
  for transport in tcp fabric-shm fabric-tcp; do
    for pages in 16 256 4096 100000; do
      case $pages in 16) window=64 ;; 256) window=32 ;; 4096) window=2 ;; *) window=1 ;; esac
      region=64MiB; ((pages > 50000)) && region=128MiB
      args="--op paged --page-size 1KiB --pages $pages --window $window --region $region --compare"
      [[ $transport == fabric-* ]] && args="--transport fabric --provider ${transport#fabric-} $args ${lf[*]}"
      entries+=("$transport-paged-1KiBx$pages||$args")
    done
  done
  entries+=(
    "tcp-tls-1MiB|\"baseline\":\"tcp-write-1MiB-1nic\",\"goal\":\"ratio >= 0.5\",|--nics 1 --size 1MiB ${tls[*]}"
    "tcp-plain-64KiB||--nics 1 --size 64KiB"
    "tcp-tls-64KiB|\"baseline\":\"tcp-plain-64KiB\",|--nics 1 --size 64KiB ${tls[*]}"
    "tcp-read-1MiB||--op read --size 1MiB --compare"
    "fabric-shm-read-1MiB||--transport fabric --provider shm --op read --size 1MiB --compare ${lf[*]}"
    "fabric-tcp-read-1MiB||--transport fabric --provider tcp --op read --size 1MiB --compare ${lf[*]}"
  )
  for entry in "${entries[@]}"; do
    IFS='|' read -r name extra args <<<"$entry"
    [[ $name =~ $CASES ]] || continue
    local times=("${d[@]}")
    [[ $name == *-paged-1KiBx100000 ]] && times=("${long[@]}")
    # shellcheck disable=SC2086 # the arguments are words
    case_run "$name" table "$round" "$extra" "${times[@]}" $args
    if [[ ${FOOTPRINT:-1} == 1 && -n ${footprints[$name]:-} ]]; then
      # shellcheck disable=SC2086 # the arguments are words
      beside_run "tcp_stream-$name" footprint "$name" "$round" "bin/tcp_stream ${footprints[$name]}" \
        timeout 20 "$here/bin/tcp_stream" ${footprints[$name]}
    fi
    if [[ ${SPLIT:-1} == 1 && $name == tcp-imm ]]; then
      port=$(free_port)
      beside_run "tcp_pingpong-split-$name" topology "$name" "$round" \
        "bin/tcp_pingpong server $port 8 100000 10000 split & bin/tcp_pingpong client 127.0.0.1 $port 8 100000 10000 split" \
        pingpong_split "$port"
    fi
  done
}

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
echo "{\"meta\":{\"date\":\"$(date -u +%FT%TZ)\",\"kernel\":\"$(uname -r)\",\"cpus\":$(nproc),\"cpu\":\"$cpu\",\
\"java\":\"$("$JAVA" -version 2>&1 | head -1 | tr -d '"')\",\"commit\":\"$(cat "$here/commit.txt" 2>/dev/null)\",\
\"libfabric\":\"2.1.0, built with its fabtests by .ci/libfabric-2.1.sh\",\
\"iperf3\":\"$("$IPERF3" --version | head -1)\",\"rounds\":$ROUNDS,\"duration\":\"$DURATION\",\"warmup\":\"$WARMUP\"}}" >>"$jsonl"
say "# $(tail -1 "$jsonl")"

# sender failure -> receiver failure (docs/delivery-contract.md), one JMH trial per transport; libfabric 2.1 by the
# library path (as the other cases; -p options=fabric.library=PATH would name it too)
nack() {
  local name=$1; shift
  local text=$OUT/$name.txt
  if ((SECONDS >= BUDGET_S)); then
    record "$name" nack 1 "" "$*" "\"skipped\":\"the run's time budget (BUDGET_S=$BUDGET_S s) was spent\""
    return
  fi
  LD_LIBRARY_PATH=$here/lf/lib timeout 90 "$JAVA" -jar "$here/te-bench.jar" jmh ImmAbandonBenchmark \
    -wi 1 -w 1s -i 2 -r 2s -f 1 "$@" >"$text" 2>&1
  local figures
  figures=$(grep -m1 -o 'p50 [0-9.]* us, p99 [0-9.]* us, [0-9]* samples' "$text")
  if [[ -n $figures ]] && ! grep -q '<failure>' "$text"; then
    read -r _ p50 _ _ p99 _ samples _ <<<"${figures//,/}"
    record "$name" nack 1 "" "$*" "\"result\":{\"p50_us\":$p50,\"p99_us\":$p99,\"samples\":$samples}"
    say "[$SECONDS s] $name $figures"
  else
    record "$name" nack 1 "" "$*" "\"failed\":$(json_string "$(error_of "$text")")"
    say "[$SECONDS s] $name FAILED: $(error_of "$text")"
  fi
}
say "# serve children echo imm pings from: $TE_BENCH_ECHO (ECHO)"
if [[ ${NACK:-1} == 1 ]]; then
  say "# negative acknowledgements ($SECONDS s)"
  nack nack-tcp -p transport=tcp
  nack nack-fabric-tcp -p transport=fabric -p provider=tcp
  nack nack-fabric-shm -p transport=fabric -p provider=shm -p timeoutMs=200
fi

for round in $(seq "$ROUNDS"); do
  say "# round $round ($SECONDS s)"
  table "$round"
done

if [[ ${JMH:-1} == 1 ]] && ((SECONDS < BUDGET_S + 30)); then
  say "# JMH: posting rate and allocation, -prof gc ($SECONDS s)"
  timeout 60 "$JAVA" -jar "$here/te-bench.jar" jmh SubmitPathBenchmark -p transport=instant,tcp -prof gc \
    -wi 1 -w 1s -i 2 -r 1s -f 1 -rf json -rff "$OUT/jmh.json" >"$OUT/jmh.txt" 2>&1
  grep -E '^SubmitPath.*(thrpt|gc.alloc.rate.norm)' "$OUT/jmh.txt" | tee -a "$log"
fi

if [[ ${STAGES:-0} == 1 ]]; then
  say "# stages: where the time of an imm round trip goes ($SECONDS s)"
  case_run tcp-imm-stages stages 1 "" "${d[@]}" --op imm --idle spin --stages
  case_run fabric-tcp-imm-stages stages 1 "" "${d[@]}" --transport fabric --provider tcp --op imm --idle spin \
    --stages "${lf[@]}"
  case_run fabric-shm-imm-stages stages 1 "" "${d[@]}" --transport fabric --provider shm --op imm --idle spin \
    --stages "${lf[@]}"
fi

if [[ ${SWEEP:-0} == 1 ]]; then
  say "# sweep: bandwidth against message size, each size beside its anchor ($SECONDS s)"
  for size in 4KiB 16KiB 64KiB 256KiB 1MiB 4MiB 16MiB 64MiB; do
    case_run tcp-sweep-$size sweep-tcp 1 "" --duration 1s --warmup 500ms --size $size --region 256MiB --compare
    for prov in shm tcp; do
      case_run fabric-$prov-sweep-$size sweep-fabric-$prov 1 "" --duration 1s --warmup 500ms --transport fabric \
        --provider $prov --size $size --region 256MiB --compare "${lf[@]}"
    done
  done
fi

if [[ ${JFR:-0} == 1 ]]; then
  say "# JFR (settings=profile) of the slow rows; both JVMs record ($SECONDS s)"
  rm -rf /tmp/jfr && mkdir -p /tmp/jfr
  prof() {
    local name=$1; shift
    JAVA_TOOL_OPTIONS="-XX:StartFlightRecording=filename=/tmp/jfr/$name-%p.jfr,settings=profile" \
      case_run "jfr-$name" jfr 1 "" "${d[@]}" "$@"
  }
  prof tcp-imm --op imm --idle spin
  prof fabric-shm-imm --transport fabric --provider shm --op imm --idle spin "${lf[@]}"
  prof fabric-tcp-imm --transport fabric --provider tcp --op imm --idle spin "${lf[@]}"
  prof fabric-shm-paged --transport fabric --provider shm --op paged --page-size 1KiB --pages 256 --window 32 "${lf[@]}"
  prof tcp-paged --op paged --page-size 1KiB --pages 256 --window 32
  prof tcp-write-1nic --nics 1 --size 1MiB
  tar -C /tmp -cJf "$OUT/jfr.tar.xz" jfr
fi

say "# report ($SECONDS s)"
if "$JAVA" -jar "$here/te-bench.jar" report --in "$jsonl" --jmh "$OUT/jmh.json" \
  --template "$here/benchmarks-template.md" --out "$OUT" >>"$log" 2>&1; then
  say "# wrote $OUT/benchmarks.md ($SECONDS s)"
else
  say "# te-bench report failed (see $log); the JSON lines are in $jsonl"
fi
rm -f "$OUT/err.txt"
