#!/usr/bin/env bash
# Builds the GPU-initiated MoE run's bundle (issue 20 item 2) into .ci/gpu/target/moe-gpu.tar.xz for the accelerator
# host, which has no Java: a jlink'ed runtime, te-bench.jar (engine, moe and the driver half of JCuda), the moe test
# classes with JUnit and AssertJ, GpuTestLauncher, moe-kernels.ptx (for ptxas), libfabric 2.1's autogen'd tree (from
# .ci/gpu/libfabric-prepare.sh; moe-run.sh builds it there with CUDA, as the CUDA headers it needs, nvml.h among them,
# are on that host only) and .ci/gpu/moe-run.sh, which runs it all there.
#   bash .ci/gpu/moe-bundle.sh [autogen'd libfabric tree, default .ci/gpu/target/bundle/libfabric-2.1.0-autogen.tar.xz]
# On the host: tar -xJf moe-gpu.tar.xz && bash bundle/moe-run.sh  (results into $OUT)
set -euo pipefail
cd "$(dirname "$0")/../.."
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
FABRIC=$(readlink -f "${1:-.ci/gpu/target/bundle/libfabric-2.1.0-autogen.tar.xz}")
T=.ci/gpu/target
OUT=$T/bundle-moe
rm -rf "$OUT" && mkdir -p "$OUT/lib" "$OUT/launcher"
[ -f "$FABRIC" ] || { echo "no $FABRIC: run .ci/gpu/libfabric-prepare.sh first" >&2; exit 1; }

# The moe module's test class path is written in the same reactor build, so that its engine and kit dependencies
# resolve from the reactor rather than from an installed ~/.m2. PACKAGE=0 reuses what an earlier
# `./mvnw clean package -pl transfer-engine-bench -am -DskipTests` built and only compiles what changed since.
CLASSPATH_GOAL=(org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath -Dmdep.includeScope=test
  -Dmdep.outputFile=target/test.classpath)
if [ "${PACKAGE:-1}" = 0 ]; then
  ./mvnw -B -o -q test-compile -pl transfer-engine-moe -am "${CLASSPATH_GOAL[@]}"
else
  ./mvnw -B -o -q clean package -pl transfer-engine-bench -am -DskipTests -Djavadoc.skip "${CLASSPATH_GOAL[@]}"
fi
cp transfer-engine-bench/target/te-bench.jar "$OUT/"
cp -r transfer-engine-moe/target/test-classes "$OUT/test-classes"
cp transfer-engine-moe/src/main/resources/dev/transferengine/moe/moe-kernels.ptx "$OUT/"
# the tests' own libraries; the engine and moe classes come from te-bench.jar
tr ':' '\n' <transfer-engine-moe/target/test.classpath | grep -E '/(junit|opentest4j|apiguardian|assertj-core|slf4j-simple)' \
  | xargs -I{} cp {} "$OUT/lib/"
"$JAVA_HOME/bin/javac" -d "$OUT/launcher" -cp "$OUT/lib/*" .ci/gpu/GpuTestLauncher.java
cp "$FABRIC" "$OUT/libfabric-2.1.0-autogen.tar.xz"
cp .ci/gpu/moe-run.sh "$OUT/"
"$JAVA_HOME/bin/jlink" --add-modules java.base,java.logging,jdk.unsupported,java.management,java.naming,java.xml \
  --strip-debug --no-header-files --no-man-pages --compress zip-9 --output "$OUT/jre"
strip --strip-unneeded "$OUT/jre/lib/server/libjvm.so"
tar -C "$T" -cJf "$T/moe-gpu.tar.xz" --transform 's,^bundle-moe,bundle,' bundle-moe
du -sh "$OUT" "$T/moe-gpu.tar.xz"
