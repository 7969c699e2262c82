/* Resource limits from the environment (reslimit.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "err.h"
#include "reslimit.h"

static const struct {
	const char *env;
	unsigned long long dflt;
	int bytes;		/* shown as a size, else as a count */
} lims[LIM_COUNT] = {
	[LIM_INPUT_BYTES] = { "TRIAGE_MAX_INPUT_BYTES", 16ULL << 30, 1 },
	[LIM_KERNELS] = { "TRIAGE_MAX_KERNELS", 16ULL << 20, 0 },
	[LIM_CPU_OPS] = { "TRIAGE_MAX_CPU_OPS", 16ULL << 20, 0 },
	[LIM_SIDE_BYTES] = { "TRIAGE_MAX_SIDE_BYTES", 16ULL << 20, 1 },
};

static unsigned long long value[LIM_COUNT];

unsigned long long
limit_parse(const char *s, unsigned long long ceiling)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	errno = 0;
	if (!s || *s < '0' || *s > '9')
		return 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (*end != '\0' || v == 0 || v > (ceiling >> shift))
		return 0;
	return v << shift;
}

unsigned long long
limit_get(enum limit_id id)
{
	if (value[id] == 0) {
		const char *e = getenv(lims[id].env);
		unsigned long long v = limit_parse(e, 1ULL << 62);
		value[id] = v ? v : lims[id].dflt;
		/* a limit set on purpose and not understood must not pass unsaid */
		if (e && *e && !v)
			warn_msg("%s='%s' is not a limit (a whole number from 1, with k, M, G or T "
			    "after it or not): %s applies", lims[id].env, e, limit_text(id));
	}
	return value[id];
}

const char *
limit_text(enum limit_id id)
{
	static char text[LIM_COUNT][96];
	unsigned long long m = limit_get(id);

	if (!lims[id].bytes)
		snprintf(text[id], sizeof text[id], "the limit of %llu (%s)", m, lims[id].env);
	else if (m % (1ULL << 30) == 0)
		snprintf(text[id], sizeof text[id], "the limit of %llu GiB (%s)", m >> 30,
		    lims[id].env);
	else if (m % (1ULL << 20) == 0)
		snprintf(text[id], sizeof text[id], "the limit of %llu MiB (%s)", m >> 20,
		    lims[id].env);
	else
		snprintf(text[id], sizeof text[id], "the limit of %llu bytes (%s)", m, lims[id].env);
	return text[id];
}
