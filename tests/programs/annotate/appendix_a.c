/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The seed's Appendix A micro-benchmark (spec/freud.md §6.6; dissertation
 * Appendix A), C half: the fifteen functions written in C, and the driver.
 * The C++ five (A.7-A.10, A.18) are in appendix_a_cxx.cc.
 *
 * Each function is the seed's code with usleep(us) spelled
 * appendix_a_cost(us) (appendix_a.h): --cost=sleep sleeps as the seed did,
 * --cost=mem allocates `us` bytes instead, so that the mem metric follows
 * the same cost model exactly whatever the machine's load. The functions are
 * noipa (no inlining, cloning or changed calling convention, the way the
 * seed's -O2 build kept them callable and probe-able) and built with -g.
 *
 * The driver is the seed repository's ([REPO], spec §6.6): t from 0 to 300
 * in steps of 2 (151 rounds; --max and --step change that), each round
 * calling every function once with the inputs listed there, from rand()
 * seeded by --seed.
 *
 * --only=F,G,... calls only those functions (the others' inputs are still
 * drawn, so the rest of the sequence does not change).
 *
 * usage: appendix_a [--cost=sleep|mem] [--seed=S] [--max=T] [--step=K] [--only=F,...]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "appendix_a.h"

#define TESTED __attribute__((noipa))

static int cost_in_bytes;

void appendix_a_cost(unsigned long us)
{
	if (cost_in_bytes) {
		void *volatile p = malloc(us);

		free(p);
	} else {
		usleep((useconds_t)us);
	}
}

struct basic_structure {
	int useful;
	int useless;
};

enum command { CMD_CONSTANT, CMD_LINEAR, CMD_QUAD };

int global_feature;
int global_variable;

/* A.1: an int by value, in a register at -O2. */
TESTED void test_linear_int(int t)
{
	for (int i = 0; i < t; i++)
		appendix_a_cost(250);
}

/* A.2: the feature's address in a register. */
TESTED void test_linear_int_pointer(int *t)
{
	for (int i = 0; i < *t; i++)
		appendix_a_cost(250);
}

/* A.3: a float, in an XMM register. */
TESTED void test_linear_float(float t)
{
	for (int i = 0; i < (int)t; i++)
		appendix_a_cost(250);
}

/* A.4: a global at an absolute address. */
TESTED void test_global_feature(void)
{
	for (int i = 0; i < global_feature; i++)
		appendix_a_cost(70);
}

/* A.5: a C string's length, by safe reads. */
TESTED void test_linear_charptr(char *str)
{
	for (int i = 0; i < (int)strlen(str); i++)
		appendix_a_cost(100);
}

/* A.6: a struct field through a pointer. */
TESTED void test_linear_structs(struct basic_structure *bs)
{
	for (int i = 0; i < bs->useful; i++)
		appendix_a_cost(150);
}

/* A.11: quadratic. */
TESTED void test_quad_int(int t)
{
	for (int i = 0; i < t; i++)
		appendix_a_cost((unsigned long)t);
}

/* A.12: n log n (called with 50 t: the class needs large values). */
TESTED void test_nlogn_int(int t)
{
	for (int i = 0; i < t; i++)
		appendix_a_cost((unsigned long)log2(t));
}

/* A.13: quadratic plus uncorrelated noise. */
TESTED void test_quad_int_wn(int t, int nlevel)
{
	(void)nlevel;
	for (int i = 0; i < t; i++) {
		unsigned int noise = (unsigned)(rand() % t * 100);

		appendix_a_cost((unsigned long)t + noise);
	}
}

/* A.14: interacting features. */
TESTED void test_interaction_linear_quad(int a, int b)
{
	for (int i = 0; i < a; i++)
		appendix_a_cost((unsigned long)(b * b));
}

/* A.15: a branch on a selects linear in c or quadratic in b. */
TESTED void test_linear_branches(int a, int b, int c)
{
	if (a > 10) {
		for (int i = 0; i < b; i++)
			appendix_a_cost((unsigned long)b);
	} else {
		for (int i = 0; i < c; i++)
			appendix_a_cost(450);
	}
}

/* A.16: the branch feature is the regression feature. */
TESTED void test_linear_branches_one_f(int a, int b, int c)
{
	(void)b;
	(void)c;
	if (a < 10) {
		for (int i = 0; i < 10 - a; i++)
			appendix_a_cost(400);
	} else {
		appendix_a_cost(4000);
		for (int i = 0; i < a - 10; i++)
			appendix_a_cost(400);
	}
}

/* A.17: an enum partitions. */
TESTED void test_multi_enum(enum command c, int a)
{
	switch (c) {
	case CMD_CONSTANT:
		appendix_a_cost(100000);
		break;
	case CMD_LINEAR:
		for (int i = 0; i < a; i++)
			appendix_a_cost(100);
		break;
	case CMD_QUAD:
		for (int i = 0; i < a; i++)
			appendix_a_cost((unsigned long)a);
		break;
	}
}

/* A.19 (the code's name): linear in half of the calls, the main trend. */
TESTED void test_linear_main_component(int a)
{
	int p = rand() % 100;

	if (p < 25) {
		appendix_a_cost((unsigned long)(rand() % 1500 + 10000));
	} else if (p >= 25 && p < 50) {
		appendix_a_cost((unsigned long)(rand() % 100));
	} else {
		for (int i = 0; i < a; i++)
			appendix_a_cost(1000);
	}
}

/* A.20: three random levels, whatever the input: a mixture. */
TESTED void test_random_clustering(int a)
{
	int rnd = rand() % 100;

	(void)a;
	if (rnd < 30)
		appendix_a_cost(900);
	else if (rnd < 70)
		appendix_a_cost(600);
	else
		appendix_a_cost(300);
}

/* One round of the C functions at t, with the seed driver's inputs. */
static void c_round(int t)
{
	struct basic_structure bs = {.useful = t, .useless = rand()};
	int a, b, c;

	if (appendix_a_wanted("test_linear_int"))
		test_linear_int(t);
	if (appendix_a_wanted("test_linear_int_pointer"))
		test_linear_int_pointer(&t);
	if (appendix_a_wanted("test_linear_float"))
		test_linear_float((float)t);
	global_feature = rand() % 100;
	if (appendix_a_wanted("test_global_feature"))
		test_global_feature();
	if (appendix_a_wanted("test_linear_charptr")) {
		char *str = malloc((size_t)t + 1);

		memset(str, 'x', (size_t)t);
		str[t] = '\0';
		test_linear_charptr(str);
		free(str);
	}
	if (appendix_a_wanted("test_linear_structs"))
		test_linear_structs(&bs);
	if (appendix_a_wanted("test_quad_int"))
		test_quad_int(t);
	if (appendix_a_wanted("test_nlogn_int"))
		test_nlogn_int(50 * t);
	if (appendix_a_wanted("test_quad_int_wn"))
		test_quad_int_wn(t, 0);
	a = rand() % 20;
	b = rand() % 20;
	if (appendix_a_wanted("test_interaction_linear_quad"))
		test_interaction_linear_quad(a, b);
	a = rand() % 21;
	b = rand() % 1000;
	c = rand() % 1000;
	if (appendix_a_wanted("test_linear_branches"))
		test_linear_branches(a, b, c);
	a = rand() % 21;
	b = rand() % 1000;
	c = rand() % 1000;
	if (appendix_a_wanted("test_linear_branches_one_f"))
		test_linear_branches_one_f(a, b, c);
	a = rand() % 1000;
	if (appendix_a_wanted("test_multi_enum"))
		test_multi_enum((enum command)(t % 3), a);
	a = rand() % 10;
	if (appendix_a_wanted("test_linear_main_component"))
		test_linear_main_component(a);
	global_variable = rand() % 100;
	if (appendix_a_wanted("test_random_clustering"))
		test_random_clustering(t);
}

static const char *only; /* --only=NAME,NAME...: the functions to call; NULL: all */

int appendix_a_wanted(const char *name)
{
	size_t len = strlen(name);

	for (const char *p = only; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (strncmp(p, name, len) == 0 && (p[len] == ',' || p[len] == '\0'))
			return 1;
	return !only;
}

static int parse_int(const char *arg, const char *prefix, int *out)
{
	size_t len = strlen(prefix);
	char *end;
	long v;

	if (strncmp(arg, prefix, len) != 0)
		return 0;
	v = strtol(arg + len, &end, 10);
	if (*end || end == arg + len || v < 0 || v > 1000000) {
		fprintf(stderr, "appendix_a: bad value in '%s'\n", arg);
		exit(2);
	}
	*out = (int)v;
	return 1;
}

int main(int argc, char **argv)
{
	int seed = 1, max = 300, step = 2;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--cost=mem") == 0)
			cost_in_bytes = 1;
		else if (strcmp(argv[i], "--cost=sleep") == 0)
			cost_in_bytes = 0;
		else if (strncmp(argv[i], "--only=", 7) == 0)
			only = argv[i] + 7;
		else if (!parse_int(argv[i], "--seed=", &seed) &&
			 !parse_int(argv[i], "--max=", &max) &&
			 !parse_int(argv[i], "--step=", &step)) {
			fprintf(stderr, "usage: appendix_a [--cost=sleep|mem] [--seed=S] "
					"[--max=T] [--step=K] [--only=F,F...]\n");
			return 2;
		}
	}
	if (step == 0)
		step = 1;
	srand((unsigned)seed);
	for (int t = 0; t <= max; t += step) {
		c_round(t);
		appendix_a_cxx_round(t);
	}
	return 0;
}
