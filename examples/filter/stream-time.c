/*
 * stream-time: GPU time per stream of each trace, as tab-separated text.
 * A complete small filter on the record layer (docs/CONTRIBUTING.md):
 *   trace-extract t.json.gz | stream-time
 */
#include <stdio.h>
#include <stdlib.h>

#include "err.h"
#include "imap.h"
#include "opt.h"
#include "trace.h"
#include "xalloc.h"

static const struct opt opts[] = { { NULL, 0, NULL, NULL } };
static const struct tool tool = { "[-q] [file]",
	"Print each trace's kernels and GPU time per (pid, stream), tab-separated.", opts };

/* At the trace's stats record: sum its kernels by (pid, stream) and print. */
static void
on_trace(void *ctx, struct trace_reader *r, struct trace *tr)
{
	struct row { uint32_t pid, stream; long long n; double us; } *row = NULL;
	size_t nrow = 0, cap = 0, i;
	imap ix = { 0 };

	(void)ctx;
	for (i = 0; i < tr->nk; i++) {
		const struct tkernel *k = &tr->k[i];
		uint32_t pid = trace_thread_pid(r, k->thread);
		uint32_t st = k->stream != NOSTR ? k->stream : trace_thread_tid(r, k->thread);
		int isnew;
		uint64_t *v = imap_insert(&ix, (uint64_t)pid << 32 | st, nrow, &isnew);
		if (isnew) {
			xgrow(&row, &cap, nrow + 1, sizeof *row);
			row[nrow++] = (struct row){ pid, st, 0, 0.0 };
		}
		row[*v].n++;
		row[*v].us += k->dur;
	}
	for (i = 0; i < nrow; i++)
		printf("%lld\t%s\t%s\t%lld\t%.3f\n", tr->t, strtab_str(r->str, row[i].pid),
		    strtab_str(r->str, row[i].stream), row[i].n, row[i].us / 1000.0);
	imap_free(&ix);
	free(row);
}

int
main(int argc, char **argv)
{
	struct trace_ops ops = { 0 };
	struct trace_reader rd;
	strtab *str = strtab_new();
	FILE *fp;

	tool_init(argc, argv);
	while (opt_next(&tool, argc, argv) != -1)
		opt_usage(&tool, EXIT_USAGE);
	if (argc - optind > 1)
		opt_usage(&tool, EXIT_USAGE);
	fp = rec_open(optind < argc ? argv[optind] : "-");
	ops.collect = TR_MASK(kernel);	/* stored per trace; ops.pass 0: no record is copied */
	ops.on_trace = on_trace;
	trace_reader_init(&rd, str, &ops);
	printf("t\tpid\tstream\tkernels\tgpu_ms\n");
	trace_read(&rd, fp, fp == stdin ? "<stdin>" : argv[optind]);
	trace_reader_free(&rd);
	strtab_free(str);
	return tool_finish(EXIT_OK);
}
