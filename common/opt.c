/* Option tables to getopt_long, usage and help. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "opt.h"
#include "sbuf.h"
#include "xalloc.h"

enum { CODE_COMPAT = OPT_LONG - 3, CODE_VERSION = OPT_LONG - 2 };

int compat_reference;

static const struct opt common[] = {
	{ "compat", CODE_COMPAT, "MODE",
	    "reference: the reference analyzer's output exactly, quirks included" },
	{ "help", 'h', NULL, "show this help" },
	{ "quiet", 'q', NULL, "no warnings or progress on stderr" },
	{ "version", CODE_VERSION, NULL, "show the version" },
	{ NULL, 0, NULL, NULL }
};

static size_t
count(const struct opt *o)
{
	size_t n = 0;

	while (o[n].name)
		n++;
	return n;
}

/* Is the option in the tool's own table (which may redefine a common one)? */
static int
own(const struct tool *t, const char *name)
{
	const struct opt *o;

	for (o = t->opts; o && o->name; o++)
		if (strcmp(o->name, name) == 0)
			return 1;
	return 0;
}

/*
 * One option of the help: "-f, --format FMT" in 24 columns (on a line of
 * its own when longer), then its help as words wrapped to lines of at
 * most 79 columns (a help string's own line breaks count as spaces).
 */
static void
help_line(FILE *fp, const struct opt *o)
{
	char left[64];
	const char *p, *w;
	size_t col = 0, len;
	int first;

	if (!o->help)
		return;
	/* an optional argument ("[=WHERE]") is glued to the name */
	const char *sep = o->arg && o->arg[0] != '[' ? " " : "";

	if (o->code < OPT_LONG - 3 && o->code > 0)
		snprintf(left, sizeof left, "-%c, --%s%s%s", o->code, o->name, sep,
		    o->arg ? o->arg : "");
	else
		snprintf(left, sizeof left, "    --%s%s%s", o->name, sep, o->arg ? o->arg : "");
	first = strlen(left) < 24;
	if (!first)
		fprintf(fp, "  %s\n", left);
	for (p = o->help; *p;) {
		while (*p == ' ' || *p == '\n')
			p++;
		if (!*p)
			break;
		for (w = p; *p && *p != ' ' && *p != '\n'; p++)
			;
		len = (size_t)(p - w);
		if (col && col + 1 + len > 51) {
			fputc('\n', fp);
			col = 0;
		}
		if (!col)
			fprintf(fp, "  %-24s ", first ? left : "");
		else
			fputc(' ', fp);
		first = 0;
		fwrite(w, 1, len, fp);
		col += (col ? 1 : 0) + len;
	}
	if (col)
		fputc('\n', fp);
}

/*
 * code 0: the usage, the purpose and every option on stdout, exit 0.
 * Otherwise (a usage error, its message already said): where the help is,
 * on stderr, and exit with code -- one line, not the whole usage.
 */
void
opt_usage(const struct tool *t, int code)
{
	FILE *fp = stdout;
	const char *p = t->synopsis, *nl;
	const struct opt *o;
	int first = 1;

	if (code != EXIT_OK) {
		fprintf(stderr, "Try '%s --help' for more information.\n", progname);
		exit(code);
	}
	/* every form of the synopsis; a line starting with a space continues the last */
	do {
		int cont = !first && *p == ' ';
		nl = strchr(p, '\n');
		if (cont)
			fprintf(fp, "%*s%.*s\n", (int)strlen(progname) + 7, "",
			    nl ? (int)(nl - p) : (int)strlen(p), p);
		else
			fprintf(fp, "%s%s %.*s\n", first ? "usage: " : "       ", progname,
			    nl ? (int)(nl - p) : (int)strlen(p), p);
		first = 0;
		p = nl ? nl + 1 : NULL;
	} while (p);
	fprintf(fp, "\n%s\n\n", t->purpose);
	for (o = t->opts; o && o->name; o++)
		help_line(fp, o);
	for (o = common; o->name; o++)
		if (!own(t, o->name))
			help_line(fp, o);
	exit(tool_finish(EXIT_OK));
}

void
opt_bad(const struct tool *t, const char *name, const char *why, const char *value)
{
	err_msg("bad --%s value, %s: %s", name, why, value);
	opt_usage(t, EXIT_USAGE);
}

int
opt_next(const struct tool *t, int argc, char **argv)
{
	static const struct tool *built;
	static struct option *lo;
	static sbuf shorts;
	const struct opt *o;
	size_t n = 0, i;
	int c;

	if (built != t) {
		size_t total = count(t->opts) + count(common) + 1;
		free(lo);
		lo = xcalloc(total, sizeof *lo);
		sb_reset(&shorts);
		sb_addc(&shorts, ':');	/* missing arguments come back as ':' */
		for (i = 0; i < 2; i++)
			for (o = i == 0 ? t->opts : common; o && o->name; o++) {
				if (i == 1 && own(t, o->name))
					continue;
				lo[n].name = o->name;
				lo[n].has_arg = !o->arg ? no_argument :
				    o->arg[0] == '[' ? optional_argument : required_argument;
				lo[n].val = o->code;
				n++;
				if (o->code > 0 && o->code < 128) {
					sb_addc(&shorts, (char)o->code);
					if (o->arg)
						sb_adds(&shorts, o->arg[0] == '[' ? "::" : ":");
				}
			}
		built = t;
		opterr = 0;
	}
	c = getopt_long(argc, argv, sb_str(&shorts), lo, NULL);
	switch (c) {
	case 'h':
		if (own(t, "help"))
			return c;
		opt_usage(t, EXIT_OK);
	case 'q':
		if (own(t, "quiet"))
			return c;
		quiet = 1;
		return opt_next(t, argc, argv);
	case CODE_VERSION:
		print_version();
	case CODE_COMPAT:
		if (strcmp(optarg, "reference") != 0)
			opt_bad(t, "compat", "not reference", optarg);
		compat_reference = 1;
		return opt_next(t, argc, argv);
	case ':':
		err_msg("option '%s' needs a value", argv[optind - 1]);
		opt_usage(t, EXIT_USAGE);
	case '?':
		if (optopt && optopt < 128)
			err_msg("unknown option '-%c'", optopt);
		else
			err_msg("unknown or ambiguous option '%s'", argv[optind - 1]);
		opt_usage(t, EXIT_USAGE);
	}
	return c;
}
