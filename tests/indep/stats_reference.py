#!/usr/bin/python3
"""Reference values for tests/test_stats.c, computed with scipy and numpy.

Run:   /usr/bin/python3 tests/indep/stats_reference.py > /tmp/stats_ref.txt

It prints C initializers (and the versions of the packages that computed
them); tests/test_stats.c holds a copy of this output.  The script is for
regenerating and reviewing those constants: the test suite does not run it,
and scipy is not a dependency of the project (Debian: apt-get install
python3-scipy).  Two optional packages add cross-checks, printed as
comments: mpmath (scipy's t tail against a 60-digit evaluation) and
statsmodels (the hand-written p.adjust below against multipletests).

Sections:
  1. paired t-tests, scipy.stats.ttest_rel(a, b): small samples (n = 2 ..
     30) of per-query metric values, and two seeded samples (n = 1000 and
     n = 1,000,000) from an LCG that tests/test_stats.c reproduces exactly;
  2. two-sided tails 2 * scipy.stats.t.sf(|t|, df);
  3. Holm and Benjamini-Hochberg adjusted p-values: R's p.adjust, written
     out by hand below (r_p_adjust) so it can be reviewed line by line;
  4. numpy.quantile(x, q, method="linear") (Hyndman-Fan type 7).
"""
import math
import sys

import numpy as np
import scipy
import scipy.stats as st


def c_double(x):
    """A C literal that parses back to exactly the double x."""
    x = float(x)
    if math.isnan(x):
        return "NAN"
    if math.isinf(x):
        return "INFINITY" if x > 0 else "-INFINITY"
    r = repr(x)  # shortest string that round-trips
    return r if ("e" in r or "." in r) else r + ".0"


def c_list(xs):
    return "{" + ", ".join(c_double(x) for x in xs) + "}"


# ---------------------------------------------------------------------------
# 1. Paired t-tests.
# ---------------------------------------------------------------------------

# Per-query values of two configurations on the same queries: nDCG@10 with
# four decimals, reciprocal ranks (1, 1/2, 1/3, ...), recall@5 (multiples of
# 0.2), with many zeros and ties, as a retrieval sweep produces them.
PAIRED = [
    ("n=2 RR", [1.0, 0.5], [0.5, 0.3333333333333333]),
    ("n=3 RR with a zero", [1.0, 0.5, 0.0], [0.5, 0.5, 0.0]),
    ("n=5 RR, b better", [0.5, 0.3333333333333333, 0.0, 0.25, 1.0],
     [1.0, 0.5, 0.0, 0.5, 1.0]),
    ("n=10 nDCG@10", [0.6131, 0.0, 0.4307, 1.0, 0.3869, 0.5, 0.0, 0.9197, 0.2891, 0.6309],
     [0.5, 0.0, 0.4307, 0.8155, 0.3333, 0.6131, 0.0, 0.9197, 0.1, 0.5]),
    ("n=10 mean exactly 0", [0.5, 0.25, 0.75, 0.0, 1.0, 0.5, 0.125, 0.0, 0.0, 1.0],
     [0.25, 0.5, 0.5, 0.25, 1.0, 0.5, 0.125, 0.0, 0.0, 1.0]),
    ("n=30 R@5, ties and zeros",
     [0.0, 0.2, 0.4, 0.4, 1.0, 0.0, 0.6, 0.8, 0.2, 0.0, 1.0, 0.4, 0.0, 0.2, 0.6,
      0.8, 0.0, 0.0, 0.4, 1.0, 0.2, 0.6, 0.0, 0.4, 0.8, 1.0, 0.0, 0.2, 0.4, 0.6],
     [0.0, 0.2, 0.2, 0.4, 0.8, 0.0, 0.6, 0.6, 0.2, 0.0, 1.0, 0.2, 0.0, 0.0, 0.4,
      0.8, 0.0, 0.2, 0.4, 1.0, 0.0, 0.6, 0.0, 0.2, 0.8, 0.8, 0.0, 0.2, 0.2, 0.6]),
    ("n=30 near-identical, one diff",
     [0.5] * 29 + [0.75], [0.5] * 29 + [0.5]),
]

MASK64 = (1 << 64) - 1


def lcg_sample(n, seed, biased):
    """Per-query values a[i], b[i] = k/20 from a 64-bit LCG (Knuth's MMIX
    constants); tests/test_stats.c has the same function in C.  Every value
    is an integer k in [0, 20] divided by 20.0, a correctly rounded IEEE
    division in both languages, so both see the same doubles.

    biased:   a = k/20 with k uniform in [0, 20] (20% of queries 0 for both),
              b = clamp(k + delta, 0, 20)/20 with delta uniform in [-3, 4]:
              b is better on average.
    unbiased: k uniform in [3, 17] (20% of queries 0 for both), delta
              uniform in [-3, 3]: no clamping, no true difference."""
    s = seed & MASK64
    a = np.empty(n)
    b = np.empty(n)
    for i in range(n):
        s = (s * 6364136223846793005 + 1442695040888963407) & MASK64
        r = s >> 33
        s = (s * 6364136223846793005 + 1442695040888963407) & MASK64
        r2 = s >> 33
        if r % 5 == 0:
            ka = kb = 0
        elif biased:
            ka = (r >> 3) % 21
            kb = min(max(ka + (r2 % 8) - 3, 0), 20)
        else:
            ka = 3 + (r >> 3) % 15
            kb = ka + (r2 % 7) - 3
        a[i] = ka / 20.0
        b[i] = kb / 20.0
    return a, b


def ttest_row(a, b):
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    d = a - b
    res = st.ttest_rel(a, b)
    mean = float(np.mean(d))
    sd = float(np.std(d, ddof=1))
    return mean, sd, float(res.statistic), float(res.pvalue), mean / sd


def print_paired():
    print("/* paired t-tests: scipy.stats.ttest_rel(a, b); mean = numpy.mean(a - b),")
    print(" * sd = numpy.std(a - b, ddof=1), effect = mean / sd. */")
    print("/* name, n, a, b, mean, sd, t, p, effect */")
    for name, a, b in PAIRED:
        assert len(a) == len(b)
        m, sd, t, p, eff = ttest_row(a, b)
        print('{"%s", %d, %s, %s, %s, %s, %s, %s, %s},' % (
            name, len(a), c_list(a), c_list(b), c_double(m), c_double(sd), c_double(t),
            c_double(p), c_double(eff)))
    print()
    print("/* seeded LCG samples: n, seed, biased, mean, sd, t, p, effect */")
    for n, seed, biased in [(1000, 42, 1), (1000000, 7, 0)]:
        a, b = lcg_sample(n, seed, biased)
        m, sd, t, p, eff = ttest_row(a, b)
        print("{%d, %d, %d, %s, %s, %s, %s, %s}," % (
            n, seed, biased, c_double(m), c_double(sd), c_double(t), c_double(p), c_double(eff)))
    print()


# ---------------------------------------------------------------------------
# 2. Student's t tails.
# ---------------------------------------------------------------------------

GRID_DF = [1.0, 2.0, 5.0, 30.0, 1000.0, 1e6]
GRID_T = [0.0, 0.5, 1.96, 3.0, 10.0, 40.0]
# Tails far out (p down to 1e-300, where underflow in a naive evaluation
# would give 0 or garbage), real-valued df, and the region around
# t ~ sqrt(3), where the continued fraction switches to the complement.
EXTRA = [(1e60, 1.0), (1e150, 2.0), (1e60, 5.0), (1e10, 30.0), (1000.0, 99.5),
         (2.0, 2.5), (1.5, 7.3), (1.7, 123.25), (1.8, 123.25),
         (1.73, 1e6), (1.74, 1e6), (4.0, 0.5), (0.1, 1e6), (6.0, 1e5)]


def mp_p2(t, df):
    """2 P(T >= |t|) to 60 digits: the continued fraction of I_x(df/2, 1/2)
    (DLMF 8.17.22) evaluated backward in mpmath, or 1 - I_y(1/2, df/2)."""
    import mpmath as mp
    with mp.workdps(60):
        T = mp.mpf(t)
        D = mp.mpf(df)
        a, b = D / 2, mp.mpf(1) / 2
        x, y = D / (D + T * T), T * T / (D + T * T)
        swap = x > (a + 1) / (a + b + 2)
        if swap:
            a, b, x = b, a, y

        def frac(n):
            f = mp.mpf(1)
            for m in range(n - 1, -1, -1):
                f = 1 + (m + 1) * (b - m - 1) * x / ((a + 2 * m + 1) * (a + 2 * m + 2)) / f
                f = 1 - (a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)) / f
            return f

        n, prev = 64, frac(64)
        while True:
            n *= 2
            cur = frac(n)
            if abs(cur - prev) <= abs(cur) * mp.mpf(10) ** -50:
                break
            prev = cur
        v = x ** a * (1 - x) ** b / (a * mp.beta(a, b)) / cur
        return float(1 - v) if swap else float(v)


def print_tails():
    cases = [(t, df) for df in GRID_DF for t in GRID_T] + EXTRA
    print("/* two-sided tails: p = 2 * scipy.stats.t.sf(|t|, df). t, df, p */")
    worst = 0.0
    have_mp = True
    try:
        import mpmath  # noqa: F401
    except ImportError:
        have_mp = False
    for t, df in cases:
        p = float(2 * st.t.sf(abs(t), df))
        print("{%s, %s, %s}," % (c_double(t), c_double(df), c_double(p)))
        if have_mp and p > 0:
            worst = max(worst, abs(p - mp_p2(t, df)) / p)
    if have_mp:
        print("/* mpmath check: max relative deviation of these scipy values from a"
              " 60-digit evaluation: %.2g */" % worst)
    print()


# ---------------------------------------------------------------------------
# 3. Holm and Benjamini-Hochberg, as R's p.adjust (R 4.x, src/library/stats/R/p.adjust.R):
#      p <- p[!is.na(p)]; n <- length(p)            (NAs left out of the family)
#      holm: i <- seq_len(n); o <- order(p)
#            pmin(1, cummax((n - i + 1L) * p[o]))[order(o)]
#      BH:   i <- n:1L; o <- order(p, decreasing = TRUE)
#            pmin(1, cummin(n/i * p[o]))[order(o)]
# Written out below with explicit loops, in the same floating-point order.
# ---------------------------------------------------------------------------

def r_p_adjust(p, method):
    keep = [i for i, v in enumerate(p) if not math.isnan(v)]
    n = len(keep)
    out = [float("nan")] * len(p)
    order = sorted(keep, key=lambda i: (p[i], i))  # ascending, ties by index
    if method == "holm":
        run = 0.0
        for j, i in enumerate(order):      # j = rank - 1
            run = max(run, float(n - j) * p[i])
            out[i] = min(1.0, run)
    elif method == "bh":
        run = float("inf")
        for j in range(n - 1, -1, -1):     # from the largest p down
            i = order[j]
            run = min(run, (float(n) / float(j + 1)) * p[i])
            out[i] = min(1.0, run)
    else:
        raise ValueError(method)
    return out


NAN = float("nan")
ADJUST = [
    # Benjamini & Hochberg (1995), J. R. Stat. Soc. B 57:289-300, section 4.1:
    # the 15 p-values of the example.  At level 0.05, BH rejects the 4
    # smallest; the Bonferroni-type procedures (Holm) reject 3.
    ("BH 1995 sec. 4.1",
     [0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459,
      0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.000]),
    # The same 15 values in a scrambled order (index bookkeeping).
    ("BH 1995 scrambled",
     [0.3240, 0.0019, 1.000, 0.0298, 0.0001, 0.6528, 0.0459, 0.0095, 0.4262,
      0.0201, 0.7590, 0.0004, 0.0344, 0.5719, 0.0278]),
    # Wikipedia, "Holm-Bonferroni method", section Example: four hypotheses
    # with p = 0.01, 0.04, 0.03, 0.005 at alpha = 0.05; H1 and H4 are
    # rejected (0.005 < 0.05/4, 0.01 < 0.05/3, 0.03 > 0.05/2).
    ("Wikipedia Holm example", [0.01, 0.04, 0.03, 0.005]),
    # Ties (equal p-values get equal adjusted values), the cap at 1.
    ("ties", [0.02, 0.01, 0.02, 0.04, 0.01, 0.5, 0.02]),
    ("cap at 1", [0.3, 0.6, 0.9, 0.45]),
    # NaN entries stay NaN and are left out of the family (m = 3 here).
    ("NaN left out", [0.04, NAN, 0.01, NAN, 0.03]),
    ("m = 1", [0.03]),
    ("zeros and ones", [0.0, 1.0, 0.0, 0.5]),
]


def print_adjust():
    print("/* p.adjust (R semantics, hand-written r_p_adjust): name, m, p, holm, bh */")
    for name, p in ADJUST:
        print('{"%s", %d, %s, %s, %s},' % (
            name, len(p), c_list(p), c_list(r_p_adjust(p, "holm")), c_list(r_p_adjust(p, "bh"))))
    try:
        from statsmodels.stats.multitest import multipletests
        worst = 0.0
        for name, p in ADJUST:
            keep = [i for i, v in enumerate(p) if not math.isnan(v)]
            sub = np.array([p[i] for i in keep])
            for method, sm in (("holm", "holm"), ("bh", "fdr_bh")):
                want = multipletests(sub, method=sm)[1]
                got = [r_p_adjust(p, method)[i] for i in keep]
                worst = max(worst, max(abs(g - w) for g, w in zip(got, want)))
        import statsmodels
        print("/* statsmodels %s multipletests(holm, fdr_bh) on the non-NaN values:"
              " max |difference| %.2g */" % (statsmodels.__version__, worst))
    except ImportError:
        pass
    print()


# ---------------------------------------------------------------------------
# 4. Quantiles.
# ---------------------------------------------------------------------------

QUANT_X = [
    ("one value", [0.7]),
    ("two values", [0.0, 1.0]),
    ("RR ties", [0.0, 0.0, 0.0, 0.2, 0.25, 0.3333333333333333, 0.5, 0.5, 1.0, 1.0]),
    ("latencies ms", [3.25, 7.5, 8.0, 12.125, 13.0, 21.75, 40.5]),
    ("negative diffs", [-0.5, -0.25, -0.1, 0.0, 0.0, 0.05, 0.3]),
]
QUANT_Q = [0.0, 0.025, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.975, 0.99, 1.0, 1.0 / 3.0]


def print_quantiles():
    print("/* numpy.quantile(x, q, method='linear'): name, n, x, want[q] for q in")
    print(" * %s */" % c_list(QUANT_Q))
    for name, x in QUANT_X:
        xs = sorted(x)
        want = [float(np.quantile(np.array(xs), q, method="linear")) for q in QUANT_Q]
        print('{"%s", %d, %s, %s},' % (name, len(xs), c_list(xs), c_list(want)))
    print()


def main():
    print("/* Generated by tests/indep/stats_reference.py with Python %s, numpy %s,"
          " scipy %s. */" % (sys.version.split()[0], np.__version__, scipy.__version__))
    print()
    print_paired()
    print_tails()
    print_adjust()
    print_quantiles()


if __name__ == "__main__":
    main()
