#!/usr/bin/env bash
# Gathers what report.sh needs on the h200 host (no Java, no network there) into the folder DEST and packs it into
# DEST.tar.xz (what the device run carries; under 64 MiB):
#   jre/           jlink'd Java 25 with jdk.jfr (JFR profiles), stripped
#   te-bench.jar   this tree's bench jar (built here unless TE_BENCH_JAR names one); it also holds the GPU JMH suites
#                  with JCuda's driver binding: DEST/jre/bin/java -jar DEST/te-bench.jar jmh UvmWatcherLatencyBenchmark
#   bin/, lib/     iperf3 (Debian 12's, with its libraries), the C tcp_pingpong anchor and tcp_stream (iperf3 with
#                  te-bench's memory footprint)
#   lf/            libfabric 2.1 with fabtests (fi_rma_bw, fi_rma_pingpong, fi_info), from .ci/libfabric-2.1.sh
#   node.p12       a keytool-made PKCS12 store (password changeit) for the TLS rows
#   report.sh, imm-pinning.sh, benchmarks-template.md, commit.txt   the scripts, the page report.sh fills, the commit
# Usage: transfer-engine-bench/bundle-h200.sh DEST     (Debian 12 binaries run on the host's newer glibc)
# Then, e.g. with DEST=.gpu-carry/report/bundle under /work/main: run with carry [".gpu-carry/report/bundle.tar.xz"]
#   tar -xJf .gpu-carry/report/bundle.tar.xz && OUT=$OUT bundle/report.sh
set -euo pipefail
dest=${1:?usage: bundle-h200.sh DEST}
cd "$(dirname "$0")/.."
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
rm -rf "${dest:?}"/{jre,bin,lib,lf,before} "$dest/node.p12"
mkdir -p "$dest"/{bin,lib,lf/bin,lf/lib}

jar=${TE_BENCH_JAR:-}
if [[ -z $jar ]]; then
  ./mvnw -B -q -o -pl transfer-engine-bench -am package -DskipTests
  jar=transfer-engine-bench/target/te-bench.jar
fi
cp "$jar" "$dest/te-bench.jar"
cp transfer-engine-bench/report.sh transfer-engine-bench/imm-pinning.sh transfer-engine-bench/benchmarks-template.md "$dest/"
git log -1 --format='%h %cs' >"$dest/commit.txt"
"$JAVA_HOME/bin/keytool" -genkeypair -alias node -keyalg EC -groupname secp256r1 -dname CN=node -validity 30 \
  -storetype PKCS12 -keystore "$dest/node.p12" -storepass changeit -keypass changeit

"$JAVA_HOME/bin/jlink" --add-modules java.base,java.logging,jdk.unsupported,java.management,java.naming,java.xml,java.sql,jdk.crypto.ec,jdk.jfr,jdk.management,jdk.management.jfr \
  --strip-debug --no-header-files --no-man-pages --compress zip-9 --output "$dest/jre"
strip --strip-unneeded "$dest/jre/lib/server/libjvm.so"

gcc -O2 -Wall -o "$dest/bin/tcp_pingpong" transfer-engine-bench/src/main/c/tcp_pingpong.c
gcc -O2 -Wall -pthread -o "$dest/bin/tcp_stream" transfer-engine-bench/src/main/c/tcp_stream.c
command -v iperf3 >/dev/null || { echo "needs iperf3 (apt-get install iperf3)" >&2; exit 1; }
cp "$(command -v iperf3)" "$dest/bin/"
for so in libiperf.so.0 libsctp.so.1; do cp -L "$(ldconfig -p | awk -v n="$so" '$1 == n {print $NF; exit}')" "$dest/lib/"; done

prefix=$(bash .ci/libfabric-2.1.sh | tail -1)
cp "$prefix"/bin/{fi_rma_bw,fi_rma_pingpong,fi_info} "$dest/lf/bin/"
cp -a "$prefix"/lib/libfabric.so* "$dest/lf/lib/"
strip --strip-unneeded "$dest"/lf/bin/* "$dest"/lf/lib/libfabric.so.*.* 2>/dev/null || true
tar -C "$(dirname "$dest")" -cf - "$(basename "$dest")" | xz -T0 -6 >"$dest.tar.xz"
du -sh "$dest" "$dest"/* "$dest.tar.xz"
