/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Which functions of the main executable can move, and what to fix when they
 * do (spec stabilizer.md §12.3 option B).
 *
 * Every function (STT_FUNC in .text with a size) is decoded with capstone.
 * Each PC-relative field (rel32 branch or call, RIP-relative memory operand)
 * whose target lies outside the function becomes a fixup: the copy's
 * displacement is shifted so it reaches the same absolute address. Branches
 * inside the function need nothing. The relocations kept by --emit-relocs
 * are the cross-check: every PC-relative relocation inside a function must
 * sit on a field the decoder found, or the function stays in place.
 *
 * The original bodies stay intact except for the entry jump, so code that
 * still jumps into an original body (a cold part jumping back, a table in
 * data) runs correct code; only a jump into the overwritten first bytes
 * would not, and such targets keep their function in place.
 *
 * Runs once at start-up; may allocate (tables are mmap'ed).
 */
#include "stabilizer/runtime/code.h"

#include <capstone/capstone.h>
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/base.h"
#include "elf/elf.h"

static const char *const skip_names[SKIP_COUNT] = {
    [SKIP_NONE] = "relocatable",
    [SKIP_TOO_SMALL] = "too small for the entry jump",
    [SKIP_TOO_LARGE] = "too large",
    [SKIP_UNDECODABLE] = "undecodable",
    [SKIP_SHORT_BRANCH_OUT] = "short branch out of the function",
    [SKIP_OWN_LABEL] = "takes the address of its own code",
    [SKIP_UNHANDLED_RELOC] = "PC-relative relocation not at a decoded field",
    [SKIP_ENTRY_TARGETED] = "something jumps into its entry bytes",
    [SKIP_UNWIND] = "unwind info not rebuildable",
    [SKIP_EXCLUDED] = "excluded (start-up code)",
};

const char *code_skip_name(enum code_skip why)
{
	return why < SKIP_COUNT ? skip_names[why] : "?";
}

static void *map_table(size_t bytes)
{
	void *p;

	if (bytes == 0)
		bytes = 1;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/*
 * Makes room for one more element in the mapped array *p of *cap elements of
 * elem bytes (n in use): doubles it, from first, copying what it holds.
 */
static bool map_table_reserve(void **p, size_t *cap, size_t n, size_t elem, size_t first)
{
	size_t new_cap = *cap ? *cap * 2 : first;
	void *q;

	if (n < *cap)
		return true;
	q = map_table(new_cap * elem);
	if (!q)
		return false;
	if (*p) {
		memcpy(q, *p, n * elem);
		munmap(*p, *cap * elem);
	}
	*p = q;
	*cap = new_cap;
	return true;
}

/* ---------- the loaded image ---------- */

static int image_range(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct code_image *img = ctx;

	img->load_bias = info->dlpi_addr;
	img->image_lo = UINTPTR_MAX;
	img->image_hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD) {
			if (lo < img->image_lo)
				img->image_lo = lo;
			if (lo + ph->p_memsz > img->image_hi)
				img->image_hi = lo + ph->p_memsz;
		} else if (ph->p_type == PT_GNU_EH_FRAME) {
			img->eh_frame_hdr = lo;
		}
	}
	return 1; /* the first object is the main program */
}

/* ---------- reading the ELF file ---------- */

struct pcrel_reloc_list {
	uintptr_t *addrs; /* run-time addresses of PC-relative fields, sorted */
	size_t n, cap;
};

struct analysis {
	struct code_image *img;
	Elf *elf;
	size_t text_index;
	Elf_Scn *text_scn;
	uintptr_t text_lo, text_hi; /* run-time */
	struct pcrel_reloc_list pcrel;
	csh cs;
	cs_insn *insn;
	uintptr_t *fields; /* PC-relative fields of the function being decoded */
	size_t n_fields, cap_fields;
	size_t cap_fixups;
	struct code_build_id build_id; /* the decode cache's key */
};

static bool reloc_is_pcrel32(unsigned type)
{
	switch (type) {
	case R_X86_64_PC32:
	case R_X86_64_PLT32:
	case R_X86_64_GOTPCREL:
	case R_X86_64_GOTPCRELX:
	case R_X86_64_REX_GOTPCRELX:
	case R_X86_64_GOTPC32:
	case R_X86_64_PC8:
	case R_X86_64_PC16:
	case R_X86_64_PC64:
		return true;
	default:
		return false;
	}
}

/*
 * TLS relocations keep their type in the output after the linker relaxed the
 * access (to %fs-relative immediates in an executable), so they need not sit
 * on a PC-relative field; one that does (an initial-exec GOT load) was
 * decoded and is fixed like any other.
 */
static bool reloc_is_tls(unsigned type)
{
	switch (type) {
	case R_X86_64_GOTTPOFF:
	case R_X86_64_TLSGD:
	case R_X86_64_TLSLD:
	case R_X86_64_GOTPC32_TLSDESC:
	case R_X86_64_TLSDESC_CALL:
	case R_X86_64_DTPOFF32:
	case R_X86_64_TPOFF32:
		return true;
	default:
		return false;
	}
}

static int compare_uintptr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

static int compare_function(const void *a, const void *b)
{
	const struct code_function *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->size < y->size ? 1 : x->size > y->size ? -1 : 0;
}

/* The function containing run-time address addr, or NULL. */
static struct code_function *function_at(struct code_image *img, uintptr_t addr)
{
	size_t lo = 0, hi = img->n_funcs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		struct code_function *f = &img->funcs[mid];

		if (addr < f->start)
			hi = mid;
		else if (addr >= f->start + f->size)
			lo = mid + 1;
		else
			return f;
	}
	return NULL;
}

/* A reference to target: a jump there must not land in overwritten bytes. */
static void note_target(struct code_image *img, uintptr_t target)
{
	struct code_function *g = function_at(img, target);

	if (g && target != g->start && target < g->start + g->entry_len)
		g->skip = SKIP_ENTRY_TARGETED;
}

static bool is_excluded(const char *name)
{
	static const char *const excluded[] = {"_start", "_init", "_fini",
					       "_dl_relocate_static_pie"};

	for (size_t i = 0; i < ARRAY_SIZE(excluded); i++)
		if (strcmp(name, excluded[i]) == 0)
			return true;
	return false;
}

static int collect_functions(struct analysis *an, Elf_Scn *symtab_scn, char *err, size_t err_size)
{
	struct code_image *img = an->img;
	GElf_Shdr sh;
	Elf_Data *data;
	size_t n_syms, n = 0, names = 0, w = 0;

	gelf_getshdr(symtab_scn, &sh);
	data = elf_getdata(symtab_scn, NULL);
	n_syms = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
	for (int pass = 0; pass < 2; pass++) {
		n = 0;
		for (size_t i = 0; i < n_syms; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, (int)i, &sym) ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_size == 0 ||
			    sym.st_shndx != an->text_index)
				continue;
			name = elf_strptr(an->elf, sh.sh_link, sym.st_name);
			if (!name)
				name = "?";
			if (pass == 0) {
				names += strlen(name) + 1;
			} else {
				struct code_function *f = &img->funcs[n];

				f->start = img->load_bias + sym.st_value;
				f->size =
				    (uint32_t)(sym.st_size > UINT32_MAX ? UINT32_MAX : sym.st_size);
				f->name_off = (uint32_t)img->names_len;
				memcpy(img->names + img->names_len, name, strlen(name) + 1);
				img->names_len += strlen(name) + 1;
				f->skip = is_excluded(name) ? SKIP_EXCLUDED : SKIP_NONE;
				f->fde.fde = NULL;
			}
			n++;
		}
		if (pass == 0) {
			img->funcs = map_table(n * sizeof(*img->funcs));
			img->names = map_table(names);
			if (!img->funcs || !img->names) {
				fmt_buffer(err, err_size, "out of memory for %zu functions", n);
				return -1;
			}
		}
	}
	qsort(img->funcs, n, sizeof(*img->funcs), compare_function);
	/* Aliases share a start: keep one. Overlaps: keep the first. */
	for (size_t i = 0; i < n; i++) {
		if (w > 0 && img->funcs[i].start < img->funcs[w - 1].start + img->funcs[w - 1].size)
			continue;
		img->funcs[w++] = img->funcs[i];
	}
	img->n_funcs = w;
	return 0;
}

/* Symbol value (file address) of relocation symbol index sym in table symtab_index. */
static bool reloc_symbol_value(struct analysis *an, size_t symtab_index, size_t sym,
			       uint64_t *value)
{
	Elf_Scn *scn = elf_getscn(an->elf, symtab_index);
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
	GElf_Sym s;

	if (sym == 0) {
		*value = 0;
		return true;
	}
	if (!data || !gelf_getsym(data, (int)sym, &s) || s.st_shndx == SHN_UNDEF)
		return false;
	*value = s.st_value;
	return true;
}

static bool section_is_metadata(const char *name)
{
	return strcmp(name, ".eh_frame") == 0 || strcmp(name, ".gcc_except_table") == 0 ||
	       strncmp(name, ".debug", 6) == 0 || strncmp(name, ".note", 5) == 0 ||
	       strcmp(name, ".comment") == 0;
}

static bool pcrel_push(struct pcrel_reloc_list *l, uintptr_t addr)
{
	if (!map_table_reserve((void **)&l->addrs, &l->cap, l->n, sizeof(*l->addrs), 4096))
		return false;
	l->addrs[l->n++] = addr;
	return true;
}

/*
 * Reads every RELA section: PC-relative relocations in .text are kept for the
 * cross-check; any relocation's target (S + A) that falls in the first bytes
 * of a function keeps that function in place. Returns the number of
 * relocations found in .text, or -1.
 */
static long scan_relocations(struct analysis *an)
{
	struct code_image *img = an->img;
	Elf_Scn *scn = NULL;
	long in_text = 0;

	while ((scn = elf_nextscn(an->elf, scn))) {
		GElf_Shdr sh, target_sh;
		Elf_Scn *target;
		Elf_Data *data;
		const char *target_name;
		bool into_text;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || sh.sh_entsize == 0)
			continue;
		target = sh.sh_info ? elf_getscn(an->elf, sh.sh_info) : NULL;
		if (target && gelf_getshdr(target, &target_sh)) {
			target_name = elf_section_name(an->elf, &target_sh);
			if (!target_name || section_is_metadata(target_name) ||
			    !(target_sh.sh_flags & SHF_ALLOC))
				continue;
		}
		into_text = target && sh.sh_info == an->text_index;
		data = elf_getdata(scn, NULL);
		n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Rela r;
			uint64_t s;
			unsigned type;

			if (!gelf_getrela(data, (int)i, &r))
				continue;
			type = GELF_R_TYPE(r.r_info);
			if (reloc_is_tls(type))
				continue; /* a thread-pointer offset, not an address */
			if (into_text) {
				in_text++;
				if (reloc_is_pcrel32(type) &&
				    !pcrel_push(&an->pcrel, img->load_bias + r.r_offset))
					return -1;
				if (reloc_is_pcrel32(type))
					continue; /* checked against the decoded target */
			}
			if (type == R_X86_64_RELATIVE || type == R_X86_64_IRELATIVE) {
				s = 0;
			} else if (!reloc_symbol_value(an, sh.sh_link, GELF_R_SYM(r.r_info), &s)) {
				continue;
			}
			note_target(img, img->load_bias + s + (uint64_t)r.r_addend);
		}
	}
	qsort(an->pcrel.addrs, an->pcrel.n, sizeof(uintptr_t), compare_uintptr);
	return in_text;
}

/* ---------- decoding ---------- */

static bool add_fixup(struct analysis *an, const struct code_function *f, uintptr_t field)
{
	struct code_image *img = an->img;

	if (!map_table_reserve((void **)&img->fixups, &an->cap_fixups, img->n_fixups,
			       sizeof(*img->fixups), 65536))
		return false;
	img->fixups[img->n_fixups++] = (uint32_t)(field - f->start);
	return true;
}

static void add_field(struct analysis *an, uintptr_t field)
{
	if (an->n_fields < an->cap_fields)
		an->fields[an->n_fields++] = field;
}

static int64_t read_field(const struct code_image *img, uintptr_t addr, unsigned size)
{
	int32_t v32;
	int8_t v8;

	if (size == 1) {
		memcpy(&v8, code_image_bytes(img, addr), 1);
		return v8;
	}
	memcpy(&v32, code_image_bytes(img, addr), 4);
	return v32;
}

/* A relative branch or call: internal, or a rel32 fixup. */
static enum code_skip decode_branch(struct analysis *an, const struct code_function *f,
				    const cs_insn *insn)
{
	const cs_x86 *x = &insn->detail->x86;
	uintptr_t end = insn->address + insn->size, field = insn->address + x->encoding.imm_offset;
	unsigned size = x->encoding.imm_size;
	uintptr_t target;

	if (x->op_count < 1 || x->operands[0].type != X86_OP_IMM || x->encoding.imm_offset == 0 ||
	    (size != 1 && size != 4))
		return SKIP_UNDECODABLE;
	target = (uintptr_t)x->operands[0].imm;
	if (end + (uintptr_t)read_field(an->img, field, size) != target)
		return SKIP_UNDECODABLE;
	add_field(an, field);
	if (target >= f->start && target < f->start + f->size)
		return SKIP_NONE;
	if (size != 4)
		return SKIP_SHORT_BRANCH_OUT;
	note_target(an->img, target);
	return add_fixup(an, f, field) ? SKIP_NONE : SKIP_TOO_LARGE;
}

/*
 * A RIP-relative operand. Its own entry address is a function pointer and
 * must stay the original; an address inside itself could escape (a label
 * address), so such a function stays in place.
 */
static enum code_skip decode_rip_operand(struct analysis *an, const struct code_function *f,
					 const cs_insn *insn, const cs_x86_op *op)
{
	const cs_x86 *x = &insn->detail->x86;
	uintptr_t end = insn->address + insn->size, field;
	uintptr_t target;

	/*
	 * With RIP addressing disp32 follows ModRM and precedes any immediate;
	 * capstone 4 leaves disp_offset 0 for some SSE forms, so compute it
	 * and check it against the decoded displacement.
	 */
	if (x->encoding.disp_offset != 0 && x->encoding.disp_size == 4)
		field = insn->address + x->encoding.disp_offset;
	else
		field = end - 4 - x->encoding.imm_size;
	if (field < insn->address || read_field(an->img, field, 4) != op->mem.disp)
		return SKIP_UNDECODABLE;
	target = end + (uintptr_t)op->mem.disp;
	add_field(an, field);
	if (target > f->start && target < f->start + f->size)
		return SKIP_OWN_LABEL;
	note_target(an->img, target);
	return add_fixup(an, f, field) ? SKIP_NONE : SKIP_TOO_LARGE;
}

static bool field_known(const struct analysis *an, uintptr_t addr)
{
	for (size_t i = 0; i < an->n_fields; i++)
		if (an->fields[i] == addr)
			return true;
	return false;
}

/* Every PC-relative relocation inside f must be at a decoded field. */
static bool relocations_covered(const struct analysis *an, const struct code_function *f)
{
	size_t lo = 0, hi = an->pcrel.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (an->pcrel.addrs[mid] < f->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < an->pcrel.n && an->pcrel.addrs[i] < f->start + f->size; i++)
		if (!field_known(an, an->pcrel.addrs[i]))
			return false;
	return true;
}

static enum code_skip decode_function(struct analysis *an, struct code_function *f)
{
	const uint8_t *code = code_image_bytes(an->img, f->start);
	size_t left = f->size;
	uint64_t addr = f->start;
	size_t first_fixup = an->img->n_fixups;
	enum code_skip why = SKIP_NONE;

	an->n_fields = 0;
	f->fixup_first = (uint32_t)first_fixup;
	f->fixup_count = 0;
	while (why == SKIP_NONE && cs_disasm_iter(an->cs, &code, &left, &addr, an->insn)) {
		const cs_x86 *x = &an->insn->detail->x86;

		if (cs_insn_group(an->cs, an->insn, CS_GRP_BRANCH_RELATIVE)) {
			why = decode_branch(an, f, an->insn);
			continue;
		}
		for (int i = 0; i < x->op_count && why == SKIP_NONE; i++)
			if (x->operands[i].type == X86_OP_MEM &&
			    x->operands[i].mem.base == X86_REG_RIP)
				why = decode_rip_operand(an, f, an->insn, &x->operands[i]);
	}
	if (why == SKIP_NONE && left != 0)
		why = SKIP_UNDECODABLE;
	if (why != SKIP_NONE && getenv(CODE_DEBUG_ENV))
		fd_printf(2, "lever stabilize: code: %s: %s at +%lx (%s %s)\n",
			  an->img->names + f->name_off, code_skip_name(why),
			  (unsigned long)(an->insn->address - f->start), an->insn->mnemonic,
			  an->insn->op_str);
	if (why == SKIP_NONE && !relocations_covered(an, f))
		why = SKIP_UNHANDLED_RELOC;
	if (why != SKIP_NONE) {
		an->img->n_fixups = first_fixup;
		return why;
	}
	f->fixup_count = (uint32_t)(an->img->n_fixups - first_fixup);
	return SKIP_NONE;
}

static void prepare_entries(struct code_image *img)
{
	static const uint8_t endbr64[CODE_ENDBR_LEN] = {0xf3, 0x0f, 0x1e, 0xfa};

	for (size_t i = 0; i < img->n_funcs; i++) {
		struct code_function *f = &img->funcs[i];
		bool endbr = f->size >= CODE_ENDBR_LEN &&
			     memcmp(code_image_bytes(img, f->start), endbr64, CODE_ENDBR_LEN) == 0;

		f->entry_len = CODE_ENTRY_JMP_LEN + (endbr ? CODE_ENDBR_LEN : 0);
		memcpy(f->prefix, code_image_bytes(img, f->start), f->size < 16 ? f->size : 16);
		if (f->skip == SKIP_NONE && f->size < f->entry_len)
			f->skip = SKIP_TOO_SMALL;
		if (f->skip == SKIP_NONE && f->size > CODE_MAX_FUNCTION)
			f->skip = SKIP_TOO_LARGE;
	}
}

/* Decodes every function (or takes the decode cache's conclusions). */
static int decode_functions(struct analysis *an, char *err, size_t err_size)
{
	struct code_image *img = an->img;
	enum code_skip *verdict;

	if (code_cache_load(img, &an->build_id)) {
		img->from_cache = true;
		return 0;
	}
	verdict = map_table(img->n_funcs * sizeof(*verdict));
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &an->cs) != CS_ERR_OK) {
		fmt_buffer(err, err_size, "capstone cannot open an x86-64 decoder");
		return -1;
	}
	cs_option(an->cs, CS_OPT_DETAIL, CS_OPT_ON);
	an->insn = cs_malloc(an->cs);
	an->cap_fields = CODE_MAX_FUNCTION / 2;
	an->fields = map_table(an->cap_fields * sizeof(*an->fields));
	if (!an->insn || !an->fields || !verdict) {
		fmt_buffer(err, err_size, "out of memory for the decoder");
		return -1;
	}
	/* Decoding may mark other functions (note_target), so decide after. */
	for (size_t i = 0; i < img->n_funcs; i++)
		verdict[i] = img->funcs[i].skip == SKIP_NONE ? decode_function(an, &img->funcs[i])
							     : img->funcs[i].skip;
	for (size_t i = 0; i < img->n_funcs; i++)
		if (img->funcs[i].skip == SKIP_NONE)
			img->funcs[i].skip = verdict[i];
	cs_free(an->insn, 1);
	cs_close(&an->cs);
	munmap(an->fields, an->cap_fields * sizeof(*an->fields));
	munmap(verdict, img->n_funcs * sizeof(*verdict));
	code_cache_store(img, &an->build_id);
	return 0;
}

static int decode_all(struct analysis *an, char *err, size_t err_size)
{
	struct code_image *img = an->img;

	if (decode_functions(an, err, err_size) != 0)
		return -1;
	for (size_t i = 0; i < img->n_funcs; i++) {
		struct code_function *f = &img->funcs[i];

		if (f->skip == SKIP_NONE && !code_unwind_prepare(img, f))
			f->skip = SKIP_UNWIND;
		img->skipped[f->skip]++;
		if (f->skip == SKIP_NONE) {
			img->relocatable++;
			img->relocatable_bytes += f->size;
			if (f->size > img->max_size)
				img->max_size = f->size;
		}
	}
	return 0;
}

/* Keeps the file's .text (the mapping of the file goes with elf_end). */
static int copy_text(struct analysis *an, char *err, size_t err_size)
{
	struct code_image *img = an->img;
	Elf_Data *data = elf_getdata(an->text_scn, NULL);
	uint8_t *copy;

	if (!data || !data->d_buf || data->d_size != an->text_hi - an->text_lo) {
		fmt_buffer(err, err_size, "cannot read the program's .text");
		return -1;
	}
	copy = map_table(data->d_size);
	if (!copy) {
		fmt_buffer(err, err_size, "out of memory for a copy of .text");
		return -1;
	}
	memcpy(copy, data->d_buf, data->d_size);
	img->pristine = copy;
	img->text_lo = an->text_lo;
	img->text_hi = an->text_hi;
	return 0;
}

/* The symbol table (by type: its name is only a convention) and .text. */
static Elf_Scn *find_sections(struct analysis *an)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	an->text_scn = elf_section_by_name(an->elf, ".text", &sh);
	if (an->text_scn) {
		an->text_index = elf_ndxscn(an->text_scn);
		an->text_lo = an->img->load_bias + sh.sh_addr;
		an->text_hi = an->text_lo + sh.sh_size;
	}
	while ((scn = elf_nextscn(an->elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			return scn;
	return NULL;
}

int code_image_load(struct code_image *img, char *err, size_t err_size)
{
	struct analysis an = {.img = img};
	Elf_Scn *symtab;
	size_t shstrndx;
	int fd, rc = -1;
	long in_text;

	memset(img, 0, sizeof(*img));
	dl_iterate_phdr(image_range, img);
	elf_version(EV_CURRENT);
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fmt_buffer(err, err_size, "cannot open /proc/self/exe");
		return -1;
	}
	an.elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!an.elf || elf_getshdrstrndx(an.elf, &shstrndx) != 0) {
		fmt_buffer(err, err_size, "the program is not a readable ELF file");
		goto out;
	}
	an.build_id.len = elf_build_id(an.elf, an.build_id.bytes, sizeof(an.build_id.bytes));
	symtab = find_sections(&an);
	if (!symtab || an.text_index == 0) {
		fmt_buffer(err, err_size, "the program has no symbol table (stripped?)");
		goto out;
	}
	if (copy_text(&an, err, err_size) != 0 ||
	    collect_functions(&an, symtab, err, err_size) != 0)
		goto out;
	prepare_entries(img);
	in_text = scan_relocations(&an);
	if (in_text < 0) {
		fmt_buffer(err, err_size, "out of memory for relocations");
		goto out;
	}
	if (in_text == 0) {
		fmt_buffer(
		    err, err_size,
		    "the program has no .rela.text: it was not linked with -Wl,--emit-relocs "
		    "(build it with lever cc)");
		goto out;
	}
	rc = decode_all(&an, err, err_size);
out:
	if (an.pcrel.addrs)
		munmap(an.pcrel.addrs, an.pcrel.cap * sizeof(uintptr_t));
	if (an.elf)
		elf_end(an.elf);
	close(fd);
	return rc;
}
