/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The NIST SP 800-22 rev1a tests of src/stats/nist.c against the worked
 * examples of the NIST document: the short sequences of the step-by-step
 * descriptions (§2.1.4, 2.2.4, 2.3.4, 2.13.4) and the 100-bit examples of
 * §2.1.8, 2.2.8, 2.3.8 and 2.13.8 (the first 100 bits of the binary
 * expansion of pi, which the test also derives, to check the transcription).
 * Sequences that are not random must fail.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "stats/stats.h"

#define MAX_BITS 4096

/* The examples' epsilon of §2.x.8: 100 bits. */
static const char nist_epsilon_100[] = "11001001000011111101101010100010001000010110100011"
				       "00001000110100110001001100011001100010100010111000";

static size_t to_bits(const char *text, uint8_t *bits)
{
	size_t n = strlen(text);

	assert_true(n <= MAX_BITS);
	for (size_t i = 0; i < n; i++)
		bits[i] = text[i] == '1';
	return n;
}

static void near(double got, double want, double tol, const char *what)
{
	if (!(fabs(got - want) <= tol))
		fail_msg("%s: got %.9f, want %.9f", what, got, want);
}

/* The 100 bits are pi = 11.00100100001111110110... in binary: check them by long division. */
static void test_epsilon_is_pi(void **state)
{
	/* pi * 2^62 in fixed point would need more precision than a double; use a spigot. */
	static const char hex_pi[] = "3243F6A8885A308D313198A2E0370734";
	char bits[129];
	size_t k = 0;

	(void)state;
	for (size_t i = 0; hex_pi[i]; i++) {
		unsigned v = (unsigned)(hex_pi[i] <= '9' ? hex_pi[i] - '0' : hex_pi[i] - 'A' + 10);

		for (int b = 3; b >= 0; b--)
			bits[k++] = (char)('0' + ((v >> b) & 1));
	}
	bits[k] = '\0';
	/* "0011" of the leading hex 3 is the integer part 3 = binary 11 */
	assert_memory_equal(bits + 2, nist_epsilon_100, 100);
}

static void test_frequency(void **state)
{
	uint8_t bits[MAX_BITS];
	struct stats_test t;
	size_t n;

	(void)state;
	n = to_bits("1011010101", bits); /* §2.1.4 */
	assert_int_equal(stats_nist_frequency(bits, n, &t), 0);
	near(t.statistic, 0.632455532, 1e-8, "s_obs");
	near(t.p, 0.527089, 1e-6, "§2.1.4 p");
	n = to_bits(nist_epsilon_100, bits); /* §2.1.8 */
	assert_int_equal(stats_nist_frequency(bits, n, &t), 0);
	near(t.p, 0.109599, 1e-6, "§2.1.8 p");
}

static void test_block_frequency(void **state)
{
	uint8_t bits[MAX_BITS];
	struct stats_test t;
	size_t n;

	(void)state;
	n = to_bits("0110011010", bits); /* §2.2.4, M = 3 */
	assert_int_equal(stats_nist_block_frequency(bits, n, 3, &t), 0);
	near(t.statistic, 1.0, 1e-12, "chi2");
	near(t.p, 0.801252, 1e-6, "§2.2.4 p");
	n = to_bits(nist_epsilon_100, bits); /* §2.2.8, M = 10 */
	assert_int_equal(stats_nist_block_frequency(bits, n, 10, &t), 0);
	near(t.statistic, 7.2, 1e-12, "chi2");
	near(t.p, 0.706438, 1e-6, "§2.2.8 p");
	assert_int_equal(stats_nist_block_frequency(bits, n, 1, &t), -EINVAL);
	assert_int_equal(stats_nist_block_frequency(bits, 5, 10, &t), -EINVAL);
}

static void test_runs(void **state)
{
	uint8_t bits[MAX_BITS];
	struct stats_test t;
	size_t n;

	(void)state;
	n = to_bits("1001101011", bits); /* §2.3.4 */
	assert_int_equal(stats_nist_runs(bits, n, &t), 0);
	near(t.statistic, 7.0, 0.0, "V_n(obs)");
	near(t.p, 0.147232, 1e-6, "§2.3.4 p");
	n = to_bits(nist_epsilon_100, bits); /* §2.3.8 */
	assert_int_equal(stats_nist_runs(bits, n, &t), 0);
	near(t.statistic, 52.0, 0.0, "V_n(obs)");
	near(t.p, 0.500798, 1e-6, "§2.3.8 p");
	/* the frequency prerequisite: 90% ones is not tested, p = 0 */
	n = to_bits("1111111110111111111011111111101111111110", bits);
	assert_int_equal(stats_nist_runs(bits, n, &t), -EDOM);
	assert_true(t.p == 0.0);
}

static void test_cusum(void **state)
{
	uint8_t bits[MAX_BITS];
	struct stats_test t;
	size_t n;

	(void)state;
	n = to_bits("1011010111", bits); /* §2.13.4, forward */
	assert_int_equal(stats_nist_cusum(bits, n, false, &t), 0);
	near(t.statistic, 4.0, 0.0, "z");
	near(t.p, 0.4116588, 1e-6, "§2.13.4 p");
	n = to_bits(nist_epsilon_100, bits); /* §2.13.8 */
	assert_int_equal(stats_nist_cusum(bits, n, false, &t), 0);
	near(t.statistic, 16.0, 0.0, "z forward");
	near(t.p, 0.219194, 1e-6, "§2.13.8 p forward");
	assert_int_equal(stats_nist_cusum(bits, n, true, &t), 0);
	near(t.statistic, 19.0, 0.0, "z backward");
	near(t.p, 0.114866, 1e-6, "§2.13.8 p backward");
}

/* A counter's bits (what a sequential allocator's addresses look like) fail every test. */
static void test_counter_fails(void **state)
{
	static uint8_t bits[12 * 4096];
	struct stats_test t;
	size_t n = 0;

	(void)state;
	for (unsigned v = 0; v < 4096; v++)
		for (int b = 0; b < 12; b++)
			bits[n++] = (v >> b) & 1;
	/* balanced overall, so frequency passes: the structure shows in block frequency and cusum
	 */
	assert_int_equal(stats_nist_frequency(bits, n, &t), 0);
	assert_true(t.p > 0.5);
	assert_int_equal(stats_nist_block_frequency(bits, n, 1000, &t), 0);
	assert_true(t.p < 0.01);
	assert_int_equal(stats_nist_cusum(bits, n, false, &t), 0);
	assert_true(t.p < 0.01);
	assert_int_equal(stats_nist_cusum(bits, n, true, &t), 0);
	assert_true(t.p < 0.01);
	/* balanced, but runs too long (0000 1111 ...) or too short (0101 ...) */
	for (size_t i = 0; i < 4096; i++)
		bits[i] = (i >> 2) & 1;
	assert_int_equal(stats_nist_runs(bits, 4096, &t), 0);
	assert_true(t.p < 0.01);
	for (size_t i = 0; i < 4096; i++)
		bits[i] = i & 1;
	assert_int_equal(stats_nist_runs(bits, 4096, &t), 0);
	assert_true(t.p < 0.01);
	/* all zeros fail the frequency test itself */
	memset(bits, 0, 1000);
	assert_int_equal(stats_nist_frequency(bits, 1000, &t), 0);
	assert_true(t.p < 1e-10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_epsilon_is_pi),   cmocka_unit_test(test_frequency),
	    cmocka_unit_test(test_block_frequency), cmocka_unit_test(test_runs),
	    cmocka_unit_test(test_cusum),	    cmocka_unit_test(test_counter_fails),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
