// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * C functions whose input features the planner must find (issue 15, spec
 * §4.2.3): scalars in general and XMM registers, arguments on the stack,
 * small structs packed in registers (INTEGER, SSE, mixed), a struct passed
 * in memory, a hidden struct-return pointer, pointers, C strings, a struct
 * with nested pointers, arrays, a begin/end pair, enums, bools and globals.
 * run_targets() calls each through the harness with known values (and with
 * NULL or unmapped pointers); tests/unit/test_annotate_features_plan.c
 * checks every value the harness prints.
 */
#include <complex.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "features_harness.h"

volatile long sink;

enum kind { KIND_NEG = -2, KIND_A = 1, KIND_B = 7 };

struct inner {
	int len;
	double weight;
};

struct job {
	int id;
	enum kind kind;
	struct inner *items;
	const char *name;
	unsigned char flags;
	bool urgent;
	short arr[4];
	float ratio;
	struct job *next;
	long *begin, *end;
};

struct small {
	int a;
	float b;
};

struct pair_d {
	double x, y;
};

struct mixed {
	long n;
	double d;
};

struct big {
	long v[3];
	int tail;
};

int global_counter = 17;
double global_scale = 2.5;
static long file_static = -9;
const int global_const = 5;

TARGET void f_int(int t)
{
	sink = t;
}

TARGET void f_int_ptr(int *t)
{
	sink = (long)t; /* called with bad pointers too: no dereference */
}

TARGET void f_float(float t)
{
	sink = (long)t;
}

TARGET void f_many(int a, double b, long c, float d, unsigned char e, short f, char g, long h,
		   long i, double j)
{
	sink = a + (long)b + c + (long)d + e + f + g + h + i + (long)j;
}

TARGET void f_charptr(const char *str)
{
	sink = (long)str; /* called with bad pointers too */
}

TARGET void f_struct(struct job *j)
{
	sink = (long)j; /* called with bad pointers too */
}

TARGET void f_small(struct small s)
{
	sink = s.a + (long)s.b;
}

TARGET void f_pair(struct pair_d p)
{
	sink = (long)(p.x + p.y);
}

TARGET void f_mixed(struct mixed m)
{
	sink = m.n + (long)m.d;
}

TARGET void f_big(struct big b, int after)
{
	sink = b.v[0] + b.tail + after;
}

TARGET void f_enum(enum kind k, bool flag)
{
	sink = k + flag;
}

TARGET struct big f_sret(int x)
{
	struct big b = {{x, x, x}, x};

	return b;
}

__attribute__((cold, noinline)) void rarely(long v)
{
	sink = v;
	abort();
}

/* At -O2 gcc moves the unlikely branch to f_split.cold: no low_pc, two ranges. */
TARGET void f_split(int t)
{
	if (__builtin_expect(t < 0, 0))
		rarely(t);
	sink = t;
}

/* complex numbers are SSE class: z in xmm0 and xmm1, w in xmm2, a in rdi */
TARGET void f_complex(_Complex double z, _Complex float w, int a, double b)
{
	sink = (long)__real__ z + (long)__real__ w + a + (long)b;
}

TARGET void f_global(void)
{
	sink = global_counter + file_static + (long)global_scale + global_const;
}

void run_targets(void)
{
	int v = -3;
	static struct inner items = {3, 0.75};
	static long span[5];
	static struct job job = {7,    KIND_B, &items, "abcd",	200, true, {1, 2, 3, 4},
				 0.5f, NULL,   span,   span + 5};
	static struct job no_items;
	struct small s = {5, 1.5f};
	struct pair_d p = {1.25, -2.5};
	struct mixed m = {-11, 3.25};
	struct big b = {{1, 2, 3}, 4};
	char *freed = malloc(1 << 20); /* large: free() gives it back to the kernel */
	struct job *unmapped =
	    mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	file_static = sink ? -8 : -9; /* not a constant the compiler could fold */
	CALL("int", f_int, 42);
	CALL("int_ptr", f_int_ptr, &v);
	CALL("int_ptr_null", f_int_ptr, NULL);
	CALL("float", f_float, 2.5f);
	CALL("many", f_many, 1, 2.5, 3, 4.5f, 200, -6, 'x', 8, 9, 10.5);
	CALL("charptr", f_charptr, "hello");
	CALL("charptr_null", f_charptr, NULL);
	char *volatile dangling = freed; /* kept past free() on purpose */

	strcpy(freed, "a string in freed memory");
	free(freed);
	CALL("charptr_freed", f_charptr, dangling);
	CALL("struct", f_struct, &job);
	no_items = job;
	no_items.items = NULL;
	CALL("struct_no_items", f_struct, &no_items);
	*unmapped = job;
	munmap(unmapped, 4096);
	CALL("struct_unmapped", f_struct, unmapped);
	CALL("small", f_small, s);
	CALL("pair", f_pair, p);
	CALL("mixed", f_mixed, m);
	CALL("big", f_big, b, 99);
	CALL("enum", f_enum, KIND_NEG, true);
	{
		struct big r;

		ann_test_target = (void *)&f_sret;
		ann_test_function = "f_sret";
		ann_test_label = "sret";
		r = ((struct big(*)(int))ann_test_thunk_address)(13);
		sink = r.tail;
	}
	CALL("global", f_global);
	CALL("split", f_split, 5);
	CALL("complex", f_complex, 1.0 + 2.0 * _Complex_I, 3.0f, 44, 5.5);
}

int main(int argc, char **argv)
{
	return ann_test_main(argc, argv);
}
