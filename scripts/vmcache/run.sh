#!/usr/bin/env bash
# Build scripts/vmcache/micro.cpp against a vmcache checkout and run the measurements that
# correspond to `bufcache bench pool`; JSON lines on stdout (see docs/performance.md).
#
#   scripts/vmcache/run.sh /path/to/vmcache-checkout [--quick]
#
# Needs g++ (C++20) and libaio-dev. The data file (vmcache's BLOCK) goes in a temporary
# directory under $TMPDIR and is removed at the end.
set -euo pipefail
src=${1:?usage: run.sh VMCACHE_CHECKOUT [--quick]}
quick=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/bufcache-vmcache-XXXXXX")
trap 'rm -rf "$work"' EXIT
g++ -DNDEBUG -O3 -std=c++20 -fnon-call-exceptions -fasynchronous-unwind-tables \
  -DVMCACHE_SRC="\"$(cd "$src" && pwd)/vmcache.cpp\"" -I"$src" \
  "$here/micro.cpp" -o "$work/micro" -laio 2>"$work/build.log" || { cat "$work/build.log" >&2; exit 1; }
if [ "$quick" = "--quick" ]; then
  runms=150; repeat=1; cached=32; evictgb=1; warm=1000
else
  runms=1000; repeat=3; cached=256; evictgb=1; warm=5000
fi
run() { # env assignments...
  : >"$work/bm"
  env BLOCK="$work/bm" RUNMS=$runms REPEAT=$repeat "$@" "$work/micro" 2>>"$work/stderr.log"
}
for t in 1 2; do
  run MODE=pinhit THREADS=$t PHYSGB=4 VIRTGB=4 DATAMB=$cached
  for x in 4 64 1024 4096; do
    run MODE=read THREADS=$t PHYSGB=4 VIRTGB=4 DATAMB=$cached TRANSFER=$x
  done
done
# vmcache sizes its pool in whole GiB: the smallest pool is 1 GiB, over 2 GiB of data.
for t in 1 2; do
  run MODE=evict THREADS=$t PHYSGB=$evictgb VIRTGB=4 DATAMB=$((2048 * evictgb)) WARMMS=$warm
done
