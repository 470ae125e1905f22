/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Running the wrapped compiler. Without --randomize-link the command is the
 * user's (response files untouched) plus lever's flags, exec'ed in place of
 * lever. With it, a command that links is run in steps: each source is
 * compiled to a temporary object (so that its function sections can be read),
 * the objects are shuffled, and the link gets a random section order.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "stabilizer/cc/cc.h"

#define STUB_OBJECT	     "lever-cc-stub.o"
#define MAX_COMMAND_BYTES    (96 * 1024) /* above this, the link's arguments go in @FILE */
#define VERSION_OUTPUT_BYTES 4096

/* A command being built: borrowed strings, except those in owned. */
struct command {
	char **v;
	size_t n, cap;
	char **owned;
	size_t n_owned, cap_owned;
};

static void die_oom(void)
{
	fprintf(stderr, "lever cc: out of memory\n");
	exit(1);
}

static void push(struct command *c, const char *s)
{
	if (c->n + 2 > c->cap) {
		c->cap = c->cap ? c->cap * 2 : 64;
		c->v = realloc(c->v, c->cap * sizeof(*c->v));
		if (!c->v)
			die_oom();
	}
	c->v[c->n++] = (char *)s;
	c->v[c->n] = NULL;
}

/* Push a formatted string the command owns. */
static void push_printf(struct command *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void push_printf(struct command *c, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		die_oom();
	va_end(ap);
	if (c->n_owned == c->cap_owned) {
		c->cap_owned = c->cap_owned ? c->cap_owned * 2 : 16;
		c->owned = realloc(c->owned, c->cap_owned * sizeof(*c->owned));
		if (!c->owned)
			die_oom();
	}
	c->owned[c->n_owned++] = s;
	push(c, s);
}

static void command_free(struct command *c)
{
	for (size_t i = 0; i < c->n_owned; i++)
		free(c->owned[i]);
	free(c->owned);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

static void print_command(const char *what, const struct command *c)
{
	fprintf(stderr, "lever cc: %s:", what);
	for (size_t i = 0; i < c->n; i++)
		fprintf(stderr, " %s", c->v[i]);
	fputc('\n', stderr);
}

/* Run a command and wait; returns its exit status (128+N when killed by signal N). */
static int run_and_wait(const struct command *c)
{
	int status;
	pid_t pid = fork();

	if (pid < 0) {
		fprintf(stderr, "lever cc: fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		execvp(c->v[0], c->v);
		fprintf(stderr, "lever cc: %s: %s\n", c->v[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return 1;
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* --- which compiler --- */

static size_t read_all(int fd, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t got;

	while (len + 1 < size && (got = read(fd, buf + len, size - 1 - len)) != 0) {
		if (got < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		len += (size_t)got;
	}
	buf[len] = '\0';
	return len;
}

static int major_after(const char *text, const char *marker)
{
	const char *p = strstr(text, marker);

	return p ? atoi(p + strlen(marker)) : 0;
}

/* GCC's first line ends with its version: "gcc (Debian 12.2.0-14) 12.2.0". */
static int gcc_major(const char *text)
{
	const char *eol = strchr(text, '\n');
	const char *p = eol ? eol : text + strlen(text);

	while (p > text && p[-1] != ' ')
		p--;
	return atoi(p);
}

enum cc_family cc_detect_family(char *const *compiler_argv, int *major)
{
	struct command c = {0};
	char out[VERSION_OUTPUT_BYTES];
	int pipefd[2], status;
	pid_t pid;

	*major = 0;
	for (size_t i = 0; compiler_argv[i]; i++)
		push(&c, compiler_argv[i]);
	push(&c, "--version");
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		command_free(&c);
		return CC_FAMILY_UNKNOWN;
	}
	pid = fork();
	if (pid == 0) {
		dup2(pipefd[1], 1);
		int devnull = open("/dev/null", O_WRONLY);
		if (devnull >= 0)
			dup2(devnull, 2);
		execvp(c.v[0], c.v);
		_exit(127);
	}
	close(pipefd[1]);
	command_free(&c);
	out[0] = '\0';
	if (pid > 0)
		read_all(pipefd[0], out, sizeof(out));
	close(pipefd[0]);
	if (pid > 0)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	if (strstr(out, "clang version ")) {
		*major = major_after(out, "clang version ");
		return CC_FAMILY_CLANG;
	}
	if (strstr(out, "Free Software Foundation")) {
		*major = gcc_major(out);
		return CC_FAMILY_GCC;
	}
	return CC_FAMILY_UNKNOWN;
}

/* --- what lever adds --- */

struct plan {
	const struct cc_settings *settings;
	struct cc_args *args;
	char **compiler; /* the compiler's command words */
	size_t n_compiler;
	enum cc_family family;
	int major;
	char tmpdir[4096]; /* for --randomize-link; "" until made */
};

static void add_stack_pad_plugin(struct command *c, const struct plan *p)
{
	const char *dir = p->settings->runtime_dir;
	const char *kind = p->family == CC_FAMILY_GCC ? "gcc" : "llvm";
	char path[4096];

	if (p->settings->opts.no_stack_pads)
		return;
	if (p->family == CC_FAMILY_UNKNOWN) {
		fprintf(stderr,
			"lever cc: %s is neither GCC nor clang; compiling without stack "
			"pads (--no-stack-pads silences this)\n",
			p->compiler[0]);
		return;
	}
	snprintf(path, sizeof(path), "%s/lever-stack-pads-%s%d.so", dir ? dir : ".", kind,
		 p->major);
	if (!dir || access(path, R_OK) != 0) {
		fprintf(stderr,
			"lever cc: no stack pad plugin for %s %d (%s); compiling without "
			"stack pads (--no-stack-pads silences this)\n",
			p->family == CC_FAMILY_GCC ? "GCC" : "clang", p->major, path);
		return;
	}
	if (p->family == CC_FAMILY_GCC)
		push_printf(c, "-fplugin=%s", path);
	else
		push_printf(c, "-fpass-plugin=%s", path);
}

static void add_compile_flags(struct command *c, const struct plan *p)
{
	push(c, "-ffunction-sections");
	push(c, "-fno-omit-frame-pointer");
	push(c, "-fno-jump-tables");
	/* five one-byte NOPs at every function's entry, for lever annotate record's probes */
	if (p->settings->opts.annotate)
		push(c, "-fpatchable-function-entry=5");
	add_stack_pad_plugin(c, p);
}

/* The -x in effect after the last argument, if any ("" for none). */
static const char *final_language(const struct cc_args *args)
{
	const char *lang = "";

	for (size_t i = 0; i < args->n; i++) {
		const struct cc_arg *a = &args->v[i];

		if (a->role == CC_ARG_OPTION && strcmp(a->text, "-x") == 0 && i + 1 < args->n)
			lang = args->v[i + 1].text;
		else if (a->role == CC_ARG_OPTION && strncmp(a->text, "-x", 2) == 0 && a->text[2])
			lang = a->text + 2;
	}
	return strcmp(lang, "none") == 0 ? "" : lang;
}

static void add_link_flags(struct command *c, const struct plan *p)
{
	const struct cc_args *args = p->args;
	char stub[4096];

	if (args->relocatable)
		return;
	/* GCC generates the code of -flto objects at link time: the plugin runs there. */
	if (args->lto && p->family == CC_FAMILY_GCC)
		add_stack_pad_plugin(c, p);
	push(c, "-Wl,--emit-relocs");
	/* The stub registers the stack pads through libc's dlsym. */
	if (args->static_link || args->no_libc)
		return;
	snprintf(stub, sizeof(stub), "%s/" STUB_OBJECT,
		 p->settings->runtime_dir ? p->settings->runtime_dir : ".");
	if (access(stub, R_OK) != 0) {
		fprintf(stderr,
			"lever cc: %s is missing; the stack pads of this program will "
			"stay 0\n",
			stub);
		return;
	}
	if (*final_language(args)) {
		push(c, "-x");
		push(c, "none");
	}
	push_printf(c, "%s", stub);
}

static void start_command(struct command *c, const struct plan *p)
{
	for (size_t i = 0; i < p->n_compiler; i++)
		push(c, p->compiler[i]);
}

/* --- the plain case: exec the user's command plus lever's flags --- */

static int exec_passthrough(const struct plan *p)
{
	struct command c = {0};
	const struct cc_args *args = p->args;

	start_command(&c, p);
	for (size_t i = 0; i < args->n_passthrough; i++)
		push(&c, args->passthrough[i]);
	if (cc_args_compiles(args))
		add_compile_flags(&c, p);
	if (cc_args_links(args))
		add_link_flags(&c, p);
	if (p->settings->opts.verbose)
		print_command("run", &c);
	fflush(NULL);
	execvp(c.v[0], c.v);
	fprintf(stderr, "lever cc: %s: %s\n", c.v[0], strerror(errno));
	command_free(&c);
	return 127;
}

/* --- --randomize-link --- */

static uint64_t fresh_seed(void)
{
	uint64_t seed = 0;

	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed = time_realtime_ns() ^ ((uint64_t)getpid() << 32);
	return seed;
}

static int make_tmpdir(struct plan *p)
{
	const char *base = getenv("TMPDIR");

	snprintf(p->tmpdir, sizeof(p->tmpdir), "%s/lever-cc.XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(p->tmpdir)) {
		fprintf(stderr, "lever cc: cannot make a temporary directory in %s: %s\n",
			base && *base ? base : "/tmp", strerror(errno));
		p->tmpdir[0] = '\0';
		return -1;
	}
	return 0;
}

/* Remove the temporary directory and what the steps left in it (objects, .d files). */
static void remove_tmpdir(struct plan *p)
{
	DIR *dir;
	struct dirent *e;

	if (!p->tmpdir[0])
		return;
	dir = opendir(p->tmpdir);
	if (dir) {
		while ((e = readdir(dir)) != NULL)
			if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
				unlinkat(dirfd(dir), e->d_name, 0);
		closedir(dir);
	}
	rmdir(p->tmpdir);
}

/* Arguments a compile-only step keeps: options, not inputs, -o or -x. */
static bool keep_for_compile_step(const struct cc_args *args, size_t i)
{
	const struct cc_arg *a = &args->v[i];
	const struct cc_arg *prev = i > 0 ? &args->v[i - 1] : NULL;

	if (a->role == CC_ARG_INPUT || a->link_only || a->kind == CC_INPUT_LIBRARY)
		return false;
	if (a->role == CC_ARG_OPTION && (strcmp(a->text, "-o") == 0 || strcmp(a->text, "-x") == 0 ||
					 (strncmp(a->text, "-x", 2) == 0 && a->text[2])))
		return false;
	if (a->role == CC_ARG_OPTION_VALUE && prev &&
	    (strcmp(prev->text, "-o") == 0 || strcmp(prev->text, "-x") == 0))
		return false;
	return true;
}

/* Compile source or assembly input i to tmpdir/N.o; the input becomes that object. */
static int compile_input(struct plan *p, size_t i, size_t n)
{
	struct cc_args *args = p->args;
	struct cc_arg *in = &args->v[i];
	struct command c = {0};
	char *object;
	int rc;

	start_command(&c, p);
	for (size_t k = 0; k < args->n; k++)
		if (keep_for_compile_step(args, k))
			push(&c, args->v[k].text);
	if (in->kind == CC_INPUT_SOURCE && !args->preprocess_only)
		add_compile_flags(&c, p);
	if (p->family == CC_FAMILY_CLANG)
		push(&c, "-Qunused-arguments");
	if (*in->language) {
		push(&c, "-x");
		push(&c, in->language);
	}
	push(&c, in->text);
	push(&c, "-c");
	push(&c, "-o");
	push_printf(&c, "%s/%zu.o", p->tmpdir, n);
	if (p->settings->opts.verbose)
		print_command("compile", &c);
	rc = run_and_wait(&c);
	if (rc == 0) {
		object = strdup(c.v[c.n - 1]);
		if (!object)
			die_oom();
		free(in->text);
		in->text = object;
		in->kind = CC_INPUT_OBJECT;
		in->language = "";
	}
	command_free(&c);
	return rc;
}

/* After the compile steps every input is an object: reset -x for the link. */
static void reset_languages(struct cc_args *args)
{
	for (size_t i = 0; i < args->n; i++) {
		struct cc_arg *a = &args->v[i];
		char *none;

		if (a->role == CC_ARG_OPTION_VALUE && i > 0 &&
		    strcmp(args->v[i - 1].text, "-x") == 0)
			none = strdup("none");
		else if (a->role == CC_ARG_OPTION && strncmp(a->text, "-x", 2) == 0 && a->text[2])
			none = strdup("-xnone");
		else
			continue;
		if (!none)
			die_oom();
		free(a->text);
		a->text = none;
	}
}

static const char *option_value(const struct cc_args *args, size_t i, const char *opt)
{
	const char *text = args->v[i].text;
	size_t len = strlen(opt);

	if (strcmp(text, opt) == 0)
		return i + 1 < args->n ? args->v[i + 1].text : NULL;
	if (strncmp(text, opt, len) == 0 && text[len])
		return text + len;
	return NULL;
}

/* -lNAME that the linker will take from a static archive in a -L directory. */
static bool find_static_library(const struct cc_args *args, const char *name, char *out,
				size_t out_size)
{
	for (size_t i = 0; i < args->n; i++) {
		const char *dir;
		char so[4096];

		if (args->v[i].role != CC_ARG_OPTION || !(dir = option_value(args, i, "-L")))
			continue;
		snprintf(so, sizeof(so), "%s/lib%s.so", dir, name);
		snprintf(out, out_size, "%s/lib%s.a", dir, name);
		if (!args->static_link && access(so, R_OK) == 0)
			return false;
		if (access(out, R_OK) == 0)
			return true;
	}
	return false;
}

/* The function sections of every object and static library of the link. */
static int collect_link_sections(const struct cc_args *args, struct cc_names *names)
{
	char err[512], path[4096];

	for (size_t i = 0; i < args->n; i++) {
		const struct cc_arg *a = &args->v[i];
		const char *file = NULL;
		const char *lib;

		if (a->role == CC_ARG_INPUT && a->kind == CC_INPUT_OBJECT)
			file = a->text;
		else if (a->role == CC_ARG_INPUT && a->kind == CC_INPUT_LIBRARY &&
			 !strstr(a->text, ".so"))
			file = a->text;
		else if (a->role == CC_ARG_OPTION && (lib = option_value(args, i, "-l")) &&
			 *lib != ':' && find_static_library(args, lib, path, sizeof(path)))
			file = path;
		if (file && cc_collect_function_sections(file, names, err, sizeof(err)) < 0) {
			fprintf(stderr, "lever cc: --randomize-link: %s\n", err);
			return -1;
		}
	}
	return 0;
}

/* Write the random function order; returns the linker option naming it, or NULL. */
static char *write_function_order(struct plan *p, struct rng *rng)
{
	const struct cc_args *args = p->args;
	struct cc_names names = {0};
	char path[4200];
	char *option = NULL;
	FILE *out;
	int rc;

	if (args->linker_script || args->linker == CC_LINKER_OTHER) {
		fprintf(stderr,
			"lever cc: --randomize-link: %s; only the object order is "
			"randomized\n",
			args->linker_script ? "the link has its own linker script"
					    : "this linker takes no section order");
		return NULL;
	}
	if (collect_link_sections(args, &names) < 0 || names.n == 0) {
		cc_names_free(&names);
		return NULL;
	}
	cc_names_shuffle(&names, rng);
	snprintf(path, sizeof(path), "%s/%s", p->tmpdir,
		 args->linker == CC_LINKER_BFD ? "order.ld" : "order.txt");
	out = fopen(path, "w");
	if (!out || cc_write_section_order(out, args->linker, &names) < 0 || fclose(out) != 0) {
		fprintf(stderr, "lever cc: cannot write %s\n", path);
		cc_names_free(&names);
		return NULL;
	}
	cc_names_free(&names);
	switch (args->linker) {
	case CC_LINKER_GOLD:
		rc = asprintf(&option, "-Wl,--section-ordering-file,%s", path);
		break;
	case CC_LINKER_LLD:
		/* Symbols of sections the link drops are not worth a warning. */
		rc = asprintf(&option, "-Wl,--no-warn-symbol-ordering,--symbol-ordering-file,%s",
			      path);
		break;
	default:
		rc = asprintf(&option, "-Wl,-T,%s", path);
		break;
	}
	if (rc < 0)
		die_oom();
	return option;
}

static size_t command_bytes(const struct cc_args *args)
{
	size_t bytes = 0;

	for (size_t i = 0; i < args->n; i++)
		bytes += strlen(args->v[i].text) + 1;
	return bytes;
}

/* Long link lines came in a response file; they go out in one too. */
static int push_link_arguments(struct command *c, const struct plan *p)
{
	const struct cc_args *args = p->args;
	char path[4200];
	FILE *out;
	char **v;
	int rc;

	if (!args->from_response_file || command_bytes(args) < MAX_COMMAND_BYTES) {
		for (size_t i = 0; i < args->n; i++)
			push(c, args->v[i].text);
		return 0;
	}
	v = malloc(args->n * sizeof(*v));
	if (!v)
		die_oom();
	for (size_t i = 0; i < args->n; i++)
		v[i] = args->v[i].text;
	snprintf(path, sizeof(path), "%s/args.rsp", p->tmpdir);
	out = fopen(path, "w");
	rc = out ? cc_write_response_file(out, v, args->n) : -1;
	if (out && fclose(out) != 0)
		rc = -1;
	free(v);
	if (rc < 0) {
		fprintf(stderr, "lever cc: cannot write %s\n", path);
		return -1;
	}
	push_printf(c, "@%s", path);
	return 0;
}

/*
 * An object holding the link seed (CC_LINK_SEED_SECTION), compiled from C
 * with the command's compile options (so -m32 and the like match); its
 * path in *object (tmpdir/seed.o).
 */
static int compile_seed_note(struct plan *p, uint64_t seed, char *object, size_t size)
{
	struct cc_args *args = p->args;
	struct command c = {0};
	char source[4200];
	FILE *out;
	int rc;

	snprintf(source, sizeof(source), "%s/lever-link-seed.c", p->tmpdir);
	snprintf(object, size, "%s/lever-link-seed.o", p->tmpdir);
	out = fopen(source, "w");
	if (!out) {
		fprintf(stderr, "lever cc: cannot write %s: %s\n", source, strerror(errno));
		return 1;
	}
	fprintf(out,
		"__attribute__((used, retain, section(\"" CC_LINK_SEED_SECTION "\")))\n"
		"static const char lever_link_seed[] = \"" CC_LINK_SEED_PREFIX "%llu\";\n",
		(unsigned long long)seed);
	if (fclose(out) != 0) {
		fprintf(stderr, "lever cc: cannot write %s\n", source);
		return 1;
	}
	start_command(&c, p);
	for (size_t k = 0; k < args->n; k++)
		if (keep_for_compile_step(args, k))
			push(&c, args->v[k].text);
	push(&c, "-w"); /* the user's -Werror must not trip on lever's file */
	push(&c, "-x");
	push(&c, "c");
	push(&c, source);
	push(&c, "-c");
	push(&c, "-o");
	push(&c, object);
	if (p->settings->opts.verbose)
		print_command("compile", &c);
	rc = run_and_wait(&c);
	command_free(&c);
	return rc;
}

static int run_randomized_link(struct plan *p)
{
	const struct cc_options *opts = &p->settings->opts;
	struct cc_args *args = p->args;
	uint64_t seed = opts->link_seed_given ? opts->link_seed : fresh_seed();
	struct command c = {0};
	struct rng rng;
	size_t n_compiled = 0;
	char *order, note[4200];
	int rc = 0;

	if (opts->verbose)
		fprintf(stderr, "lever cc: link order seed %llu\n", (unsigned long long)seed);
	if (make_tmpdir(p) < 0)
		return 1;
	for (size_t i = 0; i < args->n && rc == 0; i++) {
		enum cc_input_kind kind = args->v[i].kind;

		if (args->v[i].role == CC_ARG_INPUT &&
		    (kind == CC_INPUT_SOURCE || kind == CC_INPUT_ASM))
			rc = compile_input(p, i, n_compiled++);
	}
	if (rc == 0)
		rc = compile_seed_note(p, seed, note, sizeof(note));
	if (rc == 0) {
		reset_languages(args);
		rng_seed(&rng, seed);
		cc_shuffle_link_inputs(args, &rng);
		order = write_function_order(p, &rng);
		start_command(&c, p);
		rc = push_link_arguments(&c, p);
		if (rc == 0) {
			add_link_flags(&c, p);
			if (*final_language(args)) {
				push(&c, "-x");
				push(&c, "none");
			}
			push(&c, note);
			if (order)
				push_printf(&c, "%s", order);
			if (opts->verbose)
				print_command("link", &c);
			rc = run_and_wait(&c);
		}
		free(order);
		command_free(&c);
	}
	remove_tmpdir(p);
	return rc;
}

int cc_run(const struct cc_settings *settings, struct cc_args *args)
{
	struct plan p = {.settings = settings, .args = args};
	size_t n;
	int rc;

	p.compiler = cc_split_response_text(settings->compiler, &n);
	if (!p.compiler || n == 0) {
		fprintf(stderr, "lever cc: no compiler to run (LEVER_CC/LEVER_CXX is empty)\n");
		return 1;
	}
	p.n_compiler = n;
	if (cc_args_compiles(args) || (args->lto && cc_args_links(args)))
		p.family = cc_detect_family(p.compiler, &p.major);
	if (settings->opts.randomize_link && cc_args_links(args) && !args->relocatable)
		rc = run_randomized_link(&p);
	else
		rc = exec_passthrough(&p);
	for (size_t i = 0; i < n; i++)
		free(p.compiler[i]);
	free(p.compiler);
	return rc;
}
