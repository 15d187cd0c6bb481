#!/usr/bin/env bash
# Fingerprint the Linux page cache with Dust inside a memory cgroup, then clean up.
#
#   scripts/dust-linux.sh [LIMIT_MIB [FILE_MIB [ITERATIONS [OUT_DIR]]]]
#
# Creates a scratch file of real data (not a sparse file: reading holes costs no I/O, so
# misses would look like hits) in a temporary directory, a memory cgroup limited to
# LIMIT_MIB (its page cache is charged there, so eviction happens inside the limit and
# the rest of the machine is not disturbed), runs `bufcache dust` in it, and removes the
# cgroup and the file whatever happens. Needs root for the cgroup. The cgroup is created
# below this shell's own memory cgroup, so any limit the caller is under still applies.
set -euo pipefail
LIMIT_MIB=${1:-48}
FILE_MIB=${2:-256}
ITERATIONS=${3:-20}
OUT=${4:-dust-linux-out}
BIN=${BUFCACHE:-target/release/bufcache}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dust-linux-XXXXXX")
cg=""
cleanup() {
    [ -n "$cg" ] && rmdir "$cg" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

echo "writing a ${FILE_MIB} MiB file in $tmp" >&2
dd if=/dev/urandom of="$tmp/file" bs=1M count="$FILE_MIB" status=none
sync

if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    # cgroup v2: a child of our own cgroup (needs the memory controller delegated).
    own=$(sed -n 's/^0:://p' /proc/self/cgroup)
    cg="/sys/fs/cgroup${own}/bufcache-dust-$$"
    mkdir "$cg"
    echo $((LIMIT_MIB * 1024 * 1024)) > "$cg/memory.max"
else
    # cgroup v1: the memory hierarchy.
    own=$(sed -n 's/^[0-9]*:memory:\(.*\)$/\1/p' /proc/self/cgroup)
    cg="/sys/fs/cgroup/memory${own}/bufcache-dust-$$"
    mkdir "$cg"
    echo $((LIMIT_MIB * 1024 * 1024)) > "$cg/memory.limit_in_bytes"
fi
echo "memory cgroup $cg limited to ${LIMIT_MIB} MiB; kernel $(uname -r)" >&2

# The subshell moves itself into the cgroup, then becomes bufcache; when it exits the
# cgroup is empty and can be removed.
sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$cg" \
    "$BIN" dust --target "linux:$tmp/file" --iterations "$ITERATIONS" --out "$OUT"
