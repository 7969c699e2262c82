/*
 * Command lines, the same shape in every tool: the options are a table
 * (name, letter, argument, help) from which getopt_long's arrays, the usage
 * line and the --help text are made, so they cannot drift apart.
 *
 * opt_next() handles what every tool shares: -h/--help (help on stdout,
 * exit 0), --version, -q/--quiet (sets `quiet`, see err.h), --compat
 * reference (sets compat_reference), and unknown options or missing
 * arguments (one line saying what is wrong, then "Try 'TOOL --help' for
 * more information.", on stderr, exit 2; issue 31).  It returns
 * each other option's code with its argument in `optarg`, and -1 after the
 * last option (`optind` indexes the operands).
 */
#ifndef OPT_H
#define OPT_H

#include <getopt.h>	/* optarg, optind */

struct opt {
	const char *name;	/* long name, without "--" */
	int code;		/* its short letter, or a value >= 256 for long-only options */
	const char *arg;	/* argument name in the help ("N", "FILE"), NULL: no argument;
				 * "[=WHERE]": an optional argument, given as --name=WHERE */
	const char *help;	/* one line; NULL hides the option from the help */
};

struct tool {
	const char *synopsis;	/* usage lines after the tool's name, '\n' between forms */
	const char *purpose;	/* a sentence or two for --help */
	const struct opt *opts;	/* ends with an entry whose name is NULL */
};

/* Values for long-only options. */
enum { OPT_LONG = 256 };

/*
 * --compat reference: reproduce the reference analyzer's output exactly,
 * its wrong answers included (docs/deviations.md, "Corrections").  Without
 * it the tools give the corrected answers.
 */
extern int compat_reference;

int opt_next(const struct tool *t, int argc, char **argv);

/*
 * code 0: the whole help on stdout (usage, purpose, every option, each
 * help wrapped to 79 columns), exit 0.  Otherwise a usage error whose
 * message is said already: "Try 'TOOL --help' ..." on stderr, exit code.
 */
void opt_usage(const struct tool *t, int code) __attribute__((noreturn));

/*
 * A bad option value: "<tool>: bad --name value, <why>: <value>", then
 * where the help is, exit 2.
 */
void opt_bad(const struct tool *t, const char *name, const char *why, const char *value)
	__attribute__((noreturn));

#endif
