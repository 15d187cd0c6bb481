#!/usr/bin/env bash
# Paired hit-path measurement: two builds of `bufcache` (before and after a change) and
# vmcache's micro-benchmark, alternated ROUNDS times in one session, so that their ratios
# are taken under the same load. Each turn measures pin-hit (pin + unpin of a random
# resident page, and an 8-byte optimistic read of one, each also through page hints in a
# build that has them: variants pin-hinted, optimistic-hinted) on 1 and 2 threads, best of 3
# one-second runs, CACHED MiB resident (default 256). JSON lines on stdout, each tagged
# with the round, who ran, and the load average when the turn began.
#
#   scripts/vmcache/paired.sh BUFCACHE_BEFORE BUFCACHE_AFTER MICRO > session.jsonl
#
# MICRO is `scripts/vmcache/micro.cpp` built as `run.sh` builds it (the g++ line there).
set -euo pipefail
before=${1:?usage: paired.sh BUFCACHE_BEFORE BUFCACHE_AFTER MICRO}
after=${2:?usage: paired.sh BUFCACHE_BEFORE BUFCACHE_AFTER MICRO}
micro=${3:?usage: paired.sh BUFCACHE_BEFORE BUFCACHE_AFTER MICRO}
rounds=${ROUNDS:-3}
cached=${CACHED:-256}
work=$(mktemp -d "${TMPDIR:-/tmp}/bufcache-paired-XXXXXX")
trap 'rm -rf "$work"' EXIT
tag() { sed "s/^{/{\"round\":$1,\"who\":\"$2\",\"load\":$3,/"; }
for r in $(seq 1 "$rounds"); do
  for who in before after vmcache; do
    load=$(cut -d' ' -f1 /proc/loadavg)
    if [ "$who" = vmcache ]; then
      for t in 1 2; do
        : >"$work/bm"
        BLOCK="$work/bm" MODE=pinhit THREADS=$t PHYSGB=4 VIRTGB=4 DATAMB=$cached \
          RUNMS=1000 REPEAT=3 "$micro" 2>>"$work/stderr.log" | tag "$r" vmcache "$load"
      done
    else
      bin=$before
      [ "$who" = after ] && bin=$after
      "$bin" bench pool --bench pin-hit --scheme mapped --threads 1,2 --repeat 3 \
        --cached-mib "$cached" --dir "$work" --json 2>>"$work/stderr.log" \
        | grep '^{' | tag "$r" "$who" "$load"
    fi
  done
done
