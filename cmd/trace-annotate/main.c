/*
 * trace-annotate: the findings of a triage run written back into a copy of
 * its trace, for Perfetto and chrome://tracing (issue 29).  Reads the
 * run's record stream (triage --format jsonl, or the pipeline's), then
 * streams each trace it names through, unchanged, adding before the end of
 * its event array a "triage findings" process: the steps, the GPU's idle
 * gaps, graph escapes, the kernel table's top rows, overlap and fuse
 * opportunities and the ranks' collectives, each slice carrying the id of
 * its report row.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "num.h"
#include "ofile.h"
#include "opt.h"
#include "rec.h"
#include "ta.h"
#include "xalloc.h"

/*
 * Our process's pid: above every Linux pid (PID_MAX_LIMIT is 2^22) and
 * every pid of the records; ta_stream raises it above the trace's own.
 */
#define TA_PID_MIN 4194305LL

static const struct opt opts[] = {
	{ "output", 'o', "FILE", "the annotated trace (default -, stdout); gzip for a .gz name; "
	    "DIR/: one file a trace" },
	{ "trace", 't', "N", "annotate the records' trace N (the t of its trace record) only" },
	{ "trace-file", OPT_LONG + 1, "FILE", "read the trace from FILE, not the path its records "
	    "name" },
	{ "top", 'n', "N", "kernel table rows per stage to mark (default 10; 0: every row shown)" },
	{ "gzip", 'z', NULL, "gzip the output whatever its name" },
	{ "no-link", OPT_LONG + 2, NULL, "refuse an -o FILE that is a symbolic link (a name "
	    "triage made)" },
	{ NULL, 0, NULL, NULL }
};

static const struct tool tool = {
	"[-qz] [-n N] [-o FILE] [-t N] [--trace-file F]\n [--no-link] [records]",
	"Write the findings of a triage run into a copy of its trace, for Perfetto\n"
	"(ui.perfetto.dev) and chrome://tracing: the trace streamed through byte for\n"
	"byte, and before the end of its event array a \"triage findings\" process with\n"
	"a track per kind of finding (steps, GPU idle gaps, graph escapes, top kernels,\n"
	"exposed overlap kernels, fuse evidence, collectives) and counters per stage.\n"
	"Each slice's args carry the id of its report row.  The records are the run's\n"
	"(triage --format jsonl, or a pipeline through fuse-detect), read from the file\n"
	"or stdin; the trace is the file their trace record names.",
	opts
};

/* Does the name end in suffix, ASCII case folded? */
static int
ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

/* An output naming a directory: "DIR/" or an existing directory. */
static int
is_dir(const char *out)
{
	struct stat sb;

	return (*out && out[strlen(out) - 1] == '/') || (stat(out, &sb) == 0 && S_ISDIR(sb.st_mode));
}

/* The part of a trace file name before .json.gz, .json or .gz. */
static size_t
stem_len(const char *name)
{
	static const char *const ext[] = { ".json.gz", ".json", ".gz" };
	size_t i, n = strlen(name);

	for (i = 0; i < 3; i++)
		if (ends_with(name, ext[i]))
			return n - strlen(ext[i]);
	return n;
}

/*
 * The output of one trace: out itself; with several traces out with
 * ".LABEL" before its extension; in a directory DIR/<trace stem>.annotated.json
 * (.gz when the trace or -z is gzip), DIR/<stem>.LABEL.annotated.json when
 * label is given there (another trace has the same stem: prefill/ and
 * decode/ of one profile name their traces alike).
 */
static char *
out_name(const char *out, int dir, const struct ta_trace *tr, const char *label, int gz)
{
	sbuf b = SBUF_INIT;
	const char *path = ta_s(tr->path), *base = strrchr(path, '/');
	size_t k;

	base = base ? base + 1 : path;
	if (dir) {
		sb_adds(&b, out);
		if (b.len && b.s[b.len - 1] != '/')
			sb_addc(&b, '/');
		sb_add(&b, base, stem_len(base));
		if (label)
			sb_printf(&b, ".%s", label);
		sb_adds(&b, gz ? ".annotated.json.gz" : ".annotated.json");
	} else if (label) {
		k = stem_len(out);
		sb_add(&b, out, k);
		sb_printf(&b, ".%s%s", label, out + k);
	} else {
		sb_adds(&b, out);
	}
	return sb_detach(&b);
}

/* Does another selected trace share trace i's file stem (its name in a directory)? */
static int
stem_clash(struct ta_trace **sel, size_t n, size_t i, const char *trace_file)
{
	const char *p = trace_file ? trace_file : ta_s(sel[i]->path), *a = strrchr(p, '/');
	size_t j, ka;

	if (trace_file)
		return n > 1;	/* one file for every trace */
	a = a ? a + 1 : p;
	ka = stem_len(a);
	for (j = 0; j < n; j++) {
		const char *q = ta_s(sel[j]->path), *c = strrchr(q, '/');
		c = c ? c + 1 : q;
		if (j != i && stem_len(c) == ka && memcmp(a, c, ka) == 0)
			return 1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	const char *out = "-", *trace_file = NULL, *in = "-", *errstr;
	long long only = -1, v;
	int c, gzip_opt = 0, dir, by_rank, pass, no_link = 0, made;
	size_t i, j, nsel = 0;
	static struct ta_trace **sel;	/* static: still reachable when a check below dies */
	static sbuf why = SBUF_INIT, label = SBUF_INIT;	/* static: reachable at a die below */
	FILE *fp;

	tool_init(argc, argv);
	ta.top = 10;
	while ((c = opt_next(&tool, argc, argv)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 't':
			if (!parse_num(optarg, 0, 1000000, &only, &errstr))
				opt_bad(&tool, "trace", errstr, optarg);
			break;
		case OPT_LONG + 1:
			trace_file = optarg;
			break;
		case OPT_LONG + 2:
			no_link = 1;
			break;
		case 'n':
			if (!parse_num(optarg, 0, 1LL << 40, &v, &errstr))
				opt_bad(&tool, "top", errstr, optarg);
			ta.top = v;
			break;
		case 'z':
			gzip_opt = 1;
			break;
		default:
			opt_usage(&tool, EXIT_USAGE);
		}
	}
	if (argc - optind > 1)
		opt_usage(&tool, EXIT_USAGE);
	if (optind < argc)
		in = argv[optind];
	dir = strcmp(out, "-") != 0 && is_dir(out);
	/* what cannot be written is exit 2 before the records are read */
	if (!dir && strcmp(out, "-") != 0 && (c = ofile_check(out, &why)))
		die(c, "%s", sb_str(&why));
	if (dir && access(out, W_OK) != 0)
		die(EXIT_USAGE, "cannot write into '%s': %s", out, strerror(errno));

	fp = rec_open(in);
	ta_read(fp, strcmp(in, "-") ? in : "<stdin>");
	if (fp != stdin)
		fclose(fp);

	sel = xcalloc(ta.ntr + 1, sizeof *sel);
	for (i = 0; i < ta.ntr; i++) {
		struct ta_trace *tr = &ta.tr[i];
		if (only >= 0 ? tr->t == only : tr->path != NOSTR && strcmp(ta_s(tr->role), "mapping"))
			sel[nsel++] = tr;
	}
	if (nsel == 0 && only >= 0)
		die(EXIT_EMPTY, "the records hold no trace %lld", only);
	if (nsel == 0)
		die(EXIT_EMPTY, "the records hold no trace record: nothing to annotate");
	if (trace_file && nsel > 1)
		die(EXIT_USAGE, "--trace-file names one trace, the records hold %zu: choose one "
		    "with -t N", nsel);
	if (nsel > 1 && !dir && strcmp(out, "-") == 0)
		die(EXIT_USAGE, "the records hold %zu traces: name a directory (-o DIR/) or a file "
		    "(-o FILE.json.gz, one per trace), or choose one with -t N", nsel);
	/* several traces in one file name: by rank when every rank is known and distinct */
	by_rank = nsel > 1;
	for (i = 0; by_rank && i < nsel; i++) {
		by_rank = sel[i]->has_rank;
		for (j = 0; by_rank && j < i; j++)
			by_rank = sel[j]->rank != sel[i]->rank;
	}
	/* pass 0 names every output and checks it, so that a refusal writes none */
	for (pass = 0; pass < 2; pass++)
	for (i = 0; i < nsel; i++) {
		struct ta_trace *tr = sel[i];
		const char *path = trace_file ? trace_file : ta_s(tr->path);
		struct ta_out o;
		char *name;
		int gz;

		if (!*path || strcmp(path, "-") == 0 || strcmp(path, "<stdin>") == 0)
			die(EXIT_USAGE, "trace %lld was read from standard input: name its file with "
			    "--trace-file", tr->t);
		sb_reset(&label);
		if (nsel > 1) {
			if (by_rank)
				sb_printf(&label, "rank%lld", tr->rank);
			else
				sb_printf(&label, "t%lld", tr->t);
		}
		gz = gzip_opt || (dir ? tr->gzip || ends_with(path, ".gz") : ends_with(out, ".gz"));
		name = out_name(out, dir, tr, nsel > 1 && (!dir || stem_clash(sel, nsel, i, trace_file)) ?
		    sb_str(&label) : NULL, gz);
		/*
		 * A name made here (in a directory, or with a rank's label) or by
		 * the caller (--no-link): never through a link.
		 */
		made = dir || (nsel > 1 && sb_str(&label)[0]) || no_link;
		if (pass == 0) {
			c = made && strcmp(name, "-") != 0 ? ofile_no_link(name, &why) : 0;
			free(name);
			if (c)
				die(c, "%s", why.s);
			continue;
		}
		memset(&o, 0, sizeof o);
		o.tr = tr;
		o.pid = ta.max_pid + 1 > TA_PID_MIN ? ta.max_pid + 1 : TA_PID_MIN;
		ta_stream(path, name, gz, made, &o,
		    tr->has_stats && !trace_file ? tr->events : -1);
		if (strcmp(name, "-") != 0)
			note_msg("annotated '%s' into '%s'", path, name);
		free(name);
		free(o.f);
		free(o.run_len);
		if (o.runs)
			fclose(o.runs);
		free(o.track_name);
		free(o.track_kind);
		sb_free(&o.counters);
	}
	free(sel);
	sb_free(&why);
	sb_free(&label);
	return tool_finish(EXIT_OK);
}
