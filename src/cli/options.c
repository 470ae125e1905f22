/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * options: parsing and --help generated from one table per command
 * (options.h). The checks are strict on purpose: a count of "1e3", "0x10" or
 * " 5" is refused rather than read as something the user did not mean.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "cli/options.h"

#define DEFAULT_HELP_COLUMN 28
#define OPTION_CODE_BASE    256 /* getopt codes of long-only options: BASE + index */

static const struct cli_option help_option = CLI_FLAG('h', "help", NULL, "show this help");

/* ------------------------------------------------------------ messages */

static int vusage_error(const struct cli_command *cmd, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", cmd->name);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\nRun '%s --help' for usage.\n", cmd->name);
	return EXIT_USAGE;
}

int cli_usage_error(const struct cli_command *cmd, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vusage_error(cmd, fmt, ap);
	va_end(ap);
	return ret;
}

/* "--name" or "-x": how the user spelt (or could spell) the option. */
static const char *option_label(const struct cli_option *opt, char *buf, size_t size)
{
	if (opt->long_name)
		snprintf(buf, size, "--%s", opt->long_name);
	else
		snprintf(buf, size, "-%c", opt->short_name);
	return buf;
}

/* A duration in the largest unit that divides it: 1h, 250ms, 10us. */
static void format_duration(uint64_t ns, char *buf, size_t size)
{
	static const struct {
		uint64_t ns;
		const char *unit;
	} units[] = {{3600 * NSEC_PER_SEC, "h"},
		     {60 * NSEC_PER_SEC, "min"},
		     {NSEC_PER_SEC, "s"},
		     {NSEC_PER_MSEC, "ms"},
		     {NSEC_PER_USEC, "us"}};

	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		if (ns && ns % units[i].ns == 0) {
			snprintf(buf, size, "%llu%s", (unsigned long long)(ns / units[i].ns),
				 units[i].unit);
			return;
		}
	}
	snprintf(buf, size, "%lluns", (unsigned long long)ns);
}

/* The description of valid values when the table gives none. */
static void describe_values(const struct cli_option *opt, char *buf, size_t size)
{
	char lo[32], hi[32];
	size_t len = 0;

	switch (opt->type) {
	case CLI_OPT_UINT:
		snprintf(buf, size, "a whole number %llu..%llu", (unsigned long long)opt->min,
			 (unsigned long long)opt->max);
		return;
	case CLI_OPT_PERCENT:
		snprintf(buf, size, "a percentage %llu..%llu", (unsigned long long)opt->min,
			 (unsigned long long)opt->max);
		return;
	case CLI_OPT_DURATION:
		format_duration(opt->min, lo, sizeof(lo));
		format_duration(opt->max, hi, sizeof(hi));
		snprintf(buf, size, "a duration from %s to %s (a number with ns, us, ms or s)", lo,
			 hi);
		return;
	case CLI_OPT_DOUBLE:
		if (isinf(opt->fmax))
			snprintf(buf, size,
				 opt->fmin_open ? "a number above %g" : "a number %g or more",
				 opt->fmin);
		else if (!opt->fmin_open && !opt->fmax_open)
			snprintf(buf, size, "a number %g..%g", opt->fmin, opt->fmax);
		else
			snprintf(buf, size, "a number %s %g, %s %g",
				 opt->fmin_open ? "above" : "from", opt->fmin,
				 opt->fmax_open ? "below" : "up to", opt->fmax);
		return;
	case CLI_OPT_ENUM:
		buf[0] = '\0';
		for (size_t i = 0; opt->choices[i]; i++) {
			const char *sep = !i ? "" : opt->choices[i + 1] ? ", " : " or ";

			len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s", sep,
						opt->choices[i]);
		}
		return;
	default:
		snprintf(buf, size, "a valid value");
		return;
	}
}

static int invalid_value(const struct cli_command *cmd, const struct cli_option *opt,
			 const char *arg)
{
	char label[64], what[256];

	if (opt->what)
		snprintf(what, sizeof(what), "%s", opt->what);
	else
		describe_values(opt, what, sizeof(what));
	return cli_usage_error(cmd, "%s: '%s' is not %s", option_label(opt, label, sizeof(label)),
			       arg, what);
}

/* ------------------------------------------------------------ values */

/* Digits, optionally one '.' followed by digits: no sign, exponent, hex, inf or nan. */
static size_t plain_decimal_length(const char *text)
{
	size_t n = strspn(text, "0123456789");

	if (!n)
		return 0;
	if (text[n] == '.') {
		size_t frac = strspn(text + n + 1, "0123456789");

		if (!frac)
			return 0;
		n += 1 + frac;
	}
	return n;
}

static bool parse_percent(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
	char digits[32];
	size_t n = strlen(text);

	if (n && text[n - 1] == '%')
		n--;
	if (!n || n >= sizeof(digits))
		return false;
	memcpy(digits, text, n);
	digits[n] = '\0';
	return parse_u64_range(digits, min, max, out);
}

static bool parse_duration_value(const struct cli_option *opt, const char *text, uint64_t *out)
{
	size_t n = plain_decimal_length(text);
	const char *unit = text + n;
	uint64_t ns;

	if (!n || (*unit && strcmp(unit, "ns") && strcmp(unit, "us") && strcmp(unit, "ms") &&
		   strcmp(unit, "s")))
		return false;
	/* keep the conversion to ns in range before time_parse_duration scales it */
	if (strtod(text, NULL) > 1e12)
		return false;
	if (!time_parse_duration(text, opt->unit ? opt->unit : NSEC_PER_MSEC, &ns))
		return false;
	if (ns < opt->min || ns > opt->max || (opt->step && ns % opt->step))
		return false;
	*out = ns;
	return true;
}

static bool parse_double_value(const struct cli_option *opt, const char *text, double *out)
{
	size_t n = plain_decimal_length(text);
	double v;

	if (!n || text[n] != '\0')
		return false;
	errno = 0;
	v = strtod(text, NULL);
	if (errno || !(opt->fmin_open ? v > opt->fmin : v >= opt->fmin) ||
	    !(opt->fmax_open ? v < opt->fmax : v <= opt->fmax))
		return false;
	*out = v;
	return true;
}

static bool parse_enum_value(const struct cli_option *opt, const char *text, int *out)
{
	for (int i = 0; opt->choices[i]; i++) {
		if (strcmp(opt->choices[i], text) == 0) {
			*out = i;
			return true;
		}
	}
	return false;
}

bool cli_takes_value(const struct cli_option *opt)
{
	return opt->type != CLI_OPT_FLAG && opt->type != CLI_OPT_COUNT;
}

int cli_apply(const struct cli_command *cmd, const struct cli_option *opt, const char *arg,
	      void *ctx)
{
	uint64_t u;
	double d;
	int i, ret;

	switch (opt->type) {
	case CLI_OPT_FLAG:
		*(bool *)opt->value = true;
		break;
	case CLI_OPT_COUNT:
		if (*(unsigned *)opt->value < (opt->max ? opt->max : UINT32_MAX))
			++*(unsigned *)opt->value;
		break;
	case CLI_OPT_STRING:
		if (!*arg)
			return invalid_value(cmd, opt, arg);
		*(const char **)opt->value = arg;
		break;
	case CLI_OPT_UINT:
		if (!parse_u64_range(arg, opt->min, opt->max, &u))
			return invalid_value(cmd, opt, arg);
		*(uint64_t *)opt->value = u;
		break;
	case CLI_OPT_PERCENT:
		if (!parse_percent(arg, opt->min, opt->max, &u))
			return invalid_value(cmd, opt, arg);
		*(uint64_t *)opt->value = u;
		break;
	case CLI_OPT_DURATION:
		if (!parse_duration_value(opt, arg, &u))
			return invalid_value(cmd, opt, arg);
		*(uint64_t *)opt->value = u;
		break;
	case CLI_OPT_DOUBLE:
		if (!parse_double_value(opt, arg, &d))
			return invalid_value(cmd, opt, arg);
		*(double *)opt->value = d;
		break;
	case CLI_OPT_ENUM:
		if (!parse_enum_value(opt, arg, &i))
			return invalid_value(cmd, opt, arg);
		*(int *)opt->value = i;
		break;
	case CLI_OPT_CALLBACK:
		ret = opt->callback(opt, arg, ctx);
		if (ret < 0)
			return invalid_value(cmd, opt, arg);
		if (ret)
			return ret;
		break;
	default:
		return cli_usage_error(cmd, "internal error: option of type %d", (int)opt->type);
	}
	if (opt->given)
		*opt->given = true;
	return 0;
}

/* ------------------------------------------------------------ parsing */

static size_t table_length(const struct cli_option *table)
{
	size_t n = 0;

	while (table[n].type != CLI_OPT_END)
		n++;
	return n;
}

/* The getopt_long tables for cmd: long options and the short-option string. */
static int build_getopt(const struct cli_command *cmd, struct option **longs, char **shorts)
{
	size_t n = table_length(cmd->options), k = 0, s = 0;

	*longs = calloc(n + 2, sizeof(**longs));
	*shorts = calloc(2 * n + 8, 1);
	if (!*longs || !*shorts)
		return -1;
	if (cmd->takes_program)
		(*shorts)[s++] = '+'; /* stop at PROGRAM */
	(*shorts)[s++] = ':';	      /* a missing value is ':', not '?' */
	(*shorts)[s++] = 'h';
	for (size_t i = 0; i < n; i++) {
		const struct cli_option *o = &cmd->options[i];
		int code = o->short_name ? o->short_name : OPTION_CODE_BASE + (int)i;

		if (o->type == CLI_OPT_GROUP)
			continue;
		if (o->short_name) {
			(*shorts)[s++] = o->short_name;
			if (cli_takes_value(o))
				(*shorts)[s++] = ':';
		}
		if (o->long_name)
			(*longs)[k++] = (struct option){
			    o->long_name, cli_takes_value(o) ? required_argument : no_argument,
			    NULL, code};
	}
	(*longs)[k++] = (struct option){"help", no_argument, NULL, 'h'};
	return 0;
}

static const struct cli_option *option_for_code(const struct cli_command *cmd, int code)
{
	if (code >= OPTION_CODE_BASE)
		return &cmd->options[code - OPTION_CODE_BASE];
	for (const struct cli_option *o = cmd->options; o->type != CLI_OPT_END; o++)
		if (o->short_name == code && o->type != CLI_OPT_GROUP)
			return o;
	return NULL;
}

int cli_find_separator(int argc, char **argv, bool coz)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0 || (coz && strcmp(argv[i], "---") == 0))
			return i;
	}
	return argc;
}

/* getopt_long over argv[1..end); 0, CLI_HELP or an exit status. */
static int parse_until(const struct cli_command *cmd, int end, char **argv, void *ctx,
		       struct option *longs, const char *shorts)
{
	const struct cli_option *opt;
	int c, ret;

	opterr = 0;
	optind = 0; /* 0, not 1: glibc re-initializes, so every call starts afresh */
	while ((c = getopt_long(end, argv, shorts, longs, NULL)) != -1) {
		if (c == 'h') {
			cli_print_help(cmd, stdout);
			return CLI_HELP;
		}
		if (c == '?') {
			if (optopt && optopt < OPTION_CODE_BASE && isprint(optopt) &&
			    argv[optind - 1][1] != '-')
				return cli_usage_error(cmd, "unknown option '-%c'", optopt);
			return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
		}
		if (c == ':')
			return cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
		opt = option_for_code(cmd, c);
		if (!opt)
			return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
		ret = cli_apply(cmd, opt, optarg, ctx);
		if (ret)
			return ret;
	}
	return 0;
}

int cli_parse(const struct cli_command *cmd, int argc, char **argv, void *ctx, int *first)
{
	int end = cmd->takes_program ? cli_find_separator(argc, argv, cmd->coz_separator) : argc;
	struct option *longs = NULL;
	char *shorts = NULL;
	int ret;

	if (build_getopt(cmd, &longs, &shorts)) {
		fprintf(stderr, "%s: out of memory\n", cmd->name);
		ret = 1;
		goto out;
	}
	ret = parse_until(cmd, end, argv, ctx, longs, shorts);
	if (ret)
		goto out;
	*first = optind < end ? optind : end + (end < argc);
	if (cmd->takes_program && *first >= argc)
		ret = cli_usage_error(cmd, "no program given: %.*s",
				      (int)strcspn(cmd->usage + strlen("usage: "), "\n"),
				      cmd->usage + strlen("usage: "));
out:
	free(longs);
	free(shorts);
	return ret;
}

const struct cli_option *cli_lookup(const struct cli_option *table, const char *arg,
				    const char **inline_value)
{
	*inline_value = NULL;
	if (arg[0] != '-' || !arg[1])
		return NULL;
	for (const struct cli_option *o = table; o->type != CLI_OPT_END; o++) {
		size_t n;

		if (o->type == CLI_OPT_GROUP)
			continue;
		if (arg[1] != '-') {
			if (o->short_name == arg[1] && (!arg[2] || cli_takes_value(o))) {
				*inline_value = arg[2] ? arg + 2 : NULL;
				return o;
			}
			continue;
		}
		if (!o->long_name)
			continue;
		n = strlen(o->long_name);
		if (strncmp(arg + 2, o->long_name, n) == 0 && (!arg[2 + n] || arg[2 + n] == '=')) {
			*inline_value = arg[2 + n] == '=' ? arg + 3 + n : NULL;
			return o;
		}
	}
	return NULL;
}

/* ------------------------------------------------------------ help */

/* "  -o, --output FILE" */
static int print_option_names(const struct cli_option *o, FILE *out)
{
	int n;

	if (o->short_name && o->long_name)
		n = fprintf(out, "  -%c, --%s", o->short_name, o->long_name);
	else if (o->short_name)
		n = fprintf(out, "  -%c", o->short_name);
	else
		n = fprintf(out, "      --%s", o->long_name);
	if (o->metavar && cli_takes_value(o))
		n += fprintf(out, " %s", o->metavar);
	return n;
}

static void print_option_help(const struct cli_option *o, int column, FILE *out)
{
	const char *line = o->help ? o->help : "";
	int width = print_option_names(o, out);

	/* names too long for the column: the help starts on the next line */
	if (width >= column - 1) {
		fputc('\n', out);
		width = 0;
	}
	for (;;) {
		const char *nl = strchr(line, '\n');
		int len = nl ? (int)(nl - line) : (int)strlen(line);

		fprintf(out, "%*s%.*s\n", column - width, "", len, line);
		width = 0;
		if (!nl)
			break;
		line = nl + 1;
	}
}

void cli_print_help(const struct cli_command *cmd, FILE *out)
{
	int column = cmd->help_column ? cmd->help_column : DEFAULT_HELP_COLUMN;

	fprintf(out, "%s\n", cmd->usage);
	if (cmd->description)
		fprintf(out, "\n%s", cmd->description);
	/* a group heading brings its own blank line */
	if (cmd->options[0].type != CLI_OPT_GROUP)
		fputc('\n', out);
	for (const struct cli_option *o = cmd->options; o->type != CLI_OPT_END; o++) {
		if (o->type == CLI_OPT_GROUP) {
			fprintf(out, "\n%s:\n", o->help);
			continue;
		}
		print_option_help(o, column, out);
	}
	print_option_help(&help_option, column, out);
	if (cmd->epilogue)
		fprintf(out, "\n%s", cmd->epilogue);
}

int cli_append_string(const char ***list, size_t *n, const char *arg, const char *who)
{
	const char **grown = realloc(*list, (*n + 1) * sizeof(*grown));

	if (!grown) {
		fprintf(stderr, "%s: out of memory\n", who);
		return 2;
	}
	*list = grown;
	grown[(*n)++] = arg;
	return 0;
}

int cli_parse_operands(const struct cli_command *cmd, int argc, char **argv, void *ctx, int *first,
		       int min, int max, const char *missing, const char *extra)
{
	int ret = cli_parse(cmd, argc, argv, ctx, first);

	if (ret)
		return ret;
	if (argc - *first < min)
		return cli_usage_error(cmd, "%s", missing);
	if (max >= 0 && argc - *first > max)
		return cli_usage_error(cmd, "%s", extra);
	return 0;
}
