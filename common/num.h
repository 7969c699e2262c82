/*
 * Numbers as the reference analyzer treats them (spec kernel-table.md §0,
 * §1.2): Python int()/float() text parsing, float repr, the built-in SUM,
 * pct and round(x, 3); plus a strtonum-style parser for command lines.
 */
#ifndef NUM_H
#define NUM_H

#include <stddef.h>

/*
 * Python int() on text: surrounding whitespace, optional sign, digits with
 * single '_' separators between digits.  Returns 1 and sets *out, or 0
 * (unparsable, or outside the int64 range).
 */
int num_py_int(const char *s, size_t n, long long *out);

/*
 * Python float() on text: whitespace, sign, digits with '_' separators,
 * fraction, exponent, and inf/infinity/nan in any case.  Returns 1 or 0.
 */
int num_py_float(const char *s, size_t n, double *out);

/*
 * Exact fast path for plain decimals ("-12", "4909913692207.556"): when the
 * digits form an integer below 2^53 and at most 22 of them follow the point,
 * the quotient of two exact doubles is the correctly rounded value strtod()
 * would give; up to 19 digits with at most 15 after the point, the sum of
 * the exact integer part and the rounded fraction, when its error is
 * provably clear of a rounding boundary ("1365628998212.9875").  Returns 1
 * and sets *out, or 0 (use strtod).
 */
int num_fast_decimal(const char *p, size_t n, double *out);

/*
 * The same conversion on the JSON number that starts p[0..n), in one pass:
 * returns its length when it is -?(0|[1-9][0-9]*)(.[0-9]+)? within
 * num_fast_decimal's limits (then *out is what num_fast_decimal gives for
 * that span), else 0 and the caller takes the general path.  What follows
 * the number is not looked at beyond its end.
 */
size_t num_fast_json(const char *p, size_t n, double *out);

/*
 * Python repr() of a double (shortest round-trip digits; "1.0", "1e+16",
 * "1.5e-05", "inf", "nan").  buf must hold 32 bytes.  Returns buf.
 */
char *num_repr(double d, char *buf);

/*
 * Shortest text that strtod() maps back to d exactly, in %g style
 * ("0.1", "1718000000000072", "1e+300"); non-finite values print as
 * "null" because JSON has no literal for them.  buf: 32 bytes.
 */
char *num_json(double d, char *buf);

/*
 * Exact time arithmetic on a trace's own number text (issue 25): write
 * p[0..n) minus the integer `base` to out, digit for digit, with the
 * fraction's digits unchanged (1700000000123456.789 - 1700000000000000 is
 * 123456.789; 999.25 - 1000 is -0.75).  p must be a plain JSON decimal,
 * -?(0|[1-9][0-9]*)(.[0-9]+)?, whose integer part and whose difference fit
 * 18 digits, and base must be in [0, 10^17]; out must hold 48 bytes.
 * Returns the length written, or 0 when p is not such a number (the caller
 * then subtracts in doubles).
 */
size_t num_text_minus(const char *p, size_t n, long long base, char *out);

/*
 * The interpreter's built-in sum() over doubles (§0.1): Neumaier
 * compensated summation starting from the first element.  Feed values in
 * order with nsum_add, read with nsum_value.  An empty sum is 0.
 */
typedef struct {
	double s, c;
	size_t n;
} nsum;
#define NSUM_INIT { 0.0, 0.0, 0 }
void nsum_add(nsum *a, double x);
double nsum_value(const nsum *a);

/* pct(part, whole) = (100.0 * part) / whole, or 0.0 when whole == 0 (§0.2). */
double pct(double part, double whole);

/*
 * Nearest-rank percentile p (1..100) of v[0..n), n > 0, in any order: the
 * smallest value with at least p % of the values at or below it
 * (v[ceil(p n / 100) - 1] of v sorted), as step-stats gives its step
 * percentiles.  Linear on average (quickselect); reorders v.  Used for the
 * per-kernel duration statistics of kernel-map (issue 31).
 */
double num_percentile(double *v, size_t n, int p);

/*
 * -1, 0 or 1 as a is before, beside or after b, NaN after every number and
 * beside NaN: a total order for sort comparators, whose results are
 * undefined when a NaN makes "a != b ? (a < b ? -1 : 1)" answer 1 both ways.
 */
static inline int
num_cmp(double a, double b)
{
	if (a < b)
		return -1;
	if (a > b)
		return 1;
	return (a != a) - (b != b);
}

/* Python round(x, 3): correctly rounded to 3 decimals (§0.4). */
double round3(double x);

/* Python float floor division x // 10 for finite x (§0.4). */
double floordiv10(double x);

/*
 * Command-line numbers: parse `s` as an integer in [min, max].  Returns 1
 * and sets *out, or 0 with *errstr set to "invalid", "too small" or
 * "too large".  Accepts Python int() syntax so the reference's options keep
 * working ("+5", " 1_000 ").
 */
int parse_num(const char *s, long long min, long long max, long long *out,
    const char **errstr);

#endif
