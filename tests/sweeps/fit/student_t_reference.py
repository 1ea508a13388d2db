#!/usr/bin/env python3
"""SciPy's values for sweeps/fit/student_t.h, as the C++ table tests/sweeps/fit/student_t_reference.h.

Regenerate the table (Debian's python3-scipy, deploy/install-deps.sh):
  /usr/bin/python3 tests/sweeps/fit/student_t_reference.py > tests/sweeps/fit/student_t_reference.h
Check the committed table against the SciPy installed (the ctest fit.StudentTAgreesWithScipy):
  /usr/bin/python3 tests/sweeps/fit/student_t_reference.py --check tests/sweeps/fit/student_t_reference.h
--check exits 0 when every value agrees, 1 at the first one that does not (printed), 77 when SciPy is
not installed (ctest: skipped).

What each column is:
  quantiles  p-quantile of Student's t on df degrees of freedom: the root of SciPy's cdf,
             scipy.stats.t.cdf(q, df) = p (for p > 1/2: scipy.stats.t.sf(q, df) = 1 - p, which is
             exact), by scipy.optimize.brentq started from scipy.stats.t.ppf. scipy_ppf is
             scipy.stats.t.ppf(p, df) itself: SciPy up to at least 1.10 computes it with cdflib's
             stdtrit, whose search stops at about 1e-9 relative (2e-9 on this grid), so it is kept
             beside the root, not used as the reference.
  cdfs       scipy.stats.t.cdf(t, df), and the two-sided p-value 2 * scipy.stats.t.sf(|t|, df).
  betas      scipy.special.betainc(a, b, x), the regularized incomplete beta function I_x(a, b). The
             cases keep a and b at or below 1e4: above, SciPy 1.10's betainc (Cephes) loses digits
             (6e-11 relative at (1e5, 0.5, 0.99999); 0.1146 at (1e9, 1e9, 0.5), where the exact
             value is 1/2). Student's t with many degrees of freedom is in the cdfs (scipy.stats.t
             computes it with cdflib's bratio, which keeps its digits).
  holm       Holm-Bonferroni adjusted p-values, checked by hand below against the definition
             adjusted_(i) = max over j <= i of min(1, (m - j + 1) p_(j)) (p sorted ascending, NaN
             entries left NaN and not counted in m); against statsmodels' multipletests(method="holm")
             too when statsmodels is installed.
"""

import math
import re
import sys

DFS = [0.5, 1, 1.5, 2, 3, 4, 5, 7, 10, 30, 100, 1e6]
PS = [1e-12, 1e-6, 0.001, 0.025, 0.05, 0.1, 0.3, 0.5, 0.7, 0.9, 0.95, 0.975, 0.999, 1 - 1e-6]
TS = [-50, -5, -2, -1, 0, 0.5, 1, 2, 5, 50]
# (a, b, x): Student's t's (df/2, 1/2) and (1/2, df/2), symmetric, skewed, small and large
# parameters, both tails, the ends of [0, 1].
BETAS = [
    (0.5, 0.5, 0.5), (0.5, 0.5, 1e-10), (1, 1, 0.3), (2, 3, 0.4), (1.5, 2.5, 0.75),
    (0.5, 5, 0.01), (5, 0.5, 0.99), (2.5, 0.5, 0.2), (0.25, 0.5, 1e-40), (50, 0.5, 0.9),
    (0.5, 50, 0.001), (10, 10, 0.5), (10, 20, 0.1), (3, 7, 1e-5), (7, 3, 0.99999),
    (30, 2, 0.999), (0.1, 0.1, 0.7), (0.01, 1, 0.5), (1, 0.01, 0.5), (100, 100, 0.45),
    (200, 300, 0.2), (1000, 1000, 0.49), (1e4, 1e4, 0.505), (500, 0.5, 0.999),
    (0.5, 500, 0.001), (4, 4, 0.0), (4, 4, 1.0),
]
# Holm cases: input, and the adjusted values worked out by hand from the definition (the products
# written as the doubles they are: 3 * 0.3 is 0.8999999999999999).
NAN = float("nan")
HOLM = [
    # sorted 0.01, 0.03, 0.04 (m = 3): 3 * 0.01, 2 * 0.03, max(1 * 0.04, 0.06)
    ([0.01, 0.04, 0.03], [3 * 0.01, 2 * 0.03, 2 * 0.03]),
    # sorted 0.2, 0.3, 0.6, 0.9 (m = 4): 4 * 0.2, 3 * 0.3, min(1, 2 * 0.6), max(1 * 0.9, 1)
    ([0.3, 0.6, 0.2, 0.9], [3 * 0.3, 1.0, 4 * 0.2, 1.0]),
    # NaN left NaN, m = 3: sorted 0.01, 0.02, 0.5: 3 * 0.01, 2 * 0.02, 1 * 0.5
    ([0.02, NAN, 0.01, 0.5], [2 * 0.02, NAN, 3 * 0.01, 0.5]),
    # a tie: sorted 0.01, 0.01, 0.04: 3 * 0.01, max(2 * 0.01, 0.03), max(1 * 0.04, 0.03)
    ([0.01, 0.04, 0.01], [3 * 0.01, 0.04, 3 * 0.01]),
    # the step-down's running maximum: sorted 0.001, 0.04, 0.045, 0.05 (m = 4): 4 * 0.001,
    # 3 * 0.04, max(2 * 0.045, 0.12), max(1 * 0.05, 0.12)
    ([0.05, 0.001, 0.045, 0.04], [3 * 0.04, 4 * 0.001, 3 * 0.04, 3 * 0.04]),
    ([0.0, 0.5], [0.0, 0.5]),
    ([0.2], [0.2]),
    ([NAN, NAN], [NAN, NAN]),
]


def holm_by_definition(p_values):
    """adjusted_(i) = max over j <= i of min(1, (m - j + 1) p_(j)), NaN left out of m."""
    present = sorted((p, index) for index, p in enumerate(p_values) if not math.isnan(p))
    m = len(present)
    adjusted = [NAN] * len(p_values)
    for i in range(m):
        adjusted[present[i][1]] = max(min(1.0, (m - j) * present[j][0]) for j in range(i + 1))
    return adjusted


def same(left, right):
    return len(left) == len(right) and all(
        (math.isnan(a) and math.isnan(b)) or a == b for a, b in zip(left, right))


def check_holm():
    for p_values, by_hand in HOLM:
        if not same(holm_by_definition(p_values), by_hand):
            raise SystemExit(f"holm: the hand values {by_hand} for {p_values} are not the definition's "
                             f"{holm_by_definition(p_values)}")
    try:
        from statsmodels.stats.multitest import multipletests
    except ImportError:
        return
    for p_values, by_hand in HOLM:
        present = [p for p in p_values if not math.isnan(p)]
        if not present:
            continue
        theirs = iter(multipletests(present, method="holm")[1])
        expected = [NAN if math.isnan(p) else float(next(theirs)) for p in p_values]
        if not same(expected, by_hand):
            raise SystemExit(f"holm: statsmodels gives {expected} for {p_values}, the hand values are {by_hand}")


def quantile(stats, optimize, p, df):
    """The root of SciPy's cdf: cdf(q) = p, or sf(q) = 1 - p for p > 1/2 (1 - p is exact there)."""
    if p == 0.5:
        return 0.0
    if p < 0.5:
        f = lambda t: float(stats.t.cdf(t, df)) - p
    else:
        upper = 1 - p
        f = lambda t: upper - float(stats.t.sf(t, df))
    start = float(stats.t.ppf(p, df))
    low, high = start - abs(start) * 1e-6, start + abs(start) * 1e-6
    while f(low) > 0:
        low -= (high - low) * 2
    while f(high) < 0:
        high += (high - low) * 2
    return optimize.brentq(f, low, high, xtol=1e-300, rtol=4 * sys.float_info.epsilon, maxiter=500)


def number(value):
    text = repr(float(value))
    if text == "nan":
        return "kNaN"
    return text


def generate():
    import numpy
    import scipy
    from scipy import optimize, special, stats

    check_holm()
    out = []
    emit = out.append
    emit("// tests/sweeps/fit/student_t_reference.h")
    emit("//")
    emit(f"// GENERATED by tests/sweeps/fit/student_t_reference.py from SciPy {scipy.__version__} "
         f"(NumPy {numpy.__version__}): do not edit.")
    emit("// Regenerate: /usr/bin/python3 tests/sweeps/fit/student_t_reference.py > "
         "tests/sweeps/fit/student_t_reference.h")
    emit("// The ctest fit.StudentTAgreesWithScipy checks it against the SciPy installed (--check); the")
    emit("// script's docstring says what each column is.")
    emit("#pragma once")
    emit("")
    emit("#include <limits>")
    emit("#include <vector>")
    emit("")
    emit("namespace rung::fit::reference {")
    emit("")
    emit("inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();")
    emit("")
    emit("// quantile: the root of scipy.stats.t.cdf(q, df) = p; scipy_ppf: scipy.stats.t.ppf(p, df).")
    emit("struct QuantileCase {")
    emit("  double df, p, quantile, scipy_ppf;")
    emit("};")
    emit("inline constexpr QuantileCase kQuantiles[] = {")
    for df in DFS:
        for p in PS:
            values = (df, p, quantile(stats, optimize, p, df), stats.t.ppf(p, df))
            emit("    {" + ", ".join(number(v) for v in values) + "},")
    emit("};")
    emit("")
    emit("// cdf: scipy.stats.t.cdf(t, df); two_sided: 2 * scipy.stats.t.sf(|t|, df).")
    emit("struct CdfCase {")
    emit("  double df, t, cdf, two_sided;")
    emit("};")
    emit("inline constexpr CdfCase kCdfs[] = {")
    for df in DFS:
        for t in TS:
            values = (df, t, stats.t.cdf(t, df), 2 * stats.t.sf(abs(t), df))
            emit("    {" + ", ".join(number(v) for v in values) + "},")
    emit("};")
    emit("")
    emit("// value: scipy.special.betainc(a, b, x) = I_x(a, b).")
    emit("struct BetaCase {")
    emit("  double a, b, x, value;")
    emit("};")
    emit("inline constexpr BetaCase kBetas[] = {")
    for a, b, x in BETAS:
        values = (a, b, x, special.betainc(a, b, x))
        emit("    {" + ", ".join(number(v) for v in values) + "},")
    emit("};")
    emit("")
    emit("// Holm-Bonferroni: p-values and their adjusted values, by hand from the definition.")
    emit("struct HolmCase {")
    emit("  std::vector<double> p_values, adjusted;")
    emit("};")
    emit("inline const std::vector<HolmCase> kHolm = {")
    for p_values, by_hand in HOLM:
        emit("    {{" + ", ".join(number(v) for v in p_values) + "}, {" +
             ", ".join(number(v) for v in by_hand) + "}},")
    emit("};")
    emit("")
    emit("}  // namespace rung::fit::reference")
    return "\n".join(out) + "\n"


NUMBER = re.compile(r"kNaN|[-+]?(?:\d+\.?\d*(?:e[-+]?\d+)?|inf)")


def rows(text):
    """The table's rows: (line number, [numbers]) for each line that is an initializer."""
    found = []
    for line_number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("{") and stripped.endswith(","):
            values = [NAN if token == "kNaN" else float(token) for token in NUMBER.findall(stripped)]
            found.append((line_number, stripped, values))
    return found


def agree(committed, live, tolerance):
    if math.isnan(committed) or math.isnan(live):
        return math.isnan(committed) and math.isnan(live)
    if committed == live:
        return True
    return abs(committed - live) <= tolerance * max(abs(committed), abs(live))


def check(path):
    try:
        import scipy  # noqa: F401
    except ImportError:
        print("student_t_reference: SciPy is not installed (Debian's python3-scipy); skipped")
        return 77
    live = generate()
    with open(path) as committed_file:
        committed = committed_file.read()
    if live == committed:
        print(f"student_t_reference: {path} is what this SciPy generates, to the last digit")
        return 0
    # Another SciPy may differ in the last digits: values agree to 1e-13 relative, except scipy_ppf
    # (the last column of a quantile row), cdflib's stdtrit, to 1e-8 (newer SciPy computes it anew).
    committed_rows = rows(committed)
    live_rows = rows(live)
    if len(committed_rows) != len(live_rows):
        print(f"student_t_reference: {path} has {len(committed_rows)} rows, SciPy gives {len(live_rows)}: "
              "regenerate it")
        return 1
    section_of = {}
    section = ""
    for line_number, line in enumerate(committed.splitlines(), 1):
        match = re.search(r"k(Quantiles|Cdfs|Betas|Holm)\b", line)
        if match:
            section = match.group(1)
        section_of[line_number] = section
    last_digits = 0
    for (line_number, text, values), (_, live_text, live_values) in zip(committed_rows, live_rows):
        in_quantiles = section_of[line_number] == "Quantiles"
        if len(values) != len(live_values):
            print(f"{path}:{line_number}: {text}\n  SciPy now: {live_text}")
            return 1
        for column, (value, live_value) in enumerate(zip(values, live_values)):
            tolerance = 1e-8 if in_quantiles and column == 3 else 1e-13
            if not agree(value, live_value, tolerance):
                print(f"{path}:{line_number}: column {column + 1} is {value!r}, SciPy now gives {live_value!r}"
                      f" (tolerance {tolerance:g} relative)\n  committed: {text}\n  SciPy now: {live_text}")
                return 1
            if value != live_value and not (math.isnan(value) and math.isnan(live_value)):
                last_digits += 1
    print(f"student_t_reference: {path} agrees with this SciPy ({last_digits} values differ in the last "
          "digits only)")
    return 0


def main(argv):
    if len(argv) == 3 and argv[1] == "--check":
        return check(argv[2])
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    sys.stdout.write(generate())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
