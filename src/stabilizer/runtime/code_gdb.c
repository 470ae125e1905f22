/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * gdb through copies: the GDB JIT interface (gdb manual, "JIT Compilation
 * Interface"). For each copy the runtime builds a small in-memory ELF
 * relocatable object, the way LLVM's JIT does: a NOBITS .text section at the
 * copy's address, one function symbol, and the copy's .eh_frame fragment
 * (the bytes registered with libgcc, at their address), links it into
 * __jit_debug_descriptor and calls __jit_debug_register_code, on which gdb
 * keeps a breakpoint. gdb then names frames in copies, unwinds through them
 * and can set breakpoints in them by address. A freed copy is unregistered.
 *
 * Costs nothing without a debugger beyond building the ~1 KiB image.
 */
#include "stabilizer/runtime/code.h"

#include <elf.h>
#include <string.h>

struct jit_code_entry {
	struct jit_code_entry *next, *prev;
	const char *symfile_addr;
	uint64_t symfile_size;
};

struct jit_descriptor {
	uint32_t version;
	uint32_t action_flag; /* 0 none, 1 register, 2 unregister */
	struct jit_code_entry *relevant_entry, *first_entry;
};

/* The names gdb looks up: exported, and the function never inlined away. */
__attribute__((visibility("default"))) struct jit_descriptor __jit_debug_descriptor = {1, 0, NULL,
										       NULL};

__attribute__((visibility("default"), noinline)) void __jit_debug_register_code(void)
{
	__asm__ volatile("" ::: "memory");
}

enum { SEC_NULL, SEC_TEXT, SEC_EH, SEC_SYMTAB, SEC_STRTAB, SEC_SHSTRTAB, SEC_COUNT };

static const char shstrtab[] = "\0.text\0.eh_frame\0.symtab\0.strtab\0.shstrtab";

/* Offsets of the names in shstrtab. */
static const uint32_t section_name[SEC_COUNT] = {0, 1, 7, 17, 25, 33};

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

size_t code_gdb_image_size(const char *name, size_t eh_len)
{
	return sizeof(struct jit_code_entry) + sizeof(Elf64_Ehdr) + 2 * sizeof(Elf64_Sym) +
	       align8(sizeof(shstrtab)) + align8(strlen(name) + 2) + align8(eh_len) +
	       SEC_COUNT * sizeof(Elf64_Shdr);
}

static void section(Elf64_Shdr *sh, int index, uint32_t type, uint64_t flags, uint64_t addr,
		    uint64_t offset, uint64_t size)
{
	memset(sh, 0, sizeof(*sh));
	sh->sh_name = section_name[index];
	sh->sh_type = type;
	sh->sh_flags = flags;
	sh->sh_addr = addr;
	sh->sh_offset = offset;
	sh->sh_size = size;
	sh->sh_addralign = 1;
}

/* Writes the ELF image after the entry at mem and returns its size. */
static size_t build_image(uint8_t *elf, const char *name, uintptr_t addr, uint32_t size,
			  const uint8_t *eh, size_t eh_len, uintptr_t eh_addr)
{
	Elf64_Ehdr *h = (Elf64_Ehdr *)elf;
	size_t off = sizeof(*h), sym_off, shstr_off, str_off, eh_off, sh_off;
	size_t name_len = strlen(name);
	Elf64_Sym *sym;
	Elf64_Shdr *sh;

	sym_off = off;
	sym = (Elf64_Sym *)(elf + sym_off);
	memset(sym, 0, 2 * sizeof(*sym));
	sym[1].st_name = 1;
	sym[1].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
	sym[1].st_shndx = SEC_TEXT;
	sym[1].st_value = 0; /* relative to .text, which is at the copy */
	sym[1].st_size = size;
	off += 2 * sizeof(*sym);
	shstr_off = off;
	memcpy(elf + off, shstrtab, sizeof(shstrtab));
	off += align8(sizeof(shstrtab));
	str_off = off;
	elf[off] = '\0';
	memcpy(elf + off + 1, name, name_len + 1);
	off += align8(name_len + 2);
	eh_off = off;
	if (eh_len)
		memcpy(elf + off, eh, eh_len);
	off += align8(eh_len);
	sh_off = off;
	sh = (Elf64_Shdr *)(elf + sh_off);
	section(&sh[SEC_NULL], SEC_NULL, SHT_NULL, 0, 0, 0, 0);
	sh[SEC_NULL].sh_name = 0;
	section(&sh[SEC_TEXT], SEC_TEXT, SHT_NOBITS, SHF_ALLOC | SHF_EXECINSTR, addr, 0, size);
	section(&sh[SEC_EH], SEC_EH, SHT_PROGBITS, SHF_ALLOC, eh_addr, eh_off, eh_len);
	section(&sh[SEC_SYMTAB], SEC_SYMTAB, SHT_SYMTAB, 0, 0, sym_off, 2 * sizeof(Elf64_Sym));
	sh[SEC_SYMTAB].sh_link = SEC_STRTAB;
	sh[SEC_SYMTAB].sh_info = 1; /* first global symbol */
	sh[SEC_SYMTAB].sh_entsize = sizeof(Elf64_Sym);
	sh[SEC_SYMTAB].sh_addralign = 8;
	section(&sh[SEC_STRTAB], SEC_STRTAB, SHT_STRTAB, 0, 0, str_off, name_len + 2);
	section(&sh[SEC_SHSTRTAB], SEC_SHSTRTAB, SHT_STRTAB, 0, 0, shstr_off, sizeof(shstrtab));
	off += SEC_COUNT * sizeof(Elf64_Shdr);

	memset(h, 0, sizeof(*h));
	memcpy(h->e_ident, ELFMAG, SELFMAG);
	h->e_ident[EI_CLASS] = ELFCLASS64;
	h->e_ident[EI_DATA] = ELFDATA2LSB;
	h->e_ident[EI_VERSION] = EV_CURRENT;
	h->e_type = ET_REL;
	h->e_machine = EM_X86_64;
	h->e_version = EV_CURRENT;
	h->e_ehsize = sizeof(*h);
	h->e_shoff = sh_off;
	h->e_shentsize = sizeof(Elf64_Shdr);
	h->e_shnum = SEC_COUNT;
	h->e_shstrndx = SEC_SHSTRTAB;
	return off;
}

void code_gdb_register(uint8_t *mem, const char *name, uintptr_t addr, uint32_t size,
		       const uint8_t *eh, size_t eh_len)
{
	struct jit_code_entry *e = (struct jit_code_entry *)mem;
	uint8_t *elf = mem + sizeof(*e);

	e->symfile_addr = (const char *)elf;
	e->symfile_size = build_image(elf, name, addr, size, eh, eh_len, (uintptr_t)eh);
	e->prev = NULL;
	e->next = __jit_debug_descriptor.first_entry;
	if (e->next)
		e->next->prev = e;
	__jit_debug_descriptor.first_entry = e;
	__jit_debug_descriptor.relevant_entry = e;
	__jit_debug_descriptor.action_flag = 1;
	__jit_debug_register_code();
}

void code_gdb_unregister(uint8_t *mem)
{
	struct jit_code_entry *e = (struct jit_code_entry *)mem;

	if (e->prev)
		e->prev->next = e->next;
	else
		__jit_debug_descriptor.first_entry = e->next;
	if (e->next)
		e->next->prev = e->prev;
	__jit_debug_descriptor.relevant_entry = e;
	__jit_debug_descriptor.action_flag = 2;
	__jit_debug_register_code();
}

size_t code_unwind_part(const struct code_function *f)
{
	size_t blob = code_unwind_blob_size(f);

	return (blob + CODE_GRANULE - 1) & ~(size_t)(CODE_GRANULE - 1);
}

size_t code_eh_len(const struct code_function *f)
{
	return f->fde.fde ? f->fde.cie_len + f->fde.fde_len + 4 : 0;
}

size_t code_metadata_size(const struct code_function *f, const char *name)
{
	return code_unwind_part(f) + code_gdb_image_size(name, code_eh_len(f));
}
