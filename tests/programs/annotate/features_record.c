// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * A program for the end-to-end feature test of `lever annotate record`
 * (tests/e2e/annotate_features_record.sh): ordinary functions, compiled as a
 * user would (-O2 -g), called N times with values that depend on the call
 * number i, so that the test can check every recorded feature of every call:
 * process(j) with j->id = i, j->kind = i % 3, j->items->len = 2 * i (NULL
 * items on every fifth call: missing), strlen(j->name) = i % 7;
 * scale(x, n) with x = i / 4.0 and n = -i; named(s) with strlen(s) = i % 5
 * and s = NULL on every third call; clone_me(j, 7, 2i + 1) with k = 2i + 1 (a clone
 * with another calling convention under gcc -O2).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum kind { KIND_A, KIND_B, KIND_C };

struct items {
	int len;
};

struct job {
	int id;
	enum kind kind;
	struct items *items;
	const char *name;
};

volatile double sink;
int calls_seen = 0;

__attribute__((noinline)) void process(struct job *j)
{
	/* reads every field: else gcc's IPA (mod-ref) lets main skip storing
	   the ones never read, and the features would be whatever was there */
	sink += j->id + j->kind + (j->items ? j->items->len : 0) + (double)strlen(j->name);
	calls_seen++;
}

__attribute__((noinline)) double scale(double x, long n)
{
	sink += x * (double)n;
	return sink;
}

__attribute__((noinline)) void named(const char *s)
{
	sink += s ? (double)strlen(s) : 0;
}

/*
 * Static, called with a constant and using only j->id: gcc -O2 turns it into
 * the clone clone_me.constprop.0.isra.0(int id, int k), where k is in rsi, not
 * rdx as the source's signature says.
 */
static __attribute__((noinline)) int clone_me(struct job *j, int unused, int k)
{
	sink += j->id + k;
	return (int)sink;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20;
	static const char letters[] = "abcdefg";

	for (int i = 0; i < n; i++) {
		struct items it = {2 * i};
		char name[8];
		struct job j = {i, (enum kind)(i % 3), i % 5 == 4 ? NULL : &it, name};

		memcpy(name, letters, (size_t)(i % 7));
		name[i % 7] = 0;
		process(&j);
		scale(i / 4.0, -i);
		named(i % 3 == 2 ? NULL : letters + 7 - i % 5);
		clone_me(&j, 7, 2 * i + 1);
	}
	printf("%d calls\n", calls_seen);
	return 0;
}
