/* Python-compatible number parsing, printing and summation. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "num.h"
#include "text.h"

/* Copy digits dropping '_' separators that sit between two digits. */
static int
strip_underscores(const char *s, size_t n, char *out, size_t outcap)
{
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		if (s[i] == '_') {
			if (i == 0 || i + 1 >= n || !(s[i - 1] >= '0' && s[i - 1] <= '9') ||
			    !(s[i + 1] >= '0' && s[i + 1] <= '9'))
				return 0;
			continue;
		}
		if (o + 1 >= outcap)
			return 0;
		out[o++] = s[i];
	}
	out[o] = '\0';
	return 1;
}

int
num_py_int(const char *s, size_t n, long long *out)
{
	char buf[64], *end;
	size_t len, i;
	long long v;

	s = text_strip(s, n, &len);
	if (len == 0 || len >= sizeof buf)
		return 0;
	if (!strip_underscores(s, len, buf, sizeof buf))
		return 0;
	i = (buf[0] == '+' || buf[0] == '-') ? 1 : 0;
	if (buf[i] == '\0')
		return 0;
	for (; buf[i]; i++)
		if (buf[i] < '0' || buf[i] > '9')
			return 0;
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno || *end)
		return 0;
	*out = v;
	return 1;
}

static const double p10[] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
	1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };

/*
 * The digits from p[i] on (to n at most) appended to *m; returns the index
 * past them.  Eight at a time where eight follow: a time's integer part is
 * nine to thirteen digits and every event has two (issue 30).  m wraps past
 * 19 digits, which no caller then uses.
 */
static inline size_t
add_digits(const char *p, size_t i, size_t n, unsigned long long *m)
{
	unsigned long long v = *m;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t w;

	while (n - i >= 8) {
		memcpy(&w, p + i, sizeof w);
		/* every byte a digit: its high nibble 3, before and after adding 6 */
		if (((w & 0xf0f0f0f0f0f0f0f0ULL) |
		    ((w + 0x0606060606060606ULL) & 0xf0f0f0f0f0f0f0f0ULL) >> 4) != 0x3333333333333333ULL)
			break;
		w -= 0x3030303030303030ULL;
		w = w * 10 + (w >> 8);	/* pairs of digits in every other byte */
		w = ((w & 0x000000ff000000ffULL) * (100 + (1000000ULL << 32)) +
		    ((w >> 16) & 0x000000ff000000ffULL) * (1 + (10000ULL << 32))) >> 32;
		v = v * 100000000ULL + w;
		i += 8;
	}
#endif
	for (; i < n && (unsigned)(p[i] - '0') < 10; i++)
		v = v * 10 + (unsigned long long)(p[i] - '0');
	*m = v;
	return i;
}

/*
 * m / 10^frac for m above 2^53 (up to 19 digits, as Python writes a float
 * time of 17 digits: "1365628998212.9875"), where one quotient of exact
 * doubles is not available.  The integer part q and the remainder r are
 * exact doubles, fd = r / 10^frac is correctly rounded (error at most
 * 2^-53, fd < 1), and the error e of s = q + fd is found exactly
 * (Fast2Sum, q >= fd).  The true value is s + e + (error of fd); when
 * |e| + 2^-53 stays under half the smaller gap between s and its
 * neighbours, s is the correctly rounded value strtod gives.  Else 0: the
 * caller takes strtod (issue 30: its slow path was a twentieth of
 * trace-extract on such a trace).
 */
static int
split_decimal(unsigned long long m, size_t frac, double *out)
{
	static const unsigned long long t10[] = { 1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL,
		100000ULL, 1000000ULL, 10000000ULL, 100000000ULL, 1000000000ULL, 10000000000ULL,
		100000000000ULL, 1000000000000ULL, 10000000000000ULL, 100000000000000ULL,
		1000000000000000ULL };
	unsigned long long q, r;
	uint64_t bits, ub;
	double fd, sum, e, ulp, half;
	int ex;

	if (frac == 0 || frac > 15)
		return 0;
	q = m / t10[frac];
	r = m % t10[frac];
	if (q == 0 || q > (1ULL << 53))
		return 0;
	fd = (double)r / p10[frac];
	sum = (double)q + fd;
	e = fd - (sum - (double)q);
	memcpy(&bits, &sum, sizeof bits);
	ex = (int)(bits >> 52 & 0x7ff);
	if (ex <= 52)
		return 0;
	ub = (uint64_t)(ex - 52) << 52;	/* the double 2^(exponent - 52): sum's ulp */
	memcpy(&ulp, &ub, sizeof ulp);
	/* a power of two has half the gap below it */
	half = (bits & ((1ULL << 52) - 1)) == 0 ? ulp / 4 : ulp / 2;
	if (!(fabs(e) < half - 0x1p-52))	/* exact: half is a power of two <= 1 */
		return 0;
	*out = sum;
	return 1;
}

size_t
num_fast_json(const char *p, size_t n, double *out)
{
	unsigned long long m = 0;
	size_t i = 0, digits, frac = 0, f0;
	int neg = 0;

	if (i < n && p[i] == '-') {
		neg = 1;
		i++;
	}
	f0 = i;
	if (i < n && p[i] == '0')
		i++;
	else
		i = add_digits(p, i, n, &m);
	digits = i - f0;
	if (digits == 0 || (i < n && (unsigned)(p[i] - '0') < 10))
		return 0;		/* no digits, or a leading zero */
	if (i < n && p[i] == '.') {
		f0 = ++i;
		i = add_digits(p, i, n, &m);
		frac = i - f0;
		if (frac == 0)
			return 0;
		digits += frac;
	}
	if ((i < n && (p[i] | 0x20) == 'e') || digits > 19 || frac > 22)
		return 0;
	if (m <= (1ULL << 53))
		*out = (double)m / p10[frac];
	else if (!split_decimal(m, frac, out))
		return 0;
	if (neg)
		*out = -*out;
	return i;
}

int
num_fast_decimal(const char *p, size_t n, double *out)
{
	unsigned long long m = 0;
	size_t i = 0, digits, frac = 0, f0;
	int neg = 0;

	if (n && p[0] == '-') {
		neg = 1;
		i = 1;
	}
	if (i >= n)
		return 0;
	/* integer part, then an optional fraction; every digit counts toward 19 */
	f0 = i;
	i = add_digits(p, i, n, &m);
	digits = i - f0;
	if (i < n && p[i] == '.') {
		f0 = ++i;
		i = add_digits(p, i, n, &m);
		frac = i - f0;
		digits += frac;
	}
	/* (m may have wrapped when digits > 19; it is not used then) */
	if (i != n || digits == 0 || digits > 19 || frac > 22)
		return 0;
	if (m <= (1ULL << 53))
		*out = (double)m / p10[frac];
	else if (!split_decimal(m, frac, out))
		return 0;
	if (neg)
		*out = -*out;
	return 1;
}

int
num_py_float(const char *s, size_t n, double *out)
{
	char buf[512], *end, *p;
	size_t len, i;
	int sign = 1, seen_digit = 0;

	s = text_strip(s, n, &len);
	if (len == 0 || len >= sizeof buf)
		return 0;
	if (!strip_underscores(s, len, buf, sizeof buf))
		return 0;
	p = buf;
	if (*p == '+' || *p == '-') {
		if (*p == '-')
			sign = -1;
		p++;
	}
	if (!strcasecmp(p, "inf") || !strcasecmp(p, "infinity")) {
		*out = sign * HUGE_VAL;
		return 1;
	}
	if (!strcasecmp(p, "nan")) {
		*out = NAN;
		return 1;
	}
	/* Only decimal syntax: digits, '.', exponent (strtod would take hex). */
	for (i = 0; p[i]; i++) {
		char c = p[i];
		if (c >= '0' && c <= '9')
			seen_digit = 1;
		else if (c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-')
			return 0;
	}
	if (!seen_digit)
		return 0;
	errno = 0;
	*out = strtod(buf, &end);
	if (*end)
		return 0;
	return 1;
}

/* Shortest %.{p}e precision that round-trips; returns the digit count. */
static int
shortest_e(double d, char *buf, size_t cap)
{
	int p;

	for (p = 0; p < 17; p++) {
		snprintf(buf, cap, "%.*e", p, d);
		if (strtod(buf, NULL) == d)
			return p + 1;
	}
	snprintf(buf, cap, "%.16e", d);
	return 17;
}

char *
num_repr(double d, char *out)
{
	char e[40], digits[24];
	int nd, exp10, i, o = 0;
	char *m;

	if (isnan(d)) {
		strcpy(out, "nan");
		return out;
	}
	if (isinf(d)) {
		strcpy(out, d < 0 ? "-inf" : "inf");
		return out;
	}
	if (d == 0) {
		strcpy(out, signbit(d) ? "-0.0" : "0.0");
		return out;
	}
	nd = shortest_e(d, e, sizeof e);
	m = e;
	if (*m == '-')
		out[o++] = *m++;
	/* mantissa digits without the point */
	i = 0;
	digits[i++] = m[0];
	if (m[1] == '.')
		for (m += 2; *m >= '0' && *m <= '9'; m++)
			digits[i++] = *m;
	else
		m++;
	digits[i] = '\0';
	exp10 = atoi(m + 1);	/* after 'e' */
	(void)nd;
	nd = i;
	if (exp10 >= -5 + 1 && exp10 < 16) {
		/* fixed notation: Python repr uses it for -4 <= exp < 16 */
		if (exp10 >= 0) {
			for (i = 0; i <= exp10; i++)
				out[o++] = i < nd ? digits[i] : '0';
			out[o++] = '.';
			if (nd > exp10 + 1)
				for (i = exp10 + 1; i < nd; i++)
					out[o++] = digits[i];
			else
				out[o++] = '0';
		} else {
			out[o++] = '0';
			out[o++] = '.';
			for (i = 0; i < -exp10 - 1; i++)
				out[o++] = '0';
			for (i = 0; i < nd; i++)
				out[o++] = digits[i];
		}
		out[o] = '\0';
		return out;
	}
	out[o++] = digits[0];
	if (nd > 1) {
		out[o++] = '.';
		for (i = 1; i < nd; i++)
			out[o++] = digits[i];
	}
	o += sprintf(out + o, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
	out[o] = '\0';
	return out;
}

/* A non-negative integer's decimal digits at out; returns their count (no NUL). */
static size_t
put_uint(unsigned long long v, char *out)
{
	char d[24];
	size_t k = 0, i;

	do {
		d[k++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (i = 0; i < k; i++)
		out[i] = d[k - 1 - i];
	return k;
}

char *
num_json(double d, char *buf)
{
	int p;

	if (!isfinite(d)) {
		strcpy(buf, "null");
		return buf;
	}
	/* range first: casting a double beyond long long is undefined */
	if (fabs(d) < 9007199254740992.0 && d == (double)(long long)d) {
		long long v = (long long)d;
		size_t o = 0;
		if (v < 0)
			buf[o++] = '-';
		o += put_uint(v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v, buf + o);
		buf[o] = '\0';
		return buf;
	}
	/*
	 * Kineto's microseconds with nanosecond digits, and the four to six
	 * fraction digits of times a Python float wrote (issue 30: the printf
	 * of every time dominated writing a record): d the double nearest a
	 * decimal of at most k fraction digits and 15 significant ones is what
	 * %.15g writes, that decimal with its trailing zeros dropped (fixed
	 * notation from 1e-3 to 1e12; the loop below checks the same round
	 * trip).  The fewest fraction digits that give d back are the ones.
	 */
	if (fabs(d) >= 1e-3 && fabs(d) < 1e12) {
		static const double sc[] = { 1e3, 1e4, 1e5, 1e6 };
		static const unsigned long long isc[] = { 1000, 10000, 100000, 1000000 };
		int k;
		for (k = 0; k < 4 && fabs(d) * sc[k] < 1e15; k++) {
			double t = d * sc[k];
			long long m = (long long)(t < 0 ? t - 0.5 : t + 0.5);
			if ((double)m / sc[k] == d) {
				unsigned long long u = m < 0 ? 0ULL - (unsigned long long)m :
				    (unsigned long long)m, f = u % isc[k];
				size_t o = 0, nf = (size_t)k + 3, j;
				char fd[8];
				if (m < 0)
					buf[o++] = '-';
				o += put_uint(u / isc[k], buf + o);
				buf[o++] = '.';
				for (j = nf; j-- > 0; f /= 10)
					fd[j] = (char)('0' + f % 10);
				while (nf > 1 && fd[nf - 1] == '0')	/* trailing zeros go */
					nf--;
				memcpy(buf + o, fd, nf);
				o += nf;
				buf[o] = '\0';
				return buf;
			}
		}
	}
	for (p = 15; p <= 17; p++) {
		snprintf(buf, 32, "%.*g", p, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	return buf;
}

size_t
num_text_minus(const char *p, size_t n, long long base, char *out)
{
	size_t i = 0, ip, fs, fn, k, o = 0;
	long long v = 0, r;
	int neg = 0, frac_zero = 1;
	char tmp[24];

	if (base < 0 || base > 100000000000000000LL || n == 0)
		return 0;
	if (p[0] == '-') {
		neg = 1;
		i = 1;
	}
	ip = i;
	while (i < n && p[i] >= '0' && p[i] <= '9')
		i++;
	if (i == ip || i - ip > 18 || (p[ip] == '0' && i - ip > 1))
		return 0;
	for (k = ip; k < i; k++)
		v = v * 10 + (p[k] - '0');
	fs = fn = 0;
	if (i < n && p[i] == '.') {
		fs = ++i;
		while (i < n && p[i] >= '0' && p[i] <= '9')
			i++;
		fn = i - fs;
		if (fn == 0 || fn > 22)
			return 0;
	}
	if (i != n)
		return 0;
	for (k = 0; k < fn; k++)
		if (p[fs + k] != '0')
			frac_zero = 0;
	if (neg) {
		/* -(v.f) - base = -((v + base).f) */
		r = v + base;
		if (r > 999999999999999999LL)
			return 0;
		o = 0;
		if (r != 0 || !frac_zero)
			out[o++] = '-';
		o += put_uint((unsigned long long)r, out + o);
		if (fn) {
			out[o++] = '.';
			memcpy(out + o, p + fs, fn);
			o += fn;
		}
		out[o] = '\0';
		return o;
	}
	r = v - base;
	if (r >= 0 || frac_zero) {
		o = 0;
		if (r < 0)
			out[o++] = '-';
		o += put_uint((unsigned long long)(r < 0 ? -r : r), out + o);
		if (fn) {
			out[o++] = '.';
			memcpy(out + o, p + fs, fn);
			o += fn;
		}
		out[o] = '\0';
		return o;
	}
	/* r < 0 < f: r + 0.f = -((|r| - 1) + (1 - 0.f)), the fraction's ten's complement */
	out[0] = '-';
	o = 1 + put_uint((unsigned long long)(-r - 1), out + 1);
	out[o++] = '.';
	memcpy(tmp, p + fs, fn);
	for (k = fn; k-- > 0;) {
		/* 10^fn - f, digit by digit from the right: the first non-zero digit is 10 - d, the rest 9 - d */
		if (tmp[k] != '0')
			break;
	}
	for (i = 0; i < fn; i++) {
		if (i < k)
			out[o + i] = (char)('9' - (tmp[i] - '0'));
		else if (i == k)
			out[o + i] = (char)('0' + 10 - (tmp[i] - '0'));
		else
			out[o + i] = '0';
	}
	o += fn;
	out[o] = '\0';
	return o;
}

void
nsum_add(nsum *a, double x)
{
	double t;

	if (a->n++ == 0) {
		a->s = x;
		a->c = 0.0;
		return;
	}
	t = a->s + x;
	if (fabs(a->s) >= fabs(x))
		a->c += (a->s - t) + x;
	else
		a->c += (x - t) + a->s;
	a->s = t;
}

double
nsum_value(const nsum *a)
{
	if (a->n == 0)
		return 0.0;
	if (a->c != 0.0 && isfinite(a->c))
		return a->s + a->c;
	return a->s;
}

double
pct(double part, double whole)
{
	if (whole == 0.0)
		return 0.0;
	return (100.0 * part) / whole;
}

double
round3(double x)
{
	char buf[512];

	if (!isfinite(x))
		return x;
	snprintf(buf, sizeof buf, "%.3f", x);
	return strtod(buf, NULL);
}

double
floordiv10(double x)
{
	double mod = fmod(x, 10.0), div;

	div = (x - mod) / 10.0;
	if (mod != 0.0 && ((mod < 0) != (10.0 < 0)))
		div -= 1.0;
	if (div != 0.0) {
		double f = floor(div);
		if (div - f > 0.5)
			f += 1.0;
		return f;
	}
	return copysign(0.0, x / 10.0);
}

/* The k-th smallest of v[0..n) (0-based), by Hoare's selection; reorders v. */
static double
select_kth(double *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	while (lo < hi) {
		/* the median of three as the pivot: sorted or reversed runs stay linear */
		size_t mid = lo + (hi - lo) / 2, i = lo, j = hi;
		double a = v[lo], b = v[mid], c = v[hi], x, t;
		x = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
		for (;;) {
			while (v[i] < x)
				i++;
			while (x < v[j])
				j--;
			if (i >= j)
				break;
			t = v[i];
			v[i] = v[j];
			v[j] = t;
			i++;
			j--;
		}
		/* v[lo..j] <= x <= v[j+1..hi] */
		if (k <= j)
			hi = j;
		else
			lo = j + 1;
	}
	return v[k];
}

double
num_percentile(double *v, size_t n, int p)
{
	size_t rank = ((size_t)p * n + 99) / 100;	/* ceil(p * n / 100) */

	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return select_kth(v, n, rank - 1);
}

int
parse_num(const char *s, long long min, long long max, long long *out,
    const char **errstr)
{
	long long v;

	if (!s || !num_py_int(s, strlen(s), &v)) {
		/* digits past what 64 bits hold are a number too large, not a typo */
		size_t i, n, digits = 0;
		const char *p = text_strip(s ? s : "", s ? strlen(s) : 0, &n);
		int sign = n && (p[0] == '-' || p[0] == '+');
		for (i = (size_t)sign; i < n && ((p[i] >= '0' && p[i] <= '9') || p[i] == '_'); i++)
			digits += p[i] != '_';
		*errstr = digits > 18 && i == n ? (p[0] == '-' ? "too small" : "too large") :
		    "invalid";
		return 0;
	}
	if (v < min) {
		*errstr = "too small";
		return 0;
	}
	if (v > max) {
		*errstr = "too large";
		return 0;
	}
	*out = v;
	return 1;
}
