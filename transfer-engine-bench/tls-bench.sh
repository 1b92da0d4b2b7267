#!/usr/bin/env bash
# Issue 9's cost of security on the tcp transport: te-bench with the cluster key only (the v2 handshake every
# connection runs) beside the same with mutual TLS, ROUNDS times. connect_ms in each JSON line is the descriptor
# exchange before the run (both connects with their handshakes, one send and its answer).
# Usage: [ROUNDS=2] [DURATION=3s] [IMM=1] [ALT=changed.jar] tls-bench.sh DIR
#        (ALT: a jar of changed classes; each round then also runs the TLS cases with it first on the class path)
#        DIR holds jre/ (or set JAVA), te-bench.jar and node.p12 (password changeit),
#        made by: tls-bench.sh --bundle DIR   (needs this tree built, jlink and keytool)
set -uo pipefail
if [[ ${1:-} == --bundle ]]; then
  dest=${2:?usage: tls-bench.sh --bundle DIR}
  cd "$(dirname "$0")/.."
  export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
  mkdir -p "$dest"
  rm -rf "${dest:?}/jre" "$dest/node.p12"
  cp transfer-engine-bench/target/te-bench.jar "$dest/"
  cp transfer-engine-bench/tls-bench.sh "$dest/"
  "$JAVA_HOME/bin/jlink" --add-modules java.base,java.logging,jdk.unsupported,java.management,java.naming,java.xml,java.sql,jdk.crypto.ec \
    --strip-debug --no-header-files --no-man-pages --compress zip-9 --output "$dest/jre"
  "$JAVA_HOME/bin/keytool" -genkeypair -alias node -keyalg EC -groupname secp256r1 -dname CN=node -validity 30 \
    -storetype PKCS12 -keystore "$dest/node.p12" -storepass changeit -keypass changeit
  du -sh "$dest"
  exit 0
fi
dir=${1:?usage: tls-bench.sh DIR}
cd "$dir"
JAVA=${JAVA:-$PWD/jre/bin/java}
ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-3s}
KEY=(--option tcp.clusterKey=KqyWad/WpftAydYFjPxgOUdBXph2F1zDy1XpcR+GT+A=)  # 32 random bytes, base64 (a bench-only key)
TLS=(--tls-keystore "$PWD/node.p12" --tls-password changeit)
run() {
  local name=$1; shift
  local line
  line=$(timeout 60 "$JAVA" -cp "${CP:-te-bench.jar}" dev.transferengine.bench.TeBench write --duration "$DURATION" --warmup 1s "$@" 2>/tmp/tls-bench-err.txt | tail -1)
  [[ -z $line ]] && line="failed: $(grep -m1 -E 'Exception|Error' /tmp/tls-bench-err.txt)"
  echo "$name $line"
}
# The cases of one round run back to back, so plain and TLS share the host's state; IMM=0 leaves out the imm round
# trips. tls256 is the JDK's default-first suite, for comparison with the engine's default (AES-128 first).
AES256=(--tls-ciphers TLS_AES_256_GCM_SHA384)
for round in $(seq "$ROUNDS"); do
  run "key-1MiB-r$round" "${KEY[@]}" --size 1MiB
  run "tls-1MiB-r$round" "${KEY[@]}" "${TLS[@]}" --size 1MiB
  run "tls256-1MiB-r$round" "${KEY[@]}" "${TLS[@]}" "${AES256[@]}" --size 1MiB
  [[ -n ${ALT:-} ]] && CP=$ALT:te-bench.jar run "alt-tls-1MiB-r$round" "${KEY[@]}" "${TLS[@]}" --size 1MiB
  run "key-64KiB-r$round" "${KEY[@]}" --size 64KiB
  run "tls-64KiB-r$round" "${KEY[@]}" "${TLS[@]}" --size 64KiB
  [[ -n ${ALT:-} ]] && CP=$ALT:te-bench.jar run "alt-tls-64KiB-r$round" "${KEY[@]}" "${TLS[@]}" --size 64KiB
  if [[ ${IMM:-1} != 0 ]]; then
    run "key-imm-r$round" "${KEY[@]}" --op imm
    run "tls-imm-r$round" "${KEY[@]}" "${TLS[@]}" --op imm
  fi
done
