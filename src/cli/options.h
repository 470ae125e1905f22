/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * options: one declarative table per command, from which both the parsing
 * (getopt_long) and the --help text are generated, so that they cannot drift
 * (in the spirit of perf's parse-options). Every value is typed and checked
 * as it is read, and every command has the same usage-error path: a message
 * "lever CMD: ...", a pointer to --help, and exit status EXIT_USAGE.
 *
 * A table is an array of struct cli_option built with the CLI_* macros below
 * and ended by CLI_END(); values point into the caller's variables:
 *
 *	const struct cli_option table[] = {
 *		CLI_GROUP("Scope"),
 *		CLI_STRING('o', "output", &o.output, "FILE", "append the profile to FILE"),
 *		CLI_UINT(0, "batch", &o.batch, "N", 1, 1000, "samples per batch (default 10)"),
 *		CLI_END(),
 *	};
 *
 * Extra fields go after the help text as designated initializers, e.g.
 * `.what = "a count 1..1000"` (how an invalid value is described).
 */
#ifndef LEVER_CLI_OPTIONS_H
#define LEVER_CLI_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The one exit status of a usage error, for every command. */
#define EXIT_USAGE 2
/* cli_parse's result after printing --help: the command exits 0. */
#define CLI_HELP (-1)

enum cli_type {
	CLI_OPT_END,
	CLI_OPT_GROUP,	  /* a heading in --help */
	CLI_OPT_FLAG,	  /* bool *: set to true */
	CLI_OPT_COUNT,	  /* unsigned *: one more per use (-vv), at most max */
	CLI_OPT_STRING,	  /* const char **: the argument, non-empty */
	CLI_OPT_UINT,	  /* uint64_t *: decimal digits only (no sign, 1e3, 0x), min..max */
	CLI_OPT_PERCENT,  /* uint64_t *: a whole percentage min..max, '%' optional */
	CLI_OPT_DURATION, /* uint64_t * ns: NUMBER[ns|us|ms|s], min..max ns, multiple of step */
	CLI_OPT_DOUBLE,	  /* double *: a plain decimal number (no exponent) fmin..fmax */
			  /* (either bound excluded with fmin_open, fmax_open) */
	CLI_OPT_ENUM,	  /* int *: the index of the argument in choices */
	/*
	 * callback(opt, arg, ctx): 0; -1 for an invalid value (the usage error
	 * then says it "is not <what>"); or an exit status after printing why.
	 */
	CLI_OPT_CALLBACK,
};

struct cli_option;
typedef int (*cli_callback)(const struct cli_option *opt, const char *arg, void *ctx);

struct cli_option {
	enum cli_type type;
	char short_name;       /* 0: none */
	const char *long_name; /* NULL: none */
	void *value;
	const char *metavar;	    /* the value's name in --help; NULL: no value */
	const char *help;	    /* lines separated by '\n' */
	uint64_t min, max;	    /* UINT, PERCENT, DURATION (ns), COUNT (max) */
	double fmin, fmax;	    /* DOUBLE; fmax may be INFINITY (no upper bound) */
	bool fmin_open, fmax_open;  /* DOUBLE: the bound itself is not allowed */
	uint64_t unit;		    /* DURATION: unit of a bare number, in ns */
	uint64_t step;		    /* DURATION: the value must be a multiple (0: any) */
	const char *const *choices; /* ENUM: NULL-terminated */
	cli_callback callback;
	const char *what; /* an invalid value "is not <what>"; NULL: generated */
	bool *given;	  /* set to true when the option is used (optional) */
};

#define CLI_GROUP(title)                                                                           \
	{                                                                                          \
		.type = CLI_OPT_GROUP, .help = (title)                                             \
	}
#define CLI_FLAG(s, l, var, h, ...)                                                                \
	{                                                                                          \
		.type = CLI_OPT_FLAG, .short_name = (s), .long_name = (l), .value = (var),         \
		.help = (h), __VA_ARGS__                                                           \
	}
#define CLI_COUNT(s, l, var, maximum, h, ...)                                                      \
	{                                                                                          \
		.type = CLI_OPT_COUNT, .short_name = (s), .long_name = (l), .value = (var),        \
		.max = (maximum), .help = (h), __VA_ARGS__                                         \
	}
#define CLI_STRING(s, l, var, meta, h, ...)                                                        \
	{                                                                                          \
		.type = CLI_OPT_STRING, .short_name = (s), .long_name = (l), .value = (var),       \
		.metavar = (meta), .help = (h), __VA_ARGS__                                        \
	}
#define CLI_UINT(s, l, var, meta, lo, hi, h, ...)                                                  \
	{                                                                                          \
		.type = CLI_OPT_UINT, .short_name = (s), .long_name = (l), .value = (var),         \
		.metavar = (meta), .min = (lo), .max = (hi), .help = (h), __VA_ARGS__              \
	}
#define CLI_PERCENT(s, l, var, meta, lo, hi, h, ...)                                               \
	{                                                                                          \
		.type = CLI_OPT_PERCENT, .short_name = (s), .long_name = (l), .value = (var),      \
		.metavar = (meta), .min = (lo), .max = (hi), .help = (h), __VA_ARGS__              \
	}
#define CLI_DURATION(s, l, var, meta, default_unit, lo, hi, h, ...)                                \
	{                                                                                          \
		.type = CLI_OPT_DURATION, .short_name = (s), .long_name = (l), .value = (var),     \
		.metavar = (meta), .unit = (default_unit), .min = (lo), .max = (hi), .help = (h),  \
		__VA_ARGS__                                                                        \
	}
#define CLI_DOUBLE(s, l, var, meta, lo, hi, h, ...)                                                \
	{                                                                                          \
		.type = CLI_OPT_DOUBLE, .short_name = (s), .long_name = (l), .value = (var),       \
		.metavar = (meta), .fmin = (lo), .fmax = (hi), .help = (h), __VA_ARGS__            \
	}
#define CLI_ENUM(s, l, var, meta, list, h, ...)                                                    \
	{                                                                                          \
		.type = CLI_OPT_ENUM, .short_name = (s), .long_name = (l), .value = (var),         \
		.metavar = (meta), .choices = (list), .help = (h), __VA_ARGS__                     \
	}
#define CLI_CALLBACK(s, l, meta, fn, h, ...)                                                       \
	{                                                                                          \
		.type = CLI_OPT_CALLBACK, .short_name = (s), .long_name = (l), .metavar = (meta),  \
		.callback = (fn), .help = (h), __VA_ARGS__                                         \
	}
#define CLI_END()                                                                                  \
	{                                                                                          \
		.type = CLI_OPT_END                                                                \
	}

/* A command: its table and the text around it in --help. */
struct cli_command {
	const char *name;	 /* "lever causal": prefixes every message */
	const char *usage;	 /* the "usage: ..." line(s), without a final newline */
	const char *description; /* paragraphs after the usage; may be NULL */
	const struct cli_option *options;
	const char *epilogue; /* after the options (exit statuses, doc page); may be NULL */
	/*
	 * The command runs PROGRAM [ARGS...]: options end at "--" (and at "---"
	 * with coz_separator, Coz's spelling) or at the first non-option, and
	 * a missing PROGRAM is a usage error.
	 */
	bool takes_program;
	bool coz_separator;
	int help_column; /* where option help starts in --help (0: 28) */
};

/*
 * Parse argv[1..argc) against cmd's table (-h/--help are always there).
 * Returns 0 with *first the index of the first operand (PROGRAM, or the
 * first file), CLI_HELP after printing --help to stdout, or EXIT_USAGE after
 * printing the error. ctx is handed to callbacks.
 */
int cli_parse(const struct cli_command *cmd, int argc, char **argv, void *ctx, int *first);
/*
 * cli_parse, then a usage error unless the operands (argv[*first..argc))
 * number min..max (max < 0: no upper bound): `missing` when there are
 * fewer, `extra` when there are more.
 */
int cli_parse_operands(const struct cli_command *cmd, int argc, char **argv, void *ctx, int *first,
		       int min, int max, const char *missing, const char *extra);
/* The generated --help. */
void cli_print_help(const struct cli_command *cmd, FILE *out);
/* Print "NAME: message" and the pointer to --help to stderr; returns EXIT_USAGE. */
int cli_usage_error(const struct cli_command *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/*
 * Index of the first "--" (or "---" when coz is set) in argv[1..argc), or
 * argc: where a command's options end and PROGRAM begins.
 */
int cli_find_separator(int argc, char **argv, bool coz);

/*
 * For commands that pass other options through (lever causal sweep): the
 * option of table that arg ("--name", "--name=V", "-x") names, or NULL; and
 * applying it with its value (NULL for options without one). cli_apply
 * returns 0 or EXIT_USAGE after printing the error.
 */
const struct cli_option *cli_lookup(const struct cli_option *table, const char *arg,
				    const char **inline_value);
int cli_apply(const struct cli_command *cmd, const struct cli_option *opt, const char *arg,
	      void *ctx);
/* Does opt take a value? */
bool cli_takes_value(const struct cli_option *opt);

/*
 * For the callback of a repeatable option (-f SYMBOL -f ...): append arg to
 * the growing array *list of *n strings (the caller frees *list). Returns 0,
 * or prints "WHO: out of memory" and returns 2, an exit status for cli_parse.
 */
int cli_append_string(const char ***list, size_t *n, const char *arg, const char *who);

#endif
