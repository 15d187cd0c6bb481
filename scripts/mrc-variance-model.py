#!/usr/bin/env python3
"""Where SHARDS' sampling error comes from on a Zipf trace, and what stratifying the hot keys
removes from it: a model, not a measurement (docs/mrc.md, "Stratified sampling").

    scripts/mrc-variance-model.py [KEYS REQUESTS ALPHA]     (default 5000000 50000000 0.9)

Independent requests (IRM) over Zipf(ALPHA) keys; LRU at a size c follows Che's
approximation (a key misses with probability exp(-p T_c), T_c the characteristic time). A
key sampled at rate R with weight 1/R makes the adjusted estimate of the misses at c vary
by (1/R - 1) x sum of m_k^2 (m_k: key k's misses at c), over N^2 as a miss ratio: the
"miss" column. The "dist" column is the other part, the sampled stack distances: the
keys resident at c (each there with probability q_k = 1 - exp(-p_k T_c)) counted at 1/R
move every distance near c together by a relative sd of sqrt((1 - R)/R x sum q_k^2) / c,
which moves the miss ratio by the curve's slope times that. Promoting the H hottest keys
(rate 1, weight 1) drops their terms from both sums. RATES and SIZES (comma-separated
environment variables) replace the default rates (0.01, 0.1125) and sizes; with SIZES set
the last line per rate gives the expected mean absolute error over those sizes
(sqrt(2/pi) x the standard deviation of each, no promotion), the floor of a 20-point MAE
when they are the base-rate points. PROMOTED="LIMIT:EXPONENT,..." models the second
stratum instead (docs/mrc.md, "A second stratum"): LIMIT keys promoted among those the
rate R^EXPONENT keeps, so the LIMIT / R^EXPONENT hottest keys are sampled at R^EXPONENT
(weight R^-EXPONENT) and the rest at R; per rate and pair it prints the promoted requests
the pass keeps, the candidates' requests and the expected mean absolute error over SIZES
(EXPONENT 0: every promoted request kept, the stratification before 2026-11-25; 1: none
apart, plain sampling). Needs numpy.
"""
import os
import sys

import numpy as np

K, N, A = (int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])) if len(sys.argv) > 3 else (5_000_000, 50_000_000, 0.9)
p = np.arange(1, K + 1, dtype=float) ** -A
p /= p.sum()
lam = p * N


def che(c):
    """The characteristic time of an LRU cache of c objects."""
    lo, hi = 1.0, 1e13
    for _ in range(80):
        t = (lo * hi) ** 0.5
        lo, hi = (lo, t) if (1 - np.exp(-p * t)).sum() > c else (t, hi)
    return (lo * hi) ** 0.5


def miss_ratio(c):
    return (lam * np.exp(-p * che(c))).sum() / N


RATES = [float(r) for r in os.environ.get("RATES", "0.01,0.1125").split(",")]
SIZES = [int(c) for c in os.environ.get("SIZES", "4445,9197,19030,39382,81484,242525").split(",")]
if "PROMOTED" in os.environ:
    pairs = [(int(a), float(b)) for a, b in (x.split(":") for x in os.environ["PROMOTED"].split(","))]
    misses = {c: lam * np.exp(-p * che(c)) for c in SIZES}
    for R in RATES:
        for limit, exponent in pairs:
            ph = R ** exponent
            hot = int(min(K, limit / ph))
            sds = [np.sqrt((1 / ph - 1) * (misses[c][:hot] ** 2).sum() + (1 / R - 1) * (misses[c][hot:] ** 2).sum()) / N
                   for c in SIZES]
            share = lam[:hot].sum() / N
            print(f"R={R} limit {limit} promoted rate {ph:.4f} (the {hot:,} hottest keys): promoted requests kept"
                  f" {ph * share * N / 1e6:.1f}M, candidates' requests {ph * N / 1e6:.1f}M,"
                  f" expected MAE over the {len(SIZES)} sizes {np.sqrt(2 / np.pi) * np.mean(sds):.5f}")
    sys.exit(0)
for R in RATES:
    expected = 0.0
    for c in SIZES:
        pm = np.exp(-p * che(c))
        m, q = lam * pm, 1 - pm
        slope = (miss_ratio(c * 1.01) - miss_ratio(c)) / np.log(1.01)
        parts = []
        for H in [0, 1024, 4096, 16384]:
            sd_miss = np.sqrt((1 / R - 1) * (m[H:] ** 2).sum()) / N
            sd_dist = abs(slope) * np.sqrt((1 - R) / R * (q[H:] ** 2).sum()) / c
            parts.append(f"H={H}: miss {sd_miss:.4f} dist {sd_dist:.4f} (hot share {lam[:H].sum() / N:.2f})")
        print(f"R={R} c={c} miss ratio {(m.sum()) / N:.3f}: " + " | ".join(parts))
        expected += np.sqrt(2 / np.pi) * np.sqrt((1 / R - 1) * (m ** 2).sum()) / N
    if "SIZES" in os.environ:
        print(f"R={R}: expected mean absolute error over these {len(SIZES)} sizes {expected / len(SIZES):.5f}"
              f" (their share of a 20-point MAE: {expected / 20:.5f})")
