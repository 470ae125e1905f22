/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The sample-file and suite-file readers (src/stats/samples.c, suite.c):
 * valid files, every kind of bad input (empty, non-numeric, NaN, infinities,
 * overflow, NUL bytes, over-long lines, a file too large), errors that name
 * the file and line, and a fuzz loop of random and mutated input that must
 * never crash (run under ASan by make test).
 */
#include <errno.h>
#include <math.h>
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
#include "stats/stats.h"

static int read_text(const char *text, struct stats_samples *s, char *err, size_t size)
{
	return stats_samples_read_buffer("t.txt", text, strlen(text), s, err, size);
}

static void test_valid(void **state)
{
	struct stats_samples s;
	char err[256] = "";

	(void)state;
	assert_int_equal(
	    read_text("# times in seconds\n1.5\n  2.25  \n\n3e-1 # trailing\r\n-4\n+5\n", &s, err,
		      sizeof(err)),
	    0);
	assert_int_equal(s.n, 5);
	assert_true(s.values[0] == 1.5 && s.values[1] == 2.25 && s.values[2] == 0.3);
	assert_true(s.values[3] == -4 && s.values[4] == 5);
	assert_string_equal(s.name, "t.txt");
	stats_samples_free(&s);
	/* no final newline */
	assert_int_equal(read_text("7", &s, err, sizeof(err)), 0);
	assert_int_equal(s.n, 1);
	stats_samples_free(&s);
}

static void expect_error(const char *text, size_t len, const char *message)
{
	struct stats_samples s;
	char err[256] = "";

	assert_int_equal(stats_samples_read_buffer("t.txt", text, len, &s, err, sizeof(err)),
			 -EINVAL);
	if (!strstr(err, message))
		fail_msg("error '%s' lacks '%s'", err, message);
	stats_samples_free(&s);
}

#define EXPECT(text, message) expect_error(text, sizeof(text) - 1, message)

static void test_errors(void **state)
{
	char *longline;

	(void)state;
	EXPECT("", "t.txt: no samples");
	EXPECT("\n\n   \n# only a comment\n", "t.txt: no samples");
	EXPECT("1\n2\nabc\n", "t.txt:3: 'abc' is not a number");
	EXPECT("1\n12ms\n", "t.txt:2: '12ms' is not a number");
	EXPECT("1 2\n", "t.txt:1: '1 2' is not a number");
	EXPECT("1,5\n", "t.txt:1: '1,5' is not a number");
	EXPECT("nan\n", "t.txt:1: 'nan' is NaN");
	EXPECT("1\n-NaN\n", "t.txt:2: '-NaN' is NaN");
	EXPECT("inf\n", "t.txt:1: 'inf' is out of range");
	EXPECT("-Infinity\n", "is out of range");
	EXPECT("1e999\n", "t.txt:1: '1e999' is out of range");
	EXPECT("0x10\n", "is not a decimal number");
	EXPECT("1\n\x01\x02\xff\n", "t.txt:2: '\\x01\\x02\\xff' is not a number");
	EXPECT("1\n2\0003\n", "t.txt:2: '2\\x003' contains a NUL byte");
	longline = malloc(STATS_SAMPLES_MAX_LINE + 10);
	memset(longline, '1', STATS_SAMPLES_MAX_LINE + 9);
	longline[STATS_SAMPLES_MAX_LINE + 9] = '\0';
	expect_error(longline, strlen(longline), "t.txt:1: line longer than");
	free(longline);
}

static void test_file(void **state)
{
	char path[] = "/tmp/lever-samples-XXXXXX", err[256] = "";
	struct stats_samples s;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "1\n2\n3\n", 6), 6);
	close(fd);
	assert_int_equal(stats_samples_read_file(path, &s, err, sizeof(err)), 0);
	assert_int_equal(s.n, 3);
	stats_samples_free(&s);
	unlink(path);
	assert_int_not_equal(stats_samples_read_file(path, &s, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "No such file"));
	assert_non_null(strstr(err, path));
	stats_samples_free(&s);
	assert_int_not_equal(stats_samples_read_file("/", &s, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "/: "));
	stats_samples_free(&s);
}

/*
 * Decimals parsed without strtod (the fast path) must give strtod's double,
 * bit for bit, in every form: fixed and exponent notation, signs, leading
 * and trailing zeros, 1 to 19 digits, and the limits of the fast path.
 */
static void test_decimal_exact(void **state)
{
	static const char *fixed[] = {"0",
				      "-0",
				      "+7",
				      "007.50",
				      ".5",
				      "5.",
				      "1e22",
				      "1e23",
				      "9007199254740993",
				      "1e-22",
				      "123456789012345678e-5",
				      "0.000000000000000000001",
				      "4.9e-324",
				      "1.7976931348623157e308",
				      "2.5E+3",
				      "-3.25e-2"};
	char text[64];
	uint64_t x = 12345;

	(void)state;
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]) + 200000; i++) {
		struct stats_samples s;
		char err[256];
		double want;

		if (i < sizeof(fixed) / sizeof(fixed[0])) {
			snprintf(text, sizeof(text), "%s", fixed[i]);
		} else {
			double v;

			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			v = (double)(x >> 11) / 9007199254740992.0 * pow(10, (int)(x % 13) - 6);
			if (x >> 7 & 1)
				snprintf(text, sizeof(text), "%.*f", (int)(x >> 8) % 12, v);
			else
				snprintf(text, sizeof(text), "%s%.*e", x >> 9 & 1 ? "-" : "",
					 (int)(x >> 10) % 18, v);
		}
		want = strtod(text, NULL);
		assert_int_equal(
		    stats_samples_read_buffer("t", text, strlen(text), &s, err, sizeof(err)), 0);
		if (memcmp(&s.values[0], &want, sizeof(want)))
			fail_msg("'%s': got %.17g, strtod %.17g", text, s.values[0], want);
		stats_samples_free(&s);
	}
}

/* A file read in chunks: lines across chunk boundaries, and the line number of a late error. */
static void test_file_chunks(void **state)
{
	char path[] = "/tmp/lever-samples-XXXXXX", err[256] = "";
	struct stats_samples s;
	int fd = mkstemp(path);
	FILE *f;
	size_t n = 300000; /* about 3 MiB: several chunks */
	double sum = 0;

	(void)state;
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%zu.%03zu # comment %zu\n", i, i % 1000, i);
	fclose(f);
	assert_int_equal(stats_samples_read_file(path, &s, err, sizeof(err)), 0);
	assert_int_equal(s.n, n);
	for (size_t i = 0; i < n; i++)
		sum += s.values[i] - (double)i - (double)(i % 1000) / 1000.0;
	assert_true(fabs(sum) < 1e-6);
	stats_samples_free(&s);
	f = fopen(path, "a");
	assert_non_null(f);
	fprintf(f, "oops\n");
	fclose(f);
	assert_int_not_equal(stats_samples_read_file(path, &s, err, sizeof(err)), 0);
	assert_non_null(strstr(err, ":300001: 'oops'"));
	stats_samples_free(&s);
	unlink(path);
}

static void test_many(void **state)
{
	size_t n = 1000000, len = 0;
	char *text = malloc(n * 12 + 1), err[256];
	struct stats_samples s;

	(void)state;
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(text + len, "%zu.5\n", i);
	assert_int_equal(stats_samples_read_buffer("big", text, len, &s, err, sizeof(err)), 0);
	assert_int_equal(s.n, n);
	assert_true(s.values[n - 1] == (double)(n - 1) + 0.5);
	stats_samples_free(&s);
	free(text);
}

/* ------------------------------------------------------------ suites */

static void test_suite(void **state)
{
	static const char text[] = "\"\",\"benchmark\",\"time\",\"tune\"\n"
				   "\"1\",\"astar\",1.0,\"O1\"\n"
				   "\"2\",\"astar\",3.0,\"O1\"\n"
				   "# comment\n"
				   "\"3\",\"astar\",2.0,\"O2\"\n"
				   "\"4\",\"mcf\",5.0,\"O2\"\n"
				   "\"5\",\"mcf\",4.0,\"O1\"\n";
	struct stats_suite s;
	char err[256] = "";
	double *cell;
	size_t n;

	(void)state;
	assert_int_equal(stats_suite_read_buffer("s.csv", text, strlen(text), &s, err, sizeof(err)),
			 0);
	assert_int_equal(s.n, 5);
	assert_int_equal(s.n_benchmarks, 2);
	assert_int_equal(s.n_configs, 2);
	assert_string_equal(s.configs[0], "O1");
	assert_int_equal(stats_suite_find_config(&s, "O2"), 1);
	assert_int_equal(stats_suite_find_config(&s, "O3"), -1);
	cell = stats_suite_cell(&s, 0, 0, &n);
	assert_int_equal(n, 2);
	assert_true(cell[0] == 1.0 && cell[1] == 3.0);
	free(cell);
	assert_int_equal(stats_suite_drop_max(&s), 4);
	assert_int_equal(s.n, 1);
	assert_true(s.time[0] == 1.0);
	stats_suite_free(&s);
}

static void expect_suite_error(const char *text, const char *message)
{
	struct stats_suite s;
	char err[256] = "";

	assert_int_not_equal(
	    stats_suite_read_buffer("s.csv", text, strlen(text), &s, err, sizeof(err)), 0);
	if (!strstr(err, message))
		fail_msg("error '%s' lacks '%s'", err, message);
	stats_suite_free(&s);
}

static void test_suite_errors(void **state)
{
	(void)state;
	expect_suite_error("", "s.csv: no runs");
	expect_suite_error("benchmark,time,config\n", "s.csv: no runs");
	expect_suite_error("a,b,c,d\n", "s.csv:1: header must name");
	expect_suite_error("benchmark,time,config\nx,1\n", "s.csv:2: expected 3 fields");
	expect_suite_error("benchmark,time,config\nx,abc,A\n", "s.csv:2: time 'abc' is not");
	expect_suite_error("benchmark,time,config\nx,nan,A\n", "s.csv:2: time 'nan' is not");
	expect_suite_error("benchmark,time,config\n\"x,1,A\n", "s.csv:2: malformed CSV");
	expect_suite_error("benchmark,time,config\n,1,A\n", "s.csv:2: empty benchmark");
}

/* ------------------------------------------------------------ fuzz */

static void fuzz_one(const char *buf, size_t len)
{
	struct stats_samples s;
	struct stats_suite su;
	char err[256];
	int rc;

	err[0] = '\0';
	rc = stats_samples_read_buffer("fuzz", buf, len, &s, err, sizeof(err));
	if (rc == 0) {
		assert_true(s.n > 0);
		for (size_t i = 0; i < s.n; i++)
			assert_true(isfinite(s.values[i]));
	} else {
		assert_true(strncmp(err, "fuzz", 4) == 0);
	}
	stats_samples_free(&s);
	err[0] = '\0';
	rc = stats_suite_read_buffer("fuzz", buf, len, &su, err, sizeof(err));
	if (rc)
		assert_true(strncmp(err, "fuzz", 4) == 0);
	stats_suite_free(&su);
}

static void test_fuzz(void **state)
{
	static const char seed_text[] =
	    "benchmark,time,config\n# c\na,1.5,X\nb,2e3,Y\n\"c\",-3,\"Z\"\n"
	    "12.5\n  7 \n1e-3\n";
	static const char alphabet[] = "0123456789.eE+-# \t\r\n,\"xnaif\x00\xff";
	char buf[512];
	struct rng r;

	(void)state;
	rng_seed(&r, 0x5eed);
	for (int round = 0; round < 20000; round++) {
		size_t len = rng_below(&r, sizeof(buf));

		if (round % 3 == 0) { /* random bytes */
			for (size_t i = 0; i < len; i++)
				buf[i] = (char)rng_below(&r, 256);
		} else if (round % 3 == 1) { /* random tokens of the format's alphabet */
			for (size_t i = 0; i < len; i++)
				buf[i] = alphabet[rng_below(&r, sizeof(alphabet) - 1)];
		} else { /* mutations of a valid file */
			len = sizeof(seed_text) - 1;
			memcpy(buf, seed_text, len);
			for (int m = 0; m < 4; m++)
				buf[rng_below(&r, len)] = (char)rng_below(&r, 256);
			len = rng_below(&r, len + 1);
		}
		fuzz_one(buf, len);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_valid),	  cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_file),	  cmocka_unit_test(test_many),
	    cmocka_unit_test(test_decimal_exact), cmocka_unit_test(test_file_chunks),
	    cmocka_unit_test(test_suite),	  cmocka_unit_test(test_suite_errors),
	    cmocka_unit_test(test_fuzz),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
