#!/usr/bin/env bash
# Gathers what h200-table.sh needs on the h200 host (no Java, no network there) into DEST:
#   jre/           jlink'd Java 25 with jdk.jfr (JFR profiles), stripped
#   te-bench.jar   this tree's bench jar (built here unless TE_BENCH_JAR names one); it also holds the GPU JMH suites
#                  with JCuda's driver binding: DEST/jre/bin/java -jar DEST/te-bench.jar jmh UvmWatcherLatencyBenchmark
#   bin/, lib/     iperf3 (Debian 12's, with its libraries) and the C tcp_pingpong anchor
#   lf/            libfabric 2.1 with fabtests (fi_rma_bw, fi_rma_pingpong, fi_info), from .ci/libfabric-2.1.sh
#   h200-table.sh, report.sh  the table script; the docs/benchmarks.md generator (see report.sh)
#   before/        with TE_BENCH_BEFORE=path of another checkout (built): its engine and bench classes, put first on
#                  the class path to measure the same cases before/after (thin jars: the bundle travels within 64 MiB)
# Usage: transfer-engine-bench/bundle-h200.sh DEST     (Debian 12 binaries run on the host's newer glibc)
set -euo pipefail
dest=${1:?usage: bundle-h200.sh DEST}
cd "$(dirname "$0")/.."
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
rm -rf "${dest:?}"/{jre,bin,lib,lf,te-bench-before.jar}
mkdir -p "$dest"/{bin,lib,lf/bin,lf/lib}

jar=${TE_BENCH_JAR:-}
if [[ -z $jar ]]; then
  ./mvnw -B -q -o -pl transfer-engine-bench -am package -DskipTests
  jar=transfer-engine-bench/target/te-bench.jar
fi
cp "$jar" "$dest/te-bench.jar"
cp transfer-engine-bench/h200-table.sh transfer-engine-bench/report.sh "$dest/"
rm -rf "$dest/before"
if [[ -n ${TE_BENCH_BEFORE:-} ]]; then
  mkdir -p "$dest/before"
  cp "$TE_BENCH_BEFORE"/transfer-engine-engine/target/transfer-engine-engine-*-SNAPSHOT.jar \
    "$TE_BENCH_BEFORE"/transfer-engine-bench/target/transfer-engine-bench-*-SNAPSHOT.jar "$dest/before/"
  rm -f "$dest"/before/*-tests.jar
fi

"$JAVA_HOME/bin/jlink" --add-modules java.base,java.logging,jdk.unsupported,java.management,java.naming,java.xml,java.sql,jdk.jfr,jdk.management,jdk.management.jfr \
  --strip-debug --no-header-files --no-man-pages --compress zip-9 --output "$dest/jre"
strip --strip-unneeded "$dest/jre/lib/server/libjvm.so"

gcc -O2 -Wall -o "$dest/bin/tcp_pingpong" transfer-engine-bench/src/main/c/tcp_pingpong.c
command -v iperf3 >/dev/null || { echo "needs iperf3 (apt-get install iperf3)" >&2; exit 1; }
cp "$(command -v iperf3)" "$dest/bin/"
for so in libiperf.so.0 libsctp.so.1; do cp -L "$(ldconfig -p | awk -v n="$so" '$1 == n {print $NF; exit}')" "$dest/lib/"; done

prefix=$(bash .ci/libfabric-2.1.sh | tail -1)
cp "$prefix"/bin/{fi_rma_bw,fi_rma_pingpong,fi_info} "$dest/lf/bin/"
cp -a "$prefix"/lib/libfabric.so* "$dest/lf/lib/"
strip --strip-unneeded "$dest"/lf/bin/* "$dest"/lf/lib/libfabric.so.*.* 2>/dev/null || true
du -sh "$dest" "$dest"/*
