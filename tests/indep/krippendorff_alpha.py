#!/usr/bin/python3
"""Krippendorff's interval alpha of his own worked example, for
tests/test_agreement.c, in exact rational arithmetic and plain Python.

Run:   /usr/bin/python3 tests/indep/krippendorff_alpha.py

The data are the 4 observers x 12 units of Krippendorff (2011), "Computing
Krippendorff's Alpha-Reliability", section C ("." is a missing value); the
paper gives interval alpha = 0.849.

This script takes the paper's route, not the C code's: the coincidence
matrix o_ck = sum_u (number of c-k pairs of values in unit u) / (m_u - 1)
over the pairable units (m_u >= 2), its marginals n_c, n = sum_c n_c, and
  alpha = 1 - (n - 1) * sum_{c,k} o_ck d2(c,k) / sum_{c,k} n_c n_k d2(c,k),
with d2(c,k) = (c - k)^2 for interval data.  The C code works from the
values (per-unit and overall sums of squared deviations); both are the same
rational, so agreement to 1e-12 checks the algebra as well as the code.
The suite does not run this script; it prints the value the test holds.
"""
from fractions import Fraction

M = None
DATA = [  # rows: observers A..D; columns: units 1..12
    [1, 2, 3, 3, 2, 1, 4, 1, 2, M, M, M],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, M, 3],
    [M, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, M],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, M],
]


def interval_alpha(rows):
    n_units = len(rows[0])
    o = {}  # (c, k) -> Fraction
    for u in range(n_units):
        vals = [r[u] for r in rows if r[u] is not None]
        m = len(vals)
        if m < 2:
            continue
        for i in range(m):
            for j in range(m):
                if i != j:
                    key = (vals[i], vals[j])
                    o[key] = o.get(key, Fraction(0)) + Fraction(1, m - 1)
    n_c = {}
    for (c, _k), w in o.items():
        n_c[c] = n_c.get(c, Fraction(0)) + w
    n = sum(n_c.values())
    obs = sum(w * (c - k) ** 2 for (c, k), w in o.items())
    exp = sum(n_c[c] * n_c[k] * (c - k) ** 2 for c in n_c for k in n_c)
    return 1 - (n - 1) * obs / exp, n


alpha, n = interval_alpha(DATA)
print("pairable values n =", n)
print("interval alpha =", alpha, "=", repr(float(alpha)))
