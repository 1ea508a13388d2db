// core/common/python_float_format.h
//
// A double written as Python writes format(x, ".P") (the format spec with a precision and no type):
// the way numbers were printed in tables of papers whose code is Python, so that rung can print a
// closed form "as the paper prints it" and compare strings, not rounded values.
//
// The rule (CPython's format_float_short for an omitted type with a precision): x rounded to P
// significant digits, correctly (round half to even on the exact binary value); trailing zeros
// dropped; scientific notation ("8.7e-07", "3e+04": at least two exponent digits) when the decimal
// exponent of the rounded value is below -4 or at least P - 1 (so "9.9e+01" at P = 2 where 'g' would
// write "99"); otherwise positional, with ".0" added to an integer ("3.0" at P = 2). nan, inf, -inf
// and the sign of zero are written as Python writes them ("-0.0").
//
//   PythonGeneralFormat(0.05691, 2)   -> "0.057"
//   PythonGeneralFormat(29810.0, 2)   -> "3e+04"
//   PythonGeneralFormat(2.59, 1)      -> "3e+00"
//   PythonGeneralFormat(0.675, 1)     -> "0.7"
//
// Thread safety: a function of its arguments (no locale: the decimal point is always '.').
#pragma once

#include <string>

namespace rung {

// REQUIRES: 1 <= precision <= 17.
std::string PythonGeneralFormat(double value, int precision);

}  // namespace rung
