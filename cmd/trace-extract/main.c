/*
 * trace-extract: read torch.profiler (Kineto) Chrome-trace files, plain or
 * gzip, in one streaming pass and write the triage record stream
 * (triage-records(5)): kernels, CPU ops, launches, Python frames,
 * annotations, thread names, the correlation map and per-trace statistics.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "err.h"
#include "extract.h"
#include "json.h"
#include "num.h"
#include "progress.h"
#include "rec.h"
#include "rules.h"
#include "scan.h"
#include "strtab.h"
#include "text.h"
#include "xalloc.h"
#include "zio.h"

static const char *role = "single";
static const char *framework = "auto";
static const char *fallback;
static int progress_flag;		/* 1 force on, -1 off, 0 auto */
static int strict;
static int python_ids;		/* frames carry python_id / parent_id */

static void usage(int code) __attribute__((noreturn));
static int extract_operand(const char *arg, int *tindex);

static const struct option longopts[] = {
	{ "framework", required_argument, NULL, 'f' },
	{ "framework-fallback", required_argument, NULL, 'F' },
	{ "help", no_argument, NULL, 'h' },
	{ "progress", no_argument, NULL, 'p' },
	{ "no-progress", no_argument, NULL, 'N' },
	{ "python-ids", no_argument, NULL, 'P' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "role", required_argument, NULL, 'r' },
	{ "strict", no_argument, NULL, 's' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

int
main(int argc, char **argv)
{
	int c, i, rval = EXIT_OK, r, tindex = 0;

	tool_init(argc, argv);
	while ((c = getopt_long(argc, argv, "f:hpqr:s", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			framework = optarg;
			break;
		case 'F':
			fallback = optarg;
			break;
		case 'h':
			usage(EXIT_OK);
		case 'p':
			progress_flag = 1;
			break;
		case 'N':
			progress_flag = -1;
			break;
		case 'P':
			python_ids = 1;
			break;
		case 'q':
			quiet = 1;
			progress_flag = -1;
			break;
		case 'r':
			role = optarg;
			break;
		case 's':
			strict = 1;
			break;
		case 'V':
			print_version();
		default:
			usage(EXIT_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (strcmp(role, "single") && strcmp(role, "mapping") && strcmp(role, "formal")) {
		warnx("bad --role value '%s': use single, mapping or formal", role);
		usage(EXIT_USAGE);
	}
	if (strcmp(framework_canonical(framework), "auto") == 0 && strcmp(framework, "auto") &&
	    *framework) {
		warnx("unknown --framework '%s': use auto, sglang, vllm, trtllm or tokenspeed",
		    framework);
		usage(EXIT_USAGE);
	}
	if (argc == 0) {
		r = extract_operand("-", &tindex);
		rval = r;
	}
	for (i = 0; i < argc; i++) {
		r = extract_operand(argv[i], &tindex);
		if (r != EXIT_OK && (rval == EXIT_OK || rval == EXIT_EMPTY))
			rval = r;
	}
	return tool_finish(rval);
}

static void
usage(int code)
{
	FILE *fp = code == EXIT_OK ? stdout : stderr;

	fprintf(fp,
	    "usage: trace-extract [-pqs] [--role single|mapping|formal] [--framework NAME]\n"
	    "                     [--framework-fallback NAME] [trace-or-profile-dir ...]\n"
	    "Read torch.profiler Chrome-trace files (.json or .json.gz, or - for stdin) and\n"
	    "write the triage record stream (JSON lines, see triage-records(5)).\n"
	    "  -f, --framework NAME   auto (default), sglang, vllm, trtllm or tokenspeed\n"
	    "      --framework-fallback NAME  used when auto-detection finds no hint\n"
	    "  -p, --progress         show progress on stderr even when it is not a terminal\n"
	    "      --no-progress      no progress, even on a terminal\n"
	    "      --python-ids       give frame records their python_id and parent_id\n"
	    "  -q, --quiet            no warnings or progress\n"
	    "  -r, --role ROLE        single (default), mapping or formal\n"
	    "  -s, --strict           data-quality warnings become errors (exit 1)\n"
	    "  -h, --help             show this help\n"
	    "      --version          show the version\n");
	exit(code == EXIT_OK ? tool_finish(EXIT_OK) : code);
}

/* ---- per-trace extraction ---- */

/* Cached classification of an interned name or category. */
enum {
	NF_META = 1 << 0,	/* process_name, thread_name, ... */
	NF_CALL = 1 << 1,	/* lowercase name starts with "## call " */
	NF_PYSCOPE = 1 << 2,	/* looks like a Python scope */
	NF_HINT = 1 << 3,	/* overlap name hints */
	NF_LAUNCH = 1 << 4,	/* name contains "launch" */
	CF_NONKERNEL = 1 << 8,	/* python_function, cpu_op or trace */
	CF_ANNOT = 1 << 9,	/* contains "annotation" */
	CF_KERNEL = 1 << 10,	/* contains kernel or starts with gpu_ */
	CF_LAUNCH = 1 << 11,	/* cuda_runtime or cuda_driver */
	CF_UA = 1 << 12,	/* exactly user_annotation */
	CF_GUA = 1 << 13,	/* exactly gpu_user_annotation */
	CF_PYFN = 1 << 14,	/* raw cat == python_function */
	CF_CPUOP = 1 << 15,	/* raw cat == cpu_op */
	F_DONE = 1 << 30
};

struct cache {
	strtab *tab;
	unsigned *flags;
	char **stage;		/* annotation stage per name (static strings) */
	size_t cap;
};

static const char *hint_words[] = {
	/* overlap.md §2.7 lists: communication, memory, compute */
	"allreduce", "all_reduce", "reduce_scatter", "allgather", "all_gather", "nccl",
	"cross_device_reduce", "deepep", "a2a", "alltoall", "allreduce_fusion", "mooncake",
	"broadcast", "dispatch", "combine", "memcpy", "memset", "dma", "prefetch", "fill",
	"copy", "cublas", "cudnn", "cutlass", "triton", "gemm", "gemv", "matmul",
	"grouped_mm", "flash", "attention", "fmha", "marlin", "fused_moe", "moe_kernel",
	"groupgemm", "mma", "wgmma", "conv", "bmm", "mm_kernel", NULL
};

static unsigned
name_flags(const char *raw, size_t n)
{
	sbuf nn = SBUF_INIT;
	unsigned f = 0;
	size_t i;
	const char *s;

	text_normalize(raw, n, &nn);
	s = sb_str(&nn);
	if (!strcmp(s, "process_name") || !strcmp(s, "thread_name") ||
	    !strcmp(s, "process_sort_index") || !strcmp(s, "thread_sort_index"))
		f |= NF_META;
	text_lower(nn.s, nn.len);
	s = sb_str(&nn);
	if (!strncmp(s, "## call ", 8))
		f |= NF_CALL;
	if (strstr(s, ".py(") || !strncmp(s, "python/", 7) || !strncmp(s, "nn.module:", 10))
		f |= NF_PYSCOPE;
	if (!strncmp(s, "void ", 5) || !strncmp(s, "ampere_", 7) || !strncmp(s, "sm80_", 5) ||
	    !strncmp(s, "sm90_", 5))
		f |= NF_HINT;
	for (i = 0; hint_words[i] && !(f & NF_HINT); i++)
		if (strstr(s, hint_words[i]))
			f |= NF_HINT;
	if (strstr(s, "launch"))
		f |= NF_LAUNCH;
	sb_free(&nn);
	return f;
}

static unsigned
cat_flags(const char *raw, size_t n)
{
	sbuf c = SBUF_INIT;
	unsigned f = 0;
	const char *s;

	if (n == 15 && !memcmp(raw, "python_function", 15))
		f |= CF_PYFN;
	if (n == 6 && !memcmp(raw, "cpu_op", 6))
		f |= CF_CPUOP;
	text_normalize(raw, n, &c);
	text_lower(c.s, c.len);
	s = sb_str(&c);
	if (strstr(s, "python_function") || strstr(s, "cpu_op") || strstr(s, "trace"))
		f |= CF_NONKERNEL;
	if (strstr(s, "annotation"))
		f |= CF_ANNOT;
	if (strstr(s, "kernel") || !strncmp(s, "gpu_", 4))
		f |= CF_KERNEL;
	if (!strcmp(s, "cuda_runtime") || !strcmp(s, "cuda_driver"))
		f |= CF_LAUNCH;
	if (!strcmp(s, "user_annotation"))
		f |= CF_UA;
	if (!strcmp(s, "gpu_user_annotation"))
		f |= CF_GUA;
	sb_free(&c);
	return f;
}

static unsigned
lookup(struct cache *c, const char *s, size_t n, int is_cat, uint32_t *idp)
{
	uint32_t id = strtab_intern(c->tab, s, n);

	if (id >= c->cap) {
		size_t old = c->cap;
		xgrow(&c->flags, &c->cap, id + 1, sizeof *c->flags);
		memset(c->flags + old, 0, (c->cap - old) * sizeof *c->flags);
	}
	if (!(c->flags[id] & F_DONE))
		c->flags[id] = F_DONE | (is_cat ? cat_flags(s, n) : name_flags(s, n));
	if (idp)
		*idp = id;
	return c->flags[id];
}

/* Open-addressing map correlation -> External id (last writer wins). */
struct i64map {
	long long *key, *val;
	unsigned char *used;
	size_t cap, n;
};

static void
map_put(struct i64map *m, long long k, long long v)
{
	size_t i;

	if (m->n * 2 >= m->cap) {
		struct i64map o = *m;
		size_t j;
		m->cap = o.cap ? o.cap * 2 : 1024;
		m->key = xcalloc(m->cap, sizeof *m->key);
		m->val = xcalloc(m->cap, sizeof *m->val);
		m->used = xcalloc(m->cap, 1);
		m->n = 0;
		for (j = 0; j < o.cap; j++)
			if (o.used[j])
				map_put(m, o.key[j], o.val[j]);
		free(o.key);
		free(o.val);
		free(o.used);
	}
	i = hash_u64((uint64_t)k) & (m->cap - 1);
	while (m->used[i] && m->key[i] != k)
		i = (i + 1) & (m->cap - 1);
	if (!m->used[i]) {
		m->used[i] = 1;
		m->key[i] = k;
		m->n++;
	}
	m->val[i] = v;
}

static int
map_get(const struct i64map *m, long long k, long long *v)
{
	size_t i;

	if (!m->cap)
		return 0;
	i = hash_u64((uint64_t)k) & (m->cap - 1);
	while (m->used[i]) {
		if (m->key[i] == k) {
			*v = m->val[i];
			return 1;
		}
		i = (i + 1) & (m->cap - 1);
	}
	return 0;
}

static void
map_free(struct i64map *m)
{
	free(m->key);
	free(m->val);
	free(m->used);
	memset(m, 0, sizeof *m);
}

enum skip_reason {
	SK_TS_BAD, SK_DUR_BAD, SK_TS_NONFINITE, SK_DUR_NONFINITE, SK_ARGS, SK_DUR_ABSURD,
	SK_NREASON
};
static const char *skip_names[SK_NREASON] = {
	"ts_null_or_not_a_number", "dur_null_or_not_a_number", "ts_not_finite",
	"dur_not_finite", "args_not_an_object", "dur_over_a_year"
};

/*
 * A duration beyond a year (in microseconds) is a corrupt value, and a few
 * of them would overflow every sum to infinity.
 */
#define DUR_ABSURD_US 3.2e13

struct trace_state {
	int t;
	const char *path;
	const json_doc *d;	/* the event being read (owned by the scanner) */
	struct cache names, cats;
	struct i64map corr;
	long long *need;		/* correlations needing the map */
	size_t nneed, needcap;
	unsigned long long events, by_ph_x, by_ph_m, by_ph_other;
	unsigned long long kernels, cpu_ops, launches, frames, annotations, thread_names;
	unsigned long long skipped[SK_NREASON];
	unsigned long long kernel_no_dur;	/* kernel-like events with dur missing/<= 0 */
	unsigned long long neg_dur;
	unsigned repl;				/* U+FFFD replacements */
	unsigned long long *catcount;
	size_t catcap;
	sbuf name, cat, pid, tid, tmp;
	progress *prog;
	zio *z;
};

static void
need_corr(struct trace_state *s, long long c)
{
	xgrow(&s->need, &s->needcap, s->nneed + 1, sizeof *s->need);
	s->need[s->nneed++] = c;
}

/* Write a time value: the trace's own number text when it is a plain JSON number. */
static void
put_time(struct trace_state *s, const char *key, int i, double v)
{
	size_t n;
	const char *p;
	char buf[40];
	enum json_kind k = i >= 0 ? json_kind(s->d, i) : JK_MISSING;

	if (k == JK_INT || k == JK_FLOAT) {
		p = json_span(s->d, i, &n);
		if (k == JK_INT || !json_nonfinite_literal(p, n)) {
			rec_numtext(key, p, n);
			return;
		}
	}
	num_json(v, buf);
	rec_numtext(key, buf, strlen(buf));
}

/*
 * Start the record of an X event: type, trace index, name, the category
 * when `cat` is not NULL, pid, tid, ts and dur.
 */
static void
begin_event(struct trace_state *s, const char *type, const char *cat, int i_ts, double ts,
    int i_dur, double dur)
{
	rec_begin(type);
	rec_int("t", s->t);
	rec_str("name", sb_str(&s->name), s->name.len);
	if (cat)
		rec_cstr("cat", cat);
	rec_str("pid", sb_str(&s->pid), s->pid.len);
	rec_str("tid", sb_str(&s->tid), s->tid.len);
	put_time(s, "ts", i_ts, ts);
	put_time(s, "dur", i_dur, dur);
}

/* Read a time field per §1.2: 1 ok, 0 missing (value 0.0), -1 null/bad, -2 non-finite. */
static int
get_time(struct trace_state *s, int i, double *v)
{
	enum json_kind k = json_kind(s->d, i);

	*v = 0.0;
	if (k == JK_MISSING)
		return 0;
	if (k == JK_NULL || !json_todouble(s->d, i, v))
		return -1;
	if (!isfinite(*v))
		return -2;
	return 1;
}

static int
on_event(void *ctx, const json_doc *d, unsigned long long off)
{
	struct trace_state *s = ctx;
	int k, n, i;
	int i_ph = -1, i_name = -1, i_cat = -1, i_ts = -1, i_dur = -1, i_pid = -1,
	    i_tid = -1, i_args = -1;
	int a_ext = -1, a_corr = -1, a_pyid = -1, a_pypid = -1, a_stream = -1,
	    a_cstream = -1, a_name = -1;
	long long ext = 0, corr = 0, v;
	int has_ext, has_corr, ts_ok, dur_ok, args_obj;
	double ts, dur;
	unsigned nf, cf;
	uint32_t catid;
	size_t kl;
	const char *key;

	(void)off;
	s->events++;
	if ((s->events & 0xffff) == 0)
		progress_update(s->prog, zio_raw_offset(s->z), zio_raw_size(s->z), s->events);
	if (d->ntok == 0)
		return 0;	/* jsmn refused a validated event: none is known; skip */
	s->d = d;
	n = d->tok[0].size;
	for (k = 0, i = 1; k < n; k++) {
		key = json_span(d, i, &kl);
		switch (kl) {
		case 2:
			if (!memcmp(key, "ph", 2)) i_ph = i + 1;
			else if (!memcmp(key, "ts", 2)) i_ts = i + 1;
			break;
		case 3:
			if (!memcmp(key, "cat", 3)) i_cat = i + 1;
			else if (!memcmp(key, "dur", 3)) i_dur = i + 1;
			else if (!memcmp(key, "pid", 3)) i_pid = i + 1;
			else if (!memcmp(key, "tid", 3)) i_tid = i + 1;
			break;
		case 4:
			if (!memcmp(key, "name", 4)) i_name = i + 1;
			else if (!memcmp(key, "args", 4)) i_args = i + 1;
			break;
		}
		i = json_skip(d, i + 1);
	}
	args_obj = i_args >= 0 && d->tok[i_args].type == JSMN_OBJECT;
	if (args_obj) {
		n = d->tok[i_args].size;
		for (k = 0, i = i_args + 1; k < n; k++) {
			key = json_span(d, i, &kl);
			if (kl == 11 && !memcmp(key, "External id", 11)) a_ext = i + 1;
			else if (kl == 11 && !memcmp(key, "correlation", 11)) a_corr = i + 1;
			else if (kl == 9 && !memcmp(key, "Python id", 9)) a_pyid = i + 1;
			else if (kl == 16 && !memcmp(key, "Python parent id", 16)) a_pypid = i + 1;
			else if (kl == 6 && !memcmp(key, "stream", 6)) a_stream = i + 1;
			else if (kl == 11 && !memcmp(key, "cuda_stream", 11)) a_cstream = i + 1;
			else if (kl == 4 && !memcmp(key, "name", 4)) a_name = i + 1;
			i = json_skip(d, i + 1);
		}
	}
	has_ext = a_ext >= 0 && json_coerce_int(d, a_ext, &ext);
	has_corr = a_corr >= 0 && json_coerce_int(d, a_corr, &corr);
	if (has_ext && has_corr)
		map_put(&s->corr, corr, ext);

	/* category, counted for the statistics */
	if (i_cat >= 0)
		json_pystr(d, i_cat, &s->cat, &s->repl);
	else
		sb_reset(&s->cat);
	cf = lookup(&s->cats, sb_str(&s->cat), s->cat.len, 1, &catid);
	if (catid >= s->catcap) {
		size_t old = s->catcap;
		xgrow(&s->catcount, &s->catcap, catid + 1, sizeof *s->catcount);
		memset(s->catcount + old, 0, (s->catcap - old) * sizeof *s->catcount);
	}
	s->catcount[catid]++;

	if (i_ph < 0 || json_kind(d, i_ph) != JK_STR) {
		s->by_ph_other++;
		return 0;
	}
	{
		size_t pl;
		const char *ph = json_span(d, i_ph, &pl);
		if (pl == 1 && ph[0] == 'M') {
			s->by_ph_m++;
			if (i_name >= 0 && json_kind(d, i_name) == JK_STR) {
				json_str(d, i_name, &s->name, &s->repl);
				if (!strcmp(sb_str(&s->name), "thread_name") && a_name >= 0) {
					json_pystr(d, a_name, &s->tmp, &s->repl);
					if (s->tmp.len) {
						json_pystr(d, i_pid, &s->pid, &s->repl);
						json_pystr(d, i_tid, &s->tid, &s->repl);
						rec_begin("thread_name");
						rec_int("t", s->t);
						rec_str("pid", sb_str(&s->pid), s->pid.len);
						rec_str("tid", sb_str(&s->tid), s->tid.len);
						rec_str("name", sb_str(&s->tmp), s->tmp.len);
						rec_end();
						s->thread_names++;
					}
				}
			}
			return 0;
		}
		if (pl != 1 || ph[0] != 'X') {
			s->by_ph_other++;
			return 0;
		}
	}
	s->by_ph_x++;
	if (i_args >= 0 && !args_obj && json_truthy(d, i_args)) {
		s->skipped[SK_ARGS]++;
		return 0;
	}
	ts_ok = get_time(s, i_ts, &ts);
	dur_ok = get_time(s, i_dur, &dur);
	if (ts_ok == -1 || dur_ok == -1) {
		s->skipped[ts_ok == -1 ? SK_TS_BAD : SK_DUR_BAD]++;
		return 0;
	}
	if (ts_ok == -2 || dur_ok == -2) {
		s->skipped[ts_ok == -2 ? SK_TS_NONFINITE : SK_DUR_NONFINITE]++;
		return 0;
	}
	if (dur_ok == 1 && fabs(dur) > DUR_ABSURD_US) {
		s->skipped[SK_DUR_ABSURD]++;
		return 0;
	}
	if (i_name >= 0)
		json_pystr(d, i_name, &s->name, &s->repl);
	else
		sb_reset(&s->name);
	/* Frames and CPU ops can be neither kernels nor launches: skip the name rules. */
	nf = (cf & (CF_PYFN | CF_CPUOP)) ? 0 :
	    lookup(&s->names, sb_str(&s->name), s->name.len, 0, NULL);
	if (i_name < 0)
		nf &= ~NF_META;
	json_pystr(d, i_pid, &s->pid, &s->repl);
	json_pystr(d, i_tid, &s->tid, &s->repl);
	if (dur_ok == 1 && dur < 0)
		s->neg_dur++;

	if (cf & CF_PYFN) {
		s->frames++;
		begin_event(s, "frame", NULL, i_ts, ts, i_dur, dur);
		/* No tool reads the Python ids; they cost a sixth of the stream. */
		if (python_ids && a_pyid >= 0 && json_coerce_int(d, a_pyid, &v))
			rec_int("python_id", v);
		if (python_ids && a_pypid >= 0 && json_coerce_int(d, a_pypid, &v))
			rec_int("parent_id", v);
		rec_end();
	}
	if (cf & CF_CPUOP) {
		s->cpu_ops++;
		begin_event(s, "cpu_op", NULL, i_ts, ts, i_dur, dur);
		if (has_ext)
			rec_int("external_id", ext);
		if (has_corr)
			rec_int("correlation", corr);
		rec_end();
		if (!has_ext && has_corr)
			need_corr(s, corr);
	}
	if ((cf & CF_LAUNCH) && (nf & NF_LAUNCH) && has_corr) {
		s->launches++;
		begin_event(s, "launch", NULL, i_ts, ts, i_dur, dur);
		rec_int("correlation", corr);
		if (has_ext)
			rec_int("external_id", ext);
		rec_end();
	}
	/* The complete-duration predicate (§1.4.1) gates kernels and annotations. */
	{
		int complete = ts_ok == 1 && dur_ok == 1 && dur > 0;
		int kernel_like = 0, overlap = 0;

		if (!(nf & NF_META) && !(cf & CF_NONKERNEL) && !(cf & CF_ANNOT) && !(nf & NF_CALL)) {
			if (cf & CF_KERNEL)
				kernel_like = overlap = 1;
			else if (!(nf & NF_PYSCOPE) && (a_stream >= 0 || a_cstream >= 0)) {
				kernel_like = 1;
				overlap = (nf & NF_HINT) != 0;
			}
		}
		if (kernel_like && !complete) {
			s->kernel_no_dur++;
			kernel_like = 0;
		}
		if (kernel_like) {
			s->kernels++;
			begin_event(s, "kernel", sb_str(&s->cat), i_ts, ts, i_dur, dur);
			if (json_truthy(d, a_stream)) {
				json_pystr(d, a_stream, &s->tmp, &s->repl);
				rec_str("stream", sb_str(&s->tmp), s->tmp.len);
			} else if (json_truthy(d, a_cstream)) {
				json_pystr(d, a_cstream, &s->tmp, &s->repl);
				rec_str("stream", sb_str(&s->tmp), s->tmp.len);
			}
			if (has_ext)
				rec_int("external_id", ext);
			if (has_corr)
				rec_int("correlation", corr);
			if (overlap)
				rec_bool("overlap", 1);
			rec_end();
			if (!has_ext && has_corr)
				need_corr(s, corr);
		}
		if (complete && (cf & (CF_UA | CF_GUA))) {
			const char *stg;
			s->annotations++;
			begin_event(s, "annotation",
			    (cf & CF_GUA) ? "gpu_user_annotation" : "user_annotation",
			    i_ts, ts, i_dur, dur);
			if (a_ext >= 0 && json_coerce_int(d, a_ext, &v))
				rec_int("external_id", v);
			stg = annotation_stage(sb_str(&s->name), s->name.len);
			if (stg)
				rec_cstr("stage", stg);
			rec_end();
		}
	}
	return 0;
}

static int
any_skipped(const struct trace_state *s)
{
	int i;

	for (i = 0; i < SK_NREASON; i++)
		if (s->skipped[i])
			return 1;
	return 0;
}

static int
cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return x < y ? -1 : x > y;
}

static void
cache_free(struct cache *c)
{
	strtab_free(c->tab);
	free(c->flags);
	memset(c, 0, sizeof *c);
}

/* Extract one trace file; returns an exit code. */
static int
extract_trace(const char *path, int t)
{
	struct trace_state s;
	struct scan_stats st;
	char err[1024];
	int r, rc = EXIT_OK;
	size_t i;
	long long ext;
	uint32_t id;

	memset(&s, 0, sizeof s);
	s.t = t;
	s.path = path;
	s.names.tab = strtab_new();
	s.cats.tab = strtab_new();
	s.z = zio_open(path);
	if (!s.z) {
		warnx("cannot open '%s': %s", path, strerror(errno));
		cache_free(&s.names);
		cache_free(&s.cats);
		return EXIT_DATA;
	}
	rec_begin("trace");
	rec_int("v", REC_VERSION);
	rec_int("t", t);
	rec_cstr("role", role);
	rec_cstr("path", path);
	rec_cstr("stage", strcmp(path, "-") ? parse_stage(path) : "all");
	{
		long long rank;
		const char *b = strrchr(path, '/');
		if (parse_tp_rank(b ? b + 1 : path, &rank))
			rec_int("rank", rank);
	}
	rec_bool("gzip", zio_is_gzip(s.z));
	rec_end();
	s.prog = progress_start(path, progress_flag);
	r = scan_run(s.z, path, on_event, &s, &st, err, sizeof err, NULL);
	progress_update(s.prog, zio_raw_offset(s.z), zio_raw_size(s.z), s.events);
	progress_stop(&s.prog);
	zio_close(s.z);
	if (r == SCAN_ERROR) {
		fflush(stdout);
		warnx("%s", err);
		rc = EXIT_DATA;
		goto out;
	}
	/* The correlation map entries that downstream tools will ask for. */
	xqsort(s.need, s.nneed, sizeof *s.need, cmp_ll);
	for (i = 0; i < s.nneed; i++) {
		if (i && s.need[i] == s.need[i - 1])
			continue;
		if (map_get(&s.corr, s.need[i], &ext)) {
			rec_begin("corr");
			rec_int("t", t);
			rec_int("correlation", s.need[i]);
			rec_int("external_id", ext);
			rec_end();
		}
	}
	rec_begin("stats");
	rec_int("t", t);
	rec_int("events", (long long)s.events);
	rec_int("ph_x", (long long)s.by_ph_x);
	rec_int("ph_m", (long long)s.by_ph_m);
	rec_int("ph_other", (long long)s.by_ph_other);
	rec_int("kernels", (long long)s.kernels);
	rec_int("cpu_ops", (long long)s.cpu_ops);
	rec_int("launches", (long long)s.launches);
	rec_int("frames", (long long)s.frames);
	rec_int("annotations", (long long)s.annotations);
	{
		sbuf o = SBUF_INIT;
		sb_addc(&o, '{');
		for (id = 0; id < strtab_count(s.cats.tab); id++) {
			if (id)
				sb_addc(&o, ',');
			json_quote(&o, strtab_str(s.cats.tab, id), strtab_len(s.cats.tab, id));
			sb_printf(&o, ":%llu", s.catcount[id]);
		}
		sb_addc(&o, '}');
		rec_raw("by_cat", o.s, o.len);
		sb_reset(&o);
		sb_addc(&o, '{');
		for (i = 0; i < SK_NREASON; i++)
			sb_printf(&o, "%s\"%s\":%llu", i ? "," : "", skip_names[i], s.skipped[i]);
		sb_addc(&o, '}');
		rec_raw("skipped", o.s, o.len);
		sb_reset(&o);
		sb_printf(&o, "{\"bom\":%llu,\"control_chars\":%llu,\"trailing_commas\":%llu,"
		    "\"missing_close_bracket\":%llu,\"non_object_events\":%llu,"
		    "\"nan_inf_literals\":%llu,\"replacement_chars\":%u,"
		    "\"kernels_without_positive_dur\":%llu,\"negative_dur\":%llu,"
		    "\"duplicate_trace_events\":%llu}",
		    st.bom, st.ctrl, st.trailing_commas, st.missing_close, st.nonobject,
		    st.literals, s.repl, s.kernel_no_dur, s.neg_dur, st.dup_trace_events);
		rec_raw("warnings", o.s, o.len);
		sb_free(&o);
	}
	rec_cstr("shape", st.shape == 'a' ? "array" : st.shape == 'o' ? "object" : "other");
	rec_end();

	/* Warnings: one line per kind, with counts. */
	if (st.bom)
		warn_msg("'%s': UTF-8 byte order mark at the start (ignored)", path);
	if (st.ctrl)
		warn_msg("'%s': %llu raw control characters inside strings (accepted)", path, st.ctrl);
	if (s.repl)
		warn_msg("'%s': %u invalid UTF-8 sequences or lone surrogates shown as U+FFFD",
		    path, s.repl);
	if (st.literals)
		warn_msg("'%s': %llu NaN/Infinity literals (not standard JSON; accepted)", path,
		    st.literals);
	if (st.trailing_commas)
		warn_msg("'%s': %llu trailing commas before ']' or '}' (accepted)", path,
		    st.trailing_commas);
	if (st.missing_close)
		warn_msg("'%s': the event array has no closing ']' (accepted)", path);
	if (st.nonobject)
		warn_msg("'%s': %llu trace events are not JSON objects (skipped)", path, st.nonobject);
	if (st.dup_trace_events)
		warn_msg("'%s': more than one traceEvents array (all were read)", path);
	for (i = 0; i < SK_NREASON; i++)
		if (s.skipped[i])
			warn_msg("'%s': %llu events skipped: %s", path, s.skipped[i], skip_names[i]);
	if (s.kernel_no_dur)
		warn_msg("'%s': %llu GPU events with missing, null or non-positive dur (skipped)",
		    path, s.kernel_no_dur);
	if (strict && (s.kernel_no_dur || st.ctrl || s.repl || st.literals ||
	    st.trailing_commas || st.nonobject || any_skipped(&s))) {
		warnx("'%s': data-quality warnings are errors under --strict", path);
		rc = EXIT_DATA;
	}
	if (s.events == 0 && rc == EXIT_OK) {
		if (st.shape != 'o' && st.shape != 'a')
			warnx("'%s': no trace events: the document is neither a JSON object nor an "
			    "array", path);
		else if (!st.has_events)
			warnx("'%s': no trace events: the document has no traceEvents array", path);
		else if (st.nonobject)
			warnx("'%s': no trace events: the event array holds %llu elements, none of "
			    "them an object", path, st.nonobject);
		else
			warnx("'%s': no trace events: the event array is empty", path);
		rc = EXIT_EMPTY;
	}
out:
	cache_free(&s.names);
	cache_free(&s.cats);
	map_free(&s.corr);
	free(s.need);
	free(s.catcount);
	sb_free(&s.name);
	sb_free(&s.cat);
	sb_free(&s.pid);
	sb_free(&s.tid);
	sb_free(&s.tmp);
	return rc;
}

/* Model and TP size from server args (capture-and-cli.md §2, fuse-detect.md §8). */
static void
put_server_args(const char *json)
{
	json_doc d = { 0 };
	int i;
	long long tp = 1;
	double dv;
	sbuf t = SBUF_INIT;

	if (!json || json_parse(&d, json, strlen(json)) < 0 || !json_truthy(&d, 0)) {
		rec_null("server_args");
		rec_int("tp_size", 1);
		json_doc_free(&d);
		return;
	}
	rec_raw("server_args", json, strlen(json));
	if (d.tok[0].type == JSMN_OBJECT) {
		i = json_get(&d, 0, "model_path");
		if (!json_truthy(&d, i))
			i = json_get(&d, 0, "model");
		if (json_truthy(&d, i)) {
			json_pystr(&d, i, &t, NULL);
			rec_str("model", t.s, t.len);
		}
		i = json_get(&d, 0, "tp_size");
		if (json_truthy(&d, i)) {
			if (json_kind(&d, i) == JK_FLOAT && json_todouble(&d, i, &dv) && isfinite(dv))
				tp = (long long)dv;	/* int() truncates a float */
			else if (!json_coerce_int(&d, i, &tp)) {
				warn_msg("server args: tp_size is not an integer; using 1");
				tp = 1;
			}
		}
	} else
		warn_msg("server args are not a JSON object; no model or TP size taken from them");
	rec_int("tp_size", tp);
	sb_free(&t);
	json_doc_free(&d);
}

static int
extract_operand(const char *arg, int *tindex)
{
	char real[PATH_MAX];
	struct tlist traces = { 0 };
	char *trace_dir = NULL;
	sbuf sa = SBUF_INIT;
	struct stat st;
	int rc, r, is_dir = 0, have_sa = 0, any_ok = 0;
	size_t i;
	const char *fw;

	/*
	 * Standard input, a pipe (<(cmd) gives /dev/fd/N) or a character device
	 * is one stream: readable once, so no discovery and no content sniffing.
	 */
	if (strcmp(arg, "-") == 0 ||
	    (stat(arg, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)))) {
		char one[PATH_MAX + 8];
		sbuf q = SBUF_INIT;
		rec_begin("input");
		rec_int("v", REC_VERSION);
		rec_cstr("role", role);
		rec_cstr("path", arg);
		fw = framework_canonical(framework);
		if (!strcmp(fw, "auto"))
			fw = fallback && strcmp(framework_canonical(fallback), "auto") ?
			    framework_canonical(fallback) : "sglang";
		rec_cstr("framework", fw);
		rec_null("server_args");
		rec_int("tp_size", 1);
		json_quote(&q, arg, strlen(arg));
		snprintf(one, sizeof one, "[%s]", q.s);
		sb_free(&q);
		rec_raw("traces", one, strlen(one));
		rec_end();
		return extract_trace(arg, (*tindex)++);
	}
	if (!realpath(arg, real)) {
		warnx("cannot open '%s': %s", arg, strerror(errno));
		return EXIT_DATA;
	}
	if (stat(real, &st) == 0 && S_ISDIR(st.st_mode))
		is_dir = 1;
	if ((rc = discover_targets(real, &traces, &trace_dir)) != 0) {
		free(trace_dir);
		return rc;
	}
	if (trace_dir)
		have_sa = load_server_args_dir(trace_dir, &sa);
	if (have_sa == 0)
		have_sa = load_server_args_for(real, &sa);
	if (have_sa < 0) {
		tlist_free(&traces);
		free(trace_dir);
		sb_free(&sa);
		return EXIT_DATA;
	}
	fw = resolve_framework(framework, fallback, real, is_dir, have_sa > 0 ? sa.s : NULL);
	rec_begin("input");
	rec_int("v", REC_VERSION);
	rec_cstr("role", role);
	rec_cstr("path", real);
	rec_cstr("framework", fw);
	put_server_args(have_sa > 0 ? sa.s : NULL);
	{
		sbuf l = SBUF_INIT;
		sb_addc(&l, '[');
		for (i = 0; i < traces.n; i++) {
			if (i)
				sb_addc(&l, ',');
			json_quote(&l, traces.v[i].path, strlen(traces.v[i].path));
		}
		sb_addc(&l, ']');
		rec_raw("traces", l.s, l.len);
		sb_free(&l);
	}
	rec_end();
	rc = EXIT_OK;
	for (i = 0; i < traces.n; i++) {
		r = extract_trace(traces.v[i].path, (*tindex)++);
		if (r == EXIT_OK)
			any_ok = 1;
		else if (r == EXIT_DATA)
			rc = EXIT_DATA;
	}
	if (rc == EXIT_OK && !any_ok)
		rc = EXIT_EMPTY;
	tlist_free(&traces);
	free(trace_dir);
	sb_free(&sa);
	return rc;
}
