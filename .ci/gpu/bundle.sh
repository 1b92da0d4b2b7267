#!/usr/bin/env bash
# Builds what the GPU machine needs into .ci/gpu/target/bundle (git-ignored, so `run` can carry it):
#   jre/          a jlink'ed Java 25 runtime (the GPU machine has no Java)
#   classes/      engine main classes (with the PTX kernel), test-classes/ engine test classes
#   lib/          every engine dependency incl. jcuda-natives linux-x86_64 and the JUnit platform
#   launcher/     GpuTestLauncher (runs JUnit packages, one line per test)
#   te-bench.jar  the bench jar: the GPU JMH suites (UvmWatcherLatency, StagingBandwidth, EngineStaging) run from it
#   bench-kernels.ptx  the bench's kernels (inside te-bench.jar), beside it for run.sh's ptxas check
#   attacks/      issue 16's outside attacks (run.sh, outsider.py, Member compiled: the runtime has no javac), run as
#                 TE_BENCH_JAR=$PWD/te-bench.jar JAVA_HOME=$PWD/jre TARGET_DEVICE=cuda:0 attacks/run.sh freed-tcp
# Usage: .ci/gpu/bundle.sh     (then: run with carry [".ci/gpu/target/bundle"] and .ci/gpu/run.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
OUT=.ci/gpu/target/bundle
rm -rf "$OUT" && mkdir -p "$OUT"

# packages the engine (its test classes compiled, not run) and te-bench.jar
./mvnw -B -q -pl transfer-engine-bench -am package -DskipTests -Djavadoc.skip
./mvnw -B -q -pl transfer-engine-engine dependency:copy-dependencies -DincludeScope=test \
  -DoutputDirectory="$PWD/$OUT/lib"
cp -r transfer-engine-engine/target/classes "$OUT/classes"
cp -r transfer-engine-engine/target/test-classes "$OUT/test-classes"
mkdir -p "$OUT/launcher"
"$JAVA_HOME/bin/javac" -d "$OUT/launcher" -cp "$OUT/lib/*" .ci/gpu/GpuTestLauncher.java
cp transfer-engine-bench/target/te-bench.jar "$OUT/"
cp transfer-engine-bench/src/main/resources/dev/transferengine/bench/jmh/bench-kernels.ptx "$OUT/" # for run.sh's ptxas
mkdir -p "$OUT/attacks/classes"
cp transfer-engine-bench/attacks/run.sh transfer-engine-bench/attacks/outsider.py "$OUT/attacks/"
"$JAVA_HOME/bin/javac" -d "$OUT/attacks/classes" -cp "$OUT/te-bench.jar" transfer-engine-bench/attacks/Member.java \
  transfer-engine-bench/attacks/TargetMemory.java

# carry takes 64 MiB in all: byte-buddy only serves AssertJ's soft assertions, archunit only the layering tests
# (no GPU needed), the engine uses JCuda's driver API only (its runtime, NVRTC and PTX-compiler bindings are 25 of
# the natives jar's 26 MB; te-bench.jar leaves them out the same way), and libjvm.so sheds 5 MB unstripped.
rm -f "$OUT"/lib/byte-buddy-*.jar "$OUT"/lib/archunit-*.jar
zip -q -d "$OUT"/lib/jcuda-natives-*.jar 'lib/libJCudaRuntime-*' 'lib/libJNvrtc-*' 'lib/libJNvPTXCompiler-*'
"$JAVA_HOME/bin/jlink" --add-modules java.base,java.logging,jdk.unsupported,java.management,java.naming,java.xml \
  --strip-debug --no-header-files --no-man-pages --compress zip-9 --output "$OUT/jre"
strip --strip-unneeded "$OUT/jre/lib/server/libjvm.so"
du -sh "$OUT" "$OUT"/*
