/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Internal to src/layout: the pieces of static reference extraction (spec
 * autocpa.md §8.5) that layout_static_write() in static_write.c assembles.
 *
 * - dwarf_types.c: every struct/class of a binary's DWARF with its members
 *   as C declares them (type text, array suffix, offset, size, alignment),
 *   deduplicated across compilation units by name and layout.
 * - dwarf_vars.c: functions, their parameters and variables with the
 *   locations they have at each pc (registers, frame slots), globals with
 *   their addresses, return types, and the frame base from the CFI.
 * - static_refs.c: decoding (capstone), basic blocks with Ghidra's
 *   semantics (calls do not end a block), and the forward propagation of
 *   pointer-to-struct types through registers.
 */
#ifndef LEVER_LAYOUT_STATIC_H
#define LEVER_LAYOUT_STATIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <elfutils/libdw.h>

#include "layout/layout.h"

/* ------------------------------------------------------------ types (dwarf_types.c) */

#define ST_NONE (-1)

struct st_member {
	char *name;  /* synthesized for anonymous members: anon_union_16 */
	char *type;  /* C text before the name */
	char *array; /* C text after the name: "[4]", "[]", ")(int)"; "" if none */
	uint32_t offset, size, align;
	/* the member is (an array of) struct nested: element size elem_size */
	int32_t nested;
	uint32_t elem_size;
	/* the member is a pointer to struct pointee, or a pointer to pointers to pointee2 */
	int32_t pointee, pointee2;
	bool flexible, bitfield, pinned;
	/* DIE offsets resolved into nested/pointee once every struct is known */
	Dwarf_Off nested_die, pointee_die, pointee2_die;
};

struct st_struct {
	char *name; /* NULL: anonymous, never a record struct of its own */
	uint32_t size, align;
	bool is_union;
	size_t n;
	struct st_member *m;
	char unsupported[320]; /* "" if the record format can describe it */
	bool wanted;	       /* written: referenced (or named with --struct) */
	/* declared in a system header (or by the compiler): not the program's to reorder */
	char system[128];
	int32_t canon; /* the first struct of the same name and layout (itself if first) */
	Dwarf_Off die;
};

struct st_die_index {
	Dwarf_Off die;
	int32_t index;
};

struct st_types {
	struct st_struct *s;
	size_t n, cap;
	struct st_die_index *by_die; /* sorted by die once loaded */
	size_t n_by_die, cap_by_die;
};

/* Reads every struct of dw; -1 with err on ENOMEM. */
int st_types_load(Dwarf *dw, struct st_types *t, char *err, size_t err_size);
void st_types_free(struct st_types *t);
/* The struct a type DIE (typedefs and qualifiers peeled) is, or ST_NONE. */
int32_t st_types_struct_of(const struct st_types *t, Dwarf_Die *type);
/* The struct a pointer type DIE points to (through typedefs), or ST_NONE. */
int32_t st_types_pointee_of(const struct st_types *t, Dwarf_Die *type);
/* The struct a pointer to pointer type DIE leads to (S **), or ST_NONE. */
int32_t st_types_pointee2_of(const struct st_types *t, Dwarf_Die *type);
/* Index of the member of s containing byte offset off, or -1 (hole, outside). */
long st_member_at(const struct st_struct *s, uint32_t off);

/* ------------------------------------------------------------ variables (dwarf_vars.c) */

enum st_loc_kind {
	ST_LOC_REG,   /* the value is in register reg (DWARF numbering) */
	ST_LOC_MEM,   /* the object is in memory at reg + offset (frame slot or breg) */
	ST_LOC_FBREG, /* in memory at frame base + offset */
};

/* What a variable is: a pointer to struct s, or a struct s in place. */
struct st_var_type {
	int32_t s;
	bool pointer;	/* s * */
	bool pointer2;	/* s ** */
	bool array;	/* in place: an array of s (offsets modulo its size) */
	bool ptr_array; /* in place: an array of s * */
	uint64_t bytes; /* in place: the variable's size (an array's, all elements) */
};

struct st_var_loc {
	uint64_t lo, hi; /* [lo, hi) */
	enum st_loc_kind kind;
	int reg;
	int64_t offset;
	struct st_var_type type;
};

struct st_global {
	uint64_t addr, size;
	struct st_var_type type;
};

struct st_function {
	uint64_t lo, hi; /* [lo, hi): one range of a subprogram */
	int32_t returns; /* pointer to struct returned, or ST_NONE */
};

struct st_vars {
	struct st_var_loc *locs; /* sorted by lo */
	size_t n_locs, cap_locs;
	struct st_global *globals; /* sorted by addr */
	size_t n_globals, cap_globals;
	struct st_function *functions; /* sorted by lo */
	size_t n_functions, cap_functions;
	Dwarf_CFI *cfi;
	bool cfi_owned;
};

int st_vars_load(Dwarf *dw, Elf *elf, const struct st_types *t, struct st_vars *v, char *err,
		 size_t err_size);
void st_vars_free(struct st_vars *v);
const struct st_global *st_vars_global_at(const struct st_vars *v, uint64_t addr);
const struct st_function *st_vars_function_at(const struct st_vars *v, uint64_t pc);
/*
 * The canonical frame address at pc as register + offset (from the CFI);
 * false if unknown.
 */
bool st_vars_cfa(const struct st_vars *v, uint64_t pc, int *reg, int64_t *offset);

/* ------------------------------------------------------------ references (static_refs.c) */

struct st_ref {
	uint64_t pc;
	int32_t s;
	uint32_t member;
	bool write;
};

struct st_block {
	uint64_t lo, hi; /* first and last instruction */
};

struct st_code {
	uint64_t addr;
	const uint8_t *bytes;
	size_t size;
};

struct st_result {
	struct st_ref *refs;
	size_t n_refs, cap_refs;
	struct st_block *blocks;
	size_t n_blocks, cap_blocks;
	size_t functions, instructions, memory_operands, typed_operands;
};

/* A function symbol to decode. */
struct st_symbol {
	uint64_t lo, hi;
};

/*
 * Decodes each symbol's code and appends its references and blocks.
 * code: the executable sections, by address. -1 with err on ENOMEM or a
 * capstone failure.
 */
int st_refs_find(const struct st_types *t, const struct st_vars *v, const struct st_code *code,
		 size_t n_code, const struct st_symbol *syms, size_t n_syms, struct st_result *r,
		 char *err, size_t err_size);
void st_result_free(struct st_result *r);

#endif
