/*
 * libFuzzer harness for kernel-roofline's inputs besides the record layer
 * (issue 28).  The first byte picks one:
 *   even  a gpu-specs(5) table (--gpu-specs FILE), loaded with the tool's
 *         reader, then device names, cut and recased from its entries'
 *         patterns, matched against it with and without properties;
 *   odd   an op's recorded shapes: the rest is the op name, dims, types and
 *         concrete inputs, one a line, as op_shape records carry them, given
 *         to every model (model_op).
 * Leak checks are off: a malformed table ends the run through die(), which
 * the tool does by exiting, leaving what the reader held.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "gpuspec.h"
#include "model.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int __lsan_is_turned_off(void);

int
__lsan_is_turned_off(void)
{
	return 1;
}

static void
table(int fd)
{
	struct gputab t = { 0 };
	char path[64], buf[512], name[300];
	const char *why;
	size_t i, j;

	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	fuzz_die_armed = 1;
	if (setjmp(fuzz_die_jmp) == 0) {
		gputab_load(&t, path);
		for (i = 0; i < t.n && i < 64; i++)
			for (j = 0; j < t.g[i].nmatch; j++) {
				snprintf(name, sizeof name, "NVIDIA %s", t.g[i].match[j]);
				gpu_match(&t, name, -1, -1, -1, -1, &why, buf, sizeof buf);
				gpu_match(&t, t.g[i].match[j], t.g[i].sm_count, t.g[i].cc_major,
				    t.g[i].cc_minor, (long long)(t.g[i].mem_gib_max * 1073741824.0), &why,
				    buf, sizeof buf);
				gpu_match(&t, "", t.g[i].sm_count, t.g[i].cc_major, t.g[i].cc_minor,
				    (long long)(t.g[i].mem_gib_min * 1073741824.0), &why, buf, sizeof buf);
				gpu_peak(&t.g[i], (int)(j % DT_COUNT), (int)(j & 1));
			}
	}
	fuzz_die_armed = 0;
	gputab_free(&t);
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	const char *p[4] = { "", NULL, NULL, NULL };
	size_t n[4] = { 0, 0, 0, 0 }, i, k;
	char *copy, *op;
	struct mresult r;
	int fd;

	if (size == 0)
		return 0;
	if (data[0] % 2 == 0) {
		fd = fuzz_memfd(data + 1, size - 1);
		table(fd);
		close(fd);
		return 0;
	}
	copy = malloc(size);
	memcpy(copy, data + 1, size - 1);
	copy[size - 1] = 0;
	for (i = 0, k = 0; k < 4; k++) {
		size_t s = i;
		while (i < size - 1 && copy[i] != '\n')
			i++;
		p[k] = copy + s;
		n[k] = i - s;
		if (i < size - 1)
			copy[i++] = 0;
	}
	op = malloc(n[0] + 1);
	memcpy(op, p[0], n[0]);
	op[n[0]] = 0;
	model_op(op, n[1] ? p[1] : NULL, n[1], n[2] ? p[2] : NULL, n[2], n[3] ? p[3] : NULL, n[3],
	    &r);
	free(op);
	free(copy);
	return 0;
}
