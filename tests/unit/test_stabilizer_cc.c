/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lever cc: reading compiler command lines and randomizing links. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"
#include "stabilizer/cc/cc.h"

static void parse(struct cc_args *args, struct cc_options *opts, int argc, char **argv)
{
	char err[256];

	memset(opts, 0, sizeof(*opts));
	assert_int_equal(cc_args_parse(args, argc, argv, opts, err, sizeof(err)), 0);
}

#define PARSE(args, opts, ...)                                                                     \
	do {                                                                                       \
		char *argv_[] = {__VA_ARGS__};                                                     \
		parse(args, opts, (int)ARRAY_SIZE(argv_), argv_);                                  \
	} while (0)

static void response_text_splits_as_gcc(void **state)
{
	size_t n;
	char **v = cc_split_response_text(" a \"b c\"\t'd e'\nf\\ g \"x\\\"y\" '' z", &n);
	const char *want[] = {"a", "b c", "d e", "f g", "x\"y", "", "z"};

	assert_non_null(v);
	assert_int_equal(n, ARRAY_SIZE(want));
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(v[i], want[i]);
		free(v[i]);
	}
	assert_null(v[n]);
	free(v);
}

static void response_file_round_trips(void **state)
{
	char *in[] = {"-DX=\"a b\"", "", "back\\slash", "it's", "plain"};
	char *text = NULL;
	size_t len = 0, n;
	FILE *f = open_memstream(&text, &len);
	char **out;

	assert_int_equal(cc_write_response_file(f, in, ARRAY_SIZE(in)), 0);
	fclose(f);
	out = cc_split_response_text(text, &n);
	assert_int_equal(n, ARRAY_SIZE(in));
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(out[i], in[i]);
		free(out[i]);
	}
	free(out);
	free(text);
}

static void phases(void **state)
{
	struct cc_args a;
	struct cc_options o;

	PARSE(&a, &o, "-O2", "-c", "x.c", "-o", "x.o");
	assert_true(cc_args_compiles(&a));
	assert_false(cc_args_links(&a));
	assert_int_equal(a.n_sources, 1);
	cc_args_free(&a);

	PARSE(&a, &o, "-E", "x.c");
	assert_false(cc_args_compiles(&a));
	assert_false(cc_args_links(&a));
	cc_args_free(&a);

	PARSE(&a, &o, "-MD", "-MF", "x.d", "-c", "x.c");
	assert_true(cc_args_compiles(&a));
	assert_false(a.preprocess_only);
	cc_args_free(&a);

	PARSE(&a, &o, "--version");
	assert_false(cc_args_compiles(&a));
	assert_false(cc_args_links(&a));
	cc_args_free(&a);

	PARSE(&a, &o, "main.o", "util.o", "-L", "lib", "-lm", "-o", "prog");
	assert_false(cc_args_compiles(&a));
	assert_true(cc_args_links(&a));
	assert_int_equal(a.n_objects, 2);
	assert_int_equal(a.n_libraries, 1);
	cc_args_free(&a);

	/* stdin with -x; the value of -o and -I is no input */
	PARSE(&a, &o, "-x", "c", "-", "-I", "inc.c", "-o", "out.c");
	assert_true(cc_args_compiles(&a));
	assert_int_equal(a.n_sources, 1);
	assert_string_equal(a.v[2].language, "c");
	cc_args_free(&a);

	PARSE(&a, &o, "-shared", "-fuse-ld=gold", "-Xlinker", "-T", "-Xlinker", "my.ld", "a.o",
	      "-r");
	assert_true(a.shared);
	assert_true(a.relocatable);
	assert_true(a.linker_script);
	assert_int_equal(a.linker, CC_LINKER_GOLD);
	cc_args_free(&a);

	PARSE(&a, &o, "-flto", "-c", "a.s");
	assert_true(a.lto);
	assert_false(cc_args_compiles(&a)); /* assembly only */
	cc_args_free(&a);
}

static void lever_options_are_taken_out(void **state)
{
	struct cc_args a;
	struct cc_options o;
	char err[256];
	char *bad[] = {"--randomize-link=x1"};

	PARSE(&a, &o, "--randomize-link=9", "-O2", "--no-stack-pads", "a.c", "--lever-verbose",
	      "-Xlinker", "--help");
	assert_true(o.randomize_link && o.link_seed_given);
	assert_int_equal(o.link_seed, 9);
	assert_true(o.no_stack_pads && o.verbose);
	assert_false(o.help); /* a value of -Xlinker */
	assert_int_equal(a.n_passthrough, 4);
	assert_string_equal(a.passthrough[0], "-O2");
	assert_string_equal(a.passthrough[3], "--help");
	cc_args_free(&a);

	PARSE(&a, &o, "--randomize-link", "--help");
	assert_true(o.randomize_link && !o.link_seed_given && o.help);
	cc_args_free(&a);

	memset(&o, 0, sizeof(o));
	assert_int_equal(cc_args_parse(&a, 1, bad, &o, err, sizeof(err)), -1);
	cc_args_free(&a);
}

static void response_files_are_read(void **state)
{
	char path[] = "/tmp/test_stabilizer_cc.XXXXXX";
	int fd = mkstemp(path);
	char at[64];
	struct cc_args a;
	struct cc_options o;
	const char text[] = "-c 'my file.c'\n-o x.o\n";

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	snprintf(at, sizeof(at), "@%s", path);
	PARSE(&a, &o, "-O2", at, "@/nonexistent/file");
	unlink(path);
	assert_true(a.from_response_file);
	assert_true(a.no_link);
	assert_int_equal(a.n_sources, 1);
	assert_string_equal(a.v[2].text, "my file.c");
	/* the command itself passes through with its @FILE */
	assert_int_equal(a.n_passthrough, 3);
	assert_string_equal(a.passthrough[1], at);
	/* GCC keeps an unreadable @FILE as a literal argument */
	assert_string_equal(a.v[a.n - 1].text, "@/nonexistent/file");
	cc_args_free(&a);
}

static bool is_one_of(const char *s, const char *a, const char *b, const char *c)
{
	return strcmp(s, a) == 0 || strcmp(s, b) == 0 || (c && strcmp(s, c) == 0);
}

static void shuffle_keeps_libraries_after_their_objects(void **state)
{
	struct cc_args a;
	struct cc_options o;
	struct rng rng;
	int moved = 0;

	for (uint64_t seed = 1; seed <= 20; seed++) {
		PARSE(&a, &o, "-o", "p", "a.o", "b.o", "c.o", "-lm", "d.o", "e.o",
		      "-Wl,--as-needed", "f.o");
		rng_seed(&rng, seed);
		cc_shuffle_link_inputs(&a, &rng);
		assert_string_equal(a.v[0].text, "-o");
		assert_string_equal(a.v[1].text, "p");
		for (int i = 2; i < 5; i++)
			assert_true(is_one_of(a.v[i].text, "a.o", "b.o", "c.o"));
		assert_string_equal(a.v[5].text, "-lm");
		assert_true(is_one_of(a.v[6].text, "d.o", "e.o", NULL));
		assert_true(is_one_of(a.v[7].text, "d.o", "e.o", NULL));
		assert_string_equal(a.v[8].text, "-Wl,--as-needed");
		assert_string_equal(a.v[9].text, "f.o");
		moved += strcmp(a.v[2].text, "a.o") != 0 || strcmp(a.v[6].text, "d.o") != 0;
		cc_args_free(&a);
	}
	assert_true(moved > 10);
}

static char *order_text(enum cc_linker linker, const struct cc_names *names)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_int_equal(cc_write_section_order(f, linker, names), 0);
	fclose(f);
	return text;
}

static void section_order_is_a_shuffle_per_seed(void **state)
{
	const char *in[] = {".text.b", ".text.a",     ".text.startup.c",
			    ".text.a", ".text.hot.d", ".text.e"};
	char *orders[2];
	char *script = NULL, *gold = NULL, *lld = NULL;

	for (int k = 0; k < 2; k++) {
		struct cc_names names = {0};
		struct rng rng;
		char *text;

		names.cap = 8;
		names.v = calloc(names.cap, sizeof(char *));
		for (size_t i = 0; i < ARRAY_SIZE(in); i++)
			names.v[names.n++] = strdup(in[i]);
		rng_seed(&rng, 100 + k);
		cc_names_shuffle(&names, &rng);
		assert_int_equal(names.n, 5); /* duplicates merged */
		text = order_text(CC_LINKER_GOLD, &names);
		orders[k] = text;
		if (k == 0) {
			script = order_text(CC_LINKER_BFD, &names);
			lld = order_text(CC_LINKER_LLD, &names);
			gold = text;
		}
		cc_names_free(&names);
	}
	assert_string_not_equal(orders[0], orders[1]);
	/* gold: one section a line; lld: one symbol a line; ld: a script */
	assert_non_null(strstr(gold, ".text.a\n"));
	assert_null(strstr(gold, "SECTIONS"));
	assert_non_null(strstr(lld, "\na\n") ? lld : strstr(lld, "a\n"));
	assert_null(strstr(lld, ".text"));
	assert_non_null(strstr(lld, "c\n"));
	assert_null(strstr(lld, "startup"));
	assert_non_null(strstr(script, "SECTIONS"));
	assert_non_null(strstr(script, "  .text :"));
	assert_non_null(strstr(script, "*(.text.a)"));
	/* the default .text's content follows, so it is left empty */
	assert_true(strstr(script, "*(.text.a)") < strstr(script, "*(.text .stub .text.*"));
	assert_non_null(strstr(script, "INSERT BEFORE .text;"));
	free(script);
	free(lld);
	free(orders[0]);
	free(orders[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(response_text_splits_as_gcc),
	    cmocka_unit_test(response_file_round_trips),
	    cmocka_unit_test(phases),
	    cmocka_unit_test(lever_options_are_taken_out),
	    cmocka_unit_test(response_files_are_read),
	    cmocka_unit_test(shuffle_keeps_libraries_after_their_objects),
	    cmocka_unit_test(section_order_is_a_shuffle_per_seed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
