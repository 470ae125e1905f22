#!/bin/sh
# Install the Debian packages lever needs to build and test, if missing
# (jq: the e2e tests check JSON output with it; dpkg-dev and tcl: the
# stabilizer_debian test unpacks Debian sources and builds sqlite3's
# amalgamation with tclsh; lld: stabilizer_cc links with it; gdb:
# stabilizer_code checks gdb unwinds through moved code; xz-utils, bzip2,
# python3: programs stabilize_programs runs under the shuffling heap;
# libprotobuf-c-dev, protobuf-c-compiler, zlib1g-dev: lever layout export
# --pprof encodes profile.proto and gzips it; dwarves: pahole, which
# cli_layout_refs_pahole checks lever layout refs against; libstb-dev:
# stb_image_write's source, the real library routine annotate_real_stb
# builds and annotates offline).
# A test whose dependency is missing reports Skipped (a failure under CI=true).
# Idempotent; works as root or through sudo.
set -eu
PKGS="build-essential cmake pkg-config clang libdw-dev libelf-dev libcapstone-dev libgsl-dev
libcmocka-dev libjansson-dev coz-profiler gcc-12-plugin-dev llvm-14-dev jq dpkg-dev tcl
lld gdb xz-utils bzip2 python3 libprotobuf-c-dev protobuf-c-compiler zlib1g-dev
dwarves libstb-dev"
# --bench: the peers and targets of bench/ (hyperfine, uftrace for
# bench/annotate_probe, xz for the comparisons, linux-perf for the counters
# of bench/stabilizer/run.sh, libevent-dev and bc to build and time memcached
# in bench/layout_static, libmemcached-tools: memcaslap, the load of
# bench/layout/memcached.sh); --browser: headless Chromium.
case "${1:-}" in
--bench) PKGS="$PKGS hyperfine xz-utils linux-perf libevent-dev bc uftrace libmemcached-tools" ;;
--browser) PKGS="$PKGS chromium" ;;
esac
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "install-deps: installing:$missing"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
