/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The feature interpreter (src/annotate/runtime/features_eval.c) and its
 * safe reads (safe_read.c), on hand-written programs: every opcode against
 * values known in the test, bad pointers (NULL, garbage, PROT_NONE, a page
 * unmapped before and after the snapshot of the mappings, a string running
 * into an unmapped page), malformed programs, and a fuzz loop of random
 * programs over registers full of pointers and garbage that must end in 0 or
 * -1 and never a crash. RUNTIME label: runs under ASan+UBSan.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "annotate/runtime/features.h"
#include "annotate/runtime/features_ops.h"
#include "annotate/runtime/safe_read.h"

#define OP(c, s, i, m) ((struct ann_op){.code = (c), .size = (s), .index = (i), .imm = (m)})
#define N(a)	       ((uint32_t)(sizeof(a) / sizeof((a)[0])))

static struct ann_entry_regs regs;

static double eval1(const struct ann_op *ops, uint32_t n, uint64_t base)
{
	double v[1];

	assert_int_equal(ann_features_eval(ops, n, &regs, base, v, 1), 0);
	return v[0];
}

static void registers_and_constants(void **state)
{
	memset(&regs, 0, sizeof(regs));
	regs.gpr[5] = 42;	    /* rdi */
	regs.gpr[4] = (uint64_t)-7; /* rsi */
	regs.gpr[7] = 0x1000;
	float f = 2.5f;
	double d = -1.25;
	memcpy(&regs.xmm[0][0], &f, 4);
	memcpy(&regs.xmm[1][1], &d, 8);

	struct ann_op rdi[] = {OP(ANN_OP_REG, 0, 5, 0), OP(ANN_OP_EMIT, 0, 0, 0)};
	assert_true(eval1(rdi, N(rdi), 0) == 42);
	/* an int in esi: the low 32 bits, sign-extended */
	struct ann_op esi[] = {OP(ANN_OP_REG, 0, 4, 0), OP(ANN_OP_EXTRACT, 32, ANN_F_SIGNED, 0),
			       OP(ANN_OP_EMIT, 0, 0, 0)};
	assert_true(eval1(esi, N(esi), 0) == -7);
	struct ann_op x0[] = {OP(ANN_OP_XMM, 4, 0, 0), OP(ANN_OP_EMIT, 0, 0, 0)};
	assert_true(eval1(x0, N(x0), 0) == 2.5);
	struct ann_op x1[] = {OP(ANN_OP_XMM, 8, 1, 8), OP(ANN_OP_EMIT, 0, 0, 0)};
	assert_true(eval1(x1, N(x1), 0) == -1.25);
	struct ann_op cfa[] = {OP(ANN_OP_CFA, 0, 0, 16), OP(ANN_OP_EMIT, 0, 0, 0)};
	assert_true(eval1(cfa, N(cfa), 0) == 0x1000 + 8 + 16);
	struct ann_op k[] = {OP(ANN_OP_CONST, 0, 0, -3), OP(ANN_OP_ADD, 0, 0, 10),
			     OP(ANN_OP_EMIT, 0, 0, 0)};
	assert_true(eval1(k, N(k), 0) == 7);
	struct ann_op a[] = {OP(ANN_OP_ADDR, 0, 0, 0x40), OP(ANN_OP_EMIT, 0, 0, 0)};
	assert_true(eval1(a, N(a), 0x10000) == 0x10040);
	struct ann_op sub[] = {OP(ANN_OP_CONST, 0, 0, 100), OP(ANN_OP_CONST, 0, 0, 36),
			       OP(ANN_OP_SUB, 0, 0, 0), OP(ANN_OP_DIV, 0, 0, 4),
			       OP(ANN_OP_EMIT, 0, 0, 0)};
	assert_true(eval1(sub, N(sub), 0) == 16);
	struct ann_op nz[] = {OP(ANN_OP_CONST, 0, 0, 5), OP(ANN_OP_NONZERO, 0, 0, 0),
			      OP(ANN_OP_EMIT, 0, 0, 0)};
	assert_true(eval1(nz, N(nz), 0) == 1);
	/* a float packed in the high half of a register (struct {int; float;}) */
	float g = 3.75f;
	uint32_t gb;
	memcpy(&gb, &g, 4);
	regs.gpr[1] = (uint64_t)gb << 32 | 9;
	struct ann_op hi[] = {OP(ANN_OP_REG, 0, 1, 0), OP(ANN_OP_EXTRACT, 32, ANN_F_FLOAT, 32),
			      OP(ANN_OP_EMIT, 0, 0, 0)};
	assert_true(eval1(hi, N(hi), 0) == 3.75);
	/* a bit field: 3 bits at bit 4 */
	struct ann_op bf[] = {OP(ANN_OP_CONST, 0, 0, 0x50), OP(ANN_OP_EXTRACT, 3, 0, 4),
			      OP(ANN_OP_EMIT, 0, 0, 0)};
	assert_true(eval1(bf, N(bf), 0) == 5);
	struct ann_op bfs[] = {OP(ANN_OP_CONST, 0, 0, 0x70), OP(ANN_OP_EXTRACT, 3, ANN_F_SIGNED, 4),
			       OP(ANN_OP_EMIT, 0, 0, 0)};
	assert_true(eval1(bfs, N(bfs), 0) == -1);
}

static void loads_of_every_size(void **state)
{
	static struct {
		int8_t c;
		uint16_t s;
		int32_t i;
		int64_t l;
		float f;
		double d;
		uint8_t u;
	} v = {-5, 65000, -100000, -(1ll << 40), 0.5f, 1e10, 200};
	struct {
		uint16_t off, size;
		uint32_t flags;
		double want;
	} cases[] = {
	    {offsetof(typeof(v), c), 1, ANN_F_SIGNED, -5},
	    {offsetof(typeof(v), c), 1, 0, 251},
	    {offsetof(typeof(v), s), 2, 0, 65000},
	    {offsetof(typeof(v), i), 4, ANN_F_SIGNED, -100000},
	    {offsetof(typeof(v), l), 8, ANN_F_SIGNED, -(double)(1ll << 40)},
	    {offsetof(typeof(v), f), 4, ANN_F_FLOAT, 0.5},
	    {offsetof(typeof(v), d), 8, ANN_F_FLOAT, 1e10},
	    {offsetof(typeof(v), u), 1, 0, 200},
	};

	memset(&regs, 0, sizeof(regs));
	regs.gpr[5] = (uint64_t)(uintptr_t)&v;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ann_op p[] = {OP(ANN_OP_REG, 0, 5, 0), OP(ANN_OP_ADD, 0, 0, cases[i].off),
				     OP(ANN_OP_LOAD, cases[i].size, cases[i].flags, 0),
				     OP(ANN_OP_EMIT, 0, 0, 0)};
		assert_true(eval1(p, N(p), 0) == cases[i].want);
	}
}

/* LOAD's imm is an offset added to the address (a member access in one op). */
static void loads_with_an_offset(void **state)
{
	static int64_t pair[2] = {-4, 99};

	memset(&regs, 0, sizeof(regs));
	regs.gpr[5] = (uint64_t)(uintptr_t)pair;
	struct ann_op p[] = {OP(ANN_OP_REG, 0, 5, 0), OP(ANN_OP_LOAD, 8, ANN_F_SIGNED, 8),
			     OP(ANN_OP_EMIT, 0, 0, 0)};
	assert_true(eval1(p, N(p), 0) == 99);
	p[1].imm = 0;
	assert_true(eval1(p, N(p), 0) == -4);
	/* an offset into unmapped memory is refused like any bad pointer */
	p[1].imm = 1ll << 46;
	assert_true(isnan(eval1(p, N(p), 0)));
}

static void strings_arrays_and_pointer_differences(void **state)
{
	static const char text[] = "hello, world";
	static int32_t arr[5] = {1, -2, 3, 40, 5};
	static double darr[3] = {0.5, 0.25, 2};
	static struct {
		int32_t *start, *finish;
	} vec = {arr, arr + 5};

	memset(&regs, 0, sizeof(regs));
	regs.gpr[5] = (uint64_t)(uintptr_t)text;
	struct ann_op s[] = {OP(ANN_OP_REG, 0, 5, 0), OP(ANN_OP_STRLEN, 0, 0, 4096),
			     OP(ANN_OP_EMIT, 0, 0, 0)};
	assert_true(eval1(s, N(s), 0) == 12);
	/* no NUL within the bound: missing, not a wrong length */
	struct ann_op sb[] = {OP(ANN_OP_REG, 0, 5, 0), OP(ANN_OP_STRLEN, 0, 0, 5),
			      OP(ANN_OP_EMIT, 0, 0, 0)};
	assert_true(isnan(eval1(sb, N(sb), 0)));
	regs.gpr[4] = (uint64_t)(uintptr_t)arr;
	struct ann_op sum[] = {OP(ANN_OP_REG, 0, 4, 0), OP(ANN_OP_CONST, 0, 0, 5),
			       OP(ANN_OP_SUM, 4, ANN_F_SIGNED, 0), OP(ANN_OP_EMIT, 0, 0, 0)};
	assert_true(eval1(sum, N(sum), 0) == 47);
	regs.gpr[4] = (uint64_t)(uintptr_t)darr;
	struct ann_op dsum[] = {OP(ANN_OP_REG, 0, 4, 0), OP(ANN_OP_CONST, 0, 0, 3),
				OP(ANN_OP_SUM, 8, ANN_F_FLOAT, 0), OP(ANN_OP_EMIT, 0, 0, 0)};
	assert_true(eval1(dsum, N(dsum), 0) == 2.75);
	struct ann_op huge[] = {OP(ANN_OP_REG, 0, 4, 0), OP(ANN_OP_CONST, 0, 0, ANN_SUM_MAX + 1),
				OP(ANN_OP_SUM, 8, ANN_F_FLOAT, 0), OP(ANN_OP_EMIT, 0, 0, 0)};
	assert_true(isnan(eval1(huge, N(huge), 0)));
	/* std::vector-like size: (finish - start) / sizeof(T) */
	regs.gpr[5] = (uint64_t)(uintptr_t)&vec;
	struct ann_op size[] = {OP(ANN_OP_REG, 0, 5, 0), OP(ANN_OP_DUP, 0, 0, 0),
				OP(ANN_OP_ADD, 0, 0, 8), OP(ANN_OP_LOAD, 8, 0, 0),
				OP(ANN_OP_SUB, 0, 0, 0), OP(ANN_OP_EMIT, 0, 0, 0)};
	/* the DUP'ed base minus finish: wrong on purpose first, to check order */
	assert_true(eval1(size, N(size), 0) ==
		    (double)((int64_t)(uintptr_t)&vec - (int64_t)(uintptr_t)(arr + 5)));
	struct ann_op vsize[] = {
	    OP(ANN_OP_REG, 0, 5, 0),  OP(ANN_OP_DUP, 0, 0, 0),	OP(ANN_OP_ADD, 0, 0, 8),
	    OP(ANN_OP_LOAD, 8, 0, 0), OP(ANN_OP_SUB, 0, 0, 0),	OP(ANN_OP_DROP, 0, 0, 0),
	    OP(ANN_OP_REG, 0, 5, 0),  OP(ANN_OP_ADD, 0, 0, 8),	OP(ANN_OP_LOAD, 8, 0, 0),
	    OP(ANN_OP_REG, 0, 5, 0),  OP(ANN_OP_LOAD, 8, 0, 0), OP(ANN_OP_SUB, 0, 0, 0),
	    OP(ANN_OP_DIV, 0, 0, 4),  OP(ANN_OP_EMIT, 0, 0, 0)};
	assert_true(eval1(vsize, N(vsize), 0) == 5);
}

/* A hand-built Itanium-ABI object: vtable = {offset-to-top, &typeinfo, ...}. */
struct fake_typeinfo {
	const void *vtable;
	const char *name;
};

static void dynamic_types_and_offset_to_top(void **state)
{
	static struct fake_typeinfo ti = {NULL, "N8whatever7derivedE"};
	static struct fake_typeinfo local_ti = {NULL, "*5local"};
	static const void *vtable[4] = {(void *)(intptr_t)-16, &ti, NULL, NULL};
	static const void *local_vtable[3] = {0, &local_ti, NULL};
	static struct {
		const void *vptr_primary;
		int64_t field;
		const void *vptr_second; /* a second base at offset 16 */
	} obj = {&vtable[2], 77, &vtable[2]};
	static const void *local_obj = &local_vtable[2];

	memset(&regs, 0, sizeof(regs));
	regs.gpr[5] = (uint64_t)(uintptr_t)&obj;
	struct ann_op t[] = {OP(ANN_OP_REG, 0, 5, 0), OP(ANN_OP_DYNTYPE, 0, 0, 0),
			     OP(ANN_OP_EMIT, 0, 0, 0)};
	assert_true(eval1(t, N(t), 0) == (double)ann_type_hash("N8whatever7derivedE"));
	/* the leading '*' of types local to a unit is not part of the name */
	regs.gpr[5] = (uint64_t)(uintptr_t)&local_obj;
	assert_true(eval1(t, N(t), 0) == (double)ann_type_hash("5local"));
	assert_true(ann_type_hash("*5local") == ann_type_hash("5local"));
	/* from the second base, offset-to-top (-16) leads back to the object */
	regs.gpr[5] = (uint64_t)(uintptr_t)&obj.vptr_second;
	struct ann_op top[] = {OP(ANN_OP_REG, 0, 5, 0), OP(ANN_OP_TOPOBJ, 0, 0, 0),
			       OP(ANN_OP_ADD, 0, 0, 8), OP(ANN_OP_LOAD, 8, ANN_F_SIGNED, 0),
			       OP(ANN_OP_EMIT, 0, 0, 0)};
	assert_true(eval1(top, N(top), 0) == 77);
	/* a type switch: the field is read only when the type matches */
	int64_t h = (int64_t)ann_type_hash("N8whatever7derivedE");
	struct ann_op sw[] = {OP(ANN_OP_REG, 0, 5, 0),	   OP(ANN_OP_DYNTYPE, 0, 0, 0),
			      OP(ANN_OP_SKIP_NE, 0, 5, h), OP(ANN_OP_REG, 0, 5, 0),
			      OP(ANN_OP_TOPOBJ, 0, 0, 0),  OP(ANN_OP_ADD, 0, 0, 8),
			      OP(ANN_OP_LOAD, 8, 0, 0),	   OP(ANN_OP_EMIT, 0, 0, 0)};
	assert_true(eval1(sw, N(sw), 0) == 77);
	sw[2].imm = h + 1;
	assert_true(isnan(eval1(sw, N(sw), 0)));
}

static void bad_pointers_give_missing_values(void **state)
{
	long page = sysconf(_SC_PAGESIZE);
	char *gone = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *none = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *two =
	    mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t bad[] = {0,
			  8,
			  0xdeadbeefdeadbeefull,
			  (uint64_t)-8,
			  (uint64_t)(uintptr_t)gone,
			  (uint64_t)(uintptr_t)none};
	struct ann_safe_read_counts before, after;

	/* cmocka puts its own SIGSEGV handler in place around each test */
	ann_safe_read_install_fixup();
	assert_true(gone != MAP_FAILED && none != MAP_FAILED && two != MAP_FAILED);
	munmap(gone, page);
	memset(&regs, 0, sizeof(regs));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		regs.gpr[5] = bad[i];
		struct ann_op p[] = {OP(ANN_OP_REG, 0, 5, 0),	   OP(ANN_OP_LOAD, 8, 0, 0),
				     OP(ANN_OP_EMIT, 0, 0, 0),	   OP(ANN_OP_REG, 0, 5, 0),
				     OP(ANN_OP_STRLEN, 0, 0, 100), OP(ANN_OP_EMIT, 0, 1, 0),
				     OP(ANN_OP_REG, 0, 5, 0),	   OP(ANN_OP_DYNTYPE, 0, 0, 0),
				     OP(ANN_OP_EMIT, 0, 2, 0),	   OP(ANN_OP_CONST, 0, 0, 1),
				     OP(ANN_OP_EMIT, 0, 3, 0)};
		double v[4];
		assert_int_equal(ann_features_eval(p, N(p), &regs, 0, v, 4), 0);
		assert_true(isnan(v[0]) && isnan(v[1]) && isnan(v[2]));
		assert_true(v[3] == 1); /* the other features are still there */
	}
	/* a string that runs into an unmapped page: missing; one that ends
	   right before it: its length */
	munmap(two + page, page);
	memset(two + page - 10, 'x', 10);
	regs.gpr[5] = (uint64_t)(uintptr_t)(two + page - 10);
	struct ann_op s[] = {OP(ANN_OP_REG, 0, 5, 0), OP(ANN_OP_STRLEN, 0, 0, 4096),
			     OP(ANN_OP_EMIT, 0, 0, 0)};
	assert_true(isnan(eval1(s, N(s), 0)));
	two[page - 1] = 0;
	assert_true(eval1(s, N(s), 0) == 9);
	/* a page unmapped after the snapshot: the table is stale, the copy
	   faults and is recovered */
	char *stale = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(stale != MAP_FAILED);
	stale[0] = 5;
	ann_safe_read_refresh();
	regs.gpr[5] = (uint64_t)(uintptr_t)stale;
	struct ann_op l[] = {OP(ANN_OP_REG, 0, 5, 0), OP(ANN_OP_LOAD, 1, 0, 0),
			     OP(ANN_OP_EMIT, 0, 0, 0)};
	ann_safe_read_counts(&before);
	assert_true(eval1(l, N(l), 0) == 5);
	ann_safe_read_counts(&after);
	assert_true(after.fast == before.fast + 1);
	munmap(stale, page);
	assert_true(isnan(eval1(l, N(l), 0)));
	ann_safe_read_counts(&after);
	assert_true(after.recovered == before.recovered + 1);
	munmap(none, page);
	munmap(two, page);
}

static void new_mappings_become_fast_reads(void **state)
{
	long page = sysconf(_SC_PAGESIZE);
	struct ann_safe_read_counts c0, c1, c2;
	char *fresh;
	char b;

	ann_safe_read_init();
	ann_safe_read_install_fixup();
	ann_safe_read_refresh();
	fresh = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(fresh != MAP_FAILED);
	fresh[3] = 'q';
	usleep(2000); /* past the refresh interval */
	ann_safe_read_counts(&c0);
	assert_int_equal(ann_safe_read(&b, (uintptr_t)(fresh + 3), 1), 0);
	assert_int_equal(b, 'q');
	ann_safe_read_counts(&c1);
	assert_true(c1.verified == c0.verified + 1);
	assert_true(c1.refreshes == c0.refreshes + 1);
	assert_int_equal(ann_safe_read(&b, (uintptr_t)(fresh + 3), 1), 0);
	ann_safe_read_counts(&c2);
	assert_true(c2.fast == c1.fast + 1);
	assert_true(c2.ranges > 0);
	munmap(fresh, page);
}

/* Garbage above the 47-bit user space costs no system call. */
static void garbage_pointers_are_refused_cheaply(void **state)
{
	struct ann_safe_read_counts c0, c1;
	uint64_t v;

	ann_safe_read_init();
	ann_safe_read_refresh();
	ann_safe_read_counts(&c0);
	assert_int_equal(ann_safe_read(&v, (uintptr_t)0xdeadbeefdeadbeefull, 8), -1);
	assert_int_equal(ann_safe_read(&v, (uintptr_t)0x0000800000000000ull, 8), -1);
	assert_int_equal(ann_safe_read(&v, (uintptr_t)0x00007ffffffffffcull, 8),
			 -1); /* straddles */
	ann_safe_read_counts(&c1);
	assert_true(c1.refused == c0.refused + 3);
	assert_true(c1.verified == c0.verified);
	/* below the limit, outside every mapping: the kernel decides */
	assert_int_equal(ann_safe_read(&v, (uintptr_t)0x10000000000ull, 8), -1);
}

static void malformed_programs_are_refused(void **state)
{
	struct {
		struct ann_op ops[3];
		uint32_t n;
	} bad[] = {
	    {{OP(999, 0, 0, 0)}, 1},					/* opcode */
	    {{OP(ANN_OP_COUNT, 0, 0, 0)}, 1},				/* opcode */
	    {{OP(ANN_OP_EMIT, 0, 0, 0)}, 1},				/* underflow */
	    {{OP(ANN_OP_SUB, 0, 0, 0)}, 1},				/* underflow */
	    {{OP(ANN_OP_CONST, 0, 0, 1), OP(ANN_OP_EMIT, 0, 1, 0)}, 2}, /* index */
	    {{OP(ANN_OP_REG, 0, 17, 0), OP(ANN_OP_EMIT, 0, 0, 0)}, 2},	/* register */
	    {{OP(ANN_OP_XMM, 4, 8, 0), OP(ANN_OP_EMIT, 0, 0, 0)}, 2},	/* xmm */
	    {{OP(ANN_OP_XMM, 8, 0, 12), OP(ANN_OP_EMIT, 0, 0, 0)}, 2},	/* xmm bytes */
	    {{OP(ANN_OP_CONST, 0, 0, 8), OP(ANN_OP_LOAD, 3, 0, 0)}, 2}, /* size */
	    {{OP(ANN_OP_CONST, 0, 0, 8), OP(ANN_OP_LOAD, 2, ANN_F_FLOAT, 0)}, 2},
	    {{OP(ANN_OP_CONST, 0, 0, 8), OP(ANN_OP_DIV, 0, 0, 0)}, 2},
	    {{OP(ANN_OP_CONST, 0, 0, 8), OP(ANN_OP_EXTRACT, 65, 0, 0)}, 2},
	    {{OP(ANN_OP_CONST, 0, 0, 8), OP(ANN_OP_EXTRACT, 8, 0, 60)}, 2},
	    {{OP(ANN_OP_CONST, 0, 0, 8), OP(ANN_OP_STRLEN, 0, 0, -1)}, 2},
	    {{OP(ANN_OP_CONST, 0, 0, 8), OP(ANN_OP_SKIP_NE, 0, 2, 0)}, 2}, /* past end */
	    {{OP(ANN_OP_DROP, 0, 0, 0)}, 1},
	};
	double v[1];

	memset(&regs, 0, sizeof(regs));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v[0] = 3;
		assert_int_equal(ann_features_eval(bad[i].ops, bad[i].n, &regs, 0, v, 1), -1);
		assert_true(isnan(v[0]));
	}
	/* overflow: one push too many */
	struct ann_op deep[ANN_STACK_DEPTH + 1];
	for (int i = 0; i <= ANN_STACK_DEPTH; i++)
		deep[i] = OP(ANN_OP_CONST, 0, 0, i);
	assert_int_equal(ann_features_eval(deep, ANN_STACK_DEPTH, &regs, 0, v, 1), 0);
	assert_int_equal(ann_features_eval(deep, ANN_STACK_DEPTH + 1, &regs, 0, v, 1), -1);
	/* an emitted value is withdrawn when the program turns out malformed */
	struct ann_op late[] = {OP(ANN_OP_CONST, 0, 0, 1), OP(ANN_OP_EMIT, 0, 0, 0),
				OP(77, 0, 0, 0)};
	assert_int_equal(ann_features_eval(late, 3, &regs, 0, v, 1), -1);
	assert_true(isnan(v[0]));
	assert_int_equal(ann_features_eval(NULL, 0, &regs, 0, v, 1), 0);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void fuzzed_programs_never_crash(void **state)
{
	static char heap_like[256];
	static const void *self_ptr[4];
	struct ann_op ops[24];
	double v[4];
	int ok = 0, refused = 0;

	self_ptr[0] = self_ptr;
	self_ptr[1] = heap_like;
	for (int round = 0; round < 20000; round++) {
		for (int r = 0; r < ANN_GPR_COUNT; r++) {
			uint64_t pick = rng() % 4;
			regs.gpr[r] = pick == 0	  ? (uint64_t)(uintptr_t)self_ptr
				      : pick == 1 ? (uint64_t)(uintptr_t)(heap_like + rng() % 256)
				      : pick == 2 ? rng() % 4096
						  : rng();
		}
		for (int x = 0; x < ANN_XMM_COUNT; x++)
			regs.xmm[x][0] = rng(), regs.xmm[x][1] = rng();
		uint32_t n = (uint32_t)(rng() % 24);
		for (uint32_t i = 0; i < n; i++) {
			static const uint16_t sizes[] = {0, 1, 2, 4, 8, 3, 16, 32, 64};
			ops[i].code = (uint16_t)(rng() % (ANN_OP_COUNT + 2));
			ops[i].size = sizes[rng() % 9];
			ops[i].index = (uint32_t)(rng() % 20);
			ops[i].imm = rng() % 3 ? (int64_t)(rng() % 64) - 8 : (int64_t)rng();
			if (ops[i].code == ANN_OP_STRLEN || ops[i].code == ANN_OP_SKIP_NE)
				ops[i].imm = (int64_t)(rng() % 512);
		}
		int rc = ann_features_eval(ops, n, &regs, 0, v, 4);
		assert_true(rc == 0 || rc == -1);
		if (rc == 0)
			ok++;
		else
			refused++;
	}
	/* both outcomes were exercised */
	assert_true(ok > 100 && refused > 100);
}

/* ANN_OP_CALL: a shared program (a unit's globals) emits after the caller's own features. */
static void shared_programs_are_called(void **state)
{
	static struct {
		long a, b;
	} globals_at = {11, -3};
	const struct ann_op globals[] = {
	    OP(ANN_OP_ADDR, 0, 0, 0), OP(ANN_OP_LOAD, 8, ANN_F_SIGNED, 0), OP(ANN_OP_EMIT, 0, 0, 0),
	    OP(ANN_OP_ADDR, 0, 0, 8), OP(ANN_OP_LOAD, 8, ANN_F_SIGNED, 0), OP(ANN_OP_EMIT, 0, 1, 0),
	};
	const struct ann_op calls_itself[] = {OP(ANN_OP_CALL, 0, 0, 0)};
	const struct ann_program table[] = {{globals, N(globals)}, {calls_itself, 1}};
	/* module_base + imm: the globals' "file addresses" are offsets from globals_at */
	uint64_t base = (uint64_t)&globals_at;
	struct ann_op fn[] = {OP(ANN_OP_REG, 0, 5, 0), OP(ANN_OP_EMIT, 0, 0, 0),
			      OP(ANN_OP_CALL, 0, 0, 1)};
	double v[3];

	(void)state;
	memset(&regs, 0, sizeof(regs));
	regs.gpr[5] = 5;
	ann_features_set_shared(table, N(table));
	assert_int_equal(ann_features_eval(fn, N(fn), &regs, base, v, 3), 0);
	assert_true(v[0] == 5);
	assert_true(v[1] == 11 && v[2] == -3);
	/* an unknown program, an emit past the caller's values, a shared program that calls */
	struct ann_op unknown[] = {OP(ANN_OP_CALL, 0, 2, 0)};
	assert_int_equal(ann_features_eval(unknown, 1, &regs, base, v, 3), -1);
	struct ann_op past[] = {OP(ANN_OP_CALL, 0, 0, 2)};
	assert_int_equal(ann_features_eval(past, 1, &regs, base, v, 3), -1);
	assert_true(isnan(v[0]) && isnan(v[1]) && isnan(v[2]));
	struct ann_op beyond[] = {OP(ANN_OP_CALL, 0, 0, 4)};
	assert_int_equal(ann_features_eval(beyond, 1, &regs, base, v, 3), -1);
	struct ann_op nested[] = {OP(ANN_OP_CALL, 0, 1, 0)};
	assert_int_equal(ann_features_eval(nested, 1, &regs, base, v, 3), -1);
	ann_features_set_shared(NULL, 0);
	assert_int_equal(ann_features_eval(fn, N(fn), &regs, base, v, 3), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(registers_and_constants),
	    cmocka_unit_test(loads_of_every_size),
	    cmocka_unit_test(loads_with_an_offset),
	    cmocka_unit_test(strings_arrays_and_pointer_differences),
	    cmocka_unit_test(dynamic_types_and_offset_to_top),
	    cmocka_unit_test(bad_pointers_give_missing_values),
	    cmocka_unit_test(new_mappings_become_fast_reads),
	    cmocka_unit_test(garbage_pointers_are_refused_cheaply),
	    cmocka_unit_test(malformed_programs_are_refused),
	    cmocka_unit_test(shared_programs_are_called),
	    cmocka_unit_test(fuzzed_programs_never_crash),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
