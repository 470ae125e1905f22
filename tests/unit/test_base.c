/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"

static void formats_like_printf(void **state)
{
	char got[128], want[128];

	fmt_buffer(got, sizeof(got), "a=%d b=%u c=%lld d=%llu e=%x f=%02u g=%5d h=%s %%", -42, 7u,
		   -1234567890123LL, 18446744073709551615ULL, 0xbeefu, 5u, -3, "str");
	snprintf(want, sizeof(want), "a=%d b=%u c=%lld d=%llu e=%x f=%02u g=%5d h=%s %%", -42, 7u,
		 -1234567890123LL, 18446744073709551615ULL, 0xbeefu, 5u, -3, "str");
	assert_string_equal(got, want);
	fmt_buffer(got, sizeof(got), "%zu %ld %lu %03d", (size_t)12, -5L, 6UL, -7);
	snprintf(want, sizeof(want), "%zu %ld %lu %03d", (size_t)12, -5L, 6UL, -7);
	assert_string_equal(got, want);
}

static void truncates_and_terminates(void **state)
{
	char buf[8];
	int n = fmt_buffer(buf, sizeof(buf), "%s", "0123456789");

	assert_int_equal(n, 10);
	assert_string_equal(buf, "0123456");
}

static void wildcard_patterns(void **state)
{
	assert_true(wildcard_match("%", "/any/thing"));
	assert_true(wildcard_match("%/src/%.c", "/home/u/src/a.c"));
	assert_false(wildcard_match("%/src/%.c", "/home/u/src/a.h"));
	assert_true(wildcard_match("/usr/bin/x", "/usr/bin/x"));
	assert_false(wildcard_match("/usr/bin/x", "/usr/bin/xy"));
	assert_true(wildcard_match("%libfoo%", "/opt/lib/libfoo.so.1"));
	assert_true(wildcard_match("a%b%c", "aXbYbZc"));
	assert_false(wildcard_match("a%b%c", "aXbYbZ"));
}

static void durations(void **state)
{
	uint64_t ns;

	assert_true(time_parse_duration("250", NSEC_PER_MSEC, &ns));
	assert_int_equal(ns, 250 * NSEC_PER_MSEC);
	assert_true(time_parse_duration("40us", NSEC_PER_MSEC, &ns));
	assert_int_equal(ns, 40 * NSEC_PER_USEC);
	assert_true(time_parse_duration("1.5s", NSEC_PER_MSEC, &ns));
	assert_int_equal(ns, 1500 * NSEC_PER_MSEC);
	assert_false(time_parse_duration("5 ms", NSEC_PER_MSEC, &ns));
	assert_false(time_parse_duration("-1ms", NSEC_PER_MSEC, &ns));
	assert_false(time_parse_duration("", NSEC_PER_MSEC, &ns));
	assert_false(time_parse_duration("12parsecs", NSEC_PER_MSEC, &ns));
	assert_false(time_parse_duration("1e30s", NSEC_PER_MSEC, &ns)); /* would not fit */
	assert_false(time_parse_duration("20000000000000", NSEC_PER_SEC, &ns));
}

static void file_line_specs(void **state)
{
	char file[64];
	unsigned line;

	assert_true(parse_file_line("src/a.c:12", file, sizeof(file), &line));
	assert_string_equal(file, "src/a.c");
	assert_int_equal(line, 12);
	assert_true(parse_file_line("C:/x.c:3", file, sizeof(file), &line));
	assert_string_equal(file, "C:/x.c");
	assert_false(parse_file_line("a.c", file, sizeof(file), &line));
	assert_false(parse_file_line("a.c:", file, sizeof(file), &line));
	assert_false(parse_file_line("a.c:0", file, sizeof(file), &line));
	assert_false(parse_file_line("a.c:12x", file, sizeof(file), &line));
	assert_false(parse_file_line(":12", file, sizeof(file), &line));
}

/* The published FNV-1a 64-bit test vectors; chained calls hash the concatenation. */
static void fnv1a_vectors(void **state)
{
	assert_int_equal(fnv1a(FNV1A_INIT, "", 0), 0xcbf29ce484222325ULL);
	assert_int_equal(fnv1a(FNV1A_INIT, "a", 1), 0xaf63dc4c8601ec8cULL);
	assert_int_equal(fnv1a(FNV1A_INIT, "foobar", 6), 0x85944171f73967e8ULL);
	assert_int_equal(fnv1a(fnv1a(FNV1A_INIT, "foo", 3), "bar", 3), 0x85944171f73967e8ULL);
}

/*
 * MurmurHash3's fmix64, values from an independent Python implementation:
 *   M = 2**64 - 1
 *   def f(x):
 *       x ^= x >> 33; x = x * 0xff51afd7ed558ccd & M
 *       x ^= x >> 33; x = x * 0xc4ceb9fe1a85ec53 & M
 *       return x ^ (x >> 33)
 */
static void hash_u64_vectors(void **state)
{
	(void)state;
	assert_int_equal(hash_u64(0), 0);
	assert_int_equal(hash_u64(1), 0xb456bcfc34c2cb2cULL);
	assert_int_equal(hash_u64(2), 0x3abf2a20650683e7ULL);
	assert_int_equal(hash_u64(UINT64_MAX), 0x64b5720b4b825f21ULL);
	assert_int_equal(hash_u64(0x0123456789abcdefULL), 0x87cbfbfe89022ceaULL);
	/* A (file id, line) key as the line tables build them. */
	assert_int_equal(hash_u64((uint64_t)7 << 32 | 42), 0x02a8db5f9044a658ULL);
}

static void string_table_interns(void **state)
{
	struct string_table t = {0}; /* a zeroed table is an empty one */
	char buf[32];
	char **text;
	size_t n;

	(void)state;
	assert_int_equal(string_table_find(&t, "a", 1), UINT32_MAX);
	assert_string_equal(string_table_text(&t, 0), "");
	/* Ids in order of first appearance; the same string, the same id. */
	assert_int_equal(string_table_intern(&t, "main.c", 6), 0);
	assert_int_equal(string_table_intern(&t, "util.c", 6), 1);
	assert_int_equal(string_table_intern(&t, "main.c", 6), 0);
	/* len bytes only, not up to the NUL; prefixes are other strings. */
	assert_int_equal(string_table_intern(&t, "main.cpp", 6), 0);
	assert_int_equal(string_table_intern(&t, "main.cpp", 8), 2);
	assert_int_equal(string_table_intern(&t, "main", 4), 3);
	assert_int_equal(string_table_intern(&t, "", 0), 4);
	assert_int_equal(string_table_find(&t, "main.cp", 7), UINT32_MAX);
	assert_int_equal(string_table_find(&t, "util.c", 6), 1);
	assert_string_equal(string_table_text(&t, 2), "main.cpp");
	assert_string_equal(string_table_text(&t, 4), "");
	assert_string_equal(string_table_text(&t, 5), "");
	/* Growth keeps every id: 10,000 more strings, then all looked up again. */
	for (unsigned i = 0; i < 10000; i++) {
		int len = snprintf(buf, sizeof(buf), "/src/file%u.c", i);

		assert_int_equal(string_table_intern(&t, buf, (size_t)len), 5 + i);
	}
	for (unsigned i = 0; i < 10000; i++) {
		int len = snprintf(buf, sizeof(buf), "/src/file%u.c", i);

		assert_int_equal(string_table_find(&t, buf, (size_t)len), 5 + i);
		assert_string_equal(string_table_text(&t, 5 + i), buf);
	}
	assert_int_equal(string_table_find(&t, "main.c", 6), 0);
	/* Release hands the strings over and leaves an empty, usable table. */
	text = string_table_release(&t, &n);
	assert_int_equal(n, 10005);
	assert_string_equal(text[1], "util.c");
	assert_string_equal(text[10004], "/src/file9999.c");
	for (size_t i = 0; i < n; i++)
		free(text[i]);
	free(text);
	assert_int_equal(string_table_find(&t, "util.c", 6), UINT32_MAX);
	assert_int_equal(string_table_intern(&t, "util.c", 6), 0);
	string_table_free(&t);
	assert_int_equal(string_table_find(&t, "util.c", 6), UINT32_MAX);
}

static void rng_is_uniform_enough(void **state)
{
	struct rng r;
	unsigned counts[21] = {0};

	rng_seed(&r, 42);
	for (int i = 0; i < 210000; i++)
		counts[rng_below(&r, 21)]++;
	for (int i = 0; i < 21; i++) /* expected 10000, sd ~98 */
		assert_in_range(counts[i], 9500, 10500);
	for (int i = 0; i < 1000; i++) {
		double d = rng_double(&r);

		assert_true(d >= 0 && d < 1);
	}
}

/* signal()'s action: BSD semantics by default, System V on request, EINVAL on nonsense. */
static void signal_actions_as_glibc_builds_them(void **state)
{
	struct sigaction act;

	(void)state;
	assert_int_equal(signal_compat_action(SIGUSR1, SIG_IGN, false, false, &act), 0);
	assert_ptr_equal(act.sa_handler, SIG_IGN);
	assert_int_equal(act.sa_flags, SA_RESTART);
	assert_true(sigismember(&act.sa_mask, SIGUSR1));
	assert_int_equal(signal_compat_action(SIGUSR1, SIG_IGN, false, true, &act), 0);
	assert_int_equal(act.sa_flags, 0); /* siginterrupt(sig, 1): no restart */
	assert_int_equal(signal_compat_action(SIGUSR2, SIG_DFL, true, false, &act), 0);
	assert_true(act.sa_flags == (int)(SA_RESETHAND | SA_NODEFER));
	assert_false(sigismember(&act.sa_mask, SIGUSR2));
	errno = 0;
	assert_int_equal(signal_compat_action(0, SIG_DFL, false, false, &act), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(signal_compat_action(NSIG, SIG_DFL, false, false, &act), -1);
	assert_int_equal(signal_compat_action(SIGUSR1, SIG_ERR, false, false, &act), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(formats_like_printf),
	    cmocka_unit_test(truncates_and_terminates),
	    cmocka_unit_test(wildcard_patterns),
	    cmocka_unit_test(durations),
	    cmocka_unit_test(file_line_specs),
	    cmocka_unit_test(rng_is_uniform_enough),
	    cmocka_unit_test(fnv1a_vectors),
	    cmocka_unit_test(hash_u64_vectors),
	    cmocka_unit_test(string_table_interns),
	    cmocka_unit_test(signal_actions_as_glibc_builds_them),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
