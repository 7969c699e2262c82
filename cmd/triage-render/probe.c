/*
 * The probe summary of a live capture (issue 19): the requests
 * trace-capture sent, how long they took (mean and 95th percentile of the
 * successful ones) and how many answered nothing, as the reference's
 * endpoint probe reports.
 */
#include <stdlib.h>
#include <string.h>

#include "num.h"
#include "render.h"
#include "xalloc.h"

static int
cmp_num(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void
probe_fact(const struct run *run, struct doc *d)
{
	double *lat = NULL, sum = 0, p95;
	size_t n = 0, nok = 0, nempty = 0, nwarm = 0, i, cap = 0;
	long long tokens = 0;
	int have_tokens = 0;
	sbuf b = SBUF_INIT, v = SBUF_INIT, f = SBUF_INIT;

	for (i = 0; i < run->n; i++) {
		const struct item *it = &run->it[i];
		if (!item_is(it, "probe"))
			continue;
		n++;
		if (strcmp(item_str(it, "phase", &b, ""), "warm-up") == 0)
			nwarm++;
		if (!item_bool(it, "ok"))
			continue;
		xgrow(&lat, &cap, nok + 1, sizeof *lat);
		lat[nok++] = item_num(it, "latency_us", 0);
		sum += lat[nok - 1];
		if (item_bool(it, "empty"))
			nempty++;
		if (item_get(it, "completion_tokens") >= 0) {
			tokens += item_int(it, "completion_tokens", 0);
			have_tokens = 1;
		}
	}
	if (!n) {
		sb_free(&b);
		return;
	}
	sb_printf(&v, "%zu sent (%zu warm-up, %zu while profiling)", n, nwarm, n - nwarm);
	/* the JSON document's field: the counts and latencies as numbers */
	sb_printf(&f, "{\"sent\":%zu,\"warm_up\":%zu,\"profiling\":%zu,\"ok\":%zu,"
	    "\"failed\":%zu,\"empty\":%zu", n, nwarm, n - nwarm, nok, n - nok, nempty);
	if (nok) {
		char buf[40];
		xqsort(lat, nok, sizeof *lat, cmp_num);
		/* nearest rank: the smallest latency at or above 95 % of them */
		p95 = lat[(size_t)((nok * 95 + 99) / 100) - 1];
		sb_printf(&f, ",\"latency_mean_us\":%s", num_json(sum / (double)nok, buf));
		sb_printf(&f, ",\"latency_p95_us\":%s", num_json(p95, buf));
		if (have_tokens)
			sb_printf(&f, ",\"tokens\":%lld", tokens);
		sb_printf(&v, "; latency mean %.1f ms, p95 %.1f ms", sum / (double)nok / 1000.0,
		    p95 / 1000.0);
		if (have_tokens)
			sb_printf(&v, "; %lld tokens generated", tokens);
		sb_printf(&v, "; %zu empty answer%s", nempty, nempty == 1 ? "" : "s");
	}
	if (n - nok)
		sb_printf(&v, "; %zu failed", n - nok);
	sb_addc(&f, '}');
	add_field(d, "probe_requests", f.s);
	add_fact(d, "Probe requests", v.s);
	sb_free(&f);
	free(lat);
	sb_free(&b);
	sb_free(&v);
}
