#!/usr/bin/env bash
# Builds the Java 25 runtime image the container tests start FROM, without any registry: busybox-static as the
# userland, the host's glibc, and a runtime jlink'ed from the local JDK, put together with `podman import`.
#
# Skips the build when the image already exists (set REBUILD=1 to force it).
# Environment: CI_WORK (default /tmp/transfer-engine-ci, must hold env.sh from podman-setup.sh),
# BASE_IMAGE (default localhost/jre25-bb:1), JDK (default /usr/lib/jvm/temurin-25-jdk-amd64).
set -euo pipefail

CI_WORK=${CI_WORK:-/tmp/transfer-engine-ci}
BASE_IMAGE=${BASE_IMAGE:-localhost/jre25-bb:1}
JDK=${JDK:-/usr/lib/jvm/temurin-25-jdk-amd64}
# java.se plus what Netty, Spring Boot's actuator and JFR reach for outside it.
MODULES=${MODULES:-java.se,jdk.unsupported,jdk.crypto.ec,jdk.management,jdk.jfr,jdk.net,jdk.naming.dns,jdk.zipfs,jdk.charsets}

log() { echo "[base-image] $*"; }

# shellcheck source=/dev/null
. "$CI_WORK/env.sh"

if [ "${REBUILD:-0}" != 1 ] && podman image exists "$BASE_IMAGE"; then
  log "$BASE_IMAGE already present"
  exit 0
fi

rootfs=$CI_WORK/rootfs
rm -rf "$rootfs" "$CI_WORK/jre"
"$JDK/bin/jlink" --add-modules "$MODULES" --strip-debug --no-header-files --no-man-pages \
  --compress zip-6 --output "$CI_WORK/jre"

mkdir -p "$rootfs"/{bin,lib/x86_64-linux-gnu,lib64,etc,tmp,opt,app,proc,sys,dev,root,usr}
chmod 1777 "$rootfs/tmp"
cp /bin/busybox "$rootfs/bin/busybox"
for applet in $("$rootfs/bin/busybox" --list); do
  [ -e "$rootfs/bin/$applet" ] || ln -s busybox "$rootfs/bin/$applet"
done
ln -s ../bin "$rootfs/usr/bin"
ln -s bin "$rootfs/sbin"
# The JVM needs only these from glibc; glibc >= 2.34 has the files and dns NSS modules inside libc.so.6.
for lib in libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 librt.so.1; do
  cp -L "/lib/x86_64-linux-gnu/$lib" "$rootfs/lib/x86_64-linux-gnu/"
done
cp -L /lib64/ld-linux-x86-64.so.2 "$rootfs/lib64/"
mv "$CI_WORK/jre" "$rootfs/opt/java"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$rootfs/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$rootfs/etc/group"
printf 'hosts: files dns\n' >"$rootfs/etc/nsswitch.conf"

tar -C "$rootfs" -c . | podman import \
  --change 'ENV PATH=/opt/java/bin:/bin' --change 'ENV JAVA_HOME=/opt/java' \
  --change 'WORKDIR /app' --change 'CMD ["/bin/sh"]' - "$BASE_IMAGE" >/dev/null
rm -rf "$rootfs"

podman run --rm --pull=never "$BASE_IMAGE" java -version
log "built $BASE_IMAGE"
