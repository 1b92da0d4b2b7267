#!/usr/bin/env bash
# Prepares libfabric 2.1.0 (Debian trixie's source, as .ci/libfabric-2.1.sh fetches it) for the GPU host, which has
# no autotools: extracts a clean tree, runs autogen.sh in it and in fabtests/, and packs it as
# .ci/gpu/target/bundle/libfabric-2.1.0-autogen.tar.xz (about 4 MB) for .ci/gpu/libfabric-cuda.sh to build there.
#   bash .ci/gpu/libfabric-prepare.sh      (after .ci/gpu/bundle.sh, which empties the bundle folder)
set -euo pipefail
cd "$(dirname "$0")/../.."
CI_WORK=${CI_WORK:-/tmp/transfer-engine-ci}
orig=$CI_WORK/libfabric-src/libfabric_2.1.0.orig.tar.xz
[ -f "$orig" ] || bash .ci/libfabric-2.1.sh >/dev/null # fetches (and builds) it once
OUT=$PWD/.ci/gpu/target/bundle
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -C "$work" -xf "$orig"
(cd "$work/libfabric-2.1.0" && ./autogen.sh >/dev/null 2>&1 && cd fabtests && ./autogen.sh >/dev/null 2>&1)
mkdir -p "$OUT"
tar -C "$work" -cJf "$OUT/libfabric-2.1.0-autogen.tar.xz" libfabric-2.1.0
ls -la "$OUT/libfabric-2.1.0-autogen.tar.xz"
