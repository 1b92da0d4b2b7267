#!/usr/bin/env bash
# Builds libfabric 2.1.0 and its fabtests from Debian trixie's source package into $CI_WORK/libfabric-2.1.0 (once;
# a later run finds the build there) and prints that prefix on its last line. Debian 12 ships libfabric 1.17, users
# of EFA installers run 1.2x/2.x: CI runs the fabric contract suites against both.
#   bash .ci/libfabric-2.1.sh            (as root: installs autoconf/automake/libtool; CI_WORK defaults as in .ci/run)
# The trixie deb-src entry lives in a private apt configuration under $CI_WORK, so the machine's own apt sources
# and lists are left as they are. It uses the same mirror as the machine's sources.
set -euo pipefail

CI_WORK=${CI_WORK:-/tmp/transfer-engine-ci}
version=2.1.0
prefix=$CI_WORK/libfabric-$version
stamp=$prefix/.built
if [ -f "$stamp" ]; then
  echo "$prefix"
  exit 0
fi

tools=(autoconf automake libtool make gcc libc6-dev xz-utils)
missing=()
for p in "${tools[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  apt-get -o DPkg::Lock::Timeout=900 update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

apt_dir=$CI_WORK/apt-trixie-src
src_dir=$CI_WORK/libfabric-src
mkdir -p "$apt_dir/lists/partial" "$src_dir"
mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null \
  | grep -oE '^(URIs:|deb) +https?://[^ ]+/debian/?( |$)' | head -1 | awk '{print $2}' || true)
mirror=${mirror:-http://deb.debian.org/debian}
cat >"$apt_dir/trixie-src.sources" <<EOF
Types: deb-src
URIs: $mirror
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/trixie-src.sources" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$apt_dir/lists" -o DPkg::Lock::Timeout=900)
apt-get "${apt_opts[@]}" update -qq
orig=libfabric_$version.orig.tar.xz
# apt checks what it fetches against the signed Sources index. Only the upstream tarball is needed; some mirrors
# serve it but not the .dsc, which makes apt-get source fail after fetching it.
(cd "$src_dir" && apt-get "${apt_opts[@]}" source --download-only "libfabric=$version-1.1" >/dev/null 2>&1) \
  || [ -f "$src_dir/$orig" ] || { echo "could not fetch $orig from $mirror (trixie)" >&2; exit 1; }

build=$src_dir/libfabric-$version
rm -rf "$build" "$prefix"
tar -C "$src_dir" -xf "$src_dir/$orig"
jobs=$(nproc)
# Only the providers that run without RDMA hardware; rxm comes with tcp (tcp;ofi_rxm).
(cd "$build" && ./autogen.sh >/dev/null && ./configure -q --prefix="$prefix" --disable-efa --disable-verbs \
  --disable-psm2 --disable-psm3 --disable-opx --disable-usnic --disable-ucx --disable-cxi --disable-lpp \
  --enable-tcp --enable-shm --enable-rxm --enable-sockets --enable-udp --enable-rxd \
  && make -s -j"$jobs" >/dev/null && make -s install >/dev/null)
(cd "$build/fabtests" && ./autogen.sh >/dev/null && ./configure -q --prefix="$prefix" --with-libfabric="$prefix" && make -s -j"$jobs" >/dev/null && make -s install >/dev/null)
"$prefix/bin/fi_info" --version >&2
touch "$stamp"
echo "$prefix"
