#!/usr/bin/env bash
# The server's rate on a cached 4 KiB file against the minimal static server of the same
# crates (crates/serve/examples/minimal_static.rs), under wrk, in paired rounds with the
# order alternated; prints each run's rate and the server's CPU time per request (from
# /proc/PID/stat). docs/serve.md, "Per-request cost", has the method and the numbers.
#
#   scripts/serve-rate.sh [ROUNDS]        (default 8; needs wrk, loopback ports 18081-18082)
set -euo pipefail
rounds=${1:-8}
cd "$(dirname "$0")/.."
command -v wrk >/dev/null || { echo "serve-rate: wrk is not installed (apt install wrk)" >&2; exit 1; }
cargo build --release -q -p bufcache-cli -p bufcache-serve --example minimal_static
bin=${CARGO_TARGET_DIR:-$PWD/target}/release
dir=$(mktemp -d)
head -c 4096 /dev/urandom > "$dir/a.dat"
cat "$dir/a.dat" > /dev/null
"$bin/bufcache" serve --root "$dir" --listen 127.0.0.1:18081 > "$dir/serve.log" 2>&1 &
serve_pid=$!
"$bin/examples/minimal_static" "$dir" 127.0.0.1:18082 > "$dir/minimal.log" 2>&1 &
minimal_pid=$!
trap 'kill $serve_pid $minimal_pid 2>/dev/null; rm -rf "$dir"' EXIT
sleep 1
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) = 1 ]; then order="serve minimal"; else order="minimal serve"; fi
  for who in $order; do
    if [ "$who" = serve ]; then port=18081; pid=$serve_pid; else port=18082; pid=$minimal_pid; fi
    before=$(ticks $pid)
    out=$(wrk -t1 -c32 -d3s "http://127.0.0.1:$port/a.dat")
    after=$(ticks $pid)
    n=$(awk '/requests in/ {print $1}' <<< "$out")
    rps=$(awk '/Requests\/sec/ {print $2}' <<< "$out")
    cpu_us=$(awk -v t=$((after - before)) -v n="$n" -v hz="$hz" 'BEGIN {printf "%.1f", t * 1e6 / hz / n}')
    echo "round $r $who req/s $rps cpu_us_per_request $cpu_us load $(cut -d' ' -f1 /proc/loadavg)"
  done
done
