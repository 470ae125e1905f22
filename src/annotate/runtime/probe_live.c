/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Live patching of unmodified functions (spec/freud.md §7.5 (b)): the first
 * instructions covering at least five bytes are copied, relocated, into the
 * probe's entry trampoline (after the register save and the call into C) and
 * replaced by a `jmp rel32` to it; the trampoline then jumps back behind
 * them. Capstone decodes the function.
 *
 * Relocation rewrites RIP-relative memory operands and direct jumps, calls
 * and conditional jumps for their new address; a short (rel8) jump or
 * conditional jump is widened to its rel32 form, since `test; jle` is how
 * many functions begin. A displaced call is not copied as a call: its
 * return address would lie in the trampoline, which has no CFI, so a callee
 * that throws (operator new, as the first action of a try block) would end
 * the program in std::terminate. It becomes a push of the original return
 * address (the original instruction after it, which is never inside the patch)
 * and a jmp to the callee, so the callee returns into the function itself.
 * Refused, with the function and the reason: a
 * function shorter than the patch, a `ret` or a branch with no 32-bit form
 * (loop, jrcxz) among the displaced instructions, and any direct branch of
 * the function that lands inside the patched bytes (it would land in the
 * middle of the jmp). Indirect jumps into the first five bytes (a jump table aimed
 * at the entry) cannot be seen and are assumed absent, as every binary
 * patcher assumes.
 *
 * Like the sled probes, patching happens before the program's threads run
 * (init.c) or before dlopen returns, never under running threads.
 */
#include <capstone/capstone.h>
#include <stdio.h>
#include <string.h>

#include "annotate/runtime/runtime.h"

#define PATCH_BYTES   5
#define DISPLACED_MAX 64

struct decoded {
	csh cs;
	cs_insn *insn;
	size_t n;
};

static bool is_branch(csh cs, const cs_insn *i)
{
	return cs_insn_group(cs, i, CS_GRP_JUMP) || cs_insn_group(cs, i, CS_GRP_CALL);
}

static bool imm_target(const cs_insn *i, uint64_t *target)
{
	const cs_x86 *x = &i->detail->x86;

	if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM) {
		*target = (uint64_t)x->operands[0].imm;
		return true;
	}
	return false;
}

/* A direct branch of the function into (entry, entry + len): where from. */
static bool branch_into(const struct decoded *d, uintptr_t entry, size_t len, uint64_t *from,
			uint64_t *to)
{
	for (size_t k = 0; k < d->n; k++) {
		uint64_t target;

		if (is_branch(d->cs, &d->insn[k]) && imm_target(&d->insn[k], &target) &&
		    target > entry && target < entry + len) {
			*from = d->insn[k].address;
			*to = target;
			return true;
		}
	}
	return false;
}

/*
 * Push the original return address of the call `i` without touching a
 * register or the flags: push imm32 (sign-extended) then the high half.
 */
static size_t push_return_address(const cs_insn *i, uint8_t *at)
{
	uint64_t ret = i->address + i->size;
	uint32_t lo = (uint32_t)ret, hi = (uint32_t)(ret >> 32);

	at[0] = 0x68; /* push imm32 */
	memcpy(at + 1, &lo, 4);
	memcpy(at + 5, (const uint8_t[]){0xc7, 0x44, 0x24, 0x04}, 4); /* mov dword [rsp+4] */
	memcpy(at + 9, &hi, 4);
	return 13;
}

/*
 * An indirect call (ff /2) becomes the same jump (ff /4) after the pushed
 * return address; a memory operand based on rsp would see the push, and is
 * refused (compilers do not emit it at a function's entry).
 */
static int relocate_indirect_call(const cs_insn *i, uint8_t *at, size_t *out_len, char *why,
				  size_t why_size)
{
	const cs_x86 *x = &i->detail->x86;
	size_t pushed = push_return_address(i, at), op = x->encoding.modrm_offset;

	if (op == 0 || i->bytes[op - 1] != 0xff || ((x->modrm >> 3) & 7) != 2 ||
	    (x->op_count == 1 && x->operands[0].type == X86_OP_MEM &&
	     (x->operands[0].mem.base == X86_REG_RSP || x->operands[0].mem.index == X86_REG_RSP))) {
		snprintf(why, why_size, "a call it cannot relocate (%s %s) in its first %d bytes",
			 i->mnemonic, i->op_str, PATCH_BYTES);
		return -1;
	}
	memcpy(at + pushed, i->bytes, i->size);
	at[pushed + op] = (uint8_t)((x->modrm & ~0x38) | (4 << 3)); /* /2 call → /4 jmp */
	if (x->operands[0].type == X86_OP_MEM && x->operands[0].mem.base == X86_REG_RIP) {
		uint64_t target = i->address + i->size + (uint64_t)x->operands[0].mem.disp;
		int64_t rel = (int64_t)target - (int64_t)((uintptr_t)at + pushed + i->size);

		if (x->encoding.disp_size != 4 || rel != (int32_t)rel) {
			snprintf(why, why_size, "a RIP-relative call out of reach (%s %s)",
				 i->mnemonic, i->op_str);
			return -1;
		}
		memcpy(at + pushed + x->encoding.disp_offset, &(int32_t){(int32_t)rel}, 4);
	}
	*out_len = pushed + i->size;
	return 0;
}

/* Copy one instruction to `at` (its new address), fixing relative operands. */
static int relocate(csh cs, const cs_insn *i, uint8_t *at, size_t *out_len, char *why,
		    size_t why_size)
{
	const cs_x86 *x = &i->detail->x86;
	uint64_t target;
	int64_t rel;

	if (cs_insn_group(cs, i, CS_GRP_RET) || cs_insn_group(cs, i, CS_GRP_IRET)) {
		snprintf(why, why_size, "it returns within its first %d bytes", PATCH_BYTES);
		return -1;
	}
	if (cs_insn_group(cs, i, CS_GRP_CALL) && !imm_target(i, &target))
		return relocate_indirect_call(i, at, out_len, why, why_size);
	if (is_branch(cs, i) && imm_target(i, &target)) {
		uint8_t op = i->bytes[0];
		size_t len, pushed = 0;

		if (op == 0xe8) { /* call rel32: push the original return address, jmp */
			pushed = push_return_address(i, at);
			at += pushed;
			at[0] = 0xe9;
			len = 5;
		} else if (op == 0xe9) { /* jmp rel32 */
			at[0] = op;
			len = 5;
		} else if (op == 0xeb) { /* jmp rel8 becomes jmp rel32 */
			at[0] = 0xe9;
			len = 5;
		} else if (op >= 0x70 && op <= 0x7f && i->size == 2) { /* jcc rel8 → jcc rel32 */
			at[0] = 0x0f;
			at[1] = (uint8_t)(0x80 | (op & 0x0f));
			len = 6;
		} else if (op == 0x0f && (i->bytes[1] & 0xf0) == 0x80 && i->size == 6) {
			at[0] = 0x0f;
			at[1] = i->bytes[1];
			len = 6;
		} else {
			snprintf(why, why_size,
				 "a branch with no 32-bit form (%s %s) in its first %d "
				 "bytes",
				 i->mnemonic, i->op_str, PATCH_BYTES);
			return -1;
		}
		rel = (int64_t)target - (int64_t)((uintptr_t)at + len);
		if (rel != (int32_t)rel) {
			snprintf(why, why_size, "a branch out of reach of the trampoline");
			return -1;
		}
		memcpy(at + len - 4, &(int32_t){(int32_t)rel}, 4);
		*out_len = pushed + len;
		return 0;
	}
	memcpy(at, i->bytes, i->size);
	for (int k = 0; k < x->op_count; k++) {
		const cs_x86_op *op = &x->operands[k];

		if (op->type != X86_OP_MEM || op->mem.base != X86_REG_RIP)
			continue;
		if (x->encoding.disp_size != 4) {
			snprintf(why, why_size, "an unusual RIP-relative operand (%s %s)",
				 i->mnemonic, i->op_str);
			return -1;
		}
		target = i->address + i->size + (uint64_t)op->mem.disp;
		rel = (int64_t)target - (int64_t)((uintptr_t)at + i->size);
		if (rel != (int32_t)rel) {
			snprintf(why, why_size, "a RIP-relative operand out of reach");
			return -1;
		}
		memcpy(at + x->encoding.disp_offset, &(int32_t){(int32_t)rel}, 4);
	}
	*out_len = i->size;
	return 0;
}

/*
 * A planned branch (--branches) among the displaced instructions: where its
 * relocated copy is, so that branches.c arms the copy that runs.
 */
static void note_moved_branch(struct ann_probe *p, uint64_t offset, uintptr_t copy, size_t len)
{
	for (uint32_t i = 0; i < p->n_branches; i++)
		if (p->branches[i].offset == offset) {
			p->branches[i].moved_to = copy;
			p->branches[i].moved_len = (uint8_t)len;
		}
}

static int check_and_build(struct ann_probe *p, const struct decoded *d, uintptr_t entry, char *why,
			   size_t why_size)
{
	size_t covered = 0, n_displaced = 0, used = 0;
	uint8_t *code, *at;
	uint64_t from, to;

	while (covered < PATCH_BYTES && n_displaced < d->n)
		covered += d->insn[n_displaced++].size;
	if (covered < PATCH_BYTES) {
		snprintf(why, why_size, "it is shorter (%zu bytes) than the %d-byte patch", covered,
			 PATCH_BYTES);
		return -1;
	}
	if (branch_into(d, entry, covered, &from, &to)) {
		snprintf(why, why_size,
			 "a branch at +%#llx lands at +%#llx, inside the %zu patched bytes",
			 (unsigned long long)(from - entry), (unsigned long long)(to - entry),
			 covered);
		return -1;
	}
	p->entry = entry;
	code = ann_entry_trampoline_begin(p, entry, DISPLACED_MAX, &at);
	if (!code) {
		snprintf(why, why_size, "no memory for a trampoline within 2 GiB");
		return -1;
	}
	for (size_t k = 0; k < n_displaced; k++) {
		size_t len;

		if (cs_insn_group(d->cs, &d->insn[k], CS_GRP_CALL) && k + 1 < n_displaced) {
			/* its return address would be inside the patch */
			snprintf(why, why_size, "a call in its first %d bytes is followed by more",
				 PATCH_BYTES);
			return -1;
		}
		if (relocate(d->cs, &d->insn[k], at + used, &len, why, why_size))
			return -1;
		note_moved_branch(p, d->insn[k].address - entry, (uintptr_t)(at + used), len);
		used += len;
	}
	ann_entry_trampoline_end(at + used, entry + covered);
	p->trampoline = code;
	if (ann_write_jmp(entry, (uintptr_t)code, covered)) {
		snprintf(why, why_size, "cannot write its entry (mprotect refused)");
		return -1;
	}
	p->installed = ANN_PROBE_LIVE;
	p->displaced = (uint32_t)covered; /* no branch there can be armed (branches.c) */
	return 0;
}

int ann_probe_live(struct ann_probe *p, uintptr_t entry, char *why, size_t why_size)
{
	struct decoded d = {0};
	int rc;

	if (p->size < PATCH_BYTES) {
		snprintf(why, why_size, "it is shorter (%llu bytes) than the %d-byte patch",
			 (unsigned long long)p->size, PATCH_BYTES);
		return -1;
	}
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &d.cs) != CS_ERR_OK) {
		snprintf(why, why_size, "capstone cannot start");
		return -1;
	}
	cs_option(d.cs, CS_OPT_DETAIL, CS_OPT_ON);
	d.n = cs_disasm(d.cs, (const uint8_t *)entry, p->size, entry, 0, &d.insn);
	if (d.n == 0) {
		snprintf(why, why_size, "its code cannot be decoded");
		rc = -1;
	} else {
		rc = check_and_build(p, &d, entry, why, why_size);
	}
	if (d.n)
		cs_free(d.insn, d.n);
	cs_close(&d.cs);
	return rc;
}
