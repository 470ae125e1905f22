// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * Static references (spec autocpa.md §8.5 steps 3–6): which struct field
 * each memory operand of a function touches, found without running it —
 * what the thesis got from Ghidra's decompiler (§2.5).
 *
 * Each function is decoded with capstone and cut into basic blocks with
 * Ghidra's semantics (a block ends at a jump, a conditional branch or a
 * return, and starts at a branch target; calls do not end it, §2.7B). The
 * type of every general register — "points into struct S at offset d",
 * possibly "somewhere in an array of S" — flows forward through the blocks
 * (meet: equal or unknown) from three sources: DWARF locations (a
 * parameter or variable in this register at this pc), loads of a pointer
 * field or pointer variable, and calls to functions returning S *; moves,
 * lea, and add/sub of constants carry it along. A memory operand then
 * resolves to (S, offset): through its typed base register (an index
 * register, or a displacement past the struct, means an array element: the
 * offset modulo sizeof(S)), a global's address (rip-relative or absolute),
 * or a frame slot holding a struct. The members overlapping the access are
 * its references; a member that is itself a struct also yields a reference
 * to the inner struct's member (the nested struct analysed on its own).
 */
#include <capstone/capstone.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout/static.h"

#define N_GPR	    16
#define MAX_PASSES  8
#define MAX_NESTING 8
#define N_SPILLS    8
#define REG_RSP	    7
#define REG_RBP	    6

struct reg_type {
	int32_t s; /* ST_NONE: not known to point into a struct */
	int32_t delta;
	bool elem;   /* somewhere in an array of s: offsets modulo its size */
	bool ptrptr; /* points to pointers to s (s **, a table of s *) */
};

/* A typed pointer spilled to the frame: [reg + off] holds it (reg: rsp or rbp). */
struct spill {
	int8_t reg;
	int32_t off;
	struct reg_type t;
};

struct state {
	struct reg_type r[N_GPR];
	uint8_t n_spills;
	struct spill spills[N_SPILLS];
};

struct block_info {
	size_t first, last; /* instruction indexes */
	size_t succ[2];
	size_t n_succ;
	struct state in, out;
	bool visited;
	bool padding; /* nops nothing jumps to: alignment between code, no path */
};

struct fn_ctx {
	const struct st_types *t;
	const struct st_vars *v;
	const struct st_var_loc **locs;
	size_t n_locs;
	cs_insn *insn;
	size_t n_insn;
	struct st_result *r;
	bool emit;
};

/* x86 register → DWARF register number (0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp,
 * 8–15 r8–r15), width in bytes through *width; -1 if not a general register. */
static int gpr_of(unsigned reg, int *width)
{
	static const struct {
		unsigned r64, r32, r16, r8;
		int dwarf;
	} map[] = {
	    {X86_REG_RAX, X86_REG_EAX, X86_REG_AX, X86_REG_AL, 0},
	    {X86_REG_RDX, X86_REG_EDX, X86_REG_DX, X86_REG_DL, 1},
	    {X86_REG_RCX, X86_REG_ECX, X86_REG_CX, X86_REG_CL, 2},
	    {X86_REG_RBX, X86_REG_EBX, X86_REG_BX, X86_REG_BL, 3},
	    {X86_REG_RSI, X86_REG_ESI, X86_REG_SI, X86_REG_SIL, 4},
	    {X86_REG_RDI, X86_REG_EDI, X86_REG_DI, X86_REG_DIL, 5},
	    {X86_REG_RBP, X86_REG_EBP, X86_REG_BP, X86_REG_BPL, 6},
	    {X86_REG_RSP, X86_REG_ESP, X86_REG_SP, X86_REG_SPL, 7},
	    {X86_REG_R8, X86_REG_R8D, X86_REG_R8W, X86_REG_R8B, 8},
	    {X86_REG_R9, X86_REG_R9D, X86_REG_R9W, X86_REG_R9B, 9},
	    {X86_REG_R10, X86_REG_R10D, X86_REG_R10W, X86_REG_R10B, 10},
	    {X86_REG_R11, X86_REG_R11D, X86_REG_R11W, X86_REG_R11B, 11},
	    {X86_REG_R12, X86_REG_R12D, X86_REG_R12W, X86_REG_R12B, 12},
	    {X86_REG_R13, X86_REG_R13D, X86_REG_R13W, X86_REG_R13B, 13},
	    {X86_REG_R14, X86_REG_R14D, X86_REG_R14W, X86_REG_R14B, 14},
	    {X86_REG_R15, X86_REG_R15D, X86_REG_R15W, X86_REG_R15B, 15},
	};
	int w = 0;

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		if (reg == map[i].r64)
			w = 8;
		else if (reg == map[i].r32)
			w = 4;
		else if (reg == map[i].r16)
			w = 2;
		else if (reg == map[i].r8 || (reg == X86_REG_AH && i == 0) ||
			 (reg == X86_REG_DH && i == 1) || (reg == X86_REG_CH && i == 2) ||
			 (reg == X86_REG_BH && i == 3))
			w = 1;
		if (w) {
			if (width)
				*width = w;
			return map[i].dwarf;
		}
	}
	return -1;
}

static const struct reg_type unknown = {.s = ST_NONE};

static bool same_type(const struct reg_type *a, const struct reg_type *b)
{
	if (a->s == ST_NONE || b->s == ST_NONE)
		return a->s == b->s;
	return a->s == b->s && a->delta == b->delta && a->elem == b->elem && a->ptrptr == b->ptrptr;
}

static bool is_jump(const cs_insn *in)
{
	for (uint8_t i = 0; i < in->detail->groups_count; i++)
		if (in->detail->groups[i] == CS_GRP_JUMP || in->detail->groups[i] == CS_GRP_RET ||
		    in->detail->groups[i] == CS_GRP_IRET)
			return true;
	return in->id == X86_INS_HLT || in->id == X86_INS_UD2;
}

static bool is_unconditional(const cs_insn *in)
{
	return in->id == X86_INS_JMP || in->id == X86_INS_LJMP || in->id == X86_INS_RET ||
	       in->id == X86_INS_RETF || in->id == X86_INS_HLT || in->id == X86_INS_UD2 ||
	       in->id == X86_INS_IRET || in->id == X86_INS_IRETQ;
}

static bool direct_target(const cs_insn *in, uint64_t *target)
{
	const cs_x86 *x = &in->detail->x86;

	if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM) {
		*target = (uint64_t)x->operands[0].imm;
		return true;
	}
	return false;
}

/* Instructions whose memory operand is no access to memory. */
static bool no_access(const cs_insn *in)
{
	switch (in->id) {
	case X86_INS_LEA:
	case X86_INS_NOP:
	case X86_INS_PREFETCH:
	case X86_INS_PREFETCHNTA:
	case X86_INS_PREFETCHT0:
	case X86_INS_PREFETCHT1:
	case X86_INS_PREFETCHT2:
	case X86_INS_PREFETCHW:
	case X86_INS_CLFLUSH:
	case X86_INS_CLFLUSHOPT:
		return true;
	default:
		return false;
	}
}

static int64_t floor_mod(int64_t a, int64_t m)
{
	int64_t r = a % m;

	return r < 0 ? r + m : r;
}

/* The struct and offset an address expression points into, or s = ST_NONE. */
struct resolved {
	int32_t s;
	int64_t off;
	/* an 8-byte load from here gives this (a pointer variable, a table slot) */
	struct reg_type slot;
	/* what lea of this address gives, when it is no struct field */
	struct reg_type address;
};

#define NOTHING_RESOLVED                                                                           \
	{                                                                                          \
		.s = ST_NONE, .slot = {.s = ST_NONE}, .address = {.s = ST_NONE }                   \
	}

static bool in_flexible(const struct st_struct *s, int64_t off)
{
	return s->n && s->m[s->n - 1].flexible && off >= s->m[s->n - 1].offset;
}

static struct resolved resolve_global(const struct fn_ctx *c, uint64_t addr)
{
	struct resolved res = NOTHING_RESOLVED;
	const struct st_global *g = st_vars_global_at(c->v, addr);

	if (!g)
		return res;
	if (g->type.pointer || g->type.pointer2) {
		if (addr == g->addr)
			res.slot = (struct reg_type){.s = g->type.s, .ptrptr = g->type.pointer2};
		return res;
	}
	if (g->type.ptr_array) {
		if ((addr - g->addr) % 8 == 0)
			res.slot = (struct reg_type){.s = g->type.s};
		res.address = (struct reg_type){.s = g->type.s, .ptrptr = true};
		return res;
	}
	res.s = g->type.s;
	res.off = (int64_t)(addr - g->addr);
	if (g->type.array && c->t->s[res.s].size)
		res.off %= c->t->s[res.s].size;
	return res;
}

/* A frame slot: a struct variable in place, or a pointer variable. */
static struct resolved resolve_stack(const struct fn_ctx *c, uint64_t pc, int base, int64_t disp)
{
	struct resolved res = NOTHING_RESOLVED;
	int cfa_reg = -1;
	int64_t cfa_off = 0;
	bool cfa_known = false;

	for (size_t i = 0; i < c->n_locs; i++) {
		const struct st_var_loc *l = c->locs[i];
		int64_t at, size, extent;

		if (pc < l->lo || pc >= l->hi || l->kind == ST_LOC_REG)
			continue;
		if (l->kind == ST_LOC_MEM) {
			if (l->reg != base)
				continue;
			at = l->offset;
		} else {
			if (!cfa_known) {
				cfa_known = true;
				if (!st_vars_cfa(c->v, pc, &cfa_reg, &cfa_off))
					cfa_reg = -1;
			}
			if (cfa_reg != base)
				continue;
			at = cfa_off + l->offset;
		}
		if (l->type.pointer || l->type.pointer2) {
			if (disp == at) {
				res.slot =
				    (struct reg_type){.s = l->type.s, .ptrptr = l->type.pointer2};
				return res;
			}
			continue;
		}
		if (l->type.ptr_array) {
			if (disp >= at && disp < at + (int64_t)l->type.bytes &&
			    (disp - at) % 8 == 0) {
				res.slot = (struct reg_type){.s = l->type.s};
				return res;
			}
			continue;
		}
		size = c->t->s[l->type.s].size;
		extent = l->type.bytes ? (int64_t)l->type.bytes : size;
		if (!size || disp < at || disp >= at + extent)
			continue;
		res.s = l->type.s;
		res.off = (disp - at) % size; /* an array's element */
		return res;
	}
	return res;
}

static struct resolved resolve_mem(const struct fn_ctx *c, const cs_insn *in, const x86_op_mem *m,
				   const struct state *st)
{
	struct resolved res = NOTHING_RESOLVED;
	int base, index;

	if (m->segment == X86_REG_FS || m->segment == X86_REG_GS)
		return res; /* thread-local storage */
	if (m->base == X86_REG_RIP)
		return resolve_global(c, in->address + in->size + (uint64_t)m->disp);
	if (m->base == X86_REG_INVALID && m->index == X86_REG_INVALID)
		return resolve_global(c, (uint64_t)m->disp);
	base = gpr_of(m->base, NULL);
	index = gpr_of(m->index, NULL);
	if (base < 0 && index < 0)
		return res;
	/* [untyped + typed*1]: the typed one is the base */
	if ((base < 0 || st->r[base].s == ST_NONE) && index >= 0 && m->scale == 1 &&
	    st->r[index].s != ST_NONE) {
		int tmp = base;

		base = index;
		index = tmp;
	}
	if (base >= 0 && st->r[base].ptrptr) {
		/* a table of struct pointers: what it holds, at any slot */
		res.slot = (struct reg_type){.s = st->r[base].s};
		res.address = st->r[base];
		return res;
	}
	if (base >= 0 && st->r[base].s != ST_NONE) {
		const struct reg_type *b = &st->r[base];
		int64_t size = c->t->s[b->s].size, off = b->delta + m->disp;

		if (!size)
			return res;
		/*
		 * Past the fixed part of a struct ending in a flexible array
		 * member is that member (memcached's item: key and value after
		 * the header), not the next element of an array.
		 */
		if (in_flexible(&c->t->s[b->s], off))
			;
		else if (index >= 0 || b->elem || off >= size)
			off = floor_mod(off, size);
		if (off < 0)
			return res;
		res.s = b->s;
		res.off = off;
		return res;
	}
	if (base >= 0 && index < 0)
		return resolve_stack(c, in->address, base, m->disp);
	return res;
}

static int add_ref(struct fn_ctx *c, uint64_t pc, int32_t s, uint32_t member, bool write)
{
	struct st_result *r = c->r;

	if (r->n_refs == r->cap_refs) {
		size_t cap = r->cap_refs ? 2 * r->cap_refs : 1024;
		struct st_ref *p = realloc(r->refs, cap * sizeof(*p));

		if (!p)
			return -1;
		r->refs = p;
		r->cap_refs = cap;
	}
	r->refs[r->n_refs++] = (struct st_ref){pc, s, member, write};
	return 0;
}

/*
 * References of an access of `size` bytes at (s, off): every member it
 * overlaps, and inside struct members their own members. Returns the
 * innermost member at `off` through *leaf_s / *leaf_m (for the type of a
 * loaded pointer).
 */
static int emit_refs(struct fn_ctx *c, uint64_t pc, int32_t s, int64_t off, int64_t size,
		     bool write, int depth, int32_t *leaf_s, long *leaf_m)
{
	const struct st_struct *st = &c->t->s[s];
	int64_t end = off + (size > 0 ? size : 1);

	for (size_t i = 0; i < st->n; i++) {
		const struct st_member *m = &st->m[i];
		int64_t m_end = m->flexible ? INT64_MAX : m->offset + (m->size ? m->size : 1);

		if (m_end <= off || (int64_t)m->offset >= end)
			continue;
		if (c->emit && add_ref(c, pc, s, (uint32_t)i, write))
			return -1;
		if (off >= m->offset && off < m_end) {
			*leaf_s = s;
			*leaf_m = (long)i;
		}
		if (m->nested != ST_NONE && m->elem_size && depth < MAX_NESTING) {
			int64_t inner = off > m->offset ? off - m->offset : 0;
			int64_t inner_size = (end < m_end ? end : m_end) - (m->offset + inner);

			inner %= m->elem_size;
			if (emit_refs(c, pc, m->nested, inner, inner_size, write, depth + 1, leaf_s,
				      leaf_m))
				return -1;
		}
	}
	return 0;
}

static void apply_dwarf(struct fn_ctx *c, uint64_t pc, struct state *st)
{
	for (size_t i = 0; i < c->n_locs; i++) {
		const struct st_var_loc *l = c->locs[i];

		if (l->kind != ST_LOC_REG || pc < l->lo || pc >= l->hi || l->reg < 0 ||
		    l->reg >= N_GPR)
			continue;
		if (l->type.pointer || l->type.pointer2)
			st->r[l->reg] =
			    (struct reg_type){.s = l->type.s, .ptrptr = l->type.pointer2};
		else
			st->r[l->reg] = unknown;
	}
}

static void kill_written(const cs_insn *in, struct state *st, csh cs)
{
	cs_regs rd, wr;
	uint8_t n_rd, n_wr;

	if (cs_regs_access(cs, in, rd, &n_rd, wr, &n_wr) != CS_ERR_OK)
		return;
	for (uint8_t i = 0; i < n_wr; i++) {
		int g = gpr_of(wr[i], NULL);

		if (g >= 0 && g != 7) /* rsp is never a struct pointer we track */
			st->r[g] = unknown;
	}
}

static void kill_call_clobbered(struct state *st)
{
	static const int clobbered[] = {0, 1, 2, 4, 5, 8, 9, 10, 11};

	for (size_t i = 0; i < sizeof(clobbered) / sizeof(clobbered[0]); i++)
		st->r[clobbered[i]] = unknown;
}

static long spill_find(const struct state *st, int reg, int64_t off)
{
	for (uint8_t i = 0; i < st->n_spills; i++)
		if (st->spills[i].reg == reg && st->spills[i].off == off)
			return i;
	return -1;
}

static void spill_drop(struct state *st, uint8_t i)
{
	st->spills[i] = st->spills[--st->n_spills];
}

/* A store of `size` bytes at [reg + off]: what it overwrites is forgotten. */
static void spill_forget(struct state *st, int reg, int64_t off, int64_t size)
{
	for (uint8_t i = 0; i < st->n_spills;)
		if (st->spills[i].reg == reg && off < st->spills[i].off + 8 &&
		    st->spills[i].off < off + size)
			spill_drop(st, i);
		else
			i++;
}

static void spill_store(struct state *st, int reg, int64_t off, const struct reg_type *t)
{
	spill_forget(st, reg, off, 8);
	if (t->s == ST_NONE)
		return;
	if (st->n_spills == N_SPILLS)
		spill_drop(st, 0); /* the oldest goes first */
	st->spills[st->n_spills++] = (struct spill){(int8_t)reg, (int32_t)off, *t};
}

/* rsp moved by delta (push: -8): slots addressed from rsp move the other way. */
static void spill_rsp_moved(struct state *st, int64_t delta)
{
	for (uint8_t i = 0; i < st->n_spills; i++)
		if (st->spills[i].reg == REG_RSP)
			st->spills[i].off -= (int32_t)delta;
}

static void spill_drop_reg(struct state *st, int reg)
{
	for (uint8_t i = 0; i < st->n_spills;)
		if (st->spills[i].reg == reg)
			spill_drop(st, i);
		else
			i++;
}

static bool same_state(const struct state *a, const struct state *b)
{
	if (a->n_spills != b->n_spills)
		return false;
	for (int g = 0; g < N_GPR; g++)
		if (!same_type(&a->r[g], &b->r[g]))
			return false;
	for (uint8_t i = 0; i < a->n_spills; i++) {
		long k = spill_find(b, a->spills[i].reg, a->spills[i].off);

		if (k < 0 || !same_type(&a->spills[i].t, &b->spills[k].t))
			return false;
	}
	return true;
}

static bool frame_operand(const cs_x86_op *op, int *reg)
{
	if (op->type != X86_OP_MEM || op->mem.index != X86_REG_INVALID ||
	    op->mem.segment != X86_REG_INVALID)
		return false;
	*reg = gpr_of(op->mem.base, NULL);
	return *reg == REG_RSP || *reg == REG_RBP;
}

/*
 * Pointers spilled to the frame and reloaded (-O2 under register
 * pressure): a store of a typed register to [rsp/rbp + d] is remembered,
 * other stores there forget it, and rsp's pushes, pops and constant
 * adjustments move the rsp-relative slots.
 */
static void track_spills(const cs_insn *in, struct state *st, const struct state *before)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *op = x->operands;
	int reg, w = 0;

	for (uint8_t i = 0; i < x->op_count; i++)
		if ((op[i].access & CS_AC_WRITE) && frame_operand(&op[i], &reg)) {
			int src = x->op_count == 2 && op[1].type == X86_OP_REG
				      ? gpr_of(op[1].reg, &w)
				      : -1;

			if (in->id == X86_INS_MOV && i == 0 && src >= 0 && w == 8)
				spill_store(st, reg, op[0].mem.disp, &before->r[src]);
			else
				spill_forget(st, reg, op[i].mem.disp, op[i].size ? op[i].size : 8);
		}
	switch (in->id) {
	case X86_INS_PUSH:
		spill_rsp_moved(st, -8);
		return;
	case X86_INS_POP:
		if (x->op_count == 1 && op[0].type == X86_OP_REG &&
		    gpr_of(op[0].reg, NULL) == REG_RBP)
			spill_drop_reg(st, REG_RBP);
		spill_rsp_moved(st, 8);
		return;
	case X86_INS_CALL:
	case X86_INS_RET:
		return;
	case X86_INS_ADD:
	case X86_INS_SUB:
		if (x->op_count == 2 && op[0].type == X86_OP_REG &&
		    gpr_of(op[0].reg, NULL) == REG_RSP && op[1].type == X86_OP_IMM) {
			spill_rsp_moved(st, in->id == X86_INS_ADD ? op[1].imm : -op[1].imm);
			return;
		}
		break;
	default:
		break;
	}
	for (uint8_t i = 0; i < x->op_count; i++)
		if (op[i].type == X86_OP_REG && (op[i].access & CS_AC_WRITE)) {
			int g = gpr_of(op[i].reg, NULL);

			if (g == REG_RSP || g == REG_RBP)
				spill_drop_reg(st, g);
		}
	if (in->id == X86_INS_LEAVE) {
		spill_drop_reg(st, REG_RSP);
		spill_drop_reg(st, REG_RBP);
	}
}

/* What an instruction does to the register types (after its reads are resolved). */
static void transfer(struct fn_ctx *c, const cs_insn *in, struct state *st,
		     const struct resolved *mem, const struct reg_type *loaded, csh cs)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *op = x->operands;
	struct state before = *st;
	int w0 = 0, w1 = 0, d = x->op_count ? gpr_of(op[0].reg, &w0) : -1;

	if (in->id == X86_INS_CALL) {
		uint64_t target;
		const struct st_function *f;

		kill_call_clobbered(st);
		if (direct_target(in, &target) && (f = st_vars_function_at(c->v, target)) &&
		    f->lo == target && f->returns != ST_NONE)
			st->r[0] = (struct reg_type){.s = f->returns};
		return;
	}
	track_spills(in, st, &before);
	kill_written(in, st, cs);
	if (x->op_count != 2 || op[0].type != X86_OP_REG || d < 0 || w0 != 8)
		return;
	switch (in->id) {
	case X86_INS_MOV:
		if (op[1].type == X86_OP_REG) {
			int s = gpr_of(op[1].reg, &w1);

			if (s >= 0 && w1 == 8)
				st->r[d] = before.r[s];
		} else if (op[1].type == X86_OP_MEM && op[1].size == 8) {
			st->r[d] = *loaded;
		}
		break;
	case X86_INS_LEA: {
		int base = gpr_of(op[1].mem.base, NULL);

		if (mem->s != ST_NONE)
			st->r[d] = (struct reg_type){.s = mem->s,
						     .delta = (int32_t)mem->off,
						     .elem = op[1].mem.index != X86_REG_INVALID ||
							     (base >= 0 && before.r[base].elem)};
		else if (mem->address.s != ST_NONE)
			st->r[d] = mem->address;
		break;
	}
	case X86_INS_ADD:
	case X86_INS_SUB:
		if (before.r[d].s == ST_NONE && op[1].type == X86_OP_REG && in->id == X86_INS_ADD) {
			int s = gpr_of(op[1].reg, &w1);

			/* integer + pointer: an element of the array the pointer is in */
			if (s >= 0 && w1 == 8 && before.r[s].s != ST_NONE) {
				st->r[d] = before.r[s];
				st->r[d].elem = true;
			}
			break;
		}
		if (before.r[d].s == ST_NONE)
			break;
		st->r[d] = before.r[d];
		if (op[1].type == X86_OP_IMM)
			st->r[d].delta += (int32_t)(in->id == X86_INS_ADD ? op[1].imm : -op[1].imm);
		else
			st->r[d].elem = true; /* pointer + index */
		break;
	default:
		break;
	}
}

/*
 * Whether operand i of an instruction writes memory. Capstone 4 marks the
 * destination of some SSE/AVX stores (movups, movq, movdqa, vmovdqu) as
 * read only; a move's first operand is its destination whatever it says.
 */
static bool writes(const cs_insn *in, uint8_t i)
{
	const cs_x86 *x = &in->detail->x86;

	if (x->operands[i].access & CS_AC_WRITE)
		return true;
	return i == 0 && x->op_count >= 2 &&
	       (strncmp(in->mnemonic, "mov", 3) == 0 || strncmp(in->mnemonic, "vmov", 4) == 0);
}

/* One instruction: its references (when emitting) and its effect on the state. */
static int step(struct fn_ctx *c, const cs_insn *in, struct state *st, csh cs)
{
	const cs_x86 *x = &in->detail->x86;
	struct resolved mem = NOTHING_RESOLVED;
	struct reg_type loaded = unknown;
	int frame_reg;
	bool counted = false;

	apply_dwarf(c, in->address, st);
	for (uint8_t i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];
		int32_t leaf_s = ST_NONE;
		long leaf_m = -1;

		if (op->type != X86_OP_MEM)
			continue;
		mem = resolve_mem(c, in, &op->mem, st);
		if (mem.slot.s == ST_NONE && frame_operand(op, &frame_reg)) {
			long k = spill_find(st, frame_reg, op->mem.disp);

			if (k >= 0)
				mem.slot = st->spills[k].t;
		}
		if (no_access(in))
			continue;
		if (c->emit && !counted) {
			c->r->memory_operands++;
			counted = true;
		}
		if (mem.slot.s != ST_NONE)
			loaded = mem.slot;
		if (mem.s == ST_NONE)
			continue;
		if (emit_refs(c, in->address, mem.s, mem.off, op->size, writes(in, i), 0, &leaf_s,
			      &leaf_m))
			return -1;
		if (leaf_s != ST_NONE) {
			const struct st_member *leaf = &c->t->s[leaf_s].m[leaf_m];

			if (c->emit)
				c->r->typed_operands++;
			/* an 8-byte load of a pointer member: the register now points there */
			if (leaf->pointee != ST_NONE && op->size == 8)
				loaded = (struct reg_type){.s = leaf->pointee};
			else if (leaf->pointee2 != ST_NONE && op->size == 8)
				loaded = (struct reg_type){.s = leaf->pointee2, .ptrptr = true};
		}
	}
	transfer(c, in, st, &mem, &loaded, cs);
	return 0;
}

/*
 * Join of two paths: equal types stay; pointers into the same struct whose
 * offsets differ by a multiple of its size (a loop stepping through an
 * array, p++) become "an element of an array of S"; anything else is
 * unknown.
 */
static void meet(const struct st_types *t, struct state *into, const struct state *from, bool first)
{
	if (first) {
		*into = *from;
		return;
	}
	for (int i = 0; i < N_GPR; i++) {
		struct reg_type *a = &into->r[i];
		const struct reg_type *b = &from->r[i];
		int64_t size;

		if (same_type(a, b))
			continue;
		if (a->ptrptr && b->ptrptr && a->s == b->s) {
			a->delta = 0; /* any slot of the same table */
			continue;
		}
		size = a->s != ST_NONE && a->s == b->s ? t->s[a->s].size : 0;
		if (size && floor_mod(a->delta, size) == floor_mod(b->delta, size)) {
			a->delta = (int32_t)floor_mod(a->delta, size);
			a->elem = true;
		} else {
			*a = unknown;
		}
	}
	/* a spill survives a join when both paths agree on it */
	for (uint8_t i = 0; i < into->n_spills;) {
		long k = spill_find(from, into->spills[i].reg, into->spills[i].off);

		if (k < 0 || !same_type(&into->spills[i].t, &from->spills[k].t))
			spill_drop(into, i);
		else
			i++;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static size_t insn_at(const cs_insn *insn, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (insn[mid].address < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && insn[lo].address == addr ? lo : n;
}

/* Basic blocks: leaders are the entry, branch targets, and what follows a branch. */
static struct block_info *cut_blocks(const cs_insn *insn, size_t n, size_t *n_blocks)
{
	bool *leader = calloc(n + 1, sizeof(*leader));
	size_t *block_of = calloc(n + 1, sizeof(*block_of));
	struct block_info *b = NULL;
	size_t nb = 0;

	if (!leader || !block_of)
		goto out;
	leader[0] = true;
	for (size_t i = 0; i < n; i++) {
		uint64_t target;

		if (!is_jump(&insn[i]))
			continue;
		if (i + 1 < n)
			leader[i + 1] = true;
		if (direct_target(&insn[i], &target)) {
			size_t k = insn_at(insn, n, target);

			if (k < n)
				leader[k] = true;
		}
	}
	for (size_t i = 0; i < n; i++)
		nb += leader[i];
	b = calloc(nb ? nb : 1, sizeof(*b));
	if (!b)
		goto out;
	nb = 0;
	for (size_t i = 0; i < n; i++) {
		if (leader[i])
			b[nb++].first = i;
		b[nb - 1].last = i;
		block_of[i] = nb - 1;
	}
	for (size_t k = 0; k < nb; k++) {
		const cs_insn *last = &insn[b[k].last];
		uint64_t target;

		if (!is_jump(last) || !is_unconditional(last))
			if (b[k].last + 1 < n)
				b[k].succ[b[k].n_succ++] = block_of[b[k].last + 1];
		if (is_jump(last) && direct_target(last, &target)) {
			size_t t = insn_at(insn, n, target);

			if (t < n)
				b[k].succ[b[k].n_succ++] = block_of[t];
		}
	}
	*n_blocks = nb;
out:
	free(leader);
	free(block_of);
	return b;
}

static int add_block(struct st_result *r, uint64_t lo, uint64_t hi)
{
	if (r->n_blocks == r->cap_blocks) {
		size_t cap = r->cap_blocks ? 2 * r->cap_blocks : 256;
		struct st_block *p = realloc(r->blocks, cap * sizeof(*p));

		if (!p)
			return -1;
		r->blocks = p;
		r->cap_blocks = cap;
	}
	r->blocks[r->n_blocks++] = (struct st_block){lo, hi};
	return 0;
}

static int run_block(struct fn_ctx *c, struct block_info *b, csh cs)
{
	struct state st = b->in;

	for (size_t i = b->first; i <= b->last; i++)
		if (step(c, &c->insn[i], &st, cs))
			return -1;
	b->out = st;
	return 0;
}

/* Predecessors of each block, as one array indexed by pred_start (CSR). */
static size_t *predecessors(const struct block_info *b, size_t nb, size_t **pred_start)
{
	size_t *start = calloc(nb + 1, sizeof(*start)), *fill, *pred;
	size_t total = 0;

	if (!start)
		return NULL;
	for (size_t p = 0; p < nb; p++)
		for (size_t k = 0; k < b[p].n_succ; k++)
			start[b[p].succ[k] + 1]++, total++;
	for (size_t i = 0; i < nb; i++)
		start[i + 1] += start[i];
	pred = calloc(total ? total : 1, sizeof(*pred));
	fill = calloc(nb ? nb : 1, sizeof(*fill));
	if (!pred || !fill) {
		free(start);
		free(pred);
		free(fill);
		return NULL;
	}
	for (size_t p = 0; p < nb; p++)
		for (size_t k = 0; k < b[p].n_succ; k++) {
			size_t s = b[p].succ[k];

			pred[start[s] + fill[s]++] = p;
		}
	free(fill);
	*pred_start = start;
	return pred;
}

/*
 * Alignment padding after a jump or return (nop, int3) is a block nothing
 * reaches; falling through from it into a branch target must not make the
 * target's registers unknown.
 */
static void mark_padding(const struct fn_ctx *c, struct block_info *b, size_t nb,
			 const size_t *pred_start)
{
	for (size_t i = 1; i < nb; i++) {
		bool only_nops = pred_start[i] == pred_start[i + 1];

		for (size_t k = b[i].first; k <= b[i].last && only_nops; k++)
			only_nops = c->insn[k].id == X86_INS_NOP || c->insn[k].id == X86_INS_INT3;
		b[i].padding = only_nops;
	}
}

/* Forward propagation to a fixed point (bounded), then one pass that emits. */
static int analyse_function(struct fn_ctx *c, csh cs)
{
	size_t nb = 0, *pred_start = NULL, *pred;
	struct block_info *b = cut_blocks(c->insn, c->n_insn, &nb);
	int rc = 0;

	if (!b)
		return -1;
	pred = predecessors(b, nb, &pred_start);
	if (!pred) {
		free(b);
		return -1;
	}
	mark_padding(c, b, nb, pred_start);
	c->emit = false;
	for (int pass = 0; pass < MAX_PASSES && rc == 0; pass++) {
		bool changed = false;

		for (size_t i = 0; i < nb && rc == 0; i++) {
			struct state in, old = b[i].out;
			bool first = true, was = b[i].visited;

			/* in = meet of the outs of the predecessors visited so far */
			for (size_t k = pred_start[i]; k < pred_start[i + 1] && i; k++)
				if (b[pred[k]].visited && !b[pred[k]].padding) {
					meet(c->t, &in, &b[pred[k]].out, first);
					first = false;
				}
			if (first) {
				for (int g = 0; g < N_GPR; g++)
					in.r[g] = unknown;
				in.n_spills = 0;
			}
			b[i].in = in;
			rc = run_block(c, &b[i], cs);
			b[i].visited = true;
			changed |= !was || !same_state(&old, &b[i].out);
		}
		if (!changed)
			break;
	}
	c->emit = true;
	for (size_t i = 0; i < nb && rc == 0; i++) {
		size_t before = c->r->n_refs;

		rc = run_block(c, &b[i], cs);
		if (rc == 0 && c->r->n_refs > before)
			rc = add_block(c->r, c->insn[b[i].first].address,
				       c->insn[b[i].last].address);
	}
	free(pred);
	free(pred_start);
	free(b);
	return rc;
}

static const struct st_code *code_at(const struct st_code *code, size_t n, uint64_t addr)
{
	for (size_t i = 0; i < n; i++)
		if (addr >= code[i].addr && addr < code[i].addr + code[i].size)
			return &code[i];
	return NULL;
}

/* The variable locations starting inside [lo, hi), by pointer. */
static const struct st_var_loc **locs_in(const struct st_vars *v, uint64_t lo, uint64_t hi,
					 size_t *n)
{
	size_t a = 0, b = v->n_locs, count = 0;
	const struct st_var_loc **out;

	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (v->locs[mid].lo < lo)
			a = mid + 1;
		else
			b = mid;
	}
	for (b = a; b < v->n_locs && v->locs[b].lo < hi; b++)
		count++;
	out = calloc(count ? count : 1, sizeof(*out));
	if (!out)
		return NULL;
	for (size_t i = 0; i < count; i++)
		out[i] = &v->locs[a + i];
	*n = count;
	return out;
}

int st_refs_find(const struct st_types *t, const struct st_vars *v, const struct st_code *code,
		 size_t n_code, const struct st_symbol *syms, size_t n_syms, struct st_result *r,
		 char *err, size_t err_size)
{
	csh cs;
	int rc = 0;
	uint64_t *done = calloc(n_syms ? n_syms : 1, sizeof(*done));
	size_t n_done = 0;

	if (!done) {
		snprintf(err, err_size, "out of memory");
		return -1;
	}
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		free(done);
		snprintf(err, err_size, "capstone: cannot open an x86-64 decoder");
		return -1;
	}
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	for (size_t i = 0; i < n_syms && rc == 0; i++) {
		const struct st_code *sec = code_at(code, n_code, syms[i].lo);
		struct fn_ctx c = {.t = t, .v = v, .r = r};
		uint64_t hi = syms[i].hi;

		/* aliases of one function are decoded once */
		if (bsearch(&syms[i].lo, done, n_done, sizeof(*done), cmp_u64))
			continue;
		done[n_done++] = syms[i].lo;
		qsort(done, n_done, sizeof(*done), cmp_u64);
		if (!sec || hi <= syms[i].lo)
			continue;
		if (hi > sec->addr + sec->size)
			hi = sec->addr + sec->size;
		c.locs = locs_in(v, syms[i].lo, hi, &c.n_locs);
		if (!c.locs) {
			rc = -1;
			break;
		}
		c.n_insn = cs_disasm(cs, sec->bytes + (syms[i].lo - sec->addr), hi - syms[i].lo,
				     syms[i].lo, 0, &c.insn);
		r->functions++;
		r->instructions += c.n_insn;
		if (c.n_insn)
			rc = analyse_function(&c, cs);
		if (c.insn)
			cs_free(c.insn, c.n_insn);
		free(c.locs);
	}
	cs_close(&cs);
	free(done);
	if (rc)
		snprintf(err, err_size, "out of memory finding references");
	return rc;
}

void st_result_free(struct st_result *r)
{
	free(r->refs);
	free(r->blocks);
	memset(r, 0, sizeof(*r));
}
