// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * The `clock` source's data addresses (spec autocpa.md §8.3 item 6, §8.1):
 * without a PMU, a clock sample gives a pc and the user registers
 * (PERF_SAMPLE_REGS_USER); the memory operand of the instruction there is
 * decoded with capstone and its effective address computed from the
 * registers. The interrupted pc is the *next* instruction to run, and the
 * access that stalled is usually the one before it (spec §5.2: 86% of a
 * cpu-clock profile's samples one instruction after the missing load), so
 * the previous instruction is found by decoding its function from the start
 * (ELF symbols give the start). When that instruction overwrote its own
 * base or index register the registers no longer give its address: it is
 * counted, never guessed.
 *
 * Code bytes come from the file on disk (the process may have exited when
 * the samples are resolved), through its PT_LOAD headers.
 */
#include <capstone/capstone.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/elf.h"
#include "layout/layout.h"

/* ------------------------------------------------------------ decoding */

struct layout_decoder {
	csh cs;
	cs_insn *insn;
};

struct layout_decoder *layout_decoder_new(void)
{
	struct layout_decoder *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &d->cs) != CS_ERR_OK) {
		free(d);
		return NULL;
	}
	cs_option(d->cs, CS_OPT_DETAIL, CS_OPT_ON);
	d->insn = cs_malloc(d->cs);
	if (!d->insn) {
		cs_close(&d->cs);
		free(d);
		return NULL;
	}
	return d;
}

void layout_decoder_free(struct layout_decoder *d)
{
	if (!d)
		return;
	cs_free(d->insn, 1);
	cs_close(&d->cs);
	free(d);
}

/* A capstone general register as perf's x86-64 register index; -1 if none. */
static int perf_reg(unsigned r, bool *narrow)
{
	*narrow = false;
	switch (r) {
	case X86_REG_EAX:
		*narrow = true; /* fall through */
	case X86_REG_RAX:
		return LAYOUT_PERF_REG_AX;
	case X86_REG_EBX:
		*narrow = true; /* fall through */
	case X86_REG_RBX:
		return LAYOUT_PERF_REG_BX;
	case X86_REG_ECX:
		*narrow = true; /* fall through */
	case X86_REG_RCX:
		return LAYOUT_PERF_REG_CX;
	case X86_REG_EDX:
		*narrow = true; /* fall through */
	case X86_REG_RDX:
		return LAYOUT_PERF_REG_DX;
	case X86_REG_ESI:
		*narrow = true; /* fall through */
	case X86_REG_RSI:
		return LAYOUT_PERF_REG_SI;
	case X86_REG_EDI:
		*narrow = true; /* fall through */
	case X86_REG_RDI:
		return LAYOUT_PERF_REG_DI;
	case X86_REG_EBP:
		*narrow = true; /* fall through */
	case X86_REG_RBP:
		return LAYOUT_PERF_REG_BP;
	case X86_REG_ESP:
		*narrow = true; /* fall through */
	case X86_REG_RSP:
		return LAYOUT_PERF_REG_SP;
	case X86_REG_R8D:
		*narrow = true; /* fall through */
	case X86_REG_R8:
		return LAYOUT_PERF_REG_R8;
	case X86_REG_R9D:
		*narrow = true; /* fall through */
	case X86_REG_R9:
		return LAYOUT_PERF_REG_R8 + 1;
	case X86_REG_R10D:
		*narrow = true; /* fall through */
	case X86_REG_R10:
		return LAYOUT_PERF_REG_R8 + 2;
	case X86_REG_R11D:
		*narrow = true; /* fall through */
	case X86_REG_R11:
		return LAYOUT_PERF_REG_R8 + 3;
	case X86_REG_R12D:
		*narrow = true; /* fall through */
	case X86_REG_R12:
		return LAYOUT_PERF_REG_R8 + 4;
	case X86_REG_R13D:
		*narrow = true; /* fall through */
	case X86_REG_R13:
		return LAYOUT_PERF_REG_R8 + 5;
	case X86_REG_R14D:
		*narrow = true; /* fall through */
	case X86_REG_R14:
		return LAYOUT_PERF_REG_R8 + 6;
	case X86_REG_R15D:
		*narrow = true; /* fall through */
	case X86_REG_R15:
		return LAYOUT_PERF_REG_R8 + 7;
	default:
		return -1;
	}
}

/* Any register (al, ax, eax, rax...) as the perf index of its 64-bit whole. */
static int perf_reg_family(unsigned r)
{
	static const struct {
		unsigned reg;
		int perf;
	} partial[] = {
	    {X86_REG_AL, LAYOUT_PERF_REG_AX},  {X86_REG_AH, LAYOUT_PERF_REG_AX},
	    {X86_REG_AX, LAYOUT_PERF_REG_AX},  {X86_REG_BL, LAYOUT_PERF_REG_BX},
	    {X86_REG_BH, LAYOUT_PERF_REG_BX},  {X86_REG_BX, LAYOUT_PERF_REG_BX},
	    {X86_REG_CL, LAYOUT_PERF_REG_CX},  {X86_REG_CH, LAYOUT_PERF_REG_CX},
	    {X86_REG_CX, LAYOUT_PERF_REG_CX},  {X86_REG_DL, LAYOUT_PERF_REG_DX},
	    {X86_REG_DH, LAYOUT_PERF_REG_DX},  {X86_REG_DX, LAYOUT_PERF_REG_DX},
	    {X86_REG_SIL, LAYOUT_PERF_REG_SI}, {X86_REG_SI, LAYOUT_PERF_REG_SI},
	    {X86_REG_DIL, LAYOUT_PERF_REG_DI}, {X86_REG_DI, LAYOUT_PERF_REG_DI},
	    {X86_REG_BPL, LAYOUT_PERF_REG_BP}, {X86_REG_BP, LAYOUT_PERF_REG_BP},
	    {X86_REG_SPL, LAYOUT_PERF_REG_SP}, {X86_REG_SP, LAYOUT_PERF_REG_SP},
	};
	bool narrow;
	int p = perf_reg(r, &narrow);

	if (p >= 0)
		return p;
	if (r >= X86_REG_R8B && r <= X86_REG_R15B)
		return LAYOUT_PERF_REG_R8 + (int)(r - X86_REG_R8B);
	if (r >= X86_REG_R8W && r <= X86_REG_R15W)
		return LAYOUT_PERF_REG_R8 + (int)(r - X86_REG_R8W);
	for (size_t i = 0; i < sizeof(partial) / sizeof(partial[0]); i++)
		if (partial[i].reg == r)
			return partial[i].perf;
	return -1;
}

/* Instructions whose memory operand is no data access. */
static bool no_data_access(unsigned id)
{
	switch (id) {
	case X86_INS_LEA:
	case X86_INS_NOP:
	case X86_INS_PREFETCH:
	case X86_INS_PREFETCHNTA:
	case X86_INS_PREFETCHT0:
	case X86_INS_PREFETCHT1:
	case X86_INS_PREFETCHT2:
	case X86_INS_PREFETCHW:
		return true;
	default:
		return false;
	}
}

static void fill_operand(struct layout_decoder *d, const cs_x86_op *op,
			 struct layout_mem_operand *out)
{
	bool narrow = false;

	out->has_memory = true;
	out->size = op->size;
	out->read = (op->access & CS_AC_READ) != 0;
	out->write = (op->access & CS_AC_WRITE) != 0;
	if (!out->read && !out->write)
		out->read = true;
	out->disp = op->mem.disp;
	out->scale = op->mem.scale > 0 ? (unsigned)op->mem.scale : 1;
	out->segment = op->mem.segment == X86_REG_FS ? 1 : op->mem.segment == X86_REG_GS ? 2 : 0;
	out->base = -1;
	out->index = -1;
	if (op->mem.base == X86_REG_RIP) {
		out->base = LAYOUT_MEM_BASE_RIP;
	} else if (op->mem.base != X86_REG_INVALID) {
		out->base = perf_reg(op->mem.base, &narrow);
		if (out->base < 0)
			out->unknown_register = true;
	}
	out->narrow = narrow;
	if (op->mem.index != X86_REG_INVALID) {
		out->index = perf_reg(op->mem.index, &narrow);
		if (out->index < 0)
			out->unknown_register = true; /* vector index: a gather */
		out->narrow |= narrow;
	}
	/* does the instruction overwrite what its address was computed from? */
	{
		cs_regs rd, wr;
		uint8_t n_rd = 0, n_wr = 0;

		if (cs_regs_access(d->cs, d->insn, rd, &n_rd, wr, &n_wr) == CS_ERR_OK)
			for (uint8_t i = 0; i < n_wr; i++) {
				int w = perf_reg_family(wr[i]);

				if (w >= 0 && (w == out->base || w == out->index))
					out->clobbers_address = true;
			}
	}
}

int layout_decode_memory(struct layout_decoder *d, const uint8_t *code, size_t n, uint64_t addr,
			 struct layout_mem_operand *out)
{
	const uint8_t *p = code;
	size_t left = n;
	uint64_t at = addr;
	const cs_x86 *x;

	memset(out, 0, sizeof(*out));
	if (!cs_disasm_iter(d->cs, &p, &left, &at, d->insn))
		return -1;
	out->length = d->insn->size;
	if (no_data_access(d->insn->id))
		return 0;
	x = &d->insn->detail->x86;
	for (uint8_t i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM) {
			fill_operand(d, &x->operands[i], out);
			break;
		}
	return 0;
}

int layout_effective_address(const struct layout_mem_operand *op, uint64_t insn_addr,
			     const uint64_t *regs, uint64_t regs_valid, uint64_t *ea)
{
	uint64_t a = (uint64_t)op->disp;

	/* fs/gs: the segment base is not among the sampled registers */
	if (!op->has_memory || op->segment || op->unknown_register || op->clobbers_address)
		return -1;
	if (op->base == LAYOUT_MEM_BASE_RIP) {
		a += insn_addr + op->length;
	} else if (op->base >= 0) {
		if (!(regs_valid & (1ull << op->base)))
			return -1;
		a += regs[op->base];
	}
	if (op->index >= 0) {
		if (!(regs_valid & (1ull << op->index)))
			return -1;
		a += regs[op->index] * op->scale;
	}
	if (op->narrow)
		a &= 0xffffffffull;
	*ea = a;
	return 0;
}

/* ------------------------------------------------------------ code of a file on disk */

struct code_segment {
	uint64_t vaddr, offset, filesz;
	bool exec;
};

struct code_function {
	uint64_t lo, hi;
};

struct layout_code {
	int fd;
	size_t n_segments;
	struct code_segment *segments;
	size_t n_functions;
	struct code_function *functions;
	char build_id[2 * 64 + 1];
};

static int compare_functions(const void *a, const void *b)
{
	const struct code_function *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo ? 1 : 0;
}

static int read_functions(struct layout_code *c, Elf *elf)
{
	size_t cap = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;

			if (!gelf_getsym(data, (int)i, &sym) ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size ||
			    sym.st_shndx == SHN_UNDEF)
				continue;
			if (c->n_functions == cap) {
				struct code_function *g;

				cap = cap ? 2 * cap : 256;
				g = realloc(c->functions, cap * sizeof(*g));
				if (!g)
					return -1;
				c->functions = g;
			}
			c->functions[c->n_functions++] =
			    (struct code_function){sym.st_value, sym.st_value + sym.st_size};
		}
	}
	if (c->n_functions)
		qsort(c->functions, c->n_functions, sizeof(*c->functions), compare_functions);
	return 0;
}

struct layout_code *layout_code_open(const char *path)
{
	struct layout_code *c = calloc(1, sizeof(*c));
	unsigned char id[64];
	size_t n_phdrs, id_len;
	Elf *elf;

	if (!c)
		return NULL;
	c->fd = open(path, O_RDONLY | O_CLOEXEC);
	elf_version(EV_CURRENT);
	elf = c->fd >= 0 ? elf_begin(c->fd, ELF_C_READ, NULL) : NULL;
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &n_phdrs)) {
		if (elf)
			elf_end(elf);
		layout_code_free(c);
		return NULL;
	}
	c->segments = calloc(n_phdrs ? n_phdrs : 1, sizeof(*c->segments));
	for (size_t i = 0; c->segments && i < n_phdrs; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			c->segments[c->n_segments++] = (struct code_segment){
			    ph.p_vaddr, ph.p_offset, ph.p_filesz, (ph.p_flags & PF_X) != 0};
	}
	id_len = elf_build_id(elf, id, sizeof(id));
	for (size_t i = 0; i < id_len; i++)
		snprintf(c->build_id + 2 * i, 3, "%02x", id[i]);
	if (!c->segments || read_functions(c, elf)) {
		elf_end(elf);
		layout_code_free(c);
		return NULL;
	}
	elf_end(elf);
	return c;
}

void layout_code_free(struct layout_code *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	free(c->segments);
	free(c->functions);
	free(c);
}

const char *layout_code_build_id(const struct layout_code *c)
{
	return c->build_id;
}

int layout_code_offset_to_vaddr(const struct layout_code *c, uint64_t offset, uint64_t *vaddr)
{
	for (size_t i = 0; i < c->n_segments; i++) {
		const struct code_segment *s = &c->segments[i];

		if (offset >= s->offset && offset - s->offset < s->filesz) {
			*vaddr = s->vaddr + (offset - s->offset);
			return 0;
		}
	}
	return -1;
}

/* Up to n bytes of executable code at vaddr; how many (0: none there). */
static size_t read_code(const struct layout_code *c, uint64_t vaddr, uint8_t *buf, size_t n)
{
	for (size_t i = 0; i < c->n_segments; i++) {
		const struct code_segment *s = &c->segments[i];
		uint64_t left;
		ssize_t got;

		if (!s->exec || vaddr < s->vaddr || vaddr - s->vaddr >= s->filesz)
			continue;
		left = s->filesz - (vaddr - s->vaddr);
		if (n > left)
			n = (size_t)left;
		got = pread(c->fd, buf, n, (off_t)(s->offset + (vaddr - s->vaddr)));
		return got > 0 ? (size_t)got : 0;
	}
	return 0;
}

int layout_code_decode(const struct layout_code *c, struct layout_decoder *d, uint64_t vaddr,
		       struct layout_mem_operand *op)
{
	uint8_t buf[16];
	size_t n = read_code(c, vaddr, buf, sizeof(buf));

	return n ? layout_decode_memory(d, buf, n, vaddr, op) : -1;
}

int layout_code_previous(const struct layout_code *c, struct layout_decoder *d, uint64_t vaddr,
			 uint64_t *previous)
{
	const struct code_function *f = NULL;
	size_t lo = 0, hi = c->n_functions;
	uint64_t at;

	/* the last function starting at or before vaddr that contains it */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->functions[mid].lo <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0;) {
		if (c->functions[i].lo <= vaddr && vaddr < c->functions[i].hi) {
			f = &c->functions[i];
			break;
		}
		if (vaddr - c->functions[i].lo > (1u << 20))
			break;
	}
	if (!f || f->lo == vaddr)
		return -1;
	for (at = f->lo; at < vaddr;) {
		struct layout_mem_operand op;

		if (layout_code_decode(c, d, at, &op) || !op.length)
			return -1;
		if (at + op.length == vaddr) {
			*previous = at;
			return 0;
		}
		at += op.length;
	}
	return -1; /* decoding went past vaddr: data in code, or not an instruction boundary */
}
