#!/usr/bin/env python3
"""Prints the expected strings of tests/core/common/python_float_format_test.cc: Python's own
format(x, '.P') for values on both sides of every switch the rule has (the exponent thresholds,
rounding up into a new digit, halves, subnormals, signs). Run it and paste its output into the test
when the table changes; the test holds rung's formatter to exactly these strings."""
values = [0.05691, 0.0071853, 8.696e-07, 29810.0, 167.7, 2.59, 0.675, 99.3, 99.96, 6.7, 3.0, 100.0,
          0.0001, 0.00001, 0.00009996, 1e16, 123456789.0, 0.5, 1.5, 2.5, 0.125, 0.0625, 1e-300, 5e-324,
          1.7976931348623157e308, -0.046, -1234.5, 9.5, 0.95, 10.0, 264834.9, 1e22, 0.30000000000000004]
precisions = [1, 2, 3, 4, 6, 17]
for x in values:
    for p in precisions:
        print('    {%r, %d, "%s"},' % (x, p, format(x, '.%d' % p)))
for x in [float('nan'), float('inf'), float('-inf'), 0.0, -0.0]:
    print('    {%s, 2, "%s"},' % ({'nan': 'kNan', 'inf': 'kInf', '-inf': '-kInf', '0.0': '0.0', '-0.0': '-0.0'}[repr(x)],
                                 format(x, '.2')))
