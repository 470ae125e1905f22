// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * Where struct-typed values live, from DWARF (spec autocpa.md §8.5 step
 * 5.1 and 5.3): for every parameter and local variable of a function
 * (inlined ones included) whose type is a struct, an array of structs or a
 * pointer to a struct, each pc range and its location — a register, a
 * memory slot at register + offset, or a slot relative to the frame base
 * (resolved through the CFI when the frame base is the CFA); every global
 * or static variable of such a type with its address; each function's pc
 * ranges, frame base and returned struct pointer type.
 *
 * A register location of any other type is kept too, with no struct: it
 * tells the propagation that the register holds something else there.
 */
#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout/static.h"

#define MAX_DEPTH 64

struct frame_base {
	bool known, is_cfa;
	int reg;
	int64_t offset;
};

struct vars_walker {
	const struct st_types *t;
	struct st_vars *v;
};

static bool grow(void **items, size_t *cap, size_t n, size_t size)
{
	void *p;
	size_t new_cap;

	if (n < *cap)
		return true;
	new_cap = *cap ? 2 * *cap : 256;
	p = realloc(*items, new_cap * size);
	if (!p)
		return false;
	*items = p;
	*cap = new_cap;
	return true;
}

static struct st_var_type classify_type(const struct st_types *t, Dwarf_Die *var)
{
	struct st_var_type vt = {.s = ST_NONE};
	Dwarf_Attribute a;
	Dwarf_Die type, peeled, elem;

	Dwarf_Word bytes;

	if (!dwarf_attr_integrate(var, DW_AT_type, &a) || !dwarf_formref_die(&a, &type))
		return vt;
	if (dwarf_aggregate_size(&type, &bytes) == 0)
		vt.bytes = bytes;
	vt.s = st_types_pointee_of(t, &type);
	if (vt.s != ST_NONE) {
		vt.pointer = true;
		return vt;
	}
	vt.s = st_types_pointee2_of(t, &type);
	if (vt.s != ST_NONE) {
		vt.pointer2 = true;
		return vt;
	}
	vt.s = st_types_struct_of(t, &type);
	if (vt.s != ST_NONE)
		return vt;
	/* an array of structs or of struct pointers in place */
	if (dwarf_peel_type(&type, &peeled) == 0 && dwarf_tag(&peeled) == DW_TAG_array_type &&
	    dwarf_attr_integrate(&peeled, DW_AT_type, &a) && dwarf_formref_die(&a, &elem)) {
		vt.s = st_types_struct_of(t, &elem);
		vt.array = vt.s != ST_NONE;
		if (vt.s == ST_NONE) {
			vt.s = st_types_pointee_of(t, &elem);
			vt.ptr_array = vt.s != ST_NONE;
		}
	}
	return vt;
}

static int add_loc(struct vars_walker *w, struct st_var_loc loc)
{
	struct st_vars *v = w->v;

	if (loc.lo >= loc.hi)
		return 0;
	if (!grow((void **)&v->locs, &v->cap_locs, v->n_locs, sizeof(*v->locs)))
		return -1;
	v->locs[v->n_locs++] = loc;
	return 0;
}

static int add_global(struct vars_walker *w, uint64_t addr, Dwarf_Die *var, struct st_var_type type)
{
	struct st_vars *v = w->v;
	Dwarf_Attribute a;
	Dwarf_Die t;
	Dwarf_Word size = 0;

	if (!dwarf_attr_integrate(var, DW_AT_type, &a) || !dwarf_formref_die(&a, &t) ||
	    dwarf_aggregate_size(&t, &size) != 0 || size == 0)
		return 0;
	if (!grow((void **)&v->globals, &v->cap_globals, v->n_globals, sizeof(*v->globals)))
		return -1;
	v->globals[v->n_globals++] = (struct st_global){addr, size, type};
	return 0;
}

/* One location expression: what kind, or false if it is none we use. */
static bool classify_expr(Dwarf_Attribute *attr, Dwarf_Op *ops, size_t n,
			  const struct frame_base *fb, struct st_var_loc *loc, uint64_t *addr,
			  bool *is_addr)
{
	*is_addr = false;
	if (n != 1)
		return false;
	if (ops[0].atom == DW_OP_addrx || ops[0].atom == DW_OP_GNU_addr_index) {
		/* DWARF 5 (clang): the address is in .debug_addr */
		Dwarf_Attribute result;
		Dwarf_Addr a;

		if (dwarf_getlocation_attr(attr, &ops[0], &result) != 0 ||
		    dwarf_formaddr(&result, &a) != 0)
			return false;
		*is_addr = true;
		*addr = a;
		return true;
	}
	if (ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31) {
		loc->kind = ST_LOC_REG;
		loc->reg = ops[0].atom - DW_OP_reg0;
		return true;
	}
	if (ops[0].atom == DW_OP_regx) {
		loc->kind = ST_LOC_REG;
		loc->reg = (int)ops[0].number;
		return true;
	}
	if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		loc->kind = ST_LOC_MEM;
		loc->reg = ops[0].atom - DW_OP_breg0;
		loc->offset = (int64_t)ops[0].number;
		return true;
	}
	if (ops[0].atom == DW_OP_bregx) {
		loc->kind = ST_LOC_MEM;
		loc->reg = (int)ops[0].number;
		loc->offset = (int64_t)ops[0].number2;
		return true;
	}
	if (ops[0].atom == DW_OP_fbreg && fb->known) {
		if (fb->is_cfa) {
			loc->kind = ST_LOC_FBREG;
			loc->offset = (int64_t)ops[0].number;
		} else {
			loc->kind = ST_LOC_MEM;
			loc->reg = fb->reg;
			loc->offset = fb->offset + (int64_t)ops[0].number;
		}
		return true;
	}
	if (ops[0].atom == DW_OP_addr) {
		*is_addr = true;
		*addr = ops[0].number;
		return true;
	}
	return false;
}

/* The pc ranges of a scope (its variables' single-expression locations hold there). */
static int scope_ranges(Dwarf_Die *scope, uint64_t (*out)[2], int max)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	int n = 0;

	while (n < max && (off = dwarf_ranges(scope, off, &base, &lo, &hi)) > 0) {
		out[n][0] = lo;
		out[n][1] = hi;
		n++;
	}
	return n;
}

static int add_variable(struct vars_walker *w, Dwarf_Die *var, Dwarf_Die *scope,
			const struct frame_base *fb)
{
	struct st_var_type type = classify_type(w->t, var);
	Dwarf_Attribute a;
	Dwarf_Addr base, start, end;
	Dwarf_Op *ops;
	size_t n_ops;
	ptrdiff_t off = 0;

	if (!dwarf_attr(var, DW_AT_location, &a))
		return 0;
	while ((off = dwarf_getlocations(&a, off, &base, &start, &end, &ops, &n_ops)) > 0) {
		struct st_var_loc loc = {.type = type};
		uint64_t addr;
		bool is_addr;

		if (!classify_expr(&a, ops, n_ops, fb, &loc, &addr, &is_addr))
			continue;
		if (is_addr) {
			if (type.s != ST_NONE && add_global(w, addr, var, type))
				return -1;
			continue;
		}
		/* memory slots of other types tell nothing; registers do */
		if (type.s == ST_NONE && loc.kind != ST_LOC_REG)
			continue;
		if (loc.kind == ST_LOC_REG && type.s != ST_NONE && !type.pointer && !type.pointer2)
			continue; /* a struct in a register: pieces, not addressable */
		if (start == 0 && end == (Dwarf_Addr)-1) {
			uint64_t r[64][2];
			int n = scope_ranges(scope, r, 64);

			for (int i = 0; i < n; i++) {
				loc.lo = r[i][0];
				loc.hi = r[i][1];
				if (add_loc(w, loc))
					return -1;
			}
		} else {
			loc.lo = start;
			loc.hi = end;
			if (add_loc(w, loc))
				return -1;
		}
	}
	return 0;
}

static struct frame_base frame_base_of(Dwarf_Die *fn)
{
	struct frame_base fb = {0};
	Dwarf_Attribute a;
	Dwarf_Op *ops;
	size_t n;

	if (!dwarf_attr_integrate(fn, DW_AT_frame_base, &a) || dwarf_getlocation(&a, &ops, &n) ||
	    n != 1)
		return fb;
	if (ops[0].atom == DW_OP_call_frame_cfa) {
		fb.known = fb.is_cfa = true;
	} else if (ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31) {
		fb.known = true;
		fb.reg = ops[0].atom - DW_OP_reg0;
	} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		fb.known = true;
		fb.reg = ops[0].atom - DW_OP_breg0;
		fb.offset = (int64_t)ops[0].number;
	}
	return fb;
}

static int add_function(struct vars_walker *w, Dwarf_Die *fn)
{
	struct st_vars *v = w->v;
	Dwarf_Attribute a;
	Dwarf_Die type;
	int32_t returns = ST_NONE;
	uint64_t r[64][2];
	int n = scope_ranges(fn, r, 64);

	if (dwarf_attr_integrate(fn, DW_AT_type, &a) && dwarf_formref_die(&a, &type))
		returns = st_types_pointee_of(w->t, &type);
	for (int i = 0; i < n; i++) {
		if (!grow((void **)&v->functions, &v->cap_functions, v->n_functions,
			  sizeof(*v->functions)))
			return -1;
		v->functions[v->n_functions++] = (struct st_function){
		    .lo = r[i][0],
		    .hi = r[i][1],
		    .returns = returns,
		};
	}
	return 0;
}

static int walk_unit(struct vars_walker *w, Dwarf_Die *die, int depth);

/* Variables of a scope and its nested scopes; fb: the enclosing function's frame base. */
static int walk_scope(struct vars_walker *w, Dwarf_Die *scope, const struct frame_base *fb,
		      int depth)
{
	Dwarf_Die child;

	if (depth > MAX_DEPTH || dwarf_child(scope, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child);
		int rc = 0;

		switch (tag) {
		case DW_TAG_formal_parameter:
		case DW_TAG_variable:
			rc = add_variable(w, &child, scope, fb);
			break;
		case DW_TAG_lexical_block:
		case DW_TAG_inlined_subroutine:
			rc = walk_scope(w, &child, fb, depth + 1);
			break;
		case DW_TAG_subprogram:
		case DW_TAG_namespace:
		case DW_TAG_structure_type:
		case DW_TAG_class_type:
			rc = walk_unit(w, &child, depth + 1);
			break;
		default:
			break;
		}
		if (rc)
			return rc;
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

/* A CU, namespace, class or function: functions with code, globals. */
static int walk_unit(struct vars_walker *w, Dwarf_Die *die, int depth)
{
	Dwarf_Die child;

	if (depth > MAX_DEPTH)
		return 0;
	if (dwarf_tag(die) == DW_TAG_subprogram) {
		struct frame_base fb;

		if (!dwarf_hasattr(die, DW_AT_low_pc) && !dwarf_hasattr(die, DW_AT_ranges))
			return 0; /* declaration or abstract instance: no code */
		fb = frame_base_of(die);
		if (add_function(w, die))
			return -1;
		return walk_scope(w, die, &fb, depth + 1);
	}
	if (dwarf_child(die, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child);
		int rc = 0;

		if (tag == DW_TAG_variable) {
			struct frame_base none = {0};

			rc = add_variable(w, &child, die, &none);
		} else if (tag == DW_TAG_subprogram || tag == DW_TAG_namespace ||
			   tag == DW_TAG_structure_type || tag == DW_TAG_class_type) {
			rc = walk_unit(w, &child, depth + 1);
		}
		if (rc)
			return rc;
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

static int cmp_loc(const void *a, const void *b)
{
	const struct st_var_loc *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int cmp_global(const void *a, const void *b)
{
	const struct st_global *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int cmp_function(const void *a, const void *b)
{
	const struct st_function *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

int st_vars_load(Dwarf *dw, Elf *elf, const struct st_types *t, struct st_vars *v, char *err,
		 size_t err_size)
{
	struct vars_walker w = {.t = t, .v = v};
	Dwarf_Off off = 0, next;
	size_t header_size;
	int rc = 0;

	memset(v, 0, sizeof(*v));
	while (rc == 0 && dwarf_nextcu(dw, off, &next, &header_size, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;

		if (dwarf_offdie(dw, off + header_size, &cu))
			rc = walk_unit(&w, &cu, 0);
		off = next;
	}
	if (rc) {
		snprintf(err, err_size, "out of memory reading variable locations");
		st_vars_free(v);
		return -1;
	}
	if (v->n_locs)
		qsort(v->locs, v->n_locs, sizeof(*v->locs), cmp_loc);
	if (v->n_globals)
		qsort(v->globals, v->n_globals, sizeof(*v->globals), cmp_global);
	if (v->n_functions)
		qsort(v->functions, v->n_functions, sizeof(*v->functions), cmp_function);
	/* .eh_frame of the binary itself; .debug_frame of the debug file otherwise */
	v->cfi = elf ? dwarf_getcfi_elf(elf) : NULL;
	v->cfi_owned = v->cfi != NULL;
	if (!v->cfi)
		v->cfi = dwarf_getcfi(dw);
	return 0;
}

void st_vars_free(struct st_vars *v)
{
	free(v->locs);
	free(v->globals);
	free(v->functions);
	/* a CFI from dwarf_getcfi_elf is ours to end; dwarf_getcfi's belongs to dw */
	if (v->cfi && v->cfi_owned)
		dwarf_cfi_end(v->cfi);
	memset(v, 0, sizeof(*v));
}

const struct st_global *st_vars_global_at(const struct st_vars *v, uint64_t addr)
{
	size_t lo = 0, hi = v->n_globals;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v->globals[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	if (addr < v->globals[lo - 1].addr + v->globals[lo - 1].size)
		return &v->globals[lo - 1];
	return NULL;
}

const struct st_function *st_vars_function_at(const struct st_vars *v, uint64_t pc)
{
	size_t lo = 0, hi = v->n_functions;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v->functions[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* nested ranges are rare; look back a few for one that contains pc */
	for (size_t i = lo; i > 0 && i + 8 > lo; i--)
		if (pc >= v->functions[i - 1].lo && pc < v->functions[i - 1].hi)
			return &v->functions[i - 1];
	return NULL;
}

bool st_vars_cfa(const struct st_vars *v, uint64_t pc, int *reg, int64_t *offset)
{
	Dwarf_Frame *frame;
	Dwarf_Op *ops;
	size_t n;
	bool ok = false;

	if (!v->cfi || dwarf_cfi_addrframe(v->cfi, pc, &frame) != 0)
		return false;
	/* libdw writes the CFA rule as DW_OP_bregx(reg, offset) */
	if (dwarf_frame_cfa(frame, &ops, &n) == 0 && n == 1) {
		if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
			*reg = ops[0].atom - DW_OP_breg0;
			*offset = (int64_t)ops[0].number;
			ok = true;
		} else if (ops[0].atom == DW_OP_bregx) {
			*reg = (int)ops[0].number;
			*offset = (int64_t)ops[0].number2;
			ok = true;
		}
	}
	free(frame);
	return ok;
}
