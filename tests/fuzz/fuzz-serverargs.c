/*
 * libFuzzer harness for server_args.json (cmd/trace-extract/discover.c,
 * framework.c): the input is the file's text, read the way trace-extract
 * reads it beside a trace; what it keeps is parsed again, its framework
 * hint taken and the framework resolved from it, and written back in both
 * of json.c's spellings.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "extract.h"
#include "fuzz.h"
#include "json.h"
#include "sbuf.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static char dir[64], file[96];

/* The scratch directory goes when the run ends. */
static void
remove_dir(void)
{
	unlink(file);
	rmdir(dir);
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	FILE *fp;
	sbuf min = SBUF_INIT, out = SBUF_INIT, ev = SBUF_INIT;
	json_doc d = { 0 };
	const char *src;

	if (!dir[0]) {
		snprintf(dir, sizeof dir, "/tmp/fuzz-serverargs.%ld", (long)getpid());
		if (mkdir(dir, 0700) != 0 && errno != EEXIST)
			abort();
		snprintf(file, sizeof file, "%s/server_args.json", dir);
		atexit(remove_dir);
	}
	if ((fp = fopen(file, "wb")) == NULL || fwrite(data, 1, size, fp) != size || fclose(fp))
		abort();
	fuzz_die_armed = 1;
	if (setjmp(fuzz_die_jmp) == 0 && load_server_args_dir(dir, &min) == 1) {
		if (json_parse(&d, min.s, min.len) != JSON_OK)
			abort();	/* what it keeps is JSON */
		server_args_hint(min.s);
		resolve_framework("auto", NULL, dir, 1, min.s, NULL, &src, &ev, NULL);
		json_write_compact(&d, 0, &out);
		if (out.len != min.len || memcmp(out.s, min.s, min.len) != 0)
			abort();	/* compact text is a fixed point */
		json_pystr(&d, 0, &out, NULL);
	}
	fuzz_die_armed = 0;
	unlink(file);
	sb_free(&min);
	sb_free(&out);
	sb_free(&ev);
	json_doc_free(&d);
	return 0;
}
