#!/usr/bin/env bash
# Issue 22 item 2 on the benchmark host: how much of the imm round trip beyond its C anchor is the hand-off between
# threads, and how much the threads' placement. Runs the tcp, fabric/shm and fabric/tcp imm round trips (`--idle
# spin`, or IDLE) with every thread free, then with each side held to two CPUs of its own (`taskset`, the worker pinned to
# the first with --worker-cpu, the measuring or echoing thread on the second), each beside its C anchor run free and
# pinned to the same first CPUs; ROUNDS rounds interleaved. Each engine case runs once per server echo of ECHOS
# (`serve --echo`: worker, the ImmTrigger the server's worker fires, and thread, the echo thread of the rows measured
# before it), and the tcp anchor also as `tcp_pingpong ... split` (two one-way connections, the engine's topology).
# JFR=1 also records both JVMs of the pinned tcp and fabric/shm cases (worker echo). Runs from a bundle-h200.sh folder; writes $OUT/imm-pinning.txt (a line per case and round: the
# case, then te-bench's JSON line or the anchor's result), $OUT/topology.txt (lscpu, each CPU's siblings) and, with
# JFR=1, $OUT/jfr.tar.xz. About 3 minutes on the 16-core H200 host (4 with JFR).
#   OUT=/somewhere SERVE_CPUS=2,3 CLIENT_CPUS=6,7 [ROUNDS=2] [IDLE=spin] [ECHOS="worker thread"] [JFR=1] ./imm-pinning.sh
set -uo pipefail
cd "$(dirname "$0")"
here=$PWD
OUT=${OUT:-/tmp/imm-pinning}
ROUNDS=${ROUNDS:-2}
IDLE=${IDLE:-spin} # the idle strategy of both engines: the goal is set with spin
SERVE_CPUS=${SERVE_CPUS:-2,3}
CLIENT_CPUS=${CLIENT_CPUS:-6,7}
ECHOS=${ECHOS:-worker thread}
mkdir -p "$OUT"
bench=("$here/jre/bin/java" --enable-native-access=ALL-UNNAMED -jar "$here/te-bench.jar")
results=$OUT/imm-pinning.txt
: >"$results"
{
  lscpu
  for cpu in /sys/devices/system/cpu/cpu[0-9]*; do
    echo "$(basename "$cpu"): siblings $(cat "$cpu/topology/thread_siblings_list"), core $(cat "$cpu/topology/core_id")"
  done
} >"$OUT/topology.txt" 2>&1

# pinned CPUS: the taskset prefix for a side, or nothing where CPUS is "free"
pinned() { [[ $1 == free ]] || echo taskset -c "$1"; }
first() { echo "${1%%,*}"; }

# engine NAME SERVE CLIENT JFR ENGINE-ARGS...: a te-bench serve (pinned to SERVE, its worker to SERVE's first CPU)
# and a te-bench write --op imm against it (the same with CLIENT); prints the write's JSON line
engine() {
  local name=$1 serve=$2 client=$3 jfr=$4; shift 4
  local serve_worker=() client_worker=() tool=()
  [[ $serve == free ]] || serve_worker=(--worker-cpu "$(first "$serve")")
  [[ $client == free ]] || client_worker=(--worker-cpu "$(first "$client")")
  [[ $jfr == 1 ]] && tool=(env "JAVA_TOOL_OPTIONS=-XX:StartFlightRecording=filename=/tmp/imm-jfr/$name-%p.jfr,settings=profile")
  rm -f /tmp/imm-serve.in /tmp/imm-serve.out
  mkfifo /tmp/imm-serve.in
  "${tool[@]}" $(pinned "$serve") "${bench[@]}" serve "$@" "${serve_worker[@]}" </tmp/imm-serve.in >/tmp/imm-serve.out \
    2>>/tmp/imm-serve.err &
  local server=$!
  exec 9>/tmp/imm-serve.in # serve runs until its stdin closes
  for _ in $(seq 150); do grep -q '^te-peer' /tmp/imm-serve.out 2>/dev/null && break; sleep 0.1; done
  local line
  line=$("${tool[@]}" timeout 60 $(pinned "$client") "${bench[@]}" write --peer "$(grep '^te-peer' /tmp/imm-serve.out)" \
    "$@" "${client_worker[@]}" --op imm --duration 2s --warmup 1s 2>/tmp/imm-write.err | tail -1)
  [[ $line == \{* ]] || line="FAILED: $(tail -1 /tmp/imm-write.err)"
  echo "$name $line" | tee -a "$results"
  exec 9>&-
  wait "$server"
}

# anchor NAME SERVE CLIENT PROVIDER: tcp_pingpong (PROVIDER "pingpong", or "split" for two one-way connections) or
# fi_rma_pingpong, each side on the first CPU of its set; prints the client's result (fi_rma_pingpong: its row, one
# way per xfer)
anchor() {
  local name=$1 serve=$2 client=$3 provider=$4 line
  [[ $serve == free ]] || serve=$(first "$serve")
  [[ $client == free ]] || client=$(first "$client")
  if [[ $provider == pingpong || $provider == split ]]; then
    local topology=()
    [[ $provider == split ]] && topology=(split)
    $(pinned "$serve") bin/tcp_pingpong server 18611 8 100000 10000 "${topology[@]}" >/dev/null 2>&1 &
    sleep 0.3
    line=$(timeout 30 $(pinned "$client") bin/tcp_pingpong client 127.0.0.1 18611 8 100000 10000 "${topology[@]}" 2>&1 \
      | tail -1)
  else
    local args=(-e rdm -o writedata -S 8 -I 20000 -w 1000 -p "$provider") server_args client_args
    if [[ $provider == shm ]]; then
      server_args=(-E) client_args=(-E -B 9229 127.0.0.1)
    else
      server_args=(-s 127.0.0.1) client_args=(-s 127.0.0.1 127.0.0.1)
    fi
    LD_LIBRARY_PATH=$here/lf/lib $(pinned "$serve") lf/bin/fi_rma_pingpong "${args[@]}" "${server_args[@]}" >/dev/null 2>&1 &
    sleep 0.5
    line=$(LD_LIBRARY_PATH=$here/lf/lib timeout 30 $(pinned "$client") lf/bin/fi_rma_pingpong "${args[@]}" \
      "${client_args[@]}" 2>&1 | grep -E '^ *[0-9]' | tail -1)
  fi
  echo "$name ${line:-FAILED}" | tee -a "$results"
  wait
}

lf=(--option "fabric.library=$here/lf/lib/libfabric.so.1")
rm -rf /tmp/imm-jfr && mkdir -p /tmp/imm-jfr
for round in $(seq "$ROUNDS"); do
  for transport in tcp shm ftcp; do
    case $transport in
      tcp) args=(--transport tcp --idle "$IDLE") provider=pingpong ;;
      shm) args=(--transport fabric --provider shm --idle "$IDLE" "${lf[@]}") provider=shm ;;
      ftcp) args=(--transport fabric --provider tcp --idle "$IDLE" "${lf[@]}") provider=tcp ;;
    esac
    for echo in $ECHOS; do
      export TE_BENCH_ECHO=$echo # read by the serve that engine starts
      engine "r$round-$transport-$echo-free" free free 0 "${args[@]}"
      engine "r$round-$transport-$echo-pinned" "$SERVE_CPUS" "$CLIENT_CPUS" 0 "${args[@]}"
    done
    anchor "r$round-$transport-anchor-free" free free "$provider"
    anchor "r$round-$transport-anchor-pinned" "$SERVE_CPUS" "$CLIENT_CPUS" "$provider"
    if [[ $transport == tcp ]]; then
      anchor "r$round-tcp-anchor-split-free" free free split
      anchor "r$round-tcp-anchor-split-pinned" "$SERVE_CPUS" "$CLIENT_CPUS" split
    fi
  done
done
if [[ ${JFR:-0} == 1 ]]; then
  export TE_BENCH_ECHO=worker
  engine jfr-tcp-pinned "$SERVE_CPUS" "$CLIENT_CPUS" 1 --transport tcp --idle "$IDLE"
  engine jfr-shm-pinned "$SERVE_CPUS" "$CLIENT_CPUS" 1 --transport fabric --provider shm --idle "$IDLE" "${lf[@]}"
  tar -C /tmp -cJf "$OUT/jfr.tar.xz" imm-jfr
fi
