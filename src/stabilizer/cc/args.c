/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Reading a GCC/clang command line: which phases run (preprocess, compile,
 * link), what the inputs are, which arguments only matter to the linker, and
 * lever's own options. Only as much of the compilers' option syntax as that
 * needs: options that take their value in the next argument, the phase
 * options, the linker options, -x, and @FILE response files.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "stabilizer/cc/cc.h"

#define MAX_RESPONSE_DEPTH 16

/* Options whose value is the next argument when not joined. */
static const char *const options_with_value[] = {
    "-o",
    "-x",
    "-I",
    "-D",
    "-U",
    "-include",
    "-imacros",
    "-isystem",
    "-idirafter",
    "-iprefix",
    "-iquote",
    "-isysroot",
    "-imultilib",
    "-iwithprefix",
    "-iwithprefixbefore",
    "-MF",
    "-MT",
    "-MQ",
    "-MJ",
    "-L",
    "-l",
    "-Xlinker",
    "-Xassembler",
    "-Xpreprocessor",
    "-Xclang",
    "-Xanalyzer",
    "-mllvm",
    "-aux-info",
    "-T",
    "-u",
    "-z",
    "-e",
    "--entry",
    "-wrapper",
    "--param",
    "-A",
    "-B",
    "-target",
    "--sysroot",
    "-gcc-toolchain",
    "-dumpbase",
    "-dumpbase-ext",
    "-dumpdir",
    "-resource-dir",
    "-ivfsoverlay",
    "-cxx-isystem",
    "-isystem-after",
    "-arch",
};

/* Options that matter only when linking (exact names). */
static const char *const link_only_options[] = {
    "-shared",
    "-static",
    "-static-pie",
    "-pie",
    "-no-pie",
    "-rdynamic",
    "-s",
    "-r",
    "-nostdlib",
    "-nodefaultlibs",
    "-nolibc",
    "-nostartfiles",
    "-static-libgcc",
    "-shared-libgcc",
    "-static-libstdc++",
    "-symbolic",
    "-Xlinker",
    "-T",
    "-u",
    "-z",
    "-e",
    "--entry",
};

static bool in_list(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(s, list[i]) == 0)
			return true;
	return false;
}

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool takes_value(const char *opt)
{
	return in_list(opt, options_with_value, ARRAY_SIZE(options_with_value));
}

static const char *extension(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *dot = strrchr(slash ? slash + 1 : path, '.');

	return dot ? dot + 1 : "";
}

static bool is_shared_library_name(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return strcmp(extension(base), "so") == 0 || strstr(base, ".so.") != NULL;
}

static enum cc_input_kind kind_by_extension(const char *path)
{
	static const char *const source_exts[] = {
	    "c",   "i",	  "ii",	 "cc",	"cp",  "cxx", "cpp", "CPP", "c++", "C",
	    "m",   "mi",  "mm",	 "M",	"mii", "h",   "hh",  "H",   "hp",  "hxx",
	    "hpp", "HPP", "h++", "tcc", "f",   "for", "ftn", "F",   "FOR", "fpp",
	    "FPP", "FTN", "f90", "f95", "f03", "f08", "F90", "F95", "F03", "F08",
	};
	static const char *const asm_exts[] = {"s", "S", "sx", "asm"};
	const char *ext = extension(path);

	if (in_list(ext, source_exts, ARRAY_SIZE(source_exts)))
		return CC_INPUT_SOURCE;
	if (in_list(ext, asm_exts, ARRAY_SIZE(asm_exts)))
		return CC_INPUT_ASM;
	if (strcmp(ext, "a") == 0 || is_shared_library_name(path))
		return CC_INPUT_LIBRARY;
	/* GCC links any file it does not recognize. */
	return CC_INPUT_OBJECT;
}

static enum cc_input_kind kind_of_input(const char *path, const char *language)
{
	if (*language == '\0' || strcmp(language, "none") == 0) {
		if (strcmp(path, "-") == 0)
			return CC_INPUT_SOURCE;
		return kind_by_extension(path);
	}
	if (starts_with(language, "assembler"))
		return CC_INPUT_ASM;
	return CC_INPUT_SOURCE;
}

/* --- storage --- */

static bool grow_args(struct cc_args *args)
{
	size_t cap = args->cap ? args->cap * 2 : 64;
	struct cc_arg *v;

	if (args->n < args->cap)
		return true;
	v = realloc(args->v, cap * sizeof(*v));
	if (!v)
		return false;
	args->v = v;
	args->cap = cap;
	return true;
}

static struct cc_arg *push_arg(struct cc_args *args, const char *text)
{
	struct cc_arg *a;

	if (!grow_args(args))
		return NULL;
	a = &args->v[args->n];
	memset(a, 0, sizeof(*a));
	a->text = strdup(text);
	if (!a->text)
		return NULL;
	a->language = "";
	args->n++;
	return a;
}

void cc_args_free(struct cc_args *args)
{
	for (size_t i = 0; i < args->n; i++)
		free(args->v[i].text);
	free(args->v);
	free(args->passthrough);
	memset(args, 0, sizeof(*args));
}

/* --- response files --- */

char **cc_split_response_text(const char *text, size_t *count)
{
	size_t cap = 16, n = 0, len = strlen(text);
	char **v = malloc(cap * sizeof(*v));
	char *word = malloc(len + 1);
	const char *p = text;

	if (!v || !word)
		goto fail;
	while (*p) {
		char quote = 0;
		size_t w = 0;

		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' ||
		       *p == '\v')
			p++;
		if (!*p)
			break;
		for (; *p; p++) {
			if (*p == '\\' && p[1]) {
				word[w++] = *++p;
			} else if (quote) {
				if (*p == quote)
					quote = 0;
				else
					word[w++] = *p;
			} else if (*p == '\'' || *p == '"') {
				quote = *p;
			} else if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' ||
				   *p == '\f' || *p == '\v') {
				break;
			} else {
				word[w++] = *p;
			}
		}
		word[w] = '\0';
		if (n + 2 > cap) {
			char **bigger = realloc(v, (cap *= 2) * sizeof(*v));

			if (!bigger)
				goto fail;
			v = bigger;
		}
		v[n] = strdup(word);
		if (!v[n])
			goto fail;
		n++;
	}
	free(word);
	v[n] = NULL;
	*count = n;
	return v;
fail:
	if (v) {
		for (size_t i = 0; i < n; i++)
			free(v[i]);
		free(v);
	}
	free(word);
	return NULL;
}

int cc_write_response_file(FILE *out, char *const *argv, size_t argc)
{
	for (size_t i = 0; i < argc; i++) {
		for (const char *p = argv[i]; *p; p++) {
			if (strchr(" \t\n\r\f\v'\"\\", *p))
				fputc('\\', out);
			fputc(*p, out);
		}
		/* An empty argument needs quotes to survive. */
		if (!*argv[i])
			fputs("\"\"", out);
		fputc('\n', out);
	}
	return ferror(out) ? -1 : 0;
}

static char *read_text_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t len = 0, cap = 0, got;

	if (!f)
		return NULL;
	do {
		if (len + 4096 + 1 > cap) {
			char *bigger = realloc(text, cap = cap * 2 + 8192);

			if (!bigger) {
				free(text);
				fclose(f);
				return NULL;
			}
			text = bigger;
		}
		got = fread(text + len, 1, 4096, f);
		len += got;
	} while (got > 0);
	fclose(f);
	text[len] = '\0';
	return text;
}

/* --- classification --- */

struct parse_state {
	const char *language; /* -x in effect */
	bool value_pending;   /* the next argument is the value of an option */
	bool value_link_only;
	bool value_is_library;
	bool value_is_script;
	bool value_is_language;
};

static void note_linker_choice(struct cc_args *args, const char *name)
{
	const char *base = strrchr(name, '/');

	base = base ? base + 1 : name;
	if (strstr(base, "gold"))
		args->linker = CC_LINKER_GOLD;
	else if (strstr(base, "lld"))
		args->linker = CC_LINKER_LLD;
	else if (strcmp(base, "bfd") == 0 || strcmp(base, "ld") == 0 || strcmp(base, "ld.bfd") == 0)
		args->linker = CC_LINKER_BFD;
	else
		args->linker = CC_LINKER_OTHER;
}

static bool is_linker_script_wl(const char *opt)
{
	/* -Wl,-T,FILE  -Wl,-TFILE  -Wl,--script=FILE  -Wl,--script,FILE */
	return strstr(opt, ",-T") || strstr(opt, ",--script");
}

static void classify_phase_option(struct cc_args *args, const char *opt)
{
	if (strcmp(opt, "-E") == 0 || strcmp(opt, "-M") == 0 || strcmp(opt, "-MM") == 0)
		args->preprocess_only = true;
	else if (strcmp(opt, "-c") == 0 || strcmp(opt, "-S") == 0)
		args->no_link = true;
	else if (strcmp(opt, "-fsyntax-only") == 0)
		args->syntax_only = true;
	else if (strcmp(opt, "-r") == 0)
		args->relocatable = true;
	else if (strcmp(opt, "-shared") == 0)
		args->shared = true;
	else if (strcmp(opt, "-static") == 0 || strcmp(opt, "-static-pie") == 0)
		args->static_link = true;
	else if (strcmp(opt, "-nostdlib") == 0 || strcmp(opt, "-nodefaultlibs") == 0 ||
		 strcmp(opt, "-nolibc") == 0)
		args->no_libc = true;
	else if (starts_with(opt, "-flto") && strcmp(opt, "-flto=none") != 0)
		args->lto = true;
	else if (strcmp(opt, "-fno-lto") == 0)
		args->lto = false;
	else if (starts_with(opt, "-fuse-ld="))
		note_linker_choice(args, opt + strlen("-fuse-ld="));
	else if (starts_with(opt, "--ld-path="))
		note_linker_choice(args, opt + strlen("--ld-path="));
}

static void classify_option(struct cc_args *args, struct cc_arg *a, struct parse_state *st)
{
	const char *opt = a->text;

	a->role = CC_ARG_OPTION;
	classify_phase_option(args, opt);
	if (in_list(opt, link_only_options, ARRAY_SIZE(link_only_options)) ||
	    starts_with(opt, "-Wl,") || starts_with(opt, "-fuse-ld=") ||
	    starts_with(opt, "--ld-path=") || starts_with(opt, "-L")) {
		a->link_only = true;
	}
	if (starts_with(opt, "-Wl,") || strcmp(opt, "-Xlinker") == 0 || strcmp(opt, "-x") == 0 ||
	    starts_with(opt, "-x"))
		a->link_barrier = true;
	if (starts_with(opt, "-Wl,") && is_linker_script_wl(opt))
		args->linker_script = true;
	if (starts_with(opt, "-T") && strcmp(opt, "-T") != 0)
		args->linker_script = true;
	if (starts_with(opt, "-l") && strcmp(opt, "-l") != 0) {
		a->kind = CC_INPUT_LIBRARY;
		a->link_only = true;
		a->link_barrier = true;
		args->n_libraries++;
	}
	if (starts_with(opt, "-x") && strcmp(opt, "-x") != 0)
		st->language = opt + 2;
	if (takes_value(opt)) {
		st->value_pending = true;
		st->value_link_only = a->link_only;
		st->value_is_library = strcmp(opt, "-l") == 0;
		st->value_is_script = strcmp(opt, "-T") == 0;
		st->value_is_language = strcmp(opt, "-x") == 0;
		if (strcmp(opt, "-l") == 0)
			a->link_only = a->link_barrier = true;
	}
}

static void classify_value(struct cc_args *args, struct cc_arg *a, struct parse_state *st)
{
	a->role = CC_ARG_OPTION_VALUE;
	a->link_only = st->value_link_only;
	if (st->value_is_library) {
		a->kind = CC_INPUT_LIBRARY;
		a->link_barrier = true;
		args->n_libraries++;
	}
	if (st->value_is_script || (st->value_link_only && (strcmp(a->text, "-T") == 0 ||
							    starts_with(a->text, "--script"))))
		args->linker_script = true;
	if (st->value_is_language) {
		st->language = a->text;
		a->link_barrier = true;
	}
	if (args->v[args->n - 2].link_barrier)
		a->link_barrier = true;
	st->value_pending = false;
}

static void classify_input(struct cc_args *args, struct cc_arg *a, const struct parse_state *st)
{
	a->role = CC_ARG_INPUT;
	a->language = st->language;
	a->kind = kind_of_input(a->text, st->language);
	switch (a->kind) {
	case CC_INPUT_SOURCE:
		args->n_sources++;
		break;
	case CC_INPUT_ASM:
		args->n_asm++;
		break;
	case CC_INPUT_OBJECT:
		args->n_objects++;
		break;
	case CC_INPUT_LIBRARY:
		a->link_barrier = true;
		args->n_libraries++;
		break;
	case CC_INPUT_NONE:
		break;
	}
}

static int add_argument(struct cc_args *args, const char *text, struct parse_state *st, int depth,
			char *err, size_t err_size);

static int expand_response_file(struct cc_args *args, const char *text, struct parse_state *st,
				int depth, char *err, size_t err_size, bool *expanded)
{
	char *content;
	char **words;
	size_t n;
	int rc = 0;

	*expanded = false;
	if (depth >= MAX_RESPONSE_DEPTH)
		return 0;
	content = read_text_file(text + 1);
	if (!content)
		return 0; /* GCC passes it on literally */
	words = cc_split_response_text(content, &n);
	free(content);
	if (!words) {
		snprintf(err, err_size, "out of memory reading %s", text + 1);
		return -1;
	}
	*expanded = true;
	args->from_response_file = true;
	for (size_t i = 0; i < n; i++) {
		if (rc == 0)
			rc = add_argument(args, words[i], st, depth + 1, err, err_size);
		free(words[i]);
	}
	free(words);
	return rc;
}

static int add_argument(struct cc_args *args, const char *text, struct parse_state *st, int depth,
			char *err, size_t err_size)
{
	struct cc_arg *a;

	if (!st->value_pending && text[0] == '@' && text[1]) {
		bool expanded;

		if (expand_response_file(args, text, st, depth, err, err_size, &expanded) < 0)
			return -1;
		if (expanded)
			return 0;
	}
	a = push_arg(args, text);
	if (!a) {
		snprintf(err, err_size, "out of memory");
		return -1;
	}
	if (st->value_pending)
		classify_value(args, a, st);
	else if (text[0] == '-' && text[1])
		classify_option(args, a, st);
	else
		classify_input(args, a, st);
	return 0;
}

/* lever's own options; returns true when arg was one. */
static bool take_lever_option(const char *arg, struct cc_options *opts, bool *bad)
{
	const char *seed;

	if (strcmp(arg, "--help") == 0) {
		opts->help = true;
	} else if (strcmp(arg, "--randomize-link") == 0) {
		opts->randomize_link = true;
		opts->link_seed_given = false;
	} else if (starts_with(arg, "--randomize-link=")) {
		seed = arg + strlen("--randomize-link=");
		opts->randomize_link = true;
		opts->link_seed_given = true;
		if (!parse_u64_range(seed, 0, UINT64_MAX, &opts->link_seed))
			*bad = true;
	} else if (strcmp(arg, "--annotate") == 0) {
		opts->annotate = true;
	} else if (strcmp(arg, "--no-stack-pads") == 0) {
		opts->no_stack_pads = true;
	} else if (strcmp(arg, "--lever-verbose") == 0) {
		opts->verbose = true;
	} else {
		return false;
	}
	return true;
}

int cc_args_parse(struct cc_args *args, int argc, char **argv, struct cc_options *opts, char *err,
		  size_t err_size)
{
	struct parse_state st = {.language = ""};

	memset(args, 0, sizeof(*args));
	args->passthrough = calloc((size_t)argc + 1, sizeof(char *));
	if (!args->passthrough) {
		snprintf(err, err_size, "out of memory");
		return -1;
	}
	for (int i = 0; i < argc; i++) {
		bool bad = false;

		if (!st.value_pending && take_lever_option(argv[i], opts, &bad)) {
			if (bad) {
				snprintf(err, err_size, "bad seed in '%s' (want 0..2^64-1)",
					 argv[i]);
				return -1;
			}
			continue;
		}
		args->passthrough[args->n_passthrough++] = argv[i];
		if (add_argument(args, argv[i], &st, 0, err, err_size) < 0)
			return -1;
	}
	return 0;
}

bool cc_args_links(const struct cc_args *args)
{
	if (args->preprocess_only || args->syntax_only || args->no_link)
		return false;
	/* No input at all (--version, -v, -print-*): nothing is linked. */
	return args->n_sources + args->n_asm + args->n_objects + args->n_libraries > 0;
}

bool cc_args_compiles(const struct cc_args *args)
{
	return args->n_sources > 0 && !args->preprocess_only && !args->syntax_only;
}
