#!/usr/bin/env bash
# Issue 16's attacks from outside the engine's process, against the built te-bench.jar (./mvnw -B -o -DskipTests
# package -pl transfer-engine-bench -am). Every party is a process of its own: the target engine (Member.java target,
# a JVM at -Xmx64m -XX:MaxDirectMemorySize=64m), the members (Member.java, JVMs), the outsider (outsider.py, python3).
# Usage: [TARGET_DEVICE=cuda:0] [TARGET_MEMORY=engine] transfer-engine-bench/attacks/run.sh SCENARIO   (scenarios: see the case below; each
# prints JSON lines). TARGET_DEVICE puts the target's region in GPU memory (TargetMemory.java): every scenario then
# attacks the GPU path (tcp staging; fabric/shm FI_HMEM with a libfabric built --with-cuda), and free is cuMemFree.
# TARGET_MEMORY=engine has the target's engine allocate its region (TransferEngine.allocate) instead of the
# application (raw, the default): free is then deregister (the engine frees after draining) and a new allocation.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
export IPATH_NO_BACKTRACE=1 HFI_NO_BACKTRACE=1
jar=${TE_BENCH_JAR:-$here/../target/te-bench.jar}
work=$(mktemp -d /tmp/te-attacks.XXXXXX)
key=$(openssl rand -base64 32)
keytool=$JAVA_HOME/bin/keytool
java() { "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -Dorg.slf4j.simpleLogger.defaultLogLevel=warn "$@"; }
# Member's class path and main: compiled beside this script when a runtime without javac runs it (.ci/gpu/bundle.sh),
# else launched from source
if [ -f "$here/classes/Member.class" ]; then members=(-cp "$jar:$here/classes" Member)
else members=(-cp "$jar" "$here/Member.java"); fi
# member [-Dname=value...] MODE ARGS...: a member engine in a JVM of its own
member() {
  local jvm=()
  while [[ ${1:-} == -D* ]]; do jvm+=("$1"); shift; done
  java -Xmx256m "${jvm[@]}" "${members[@]}" "$@"
}
# fabric scenarios: libfabric 2.1 where $TE_FABRIC_LIBRARY names it (shm needs 1.19+), else the system's
fabric=(-Dtransport=fabric)
[ -n "${TE_FABRIC_LIBRARY:-}" ] && fabric+=(-Dopt.fabric.library="$TE_FABRIC_LIBRARY")
pids=()
nat_rule=()  # the iptables rule of a man-in-the-middle scenario, removed on exit
cleanup() {
  exec 3>&- 2>/dev/null || true
  [ ${#nat_rule[@]} -gt 0 ] && iptables -t nat -D OUTPUT "${nat_rule[@]}" || true
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

tls_store() {
  "$keytool" -genkeypair -alias node -keyalg EC -groupname secp256r1 -keystore "$work/node.p12" -storetype PKCS12 \
    -storepass changeit -dname CN=node -validity 2 >/dev/null 2>&1
  echo "$work/node.p12"
}

# start_target JAVA_OPTIONS...: the engine under attack; sets desc, port; its stdin is fd 3, its stdout $work/target.out
start_target() {
  mkfifo "$work/target.in"
  java -Xmx64m -XX:MaxDirectMemorySize=64m -Ddevice="${TARGET_DEVICE:-host}" -Dmemory="${TARGET_MEMORY:-raw}" "$@" \
    "${members[@]}" target 16777216 \
    <"$work/target.in" >"$work/target.out" 2>"$work/target.err" &
  pids+=($!)
  target_pid=$!
  exec 3>"$work/target.in"
  for _ in $(seq 600); do grep -q '^te-target' "$work/target.out" 2>/dev/null && break; sleep 0.1; done
  if ! grep -q '^te-target' "$work/target.out"; then
    echo "the target did not start in 60 s; its stderr:" >&2; tail -30 "$work/target.err" >&2; exit 1
  fi
  read -r _ desc _ port < <(grep '^te-target' "$work/target.out")
}
report() { local n; n=$(wc -l <"$work/target.out"); echo report >&3; for _ in $(seq 300); do
  [ "$(wc -l <"$work/target.out")" -gt "$n" ] && break; sleep 0.1; done; tail -1 "$work/target.out"; }

# flood_case SEND TLS: a writer connected before keeps writing 64 KiB while 1,500 connections from one address send
# SEND and hold 20 s; then they close and a fresh engine of the writer's times its way in.
flood_case() {
  local send=$1 tls=$2 opts=(-Dkey="$key")
  [ "$tls" = tls ] && opts+=(-Dtls="$(tls_store)")
  start_target "${opts[@]}"
  member "${opts[@]}" writer "$desc" "$work/closed" >"$work/writer.out" 2>"$work/writer.err" &
  pids+=($!); local writer=$!
  for _ in $(seq 600); do grep -q connected "$work/writer.out" 2>/dev/null && break; sleep 0.1; done
  python3 "$here/outsider.py" flood 127.0.0.1 "$port" --count 1500 --send "$send" --hold 20 \
    --closed-file "$work/closed.tmp" >"$work/flood.out" &
  local flood=$!
  sleep 15
  echo "{\"case\":\"flood $send $tls\",\"target_during_flood\":$(report)}"
  wait "$flood"
  mv "$work/closed.tmp" "$work/closed"
  cat "$work/flood.out"
  wait "$writer" || true
  tail -1 "$work/writer.out"
  echo "{\"target_after\":$(report)}"
}

# the outsider of the fabric control messages (control_outsider.c, a libfabric endpoint of its own), built against the
# libfabric the scenario loads
build_control_outsider() {
  local source=$here/../../transfer-engine-engine/src/test/c/control_outsider.c flags=()
  if [ -n "${TE_FABRIC_LIBRARY:-}" ]; then
    local lib; lib=$(dirname "$TE_FABRIC_LIBRARY")
    flags=(-I"$lib/../include" -L"$lib" -Wl,-rpath,"$lib")
  fi
  [ -x "$work/control_outsider" ] || gcc -O1 -o "$work/control_outsider" "${flags[@]}" "$source" -lfabric
}
control_outsider() { build_control_outsider; "$work/control_outsider" "$@"; }
# start_ready_member NAME MODE ARGS...: a member (-Dready) that prints its address and waits for $work/NAME.ready;
# sets member_address
start_ready_member() {
  local name=$1; shift
  member "${opts[@]}" -Dready="$work/$name.ready" "$@" >"$work/$name.out" 2>"$work/$name.err" &
  pids+=($!)
  for _ in $(seq 600); do grep -q '^te-member' "$work/$name.out" 2>/dev/null && break; sleep 0.1; done
  member_address=$(grep '^te-member' "$work/$name.out" | awk '{print $2}')
}

scenario=${1:?scenario: api flood-tls flood-idle flood-slowloris flood-garbage flood-hello relay relay-tls imms churn churn-sources sends sends-fabric-tcp sends-fabric-shm weak-keys api freed-tcp freed-fabric-tcp freed-fabric-shm fabric-outsider overrun overrun-fabric-tcp overrun-fabric-shm tls-mitm-flip tls-mitm-replay tls-mitm-truncate tls-garbage tls-members-held fabric-control-forge-tcp fabric-control-forge-shm fabric-nack-forge-tcp fabric-nack-forge-shm fabric-sizes-forge-tcp fabric-sizes-forge-shm fabric-control-flood-tcp fabric-control-flood-shm}
# TLS_RECORDS=jsse runs the TLS scenarios with tcp.tlsRecords=jsse on every engine (engine records are the default)
tls_records=()
[ -n "${TLS_RECORDS:-}" ] && tls_records=(-Dopt.tcp.tlsRecords="$TLS_RECORDS")
case $scenario in
  flood-tls) flood_case tls-hello tls ;;
  flood-idle) flood_case none plain ;;
  flood-slowloris) flood_case slowloris plain ;;
  flood-garbage) flood_case garbage plain ;;
  flood-hello) flood_case hello plain ;;
  relay | relay-tls)
    opts=(-Dkey="$key")
    [ "$scenario" = relay-tls ] && opts+=(-Dtls="$(tls_store)")
    start_target "${opts[@]}"
    relay_port=$((20000 + RANDOM % 20000))
    python3 "$here/outsider.py" relay "$relay_port" 127.0.0.1 "$port" --seconds 40 >"$work/relay.out" &
    relay=$!
    sleep 1
    member "${opts[@]}" relayed "$desc" "$relay_port"
    echo "{\"target\":$(report)}"
    kill "$relay"; sleep 0.5; tail -1 "$work/relay.out"
    ;;
  imms)
    # one member floods distinct imms nobody expects, then another writes 3,500 fresh ones
    start_target -Dkey="$key" -Dclaim=false -DmaxUnexpectedImms=16384
    member -Dkey="$key" imms "$desc" 0 20000 256
    member -Dkey="$key" imms "$desc" 1000000 3500 64
    echo "{\"target\":$(report)}"
    ;;
  churn)
    # 1,500 half handshakes (a HELLO, never an AUTH) from 127.0.0.2 held 30 s; a new member from 127.0.0.1 joins
    # during it and writes until the churn ends
    start_target -Dkey="$key"
    python3 "$here/outsider.py" flood 127.0.0.1 "$port" --count 1500 --send hello --hold 30 --source 127.0.0.2 \
      --closed-file "$work/closed.tmp" >"$work/flood.out" &
    flood=$!
    sleep 8
    member -Dkey="$key" writer "$desc" "$work/closed" >"$work/writer.out" 2>"$work/writer.err" &
    writer=$!
    wait "$flood"; mv "$work/closed.tmp" "$work/closed"; cat "$work/flood.out"
    wait "$writer" || true; grep -v connected "$work/writer.out" | tail -1
    echo "{\"target\":$(report)}"
    ;;
  churn-sources)
    # the out-of-scope case: half handshakes from five addresses (127.0.0.2-6, 300 each) fill the NIC's pending
    # handshakes; a new member from 127.0.0.1 joins during it (retrying) and writes until the churn ends
    start_target -Dkey="$key"
    for i in 2 3 4 5 6; do
      python3 "$here/outsider.py" flood 127.0.0.1 "$port" --count 300 --send hello --hold 30 --source 127.0.0.$i \
        >"$work/flood.$i.out" &
      floods+=($!)
    done
    sleep 1
    member -Dkey="$key" writer "$desc" "$work/closed" >"$work/writer.out" 2>"$work/writer.err" &
    writer=$!
    wait "${floods[@]}"; touch "$work/closed"; cat "$work"/flood.*.out
    wait "$writer" || true; grep -v connected "$work/writer.out" | tail -1
    echo "{\"target\":$(report)}"
    ;;
  sends | sends-fabric-tcp | sends-fabric-shm)
    # member A floods 1 KiB sends (8 in flight) at the target's 4-buffer pool while member B sends 200, one at a time
    opts=(-Dkey="$key")
    [ "$scenario" != sends ] && opts=("${fabric[@]}" -Dprovider="${scenario#sends-fabric-}")
    start_target "${opts[@]}"
    address=$(grep '^te-target' "$work/target.out" | awk '{print $3}')
    member "${opts[@]}" sends "$address" 20000 8 >"$work/flooder.out" 2>/dev/null &
    flooder=$!
    sleep 3
    member "${opts[@]}" sends "$address" 200 1
    wait "$flooder"; echo "{\"flooder\":$(tail -1 "$work/flooder.out")}"
    echo "{\"target\":$(report)}"
    sleep 5; echo "{\"target_5s_later\":$(report)}"  # messages still queued in the provider land late
    ;;
  api) member api ;;
  weak-keys)
    for bad in 'correct horse battery staple' 'c2hvcnQ=' "$(printf 'QUJD%.0s' $(seq 12))"; do
      printf '{"key":"%s","start":"%s"}\n' "$bad" "$(java -Dkey="$bad" "${members[@]}" api 2>&1 \
        | grep -o 'TransportUnavailableException[^"]*' | head -1 || true)"
    done
    : >"$work/empty.key"
    echo "{\"empty key file\":\"$(java -Dopt.tcp.clusterKeyFile="$work/empty.key" "${members[@]}" api \
      2>&1 | grep -o 'TransportUnavailableException[^"]*' | head -1 || true)\"}"
    # guessing offline from one CHALLENGE: a keyed target, then a keyless loopback one (public key)
    (echo 'correct horse battery staple'; seq 1 200000) >"$work/words"
    start_target -Dkey="$key"
    python3 "$here/outsider.py" challenge 127.0.0.1 "$port" --words "$work/words"
    echo quit >&3; exec 3>&-; wait "$target_pid" || true; rm -f "$work/target.in" "$work/target.out"
    start_target
    python3 "$here/outsider.py" challenge 127.0.0.1 "$port"
    ;;
  freed-tcp | freed-fabric-tcp | freed-fabric-shm)
    # the target's application frees its region's memory (host: closes the arena; GPU: cuMemFree, then a new
    # allocation of the same size; TARGET_MEMORY=engine: deregister, then a new engine allocation) while a member
    # hammers 4 KiB writes at it (PAGES=N: paged writes of N 4 KiB pages)
    opts=(-Dkey="$key")
    [ "$scenario" != freed-tcp ] && opts=("${fabric[@]}" -Dprovider="${scenario#freed-fabric-}")
    start_target "${opts[@]}"
    member "${opts[@]}" -Dpages="${PAGES:-0}" hammer "$desc" "$work/freed" >"$work/hammer.out" 2>"$work/hammer.err" &
    hammer=$!
    for _ in $(seq 600); do grep -q connected "$work/hammer.out" 2>/dev/null && break; sleep 0.1; done
    sleep 2
    echo free >&3; sleep 0.5; touch "$work/freed"
    wait "$hammer" || true; tail -1 "$work/hammer.out"
    echo "{\"target_alive\":$(kill -0 "$target_pid" 2>/dev/null && echo true || echo false),\"target\":$(report)}"
    ;;
  fabric-outsider)
    start_target "${fabric[@]}" -Dprovider=tcp
    member "${fabric[@]}" -Dprovider=tcp writer "$desc" "$work/closed" >"$work/writer.out" 2>"$work/writer.err" &
    writer=$!
    for _ in $(seq 600); do grep -q connected "$work/writer.out" 2>/dev/null && break; sleep 0.1; done
    python3 "$here/outsider.py" flood 127.0.0.1 "$port" --count 1000 --send none --hold 25 \
      --closed-file "$work/closed.tmp" >"$work/flood.out" &
    flood=$!
    sleep 2
    python3 "$here/outsider.py" garbage 127.0.0.1 "$port" --count 300
    python3 "$here/outsider.py" forge 127.0.0.1 "$port" --count 300
    python3 "$here/outsider.py" flood 127.0.0.1 "$port" --count 200 --send slowloris --hold 15
    wait "$flood"; mv "$work/closed.tmp" "$work/closed"; cat "$work/flood.out"
    wait "$writer" || true; tail -1 "$work/writer.out"
    echo "{\"target_alive\":$(kill -0 "$target_pid" 2>/dev/null && echo true || echo false),\"target\":$(report)}"
    ;;
  overrun | overrun-fabric-tcp | overrun-fabric-shm)
    # a member writes (single, paged with an outside page first, inner or across the end, with imms) and reads past
    # the end of the target's region, whose 1 MiB guards of 0xA5 lie in the same allocation
    opts=(-Dkey="$key")
    [ "$scenario" != overrun ] && opts=("${fabric[@]}" -Dprovider="${scenario#overrun-fabric-}")
    start_target "${opts[@]}"
    member "${opts[@]}" overrun "$desc"
    echo "{\"target\":$(report)}"
    ;;
  tls-mitm-flip | tls-mitm-replay | tls-mitm-truncate)
    # a man in the middle of one member's mutual-TLS connection (its packets to the target's port redirected to a
    # python relay by an iptables rule matching the member's user, tevictim) tampers with one record of the member's
    # direction after the switch to engine records; a writer connected directly writes beside it. The target binds
    # 0.0.0.0 (it announces 127.0.0.1, the address both members dial), so the member's handshake checks out.
    opts=(-Dkey="$key" -Dtls="$(tls_store)" "${tls_records[@]}")
    chmod 755 "$work"; chmod 644 "$work/node.p12"
    start_target "${opts[@]}" -Dbind=0.0.0.0
    member "${opts[@]}" writer "$desc" "$work/closed" >"$work/writer.out" 2>"$work/writer.err" &
    pids+=($!); writer=$!
    for _ in $(seq 600); do grep -q connected "$work/writer.out" 2>/dev/null && break; sleep 0.1; done
    relay_port=$((20000 + RANDOM % 20000))
    record_type=0xE1; record=${RECORD:-4}  # the switch record is the first engine record
    [ "${TLS_RECORDS:-engine}" = jsse ] && record_type=0x17 && record=${RECORD:-20}
    python3 "$here/outsider.py" mitm "$relay_port" 127.0.0.1 "$port" --action "${scenario#tls-mitm-}" \
      --record "$record" --record-type "$record_type" --seconds 60 >"$work/mitm.out" &
    pids+=($!); mitm=$!
    nat_rule=(-p tcp -d 127.0.0.1 --dport "$port" -m owner --uid-owner tevictim -j REDIRECT --to-ports "$relay_port")
    iptables -t nat -I OUTPUT 1 "${nat_rule[@]}"
    sleep 1
    runuser -u tevictim -- "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED \
      -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Xmx256m "${opts[@]}" "${members[@]}" victim "$desc" "$work/stop" \
      >"$work/victim.out" 2>"$work/victim.err" &
    victim=$!
    for _ in $(seq 600); do grep -q connected "$work/victim.out" 2>/dev/null && break; sleep 0.1; done
    grep -q connected "$work/victim.out" || { echo "the member did not connect in 60 s:" >&2; tail -5 "$work/victim.err" >&2; }
    sleep "${SECONDS_UNDER_ATTACK:-10}"
    echo "{\"target_during\":$(report)}"
    touch "$work/stop"; wait "$victim" || true; tail -1 "$work/victim.out"
    grep -m3 -i 'warn\|error' "$work/victim.err" | cut -c1-400 || true
    touch "$work/closed"; wait "$writer" || true; tail -1 "$work/writer.out"
    kill "$mitm"; wait "$mitm" || true; tail -1 "$work/mitm.out"
    echo "{\"target_after\":$(report)}"
    grep -m5 -i 'warn\|error' "$work/target.err" | cut -c1-400 || true
    ;;
  tls-garbage)
    # TLS handshakes that complete (with a certificate the target trusts, offering engine records), then garbage
    # instead of records: first from a non-member, then from a member that completed the cluster-key handshake too;
    # a writer connected before writes beside them
    opts=(-Dkey="$key" -Dtls="$(tls_store)" "${tls_records[@]}")
    start_target "${opts[@]}"
    member "${opts[@]}" writer "$desc" "$work/closed" >"$work/writer.out" 2>"$work/writer.err" &
    pids+=($!); writer=$!
    for _ in $(seq 600); do grep -q connected "$work/writer.out" 2>/dev/null && break; sleep 0.1; done
    openssl pkcs12 -in "$work/node.p12" -passin pass:changeit -nodes -out "$work/node.pem" 2>/dev/null
    python3 "$here/outsider.py" tls-garbage 127.0.0.1 "$port" --pem "$work/node.pem" --count "${COUNT:-100}"
    python3 "$here/outsider.py" tls-garbage 127.0.0.1 "$port" --pem "$work/node.pem" --count "${COUNT:-100}" \
      --cluster-key "$key"
    echo "{\"target_during\":$(report)}"
    touch "$work/closed"; wait "$writer" || true; tail -1 "$work/writer.out"
    echo "{\"target_after\":$(report)}"
    grep -m5 -i 'warn\|error' "$work/target.err" | cut -c1-400 || true
    ;;
  tls-members-held)
    # COUNT (40) members (python: TLS handshake, then the cluster-key handshake) connect one after another and hold
    # their authenticated connections, each with engine records' buffers at the target; a writer writes beside them
    opts=(-Dkey="$key" -Dtls="$(tls_store)" "${tls_records[@]}")
    start_target "${opts[@]}"
    member "${opts[@]}" writer "$desc" "$work/closed" >"$work/writer.out" 2>"$work/writer.err" &
    pids+=($!); writer=$!
    for _ in $(seq 600); do grep -q connected "$work/writer.out" 2>/dev/null && break; sleep 0.1; done
    openssl pkcs12 -in "$work/node.p12" -passin pass:changeit -nodes -out "$work/node.pem" 2>/dev/null
    python3 "$here/outsider.py" tls-garbage 127.0.0.1 "$port" --pem "$work/node.pem" --count "${COUNT:-40}" \
      --cluster-key "$key" --hold 15 >"$work/held.out" &
    held=$!
    for _ in $(seq 1200); do grep -q '"held"' "$work/held.out" 2>/dev/null && break; sleep 0.1; done
    echo "{\"target_while_held\":$(report)}"
    wait "$held"; tail -1 "$work/held.out"
    touch "$work/closed"; wait "$writer" || true; tail -1 "$work/writer.out"
    echo "{\"target_after\":$(report)}"
    grep -m5 -i 'warn\|error' "$work/target.err" | cut -c1-400 || true
    ;;
  fabric-control-forge-tcp | fabric-control-forge-shm)
    # an outsider (no descriptor, no member) sends control messages of every kind but valid ones to the target:
    # random bytes, cut-short and oversized messages behind each magic, receipts of random nonces; a writer writes
    # and a member sends 200 messages beside it
    opts=("${fabric[@]}" -Dprovider="${scenario#fabric-control-forge-}")
    start_target "${opts[@]}"
    address=$(grep '^te-target' "$work/target.out" | awk '{print $3}')
    member "${opts[@]}" writer "$desc" "$work/closed" >"$work/writer.out" 2>"$work/writer.err" &
    pids+=($!); writer=$!
    for _ in $(seq 600); do grep -q connected "$work/writer.out" 2>/dev/null && break; sleep 0.1; done
    start_ready_member sender sends "$address" 200 4
    control_outsider "$address" garbage "${COUNT:-20000}"
    control_outsider "$address" receipt 5000
    touch "$work/sender.ready"; wait "${pids[-1]}" || true; tail -1 "$work/sender.out"
    touch "$work/closed"; wait "$writer" || true; tail -1 "$work/writer.out"
    echo "{\"target_alive\":$(kill -0 "$target_pid" 2>/dev/null && echo true || echo false),\"target\":$(report)}"
    echo "{\"target_warn_lines\":$(grep -c 'WARN' "$work/target.err" || true)}"
    grep -m3 'WARN' "$work/target.err" | cut -c1-300 || true
    ;;
  fabric-nack-forge-tcp | fabric-nack-forge-shm)
    # the target waits for imms 5000..5199 (an expectation each); the member that will write them is up; an outsider
    # first sends negative acknowledgements of those imms in the member's name (without a region key, with guessed
    # keys, one replayed 1,000 times); then the member writes the 200 imms
    opts=("${fabric[@]}" -Dprovider="${scenario#fabric-nack-forge-}")
    start_target "${opts[@]}" -Dexpect=5000:200
    address=$(grep '^te-target' "$work/target.out" | awk '{print $3}')
    start_ready_member imms imms "$desc" 5000 200 1
    control_outsider "$address" nack 200 5000 "$member_address"
    control_outsider "$address" nack 200 5000 "$member_address" "$RANDOM$RANDOM"
    control_outsider "$address" replay 1000 5000 "$member_address"
    sleep 1; echo "{\"target_after_forgeries\":$(report)}"
    touch "$work/imms.ready"; wait "${pids[-1]}" || true; tail -1 "$work/imms.out"
    echo "{\"target\":$(report)}"
    grep -m3 'WARN' "$work/target.err" | cut -c1-300 || true
    ;;
  fabric-sizes-forge-tcp | fabric-sizes-forge-shm)
    # an outsider tells a member, in the target's name, that the target's receive pools are none or 1 byte, at the
    # highest versions; then the member sends 200 1 KiB messages to the target (4 in flight)
    opts=("${fabric[@]}" -Dprovider="${scenario#fabric-sizes-forge-}")
    start_target "${opts[@]}"
    address=$(grep '^te-target' "$work/target.out" | awk '{print $3}')
    start_ready_member sender sends "$address" 200 4
    control_outsider "$member_address" sizes 1000 "$address"
    sleep 1; touch "$work/sender.ready"; wait "${pids[-1]}" || true; tail -1 "$work/sender.out"
    grep -m3 'WARN' "$work/sender.err" | cut -c1-300 || true
    echo "{\"target\":$(report)}"
    ;;
  fabric-control-flood-tcp | fabric-control-flood-shm)
    # an outsider floods the target's control buffers (COUNT random messages) and asks for its pool sizes in the
    # name of 20,000 addresses nobody listens on, while a writer writes, a member sends 200 messages and another
    # writes 200 imms the target waits for
    opts=("${fabric[@]}" -Dprovider="${scenario#fabric-control-flood-}")
    start_target "${opts[@]}" -Dexpect=5000:200
    address=$(grep '^te-target' "$work/target.out" | awk '{print $3}')
    member "${opts[@]}" writer "$desc" "$work/closed" >"$work/writer.out" 2>"$work/writer.err" &
    pids+=($!); writer=$!
    for _ in $(seq 600); do grep -q connected "$work/writer.out" 2>/dev/null && break; sleep 0.1; done
    start_ready_member sender sends "$address" 200 4; sender=${pids[-1]}
    start_ready_member imms imms "$desc" 5000 200 1; imms=${pids[-1]}
    build_control_outsider
    HOLD=20 control_outsider "$address" garbage "${COUNT:-200000}" >"$work/garbage.out" &
    garbage=$!
    HOLD=20 control_outsider "$address" query 20000 >"$work/query.out" &
    query=$!
    sleep 2; touch "$work/sender.ready" "$work/imms.ready"
    echo "{\"target_during\":$(report)}"
    wait "$garbage" "$query" || true; cat "$work/garbage.out" "$work/query.out"
    wait "$sender" "$imms" || true; tail -1 "$work/sender.out"; tail -1 "$work/imms.out"
    touch "$work/closed"; wait "$writer" || true; tail -1 "$work/writer.out"
    echo "{\"target_alive\":$(kill -0 "$target_pid" 2>/dev/null && echo true || echo false),\"target\":$(report)}"
    sleep 5; echo "{\"target_5s_later\":$(report)}"  # the member's sends queued behind the flood land late
    echo "{\"target_warn_lines\":$(grep -c 'WARN' "$work/target.err" || true)}"
    ;;
  *) echo "unknown scenario $scenario" >&2; exit 2 ;;
esac
