// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * The feature interpreter (features.h, opcodes in features_ops.h, the format
 * in doc/formats/annotate-features.md): runs a probed function's feature
 * program on the registers captured at its entry (spec/freud.md §4.2.3,
 * §7.4 item 2, the successor of Freud's generated feature-processing.cc).
 *
 * It runs on every sampled call, possibly inside a signal handler, so it
 * allocates nothing, takes no lock and never faults: registers come from
 * the captured frame, memory only through ann_safe_read. A program is data
 * from a file, so it is validated as it runs: an unknown opcode, a bad
 * register or size, a stack under- or overflow, a jump past the end or an
 * output index out of range makes the whole program malformed (-1, every
 * value NaN) rather than half-trusted.
 */
#include "annotate/runtime/features.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "annotate/runtime/features_ops.h"
#include "annotate/runtime/safe_read.h"

enum slot_type { SLOT_MISSING, SLOT_INT, SLOT_UINT, SLOT_FLOAT };

struct slot {
	enum slot_type type;
	union {
		int64_t i;
		uint64_t u;
		double d;
	};
};

struct machine {
	struct slot stack[ANN_STACK_DEPTH];
	uint32_t depth;
	const struct ann_entry_regs *regs;
	uint64_t module_base;
	double *values;
	uint32_t n_values;
};

#define MALFORMED (-1)

static const struct ann_program *shared_programs;
static uint32_t n_shared_programs;

void ann_features_set_shared(const struct ann_program *programs, uint32_t n)
{
	shared_programs = programs;
	n_shared_programs = n;
}

static int run(struct machine *m, const struct ann_op *ops, uint32_t n_ops, bool shared);

static int push(struct machine *m, struct slot s)
{
	if (m->depth == ANN_STACK_DEPTH)
		return MALFORMED;
	m->stack[m->depth++] = s;
	return 0;
}

static struct slot missing(void)
{
	return (struct slot){.type = SLOT_MISSING};
}

static struct slot uint_slot(uint64_t u)
{
	return (struct slot){.type = SLOT_UINT, .u = u};
}

static struct slot int_slot(int64_t i)
{
	return (struct slot){.type = SLOT_INT, .i = i};
}

static struct slot float_slot(double d)
{
	return (struct slot){.type = SLOT_FLOAT, .d = d};
}

static double slot_double(struct slot s)
{
	switch (s.type) {
	case SLOT_INT:
		return (double)s.i;
	case SLOT_UINT:
		return (double)s.u;
	case SLOT_FLOAT:
		return s.d;
	default:
		return NAN;
	}
}

/* An integer slot as an address or count; false for missing or a float. */
static bool slot_integer(struct slot s, uint64_t *out)
{
	if (s.type != SLOT_INT && s.type != SLOT_UINT)
		return false;
	*out = s.u;
	return true;
}

static bool size_ok(uint32_t size)
{
	return size == 1 || size == 2 || size == 4 || size == 8;
}

/* `size` little-endian bytes as a slot, per the LOAD/SUM flags. */
static struct slot decode(const unsigned char *b, uint32_t size, uint32_t flags)
{
	uint64_t u = 0;

	memcpy(&u, b, size);
	if (flags & ANN_F_FLOAT) {
		if (size == 4) {
			float f;

			memcpy(&f, b, 4);
			return float_slot(f);
		}
		double d;

		memcpy(&d, b, 8);
		return float_slot(d);
	}
	if ((flags & ANN_F_SIGNED) && size < 8) {
		unsigned shift = 64 - 8 * size;

		return int_slot((int64_t)(u << shift) >> shift);
	}
	return (flags & ANN_F_SIGNED) ? int_slot((int64_t)u) : uint_slot(u);
}

static bool load_ok(const struct ann_op *op)
{
	if (!size_ok(op->size) || op->index & ~(ANN_F_SIGNED | ANN_F_FLOAT))
		return false;
	return !(op->index & ANN_F_FLOAT) || op->size == 4 || op->size == 8;
}

static struct slot load(uint64_t addr, uint32_t size, uint32_t flags)
{
	unsigned char b[8];

	if (ann_safe_read(b, (uintptr_t)addr, size) != 0)
		return missing();
	return decode(b, size, flags);
}

static struct slot extract(struct slot s, const struct ann_op *op)
{
	uint64_t u, bits = op->size, shift = (uint64_t)op->imm;

	if (!slot_integer(s, &u))
		return missing();
	u >>= shift;
	if (bits < 64)
		u &= (1ull << bits) - 1;
	if (op->index & ANN_F_FLOAT) {
		unsigned char b[8];

		memcpy(b, &u, 8);
		return decode(b, (uint32_t)bits / 8, ANN_F_FLOAT);
	}
	if ((op->index & ANN_F_SIGNED) && bits < 64) {
		unsigned up = 64 - (unsigned)bits;

		return int_slot((int64_t)(u << up) >> up);
	}
	return (op->index & ANN_F_SIGNED) ? int_slot((int64_t)u) : uint_slot(u);
}

static bool extract_ok(const struct ann_op *op)
{
	if (op->size < 1 || op->size > 64 || op->imm < 0 || op->imm + op->size > 64)
		return false;
	if (op->index & ~(ANN_F_SIGNED | ANN_F_FLOAT))
		return false;
	return !(op->index & ANN_F_FLOAT) || op->size == 32 || op->size == 64;
}

static struct slot subtract(struct slot a, struct slot b)
{
	if (a.type == SLOT_MISSING || b.type == SLOT_MISSING)
		return missing();
	if (a.type == SLOT_FLOAT || b.type == SLOT_FLOAT)
		return float_slot(slot_double(a) - slot_double(b));
	return int_slot((int64_t)(a.u - b.u));
}

static struct slot divide(struct slot a, int64_t by)
{
	if (a.type == SLOT_FLOAT)
		return float_slot(a.d / (double)by);
	if (a.type == SLOT_UINT)
		return by > 0 ? uint_slot(a.u / (uint64_t)by)
			      : int_slot(-(int64_t)(a.u / (uint64_t)-by));
	if (a.type == SLOT_INT) {
		if (a.i == INT64_MIN && by == -1)
			return missing();
		return int_slot(a.i / by);
	}
	return missing();
}

/* Length of the C string at addr, reading a chunk at a time within pages. */
static struct slot string_length(uint64_t addr, uint64_t bound)
{
	unsigned char chunk[64];
	uint64_t len = 0;

	while (len < bound) {
		uint64_t at = addr + len;
		uint64_t n = sizeof(chunk) - (at & (sizeof(chunk) - 1)); /* never crosses a page */

		if (n > bound - len)
			n = bound - len;
		if (ann_safe_read(chunk, (uintptr_t)at, n) != 0)
			return missing();
		void *nul = memchr(chunk, 0, n);

		if (nul)
			return uint_slot(len + (uint64_t)((unsigned char *)nul - chunk));
		len += n;
	}
	return missing();
}

static struct slot array_sum(uint64_t addr, uint64_t count, uint32_t size, uint32_t flags)
{
	double sum = 0;
	int64_t isum = 0;
	bool is_float = flags & ANN_F_FLOAT;

	if (count > ANN_SUM_MAX)
		return missing();
	for (uint64_t i = 0; i < count; i++) {
		struct slot s = load(addr + i * size, size, flags);

		if (s.type == SLOT_MISSING)
			return missing();
		if (is_float)
			sum += s.d;
		else
			isum += s.i; /* wraps like the program's own sum would */
	}
	return is_float ? float_slot(sum) : int_slot(isum);
}

/* vptr[-1] -> std::type_info, whose second word points at the name. */
static struct slot dynamic_type(uint64_t object)
{
	uint64_t vptr, typeinfo, name;
	uint64_t h = ANN_TYPE_HASH_INIT;
	unsigned char chunk[64];
	bool first = true;

	if (ann_safe_read(&vptr, (uintptr_t)object, 8) != 0 ||
	    ann_safe_read(&typeinfo, (uintptr_t)(vptr - 8), 8) != 0 ||
	    ann_safe_read(&name, (uintptr_t)(typeinfo + 8), 8) != 0)
		return missing();
	for (uint64_t len = 0; len < 4096;) {
		uint64_t at = name + len;
		uint64_t n = sizeof(chunk) - (at & (sizeof(chunk) - 1));

		if (ann_safe_read(chunk, (uintptr_t)at, n) != 0)
			return missing();
		for (uint64_t i = 0; i < n; i++) {
			if (chunk[i] == 0)
				return uint_slot(ann_type_hash_fold(h));
			if (!(first && chunk[i] == '*'))
				h = ann_type_hash_step(h, chunk[i]);
			first = false;
		}
		len += n;
	}
	return missing();
}

static struct slot top_object(uint64_t object)
{
	uint64_t vptr;
	int64_t offset_to_top;

	if (ann_safe_read(&vptr, (uintptr_t)object, 8) != 0 ||
	    ann_safe_read(&offset_to_top, (uintptr_t)(vptr - 16), 8) != 0)
		return missing();
	return uint_slot(object + (uint64_t)offset_to_top);
}

/* Ops that take nothing from the stack and push one value. */
static int run_push(struct machine *m, const struct ann_op *op)
{
	switch (op->code) {
	case ANN_OP_REG:
		if (op->index >= ANN_GPR_COUNT)
			return MALFORMED;
		return push(m, uint_slot(m->regs->gpr[op->index]));
	case ANN_OP_XMM: {
		const unsigned char *x;

		if (op->index >= ANN_XMM_COUNT || (op->size != 4 && op->size != 8) || op->imm < 0 ||
		    op->imm + op->size > 16)
			return MALFORMED;
		x = (const unsigned char *)m->regs->xmm[op->index] + op->imm;
		return push(m, decode(x, op->size, ANN_F_FLOAT));
	}
	case ANN_OP_CFA:
		return push(m, uint_slot(m->regs->gpr[7] + 8 + (uint64_t)op->imm));
	case ANN_OP_CONST:
		return push(m, int_slot(op->imm));
	case ANN_OP_ADDR:
		return push(m, uint_slot(m->module_base + (uint64_t)op->imm));
	default:
		return MALFORMED;
	}
}

/* Ops that replace the top of the stack. */
static int run_unary(struct machine *m, const struct ann_op *op)
{
	struct slot *top;
	uint64_t u;

	if (m->depth == 0)
		return MALFORMED;
	top = &m->stack[m->depth - 1];
	switch (op->code) {
	case ANN_OP_ADD:
		if (top->type == SLOT_FLOAT)
			top->d += (double)op->imm;
		else if (top->type != SLOT_MISSING)
			top->u += (uint64_t)op->imm;
		return 0;
	case ANN_OP_LOAD:
		if (!load_ok(op))
			return MALFORMED;
		*top = slot_integer(*top, &u) ? load(u + (uint64_t)op->imm, op->size, op->index)
					      : missing();
		return 0;
	case ANN_OP_EXTRACT:
		if (!extract_ok(op))
			return MALFORMED;
		*top = extract(*top, op);
		return 0;
	case ANN_OP_DIV:
		if (op->imm == 0)
			return MALFORMED;
		*top = divide(*top, op->imm);
		return 0;
	case ANN_OP_STRLEN:
		if (op->imm < 0 || op->imm > ANN_STRLEN_MAX)
			return MALFORMED;
		*top = slot_integer(*top, &u) ? string_length(u, (uint64_t)op->imm) : missing();
		return 0;
	case ANN_OP_DYNTYPE:
		*top = slot_integer(*top, &u) ? dynamic_type(u) : missing();
		return 0;
	case ANN_OP_TOPOBJ:
		*top = slot_integer(*top, &u) ? top_object(u) : missing();
		return 0;
	case ANN_OP_NONZERO:
		if (top->type == SLOT_FLOAT)
			*top = uint_slot(top->d != 0);
		else if (top->type != SLOT_MISSING)
			*top = uint_slot(top->u != 0);
		return 0;
	case ANN_OP_DUP:
		return push(m, *top);
	case ANN_OP_DROP:
		m->depth--;
		return 0;
	default:
		return MALFORMED;
	}
}

/* Ops that pop two values and push one. */
static int run_binary(struct machine *m, const struct ann_op *op)
{
	struct slot a, b;
	uint64_t addr, count;

	if (m->depth < 2)
		return MALFORMED;
	b = m->stack[--m->depth];
	a = m->stack[m->depth - 1];
	switch (op->code) {
	case ANN_OP_SUB:
		m->stack[m->depth - 1] = subtract(a, b);
		return 0;
	case ANN_OP_SUM:
		if (!load_ok(op))
			return MALFORMED;
		if (slot_integer(a, &addr) && slot_integer(b, &count) &&
		    !(b.type == SLOT_INT && b.i < 0))
			m->stack[m->depth - 1] = array_sum(addr, count, op->size, op->index);
		else
			m->stack[m->depth - 1] = missing();
		return 0;
	default:
		return MALFORMED;
	}
}

/* ANN_OP_CALL: the shared program on a machine of its own, emitting from imm on. */
static int call_shared(const struct machine *m, const struct ann_op *op)
{
	struct machine sub;
	const struct ann_program *p;

	if (op->index >= n_shared_programs || op->imm < 0 || (uint64_t)op->imm > m->n_values)
		return MALFORMED;
	p = &shared_programs[op->index];
	sub.depth = 0;
	sub.regs = m->regs;
	sub.module_base = m->module_base;
	sub.values = m->values + op->imm;
	sub.n_values = m->n_values - (uint32_t)op->imm;
	return run(&sub, p->ops, p->n_ops, true);
}

static int run_op(struct machine *m, const struct ann_op *op, uint32_t at, uint32_t n_ops,
		  bool shared, uint32_t *next)
{
	struct slot v;

	*next = at + 1;
	switch (op->code) {
	case ANN_OP_NOP:
		return 0;
	case ANN_OP_REG:
	case ANN_OP_XMM:
	case ANN_OP_CFA:
	case ANN_OP_CONST:
	case ANN_OP_ADDR:
		return run_push(m, op);
	case ANN_OP_SUB:
	case ANN_OP_SUM:
		return run_binary(m, op);
	case ANN_OP_SKIP_NE:
		if (m->depth == 0 || op->index > n_ops - at - 1)
			return MALFORMED;
		v = m->stack[--m->depth];
		if (!(v.type != SLOT_MISSING && v.type != SLOT_FLOAT && v.i == op->imm))
			*next = at + 1 + op->index;
		return 0;
	case ANN_OP_EMIT:
		if (m->depth == 0 || op->index >= m->n_values)
			return MALFORMED;
		m->values[op->index] = slot_double(m->stack[--m->depth]);
		return 0;
	case ANN_OP_CALL:
		return shared ? MALFORMED : call_shared(m, op);
	default:
		return run_unary(m, op);
	}
}

static int run(struct machine *m, const struct ann_op *ops, uint32_t n_ops, bool shared)
{
	uint32_t at = 0;

	if (n_ops > 0 && !ops)
		return MALFORMED;
	while (at < n_ops) {
		uint32_t next;

		if (run_op(m, &ops[at], at, n_ops, shared, &next) != 0)
			return MALFORMED;
		at = next;
	}
	return 0;
}

int ann_features_eval(const struct ann_op *ops, uint32_t n_ops, const struct ann_entry_regs *regs,
		      uint64_t module_base, double *values, uint32_t n_values)
{
	struct machine m; /* the stack is not cleared: only pushed slots are read */

	m.depth = 0;
	m.regs = regs;
	m.module_base = module_base;
	m.values = values;
	m.n_values = n_values;
	for (uint32_t i = 0; i < n_values; i++)
		values[i] = NAN;
	if (n_ops > 0 && (!ops || !regs))
		return MALFORMED;
	if (run(&m, ops, n_ops, false) != 0) {
		for (uint32_t i = 0; i < n_values; i++)
			values[i] = NAN;
		return MALFORMED;
	}
	return 0;
}
