/* FLOP and byte models of CPU ops from their recorded shapes (model.h, kernel-roofline(1) MODELS). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "model.h"
#include "sbuf.h"

#define MAXARG 64
#define MAXDIM 8

enum { A_NONE, A_TENSOR, A_LIST };

struct arg {
	int kind;
	int ndim;
	double d[MAXDIM];
	double numel;		/* a tensor's elements; a list's, summed */
	int es;			/* element bytes (0: unknown) */
	int dt;			/* enum mdtype of a floating element type */
	int isint;		/* an integer or bool element type */
	const char *tname;	/* the type as printed */
	char conc[64];		/* the concrete value ("" when none) */
};

struct args {
	int n;
	struct arg a[MAXARG];
};

/* PyTorch's printed element types (c10 ScalarType names). */
static const struct {
	const char *name;
	int es, dt, isint;
	const char *key;	/* for shape classes */
} types[] = {
	{ "float", 4, DT_FP32, 0, "fp32" },
	{ "double", 8, DT_FP64, 0, "fp64" },
	{ "c10::Half", 2, DT_FP16, 0, "fp16" },
	{ "c10::BFloat16", 2, DT_BF16, 0, "bf16" },
	{ "c10::Float8_e4m3fn", 1, DT_FP8, 0, "fp8" },
	{ "c10::Float8_e5m2", 1, DT_FP8, 0, "fp8" },
	{ "c10::Float8_e4m3fnuz", 1, DT_FP8, 0, "fp8" },
	{ "c10::Float8_e5m2fnuz", 1, DT_FP8, 0, "fp8" },
	{ "c10::Float8_e8m0fnu", 1, DT_FP8, 0, "fp8" },
	{ "c10::Float4_e2m1fn_x2", 1, DT_FP4, 0, "fp4" },
	{ "signed char", 1, DT_INT8, 1, "int8" },
	{ "unsigned char", 1, DT_INT8, 1, "uint8" },
	{ "bool", 1, DT_NONE, 1, "bool" },
	{ "short int", 2, DT_NONE, 1, "int16" },
	{ "short", 2, DT_NONE, 1, "int16" },
	{ "int", 4, DT_NONE, 1, "int32" },
	{ "unsigned int", 4, DT_NONE, 1, "uint32" },
	{ "long int", 8, DT_NONE, 1, "int64" },
	{ "long", 8, DT_NONE, 1, "int64" },
	{ "long long", 8, DT_NONE, 1, "int64" },
	{ "long long int", 8, DT_NONE, 1, "int64" },
	{ "unsigned long", 8, DT_NONE, 1, "uint64" },
	{ "c10::complex<float>", 8, DT_NONE, 0, "complex64" },
	{ "c10::complex<double>", 16, DT_NONE, 0, "complex128" },
	{ "c10::complex<c10::Half>", 4, DT_NONE, 0, "complex32" },
	{ "c10::qint8", 1, DT_INT8, 1, "qint8" },
	{ "c10::quint8", 1, DT_INT8, 1, "quint8" },
	{ "c10::qint32", 4, DT_NONE, 1, "qint32" },
};

static const char *
type_key(const struct arg *a)
{
	size_t i;

	for (i = 0; i < sizeof types / sizeof types[0]; i++)
		if (a->tname && !strcmp(a->tname, types[i].name))
			return types[i].key;
	return "?";
}

/* ---- reading the three arrays ---- */

static int
parse_json(json_doc *d, const char *s, size_t n)
{
	return s && n && json_parse(d, s, n) >= 0 && d->ntok > 0 && d->tok[0].type == JSMN_ARRAY;
}

/* The dims of one tensor (an array of integers) into a; 0 when it is not one. */
static int
read_dims(const json_doc *d, int i, struct arg *a)
{
	int n = d->tok[i].size, j, k = i + 1;
	double v;

	if (n > MAXDIM)
		return 0;
	a->ndim = n;
	a->numel = 1;
	for (j = 0; j < n; j++, k++) {
		if (d->tok[k].type != JSMN_PRIMITIVE || !json_todouble(d, k, &v) || !(v >= 0) ||
		    v > 1e15 || v != floor(v))
			return 0;
		a->d[j] = v;
		a->numel *= v;
	}
	return 1;
}

static void
read_args(struct args *as, const char *dims, size_t dl, const char *ty, size_t tl,
    const char *co, size_t cl)
{
	json_doc d = { 0 }, t = { 0 }, c = { 0 };
	sbuf s = SBUF_INIT;
	int i, j, n, k, m;
	static const char *const names[] = { "TensorList", "Scalar", "ScalarList", "" };

	memset(as, 0, sizeof *as);
	if (!parse_json(&d, dims, dl)) {
		json_doc_free(&d);
		return;
	}
	n = d.tok[0].size < MAXARG ? d.tok[0].size : MAXARG;
	as->n = n;
	for (j = 0, i = 1; j < n; j++, i = json_skip(&d, i)) {
		struct arg *a = &as->a[j];
		a->kind = A_NONE;
		if (d.tok[i].type != JSMN_ARRAY)
			continue;
		if (d.tok[i].size > 0 && d.tok[i + 1].type == JSMN_ARRAY) {
			/* a tensor list: its members' elements summed */
			struct arg x;
			a->kind = A_LIST;
			a->ndim = d.tok[i].size;
			for (m = 0, k = i + 1; m < d.tok[i].size; m++, k = json_skip(&d, k)) {
				memset(&x, 0, sizeof x);
				if (d.tok[k].type != JSMN_ARRAY || !read_dims(&d, k, &x)) {
					a->kind = A_NONE;
					break;
				}
				a->numel += x.numel;
			}
			continue;
		}
		if (read_dims(&d, i, a))
			a->kind = A_TENSOR;
	}
	if (parse_json(&t, ty, tl)) {
		for (j = 0, i = 1; j < t.tok[0].size && j < n; j++, i = json_skip(&t, i)) {
			struct arg *a = &as->a[j];
			size_t q;
			int found = 0;
			json_str(&t, i, &s, NULL);
			for (q = 0; q < sizeof types / sizeof types[0]; q++)
				if (!strcmp(s.s ? s.s : "", types[q].name)) {
					a->es = types[q].es;
					a->dt = types[q].dt;
					a->isint = types[q].isint;
					a->tname = types[q].name;
					found = 1;
				}
			if (a->kind == A_TENSOR && !found)
				a->kind = A_NONE;	/* a scalar, a list of them, or nothing */
			for (q = 0; q < sizeof names / sizeof names[0]; q++)
				if (s.s && !strcmp(s.s, names[q]) && a->kind == A_TENSOR)
					a->kind = A_NONE;
		}
	} else {
		for (j = 0; j < n; j++)
			if (as->a[j].kind == A_TENSOR)
				as->a[j].kind = A_NONE;	/* types unknown: no element size */
	}
	if (parse_json(&c, co, cl))
		for (j = 0, i = 1; j < c.tok[0].size && j < n; j++, i = json_skip(&c, i)) {
			json_str(&c, i, &s, NULL);
			snprintf(as->a[j].conc, sizeof as->a[j].conc, "%s", s.s ? s.s : "");
		}
	sb_free(&s);
	json_doc_free(&d);
	json_doc_free(&t);
	json_doc_free(&c);
}

static const struct arg *
tensor(const struct args *as, int i)
{
	return i >= 0 && i < as->n && as->a[i].kind == A_TENSOR ? &as->a[i] : NULL;
}

static double
tbytes(const struct arg *a)
{
	return a && a->kind == A_TENSOR ? a->numel * a->es : 0;
}

static int
conc_bool(const struct args *as, int i, int *v)
{
	if (i < 0 || i >= as->n)
		return 0;
	if (!strcmp(as->a[i].conc, "True"))
		*v = 1;
	else if (!strcmp(as->a[i].conc, "False"))
		*v = 0;
	else
		return 0;
	return 1;
}

static int
conc_num(const struct args *as, int i, double *v)
{
	char *e;

	if (i < 0 || i >= as->n || !as->a[i].conc[0])
		return 0;
	*v = strtod(as->a[i].conc, &e);
	return *e == 0 && isfinite(*v);
}

/* "[3, 3]" into v (at most max); returns the count, -1 when it is no list of integers. */
static int
conc_list(const struct args *as, int i, double *v, int max)
{
	const char *p;
	char *e;
	int n = 0;

	if (i < 0 || i >= as->n || as->a[i].conc[0] != '[')
		return -1;
	p = as->a[i].conc + 1;
	while (*p == ' ')
		p++;
	if (*p == ']')
		return 0;
	for (;;) {
		double x = strtod(p, &e);
		if (e == p || n == max || x != floor(x))
			return -1;
		v[n++] = x;
		p = e;
		while (*p == ' ')
			p++;
		if (*p == ']')
			return n;
		if (*p != ',')
			return -1;
		p++;
	}
}

/* "[True, True, False]" into v as 1 and 0 (at most max); the count, -1 when it is no such list. */
static int
conc_bools(const struct args *as, int i, double *v, int max)
{
	const char *p;
	int n = 0;

	if (i < 0 || i >= as->n || as->a[i].conc[0] != '[')
		return -1;
	for (p = as->a[i].conc + 1;; p++) {
		while (*p == ' ')
			p++;
		if (*p == ']')
			return n;
		if (n == max)
			return -1;
		if (!strncmp(p, "True", 4))
			v[n++] = 1, p += 4;
		else if (!strncmp(p, "False", 5))
			v[n++] = 0, p += 5;
		else
			return -1;
		while (*p == ' ')
			p++;
		if (*p == ']')
			return n;
		if (*p != ',')
			return -1;
	}
}

/* ---- results ---- */

static void
fail(struct mresult *r, const char *why)
{
	memset(r, 0, sizeof *r);
	r->reason = why;
}

static void
set_dtype(struct mresult *r, const struct arg *a)
{
	r->dtype = a->dt;
	r->fp32_gemm = a->dt == DT_FP32;
}

/*
 * A GEMM: batch x (M x K) (K x N), out M x N.  FLOPs 2 M N K per batch
 * (+ M N for a bias added); bytes: both operands, the result, and
 * whatever else the op reads (scales, bias), at their element sizes.
 */
static void
gemm(struct mresult *r, const struct arg *a, double batch, double m, double n, double k,
    double bytes_ab, double out_es, double extra, int bias, const char *what)
{
	memset(r, 0, sizeof *r);
	r->ok = 1;
	r->flops = batch * (2 * m * n * k + (bias ? m * n : 0));
	r->bytes = bytes_ab + batch * m * n * out_es + extra;
	set_dtype(r, a);
	if (batch != 1)
		snprintf(r->cls, sizeof r->cls, "%sbatch=%.0f M=%.0f N=%.0f K=%.0f %s", what, batch,
		    m, n, k, type_key(a));
	else
		snprintf(r->cls, sizeof r->cls, "%sM=%.0f N=%.0f K=%.0f %s", what, m, n, k,
		    type_key(a));
}

/* c10::ScalarType codes a Concrete Input may hold for an out_dtype: their element sizes. */
static int
scalar_type_es(const struct args *as, int i)
{
	double v;

	if (!conc_num(as, i, &v))
		return 0;
	switch ((int)v) {
	case 5: case 15: return 2;		/* Half, BFloat16 */
	case 6: return 4;			/* Float */
	case 23: case 24: case 25: case 26: return 1;	/* Float8 kinds */
	default: return 0;
	}
}

/* aten::mm, addmm, bmm, baddbmm, matmul, linear. */
static int
model_aten_gemm(const char *op, const struct args *as, struct mresult *r)
{
	const struct arg *a, *b, *c;
	double m, n, k, batch = 1;
	int i;

	if (!strcmp(op, "aten::mm") || !strcmp(op, "aten::addmm")) {
		int off = op[6] == 'a';
		c = off ? tensor(as, 0) : NULL;
		a = tensor(as, off);
		b = tensor(as, off + 1);
		if (!a || !b || a->ndim != 2 || b->ndim != 2 || a->d[1] != b->d[0])
			return fail(r, "operands not recorded as two matrices"), 1;
		m = a->d[0], k = a->d[1], n = b->d[1];
		gemm(r, a, 1, m, n, k, tbytes(a) + tbytes(b), a->es, tbytes(c), c != NULL, "");
		return 1;
	}
	if (!strcmp(op, "aten::bmm") || !strcmp(op, "aten::baddbmm")) {
		int off = op[6] == 'a';
		c = off ? tensor(as, 0) : NULL;
		a = tensor(as, off);
		b = tensor(as, off + 1);
		if (!a || !b || a->ndim != 3 || b->ndim != 3 || a->d[0] != b->d[0] ||
		    a->d[2] != b->d[1])
			return fail(r, "operands not recorded as two batched matrices"), 1;
		gemm(r, a, a->d[0], a->d[1], b->d[2], a->d[2], tbytes(a) + tbytes(b), a->es,
		    tbytes(c), c != NULL, "");
		return 1;
	}
	if (!strcmp(op, "aten::linear")) {
		a = tensor(as, 0);
		b = tensor(as, 1);
		c = tensor(as, 2);
		if (!a || !b || a->ndim < 1 || b->ndim != 2 || a->d[a->ndim - 1] != b->d[1])
			return fail(r, "input and weight not recorded"), 1;
		k = b->d[1], n = b->d[0];
		m = k > 0 ? a->numel / k : 0;
		gemm(r, a, 1, m, n, k, tbytes(a) + tbytes(b), a->es, tbytes(c), c != NULL, "");
		return 1;
	}
	if (!strcmp(op, "aten::matmul")) {
		double ba = 1, bb = 1;
		a = tensor(as, 0);
		b = tensor(as, 1);
		if (!a || !b || a->ndim < 1 || b->ndim < 1)
			return fail(r, "operands not recorded"), 1;
		k = a->d[a->ndim - 1];
		m = a->ndim >= 2 ? a->d[a->ndim - 2] : 1;
		if (b->ndim >= 2) {
			if (b->d[b->ndim - 2] != k)
				return fail(r, "operands do not chain"), 1;
			n = b->d[b->ndim - 1];
		} else {
			if (b->d[0] != k)
				return fail(r, "operands do not chain"), 1;
			n = 1;
		}
		for (i = 0; i < a->ndim - 2; i++)
			ba *= a->d[i];
		for (i = 0; i < b->ndim - 2; i++)
			bb *= b->d[i];
		batch = ba > bb ? ba : bb;	/* broadcast batch */
		gemm(r, a, batch, m, n, k, tbytes(a) + tbytes(b), a->es, 0, 0, "");
		return 1;
	}
	return 0;
}

/*
 * Scaled and framework GEMMs with known argument positions: A, B (B laid
 * out K x N, or N x K when nk), an out tensor (-1: none, out_dtype from a
 * concrete ScalarType at odt, else 2 bytes), the rest read (scales, bias).
 */
static const struct {
	const char *op;
	int a, b, nk, out, odt;
} sgemm[] = {
	{ "aten::_scaled_mm", 0, 1, 0, -1, 6 },
	{ "_C::cutlass_scaled_mm", 1, 2, 0, 0, -1 },
	{ "_C::cutlass_scaled_mm_azp", 1, 2, 0, 0, -1 },
	{ "sgl_kernel::fp8_scaled_mm", 0, 1, 0, -1, 4 },
	{ "sgl_kernel::int8_scaled_mm", 0, 1, 0, -1, 4 },
	{ "sgl_kernel::fp8_blockwise_scaled_mm", 0, 1, 0, -1, 4 },
	{ "aiter::gemm_a8w8", 0, 1, 1, 4, -1 },
	{ "aiter::gemm_a8w8_CK", 0, 1, 1, 4, -1 },
	{ "aiter::gemm_a8w8_bpreshuffle", 0, 1, 1, 4, -1 },
	{ "aiter::gemm_a8w8_blockscale", 0, 1, 1, 4, -1 },
	{ "aiter::gemm_a8w8_blockscale_bpreshuffle", 0, 1, 1, 4, -1 },
	{ "vllm::rocm_unquantized_gemm", 0, 1, 1, -1, -1 },
};

static int
model_scaled_gemm(const char *op, const struct args *as, struct mresult *r)
{
	const struct arg *a, *b, *o;
	size_t e;
	double m, n, k, extra = 0, out_es;
	int i, found = -1;

	for (e = 0; e < sizeof sgemm / sizeof sgemm[0]; e++)
		if (!strcmp(op, sgemm[e].op))
			found = (int)e;
	if (found < 0)
		return 0;
	a = tensor(as, sgemm[found].a);
	b = tensor(as, sgemm[found].b);
	o = tensor(as, sgemm[found].out);
	if (!a || !b || a->ndim != 2 || b->ndim != 2)
		return fail(r, "operands not recorded as two matrices"), 1;
	k = a->d[1];
	m = a->d[0];
	if (sgemm[found].nk ? b->d[1] != k : b->d[0] != k)
		return fail(r, "operands do not chain"), 1;
	n = sgemm[found].nk ? b->d[0] : b->d[1];
	for (i = 0; i < as->n; i++)
		if (i != sgemm[found].a && i != sgemm[found].b && i != sgemm[found].out)
			extra += tbytes(tensor(as, i));
	out_es = o ? o->es : scalar_type_es(as, sgemm[found].odt);
	if (!out_es) {
		/* the result's type is not recorded: a bias's, else 2 bytes (bf16/fp16) */
		out_es = 2;
		for (i = 0; i < as->n; i++)
			if (tensor(as, i) && i != sgemm[found].a && i != sgemm[found].b &&
			    tensor(as, i)->ndim == 1 && tensor(as, i)->d[0] == n &&
			    tensor(as, i)->dt != DT_NONE && tensor(as, i)->dt != DT_FP8)
				out_es = tensor(as, i)->es;
	}
	gemm(r, a, 1, m, n, k, tbytes(a) + tbytes(b), out_es, extra, 0, "");
	return 1;
}

/* ---- convolution ---- */

/*
 * A forward convolution: input N C spatial..., weight K C/g R..., and the
 * stride, padding and dilation lists (concrete; a missing list is 1s, 0s,
 * 1s).  Output spatial sizes by the usual formula; FLOPs 2 N K (C/g) prod(R)
 * prod(P).  Fills *out_numel with the output's elements.
 */
static int
conv_shape(const struct args *as, int in, int w, int stride, int pad, int dil, int groups,
    double *flops, double *out_numel, char *cls, size_t clsn)
{
	const struct arg *x = tensor(as, in), *wt = tensor(as, w);
	double st[MAXDIM], pd[MAXDIM], dl[MAXDIM], g = 1, p, outsp = 1, ksp = 1;
	int ns, ss, ps, ds, i;

	if (!x || !wt || x->ndim < 3 || wt->ndim != x->ndim)
		return 0;
	ns = x->ndim - 2;
	ss = conc_list(as, stride, st, MAXDIM);
	ps = conc_list(as, pad, pd, MAXDIM);
	ds = conc_list(as, dil, dl, MAXDIM);
	if (groups >= 0 && !conc_num(as, groups, &g))
		g = 1;
	if (g < 1 || x->d[1] != wt->d[1] * g)
		return 0;
	for (i = 0; i < ns; i++) {
		double s = ss == ns ? st[i] : ss == 1 ? st[0] : 1;
		double q = ps == ns ? pd[i] : ps == 1 ? pd[0] : 0;
		double dd = ds == ns ? dl[i] : ds == 1 ? dl[0] : 1;
		if (s < 1)
			return 0;
		p = floor((x->d[i + 2] + 2 * q - dd * (wt->d[i + 2] - 1) - 1) / s) + 1;
		if (p < 1)
			return 0;
		outsp *= p;
		ksp *= wt->d[i + 2];
	}
	*flops = 2 * x->d[0] * wt->d[0] * wt->d[1] * ksp * outsp;
	*out_numel = x->d[0] * wt->d[0] * outsp;
	snprintf(cls, clsn, "N=%.0f C=%.0f K=%.0f in=%.0f out=%.0f kernel=%.0f g=%.0f %s",
	    x->d[0], x->d[1], wt->d[0], x->numel / (x->d[0] * x->d[1]), outsp, ksp, g,
	    type_key(x));
	return 1;
}

static int
model_conv(const char *op, const struct args *as, struct mresult *r)
{
	double fl, on;
	int t;

	/* argument positions: input, weight, bias, stride, padding, dilation, groups */
	static const struct {
		const char *op;
		int in, w, bias, stride, pad, dil, groups, transposed;
	} cv[] = {
		{ "aten::convolution", 0, 1, 2, 3, 4, 5, 8, 6 },
		{ "aten::_convolution", 0, 1, 2, 3, 4, 5, 8, 6 },
		{ "aten::conv1d", 0, 1, 2, 3, 4, 5, 6, -1 },
		{ "aten::conv2d", 0, 1, 2, 3, 4, 5, 6, -1 },
		{ "aten::conv3d", 0, 1, 2, 3, 4, 5, 6, -1 },
		{ "aten::cudnn_convolution", 0, 1, -1, 3, 2, 4, 5, -1 },
		{ "aten::miopen_convolution", 0, 1, 2, 4, 3, 5, 6, -1 },
	};
	size_t e;

	for (e = 0; e < sizeof cv / sizeof cv[0]; e++) {
		if (strcmp(op, cv[e].op))
			continue;
		if (conc_bool(as, cv[e].transposed, &t) && t)
			return fail(r, "transposed convolution"), 1;
		if (!conv_shape(as, cv[e].in, cv[e].w, cv[e].stride, cv[e].pad, cv[e].dil,
		    cv[e].groups, &fl, &on, r->cls, sizeof r->cls))
			return fail(r, "input, weight or strides not recorded"), 1;
		{
			char cls[sizeof r->cls];
			const struct arg *x = tensor(as, cv[e].in), *b = tensor(as, cv[e].bias);
			memcpy(cls, r->cls, sizeof cls);
			memset(r, 0, sizeof *r);
			memcpy(r->cls, cls, sizeof cls);
			r->ok = 1;
			r->flops = fl + (b ? on : 0);
			r->bytes = tbytes(x) + tbytes(tensor(as, cv[e].w)) + tbytes(b) + on * x->es;
			set_dtype(r, x);
		}
		return 1;
	}
	if (!strcmp(op, "aten::convolution_backward")) {
		/* grad_output, input, weight, bias_sizes, stride, padding, dilation,
		 * transposed, output_padding, groups, output_mask */
		double mask[3] = { 1, 1, 1 };
		const struct arg *go = tensor(as, 0), *x = tensor(as, 1), *w = tensor(as, 2);
		if (conc_bool(as, 7, &t) && t)
			return fail(r, "transposed convolution"), 1;
		if (conc_bools(as, 10, mask, 3) != 3)
			mask[0] = mask[1] = mask[2] = 1;
		if (!go || !conv_shape(as, 1, 2, 4, 5, 6, 9, &fl, &on, r->cls, sizeof r->cls) ||
		    on != go->numel)
			return fail(r, "gradient, input or weight not recorded"), 1;
		{
			char cls[sizeof r->cls];
			memcpy(cls, r->cls, sizeof cls);
			memset(r, 0, sizeof *r);
			snprintf(r->cls, sizeof r->cls, "backward %.150s", cls);
			r->ok = 1;
			r->flops = (mask[0] ? fl : 0) + (mask[1] ? fl : 0) + (mask[2] ? on : 0);
			r->bytes = tbytes(go) + tbytes(x) + tbytes(w) + (mask[0] ? tbytes(x) : 0) +
			    (mask[1] ? tbytes(w) : 0);
			set_dtype(r, x);
		}
		return 1;
	}
	return 0;
}

/* ---- attention ---- */

/* Query-key pairs one head computes: causal bottom-right (rows end at the last key) or top-left. */
static double
pairs(double sq, double sk, int causal, int bottom_right)
{
	if (!causal)
		return sq * sk;
	if (bottom_right)
		return sq <= sk ? sq * sk - sq * (sq - 1) / 2 : sk * (sk + 1) / 2;
	return sq <= sk ? sq * (sq + 1) / 2 : sk * (sk + 1) / 2 + (sq - sk) * sk;
}

/*
 * Attention: 2 P D (Q K^T) + 2 P Dv (P V) FLOPs per query head, P the
 * query-key pairs; bytes: Q, K, V and the output read or written once.
 */
static void
attention(struct mresult *r, const struct arg *q, double heads, double p, double d, double dv,
    double kvbytes, double out_numel, int bound, const char *cls)
{
	memset(r, 0, sizeof *r);
	r->ok = 1;
	r->flops = heads * p * 2 * (d + dv);
	r->bytes = tbytes(q) + kvbytes + out_numel * q->es;
	set_dtype(r, q);
	r->fp32_gemm = 0;
	r->bound = bound;
	snprintf(r->cls, sizeof r->cls, "%s %s", cls, type_key(q));
}

/* The query-key pairs of a varlen batch from totals and maxima: exact or an upper bound. */
static double
varlen_pairs(double b, double tq, double tk, double mq, double mk, int causal, int *bound)
{
	double p;

	*bound = 0;
	if (b < 1)
		b = 1;
	if (mq > 0 && tq == b * mq) {
		/* every sequence has mq queries: sum q_i k_i = mq * tk exactly */
		p = mq * tk - (causal ? b * mq * (mq - 1) / 2 : 0);
		if (mk > 0 && tk == b * mk)
			p = b * pairs(mq, mk, causal, 1);
		return p;
	}
	*bound = 1;
	p = tq * tk;
	if (mq > 0 && mq * tk < p)
		p = mq * tk;
	if (mk > 0 && mk * tq < p)
		p = mk * tq;
	if (causal && tq * tq / b - tq > 0)
		p -= (tq * tq / b - tq) / 2;	/* sum q_i^2 >= tq^2 / b */
	return p > 0 ? p : 0;
}

static int
model_attention(const char *op, const struct args *as, struct mresult *r)
{
	const struct arg *q, *k, *v;
	double b, sq, sk, h, d, dv, p, mq = 0, mk = 0;
	int causal = 0, bound = 0, bhsd, cq = -1, ck = -1, imq = -1, imk = -1, ic = -1;
	char cls[128];

	if (!strcmp(op, "aten::_scaled_dot_product_flash_attention") ||
	    !strcmp(op, "aten::_scaled_dot_product_flash_attention_for_cpu"))
		bhsd = 1, ic = 4;
	else if (!strcmp(op, "aten::_scaled_dot_product_efficient_attention") ||
	    !strcmp(op, "aten::_scaled_dot_product_cudnn_attention"))
		bhsd = 1, ic = 6;
	else if (!strcmp(op, "aten::scaled_dot_product_attention"))
		bhsd = 1, ic = 5;
	else if (!strcmp(op, "aten::_flash_attention_forward"))
		bhsd = 0, cq = 3, ck = 4, imq = 5, imk = 6, ic = 8;
	else if (!strcmp(op, "aten::_efficient_attention_forward"))
		bhsd = 0, cq = 4, ck = 5, imq = 6, imk = 7, ic = -2;
	else if (!strcmp(op, "aiter::mha_batch_prefill"))
		bhsd = 2, cq = 3, ck = 4, imq = 6, imk = 7, ic = 12;
	else
		return 0;
	q = tensor(as, 0);
	k = tensor(as, 1);
	v = tensor(as, 2);
	if (!q || !k || !v)
		return fail(r, "query, key or value not recorded"), 1;
	if (ic >= 0 && !conc_bool(as, ic, &causal))
		return fail(r, "causal flag not recorded"), 1;
	if (ic == -2) {
		double mt;	/* custom_mask_type: 0 none, 1 top-left, 2 bottom-right causal */
		if (!conc_num(as, 9, &mt))
			return fail(r, "mask type not recorded"), 1;
		causal = mt != 0;
	}
	conc_num(as, imq, &mq);
	conc_num(as, imk, &mk);
	if (bhsd == 2) {
		/* paged prefill: q [tokens, H, D], caches [pages, Hk, D] (one token a page) */
		const struct arg *cu = tensor(as, cq), *idx = tensor(as, 5);
		double tk;
		if (q->ndim != 3 || k->ndim != 3 || v->ndim != 3 || !cu || cu->ndim != 1 || !idx ||
		    idx->ndim != 1)
			return fail(r, "paged KV layout not recorded as one token a page"), 1;
		b = cu->d[0] - 1;
		h = q->d[1], d = q->d[2], dv = v->d[2];
		tk = idx->d[0];
		p = varlen_pairs(b, q->d[0], tk, mq, mk, causal, &bound);
		snprintf(cls, sizeof cls, "paged seqs=%.0f q=%.0f kv=%.0f H=%.0f Hkv=%.0f D=%.0f%s",
		    b, q->d[0], tk, h, k->d[1], d, causal ? " causal" : "");
		attention(r, q, h, p, d, dv, tk * k->d[1] * (d * k->es + dv * v->es) +
		    tbytes(cu) + tbytes(tensor(as, ck)) + tbytes(idx), q->d[0] * h * dv, bound, cls);
		return 1;
	}
	if (tensor(as, cq) && q->ndim == 3 && k->ndim == 3) {
		/* varlen: q [total_q, H, D], k [total_k, Hk, D], cu_seqlens [B + 1] */
		const struct arg *cu = tensor(as, cq);
		b = cu->ndim == 1 ? cu->d[0] - 1 : 0;
		h = q->d[1], d = q->d[2], dv = v->d[v->ndim - 1];
		p = varlen_pairs(b, q->d[0], k->d[0], mq, mk, causal, &bound);
		snprintf(cls, sizeof cls, "varlen seqs=%.0f q=%.0f kv=%.0f H=%.0f Hkv=%.0f D=%.0f%s",
		    b, q->d[0], k->d[0], h, k->d[1], d, causal ? " causal" : "");
		attention(r, q, h, p, d, dv, tbytes(k) + tbytes(v) + tbytes(cu) +
		    tbytes(tensor(as, ck)), q->d[0] * h * dv, bound, cls);
		return 1;
	}
	if (q->ndim != 4 || k->ndim != 4 || v->ndim != 4)
		return fail(r, "query, key or value not 4-D"), 1;
	b = q->d[0];
	h = bhsd ? q->d[1] : q->d[2];
	sq = bhsd ? q->d[2] : q->d[1];
	sk = bhsd ? k->d[2] : k->d[1];
	d = q->d[3];
	dv = v->d[3];
	/* aten's flash and memory-efficient kernels align a causal mask top-left when Sq != Sk */
	p = pairs(sq, sk, causal, 0);
	snprintf(cls, sizeof cls, "B=%.0f H=%.0f Sq=%.0f Sk=%.0f D=%.0f%s", b, h, sq, sk, d,
	    causal ? " causal" : "");
	attention(r, q, b * h, p, d, dv, tbytes(k) + tbytes(v), q->numel / d * dv, 0, cls);
	return 1;
}

/* ---- fused MoE ---- */

/*
 * Fused experts: hidden [T, H], w1 [E, N1, H] (gate and up), w2 [E, H, I],
 * topk_ids [T, k] (or topk as a concrete input).  FLOPs 2 T k N1 H + 2 T k H I;
 * bytes: the hidden states in and out, the top-k tensors, and the weights
 * of min(E, T k) experts, an upper bound (an expert may get no token).
 */
static int
model_moe(const char *op, const struct args *as, struct mresult *r)
{
	const struct arg *x = NULL, *w1 = NULL, *w2 = NULL, *ids = NULL;
	double t, hd, kk = 0, e, n1, in, touched, other = 0;
	int i;

	if (!strstr(op, "fused_experts") && !strstr(op, "fused_moe") && strcmp(op, "aiter::fmoe") &&
	    strncmp(op, "aiter::ck_moe", 13))
		return 0;
	for (i = 0; i < as->n; i++) {
		const struct arg *a = tensor(as, i);
		if (!a)
			continue;
		if (!x && a->ndim == 2 && !a->isint)
			x = a;
		else if (a->ndim == 3 && !w1)
			w1 = a;
		else if (a->ndim == 3 && !w2)
			w2 = a;
		else if (x && a->ndim == 2 && a->isint && a->d[0] == x->d[0] && !ids)
			ids = a;
		else if (a != x)
			other += tbytes(a);
	}
	if (!x || !w1 || !w2)
		return fail(r, "hidden states and expert weights not recorded"), 1;
	t = x->d[0], hd = x->d[1], e = w1->d[0];
	if (ids)
		kk = ids->d[1];
	else {
		for (i = 0; i < as->n && !kk; i++)
			if (!tensor(as, i) && conc_num(as, i, &kk) && (kk < 1 || kk > e))
				kk = 0;
	}
	if (kk < 1 || w2->d[0] != e || w1->d[2] != hd || w2->d[1] != hd)
		return fail(r, "top-k or expert layout not recorded"), 1;
	n1 = w1->d[1];
	in = w2->d[2];
	touched = t * kk < e ? t * kk : e;
	memset(r, 0, sizeof *r);
	r->ok = 1;
	r->flops = 2 * t * kk * n1 * hd + 2 * t * kk * hd * in;
	r->bytes = 2 * tbytes(x) + tbytes(ids) + other +
	    touched * (n1 * hd * w1->es + hd * in * w2->es);
	set_dtype(r, x);
	if (w1->dt == DT_FP8 || w1->dt == DT_INT8 || w1->dt == DT_FP4)
		r->dtype = w1->dt;
	r->fp32_gemm = 0;
	r->bound = 1;
	snprintf(r->cls, sizeof r->cls, "T=%.0f top%.0f E=%.0f H=%.0f I=%.0f %s", t, kk, e, hd, in,
	    type_key(x));
	return 1;
}

/* ---- memory-bound ops ---- */

static int
name_in(const char *base, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(base, *list))
			return 1;
	return 0;
}

static const char *const pointwise[] = {
	"add", "sub", "rsub", "mul", "div", "neg", "abs", "exp", "exp2", "expm1", "log",
	"log2", "log1p", "sqrt", "rsqrt", "reciprocal", "sigmoid", "tanh", "relu", "gelu",
	"silu", "mish", "pow", "clamp", "clamp_min", "clamp_max", "where", "masked_fill",
	"eq", "ne", "lt", "le", "gt", "ge", "cos", "sin", "sign", "floor", "ceil", "round",
	"trunc", "minimum", "maximum", "logical_and", "logical_or", "logical_not",
	"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "threshold",
	"threshold_backward", "tanh_backward", "sigmoid_backward", "gelu_backward",
	"silu_backward", "hardtanh", "hardtanh_backward", "leaky_relu", "softplus", "erf",
	"lerp", "addcmul", "addcdiv", "remainder", "fmod", "atan2", "square", "hardswish",
	"elu", "nan_to_num", "isnan", "isinf", "logit", NULL
};
static const char *const fills[] = { "fill_", "zero_", "normal_", "uniform_", "random_",
	"exponential_", "bernoulli_", NULL };
static const char *const reductions[] = {
	"sum", "mean", "amax", "amin", "max", "min", "argmax", "argmin", "norm",
	"linalg_vector_norm", "prod", "any", "all", "var", "std", "var_mean", "std_mean",
	"cumsum", "cumprod", "topk", "sort", "logsumexp", "nll_loss_forward", "mse_loss",
	"nll_loss_backward", "mse_loss_backward", "aminmax", "max_pool2d_with_indices",
	"max_pool2d_with_indices_backward", "avg_pool2d", "adaptive_avg_pool2d", NULL
};
static const char *const same_size_out[] = {
	"_softmax", "_log_softmax", "softmax", "log_softmax", "_softmax_backward_data",
	"_log_softmax_backward_data", "native_layer_norm", "native_batch_norm",
	"native_group_norm", "_fused_rms_norm", "rms_norm", "layer_norm", "cudnn_batch_norm",
	"miopen_batch_norm", "_batch_norm_impl_index", "native_layer_norm_backward",
	"native_batch_norm_backward", "native_group_norm_backward", "cudnn_batch_norm_backward",
	"miopen_batch_norm_backward", "_to_copy", "clone", "contiguous", "_fused_dropout",
	"native_dropout", NULL
};

/* The element size of an out-of-place pointwise result: the first floating tensor's. */
static int
result_es(const struct args *as, const char *base)
{
	int i, es = 0;

	if (!strcmp(base, "eq") || !strcmp(base, "ne") || !strcmp(base, "lt") ||
	    !strcmp(base, "le") || !strcmp(base, "gt") || !strcmp(base, "ge") ||
	    !strncmp(base, "logical_", 8) || !strcmp(base, "isnan") || !strcmp(base, "isinf"))
		return 1;
	for (i = 0; i < as->n; i++) {
		const struct arg *a = tensor(as, i);
		if (a && !a->isint && a->dt != DT_NONE && a->numel > 1)
			return a->es;
		if (a && !es)
			es = a->es;
	}
	return es;
}

/* The broadcast shape's elements of the tensor inputs. */
static double
broadcast_numel(const struct args *as)
{
	double out[MAXDIM];
	int nd = 0, i, j;

	for (i = 0; i < as->n; i++) {
		const struct arg *a = tensor(as, i);
		if (!a)
			continue;
		if (a->ndim > nd) {
			for (j = nd - 1; j >= 0; j--)
				out[j + a->ndim - nd] = out[j];
			for (j = 0; j < a->ndim - nd; j++)
				out[j] = 1;
			nd = a->ndim;
		}
		for (j = 0; j < a->ndim; j++) {
			double v = a->d[a->ndim - 1 - j], *o = &out[nd - 1 - j];
			if (*o == 1 || v == 0)
				*o = v;
		}
	}
	{
		double n = 1;
		for (j = 0; j < nd; j++)
			n *= out[j];
		return n;
	}
}

static double
sum_tensors(const struct args *as)
{
	double s = 0;
	int i;

	for (i = 0; i < as->n; i++)
		s += tbytes(tensor(as, i));
	return s;
}

static void
memory(struct mresult *r, const struct args *as, double bytes)
{
	const struct arg *a = NULL;
	int i;
	char dims[96];
	size_t l = 0;

	memset(r, 0, sizeof *r);
	r->ok = 1;
	r->bytes = bytes;
	r->dtype = DT_NONE;
	for (i = 0; i < as->n && !a; i++)
		a = tensor(as, i);
	dims[0] = 0;
	if (a) {
		l += (size_t)snprintf(dims + l, sizeof dims - l, "[");
		for (i = 0; i < a->ndim && l < sizeof dims - 24; i++)
			l += (size_t)snprintf(dims + l, sizeof dims - l, "%s%.0f", i ? "," : "",
			    a->d[i]);
		snprintf(dims + l, sizeof dims - l, "] %s", type_key(a));
	}
	snprintf(r->cls, sizeof r->cls, "%s", dims);
}

static int
any_list(const struct args *as)
{
	int i;

	for (i = 0; i < as->n; i++)
		if (as->a[i].kind == A_LIST)
			return 1;
	return 0;
}

/* aten pointwise, fills, reductions, norms, copies, gathers. */
static int
model_aten_memory(const char *op, const struct args *as, struct mresult *r)
{
	char base[64];
	size_t n;
	int inplace;
	const struct arg *a0 = tensor(as, 0);

	if (strncmp(op, "aten::", 6))
		return 0;
	snprintf(base, sizeof base, "%s", op + 6);
	n = strlen(base);
	if (!strcmp(base, "copy_")) {
		if (!a0 || !tensor(as, 1))
			return fail(r, "tensors not recorded"), 1;
		memory(r, as, tbytes(a0) + tbytes(tensor(as, 1)));
		return 1;
	}
	if (name_in(base, fills)) {
		if (!a0)
			return fail(r, "tensor not recorded"), 1;
		memory(r, as, tbytes(a0));
		return 1;
	}
	if (!strcmp(base, "index_select") || !strcmp(base, "embedding") ||
	    !strcmp(base, "gather")) {
		/* the rows or elements picked: read and written once, with the index */
		const struct arg *idx = tensor(as, !strcmp(base, "gather") ? 2 :
		    !strcmp(base, "embedding") ? 1 : 2);
		double out;
		if (!a0 || !idx || a0->ndim < 1)
			return fail(r, "tensors not recorded"), 1;
		if (!strcmp(base, "gather"))
			out = idx->numel;
		else if (!strcmp(base, "embedding"))
			out = idx->numel * (a0->d[0] > 0 ? a0->numel / a0->d[0] : 0);
		else {
			double dim = 0;
			if (!conc_num(as, 1, &dim) || dim < 0 || dim >= a0->ndim ||
			    a0->d[(int)dim] == 0)
				return fail(r, "dimension not recorded"), 1;
			out = idx->numel * a0->numel / a0->d[(int)dim];
		}
		/* gather's index is often expanded (stride 0): its own bytes are not counted */
		memory(r, as, 2 * out * a0->es + (strcmp(base, "gather") ? tbytes(idx) : 0));
		return 1;
	}
	inplace = n > 1 && base[n - 1] == '_' && base[n - 2] != '_';
	if (inplace)
		base[n - 1] = 0;
	if (any_list(as))
		return name_in(base, pointwise) || name_in(base, reductions) ||
		    name_in(base, same_size_out) ? (fail(r, "tensor list element type not recorded"),
		    1) : 0;
	if (name_in(base, pointwise)) {
		if (!a0 && !tensor(as, 1))
			return fail(r, "tensors not recorded"), 1;
		memory(r, as, sum_tensors(as) + (inplace ? tbytes(a0) :
		    broadcast_numel(as) * result_es(as, base)));
		return 1;
	}
	if (inplace)
		return 0;
	if (name_in(base, reductions)) {
		if (!a0)
			return fail(r, "tensor not recorded"), 1;
		memory(r, as, sum_tensors(as));
		return 1;
	}
	if (name_in(base, same_size_out)) {
		const struct arg *x = a0;
		if (strstr(base, "backward") && tensor(as, 1) && (!x || tensor(as, 1)->numel > x->numel))
			x = tensor(as, 1);
		if (!x)
			return fail(r, "tensor not recorded"), 1;
		memory(r, as, sum_tensors(as) + tbytes(x));
		return 1;
	}
	return 0;
}

/* Framework kernels (vLLM, SGLang, aiter, sgl-kernel): norms, activations, rotary, caches. */
static int
model_framework_memory(const char *op, const struct args *as, struct mresult *r)
{
	const char *base = strstr(op, "::");

	if (!base || !strncmp(op, "aten::", 6))
		return 0;
	base += 2;
	if (!strcmp(base, "fused_add_rms_norm") || !strcmp(base, "fused_add_rmsnorm")) {
		/* input and residual are read and written back; the weight read */
		const struct arg *x = tensor(as, 0), *res = tensor(as, 1);
		if (!x || !res)
			return fail(r, "tensors not recorded"), 1;
		memory(r, as, sum_tensors(as) + tbytes(x) + tbytes(res));
		return 1;
	}
	if (strstr(base, "rotary_embedding") || !strcmp(base, "rope")) {
		/* positions, query, key, head_size, cos_sin_cache, is_neox: q and k in place, one cache row a position */
		const struct arg *pos = tensor(as, 0), *q = tensor(as, 1), *k = tensor(as, 2),
		    *cache = tensor(as, 4);
		if (!pos || !q || !k || !cache || cache->ndim != 2)
			return fail(r, "positions, query, key or cache not recorded"), 1;
		memory(r, as, tbytes(pos) + 2 * (tbytes(q) + tbytes(k)) +
		    pos->numel * cache->d[1] * cache->es);
		return 1;
	}
	if (!strcmp(base, "reshape_and_cache_flash") || !strcmp(base, "reshape_and_cache") ||
	    !strcmp(base, "store_cache") || !strcmp(base, "store_kvcache")) {
		/* key, value, key_cache, value_cache, slot_mapping / loc: the new tokens' rows written */
		const struct arg *k = tensor(as, 0), *v = tensor(as, 1), *kc = tensor(as, 2),
		    *vc = tensor(as, 3), *slots = tensor(as, 4);
		if (!k || !v || !kc || !vc)
			return fail(r, "key, value or caches not recorded"), 1;
		memory(r, as, tbytes(k) + tbytes(v) + k->numel * kc->es + v->numel * vc->es +
		    tbytes(slots));
		return 1;
	}
	if (strstr(base, "rms_norm") || strstr(base, "rmsnorm") || strstr(base, "layer_norm") ||
	    strstr(base, "layernorm") || strstr(base, "silu_and_mul") ||
	    strstr(base, "gelu_and_mul") || strstr(base, "act_and_mul") ||
	    strstr(base, "gelu_tanh_and_mul") || strstr(base, "fp8_quant") ||
	    strstr(base, "int8_quant") || strstr(base, "per_token_quant") ||
	    strstr(base, "per_token_group_quant")) {
		/* these take their result as an argument: each tensor read or written once */
		if (!sum_tensors(as))
			return fail(r, "tensors not recorded"), 1;
		memory(r, as, sum_tensors(as));
		return 1;
	}
	return 0;
}

/* Inductor's generated Triton kernels: each buffer argument read or written once. */
static int
model_triton(const char *op, const struct args *as, struct mresult *r)
{
	if (strncmp(op, "triton_poi_", 11) && strncmp(op, "triton_red_", 11) &&
	    strncmp(op, "triton_per_", 11))
		return 0;
	if (!sum_tensors(as))
		return fail(r, "buffers not recorded"), 1;
	memory(r, as, sum_tensors(as));
	return 1;
}

/* Collectives: the interconnect bounds them, not the GPU's memory or arithmetic. */
static int
is_collective(const char *op)
{
	static const char *const words[] = { "record_param_comms", "c10d::", "nccl", "rccl",
	    "all_reduce", "allreduce", "all_gather", "allgather", "reduce_scatter",
	    "all_to_all", "alltoall", "All2All", "symm_mem::", "broadcast_", NULL };
	const char *const *w;

	for (w = words; *w; w++)
		if (strstr(op, *w))
			return 1;
	return 0;
}

void
model_op(const char *op, const char *dims, size_t dimslen, const char *types, size_t typeslen,
    const char *concrete, size_t concretelen, struct mresult *out)
{
	struct args *as = malloc(sizeof *as);

	memset(out, 0, sizeof *out);
	if (!as) {
		out->reason = "out of memory";
		return;
	}
	read_args(as, dims, dimslen, types, typeslen, concrete, concretelen);
	if (is_collective(op))
		fail(out, "collective communication: bounded by the interconnect, not modeled");	/* main.c's text */
	else if (!dims || !dimslen)
		fail(out, "input shapes not recorded");
	else if (!model_aten_gemm(op, as, out) && !model_scaled_gemm(op, as, out) &&
	    !model_conv(op, as, out) && !model_attention(op, as, out) && !model_moe(op, as, out) &&
	    !model_triton(op, as, out) &&
	    !model_aten_memory(op, as, out) && !model_framework_memory(op, as, out))
		fail(out, "no model for this op");
	if (out->ok && !(out->flops >= 0 && out->bytes > 0 && isfinite(out->flops) &&
	    isfinite(out->bytes)))
		fail(out, "shapes give no work");
	free(as);
}
