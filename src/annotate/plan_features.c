// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * The feature planner (spec/freud.md §4.2.3, §5.2 "freud-dwarf", §7.3 items
 * 5-7, §7.4 items 1-2): from a function's DWARF (libdw), a feature program
 * (features_ops.h, doc/formats/annotate-features.md) that the runtime runs on
 * the registers captured at the function's first instruction, and the
 * features' names as the program's own expressions.
 *
 * Where the parameters are. The probe fires at the true entry (before the
 * prologue), where the SysV x86-64 ABI fixes every parameter's location; the
 * DWARF location of an unoptimised function (one DW_OP_fbreg for the whole
 * body) only holds after the prologue stored the registers, so the planner
 * classifies the parameters itself (INTEGER/SSE/MEMORY per eightbyte, hidden
 * struct-return pointer, C++ classes passed by invisible reference) and
 * takes the DWARF location instead where a location list says where a
 * scalar is at the entry pc (a register, DW_OP_entry_value of one, or the
 * CFA-relative stack).
 *
 * What becomes a feature. Walking each parameter's type (and the scalar
 * globals of its compilation unit) through typedefs, qualifiers, structs,
 * classes, unions, base classes and pointers, up to max_depth pointer
 * dereferences and max_features features per variable: integers, bools,
 * enums, floats, `char *` as strlen, fixed arrays as count and sum, libstdc++
 * containers as their size (recognised by their member names), pointer
 * pairs named begin/end, start/finish or first/last as their difference, and
 * the dynamic type of polymorphic objects (with the fields of every derived
 * class the DWARF knows, read from the most-derived object found through
 * offset-to-top). Members named next/prev are not followed (lists), nor
 * pointers to pointers (the callee's output) or a type already on the path.
 * GCC's clones (.isra, .constprop, .part) do not follow their source
 * signature's convention: only their DWARF entry locations are used.
 * Format and limits: doc/formats/annotate-features.md.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "annotate/annotate.h"
#include "annotate/runtime/features.h"
#include "annotate/runtime/features_ops.h"
#include "elf/elf.h"

#define ADDR_OPS     32
#define NAME_MAX_LEN 512
#define PATH_DEPTH   16
#define MAX_DERIVED  64
#define STRLEN_BOUND 65536

/* ------------------------------------------------------------ places */

/* A program that pushes an address. */
struct addr {
	struct ann_op ops[ADDR_OPS];
	uint32_t n;
};

enum place_kind {
	PL_MEM,	 /* in memory at addr */
	PL_GPR,	 /* bits [bit, ...) of a general register */
	PL_XMM,	 /* bytes [byte, ...) of an XMM register */
	PL_REGS, /* an aggregate passed in registers, one per eightbyte */
	PL_NONE
};

struct place {
	enum place_kind kind;
	struct addr addr;
	int reg;	 /* PL_GPR, PL_XMM */
	unsigned offset; /* PL_GPR: bit offset; PL_XMM: byte offset; PL_REGS: byte offset */
	int eb_kind[2];	 /* PL_REGS: PL_GPR or PL_XMM per eightbyte */
	int eb_reg[2];
};

static struct ann_op op(uint16_t code, uint16_t size, uint32_t index, int64_t imm)
{
	return (struct ann_op){.code = code, .size = size, .index = index, .imm = imm};
}

static bool addr_push(struct addr *a, struct ann_op o)
{
	if (a->n == ADDR_OPS)
		return false;
	a->ops[a->n++] = o;
	return true;
}

static bool addr_add(struct addr *a, int64_t off)
{
	if (off == 0)
		return true;
	if (a->n > 0 && a->ops[a->n - 1].code == ANN_OP_ADD) {
		a->ops[a->n - 1].imm += off;
		return true;
	}
	return addr_push(a, op(ANN_OP_ADD, 0, 0, off));
}

/*
 * Append a load of the value at the address a pushes; a trailing ADD becomes
 * the load's offset (one instruction fewer to dispatch at every call).
 */
static bool addr_load(struct addr *a, uint16_t size, uint32_t flags)
{
	int64_t off = 0;

	if (a->n > 0 && a->ops[a->n - 1].code == ANN_OP_ADD)
		off = a->ops[--a->n].imm;
	return addr_push(a, op(ANN_OP_LOAD, size, flags, off));
}

/* The place of a member at byte offset off inside the aggregate at pl. */
static struct place place_member(const struct place *pl, int64_t off)
{
	struct place m = *pl;

	if (m.kind == PL_MEM) {
		if (!addr_add(&m.addr, off))
			m.kind = PL_NONE;
	} else if (m.kind == PL_REGS) {
		m.offset += (unsigned)off;
	} else {
		m.kind = PL_NONE;
	}
	return m;
}

/* A scalar of `size` bytes inside a PL_REGS aggregate: its register. */
static struct place place_resolve(const struct place *pl, unsigned size)
{
	struct place r = *pl;
	unsigned eb;

	if (pl->kind != PL_REGS)
		return r;
	eb = pl->offset / 8;
	if (eb > 1 || (pl->offset % 8) + size > 8) {
		r.kind = PL_NONE;
		return r;
	}
	r.kind = pl->eb_kind[eb];
	r.reg = pl->eb_reg[eb];
	r.offset = r.kind == PL_GPR ? (pl->offset % 8) * 8 : pl->offset % 8;
	return r;
}

/* ------------------------------------------------------------ expressions */

struct expr {
	char s[NAME_MAX_LEN];
	bool deref; /* the value is *s (s is a pointer expression) */
};

static bool expr_member(struct expr *out, const struct expr *e, const char *name)
{
	int n = snprintf(out->s, sizeof(out->s), "%s%s%s", e->s, e->deref ? "->" : ".", name);

	out->deref = false;
	return n > 0 && (size_t)n < sizeof(out->s);
}

static bool expr_wrap(char *out, size_t size, const char *pre, const struct expr *e,
		      const char *post)
{
	int n = snprintf(out, size, "%s%s%s%s", pre, e->deref ? "*" : "", e->s, post);

	return n > 0 && (size_t)n < size;
}

/* ------------------------------------------------------------ the builder */

struct derived_class {
	Dwarf_Die die;
	char *qualified;
	char *base_qualified; /* one direct base */
};

struct builder {
	Dwarf *dw;
	struct ann_op *ops;
	uint32_t n_ops, cap_ops;
	struct annotate_feature_decl *decls;
	uint32_t n_decls, cap_decls;
	unsigned max_depth, max_features;
	unsigned var_features; /* features of the current variable */
	Dwarf_Off path[PATH_DEPTH];
	unsigned path_len;
	bool derived_mode;     /* fields of a derived class: names may repeat */
	const char *skip_base; /* in derived mode: the static class, already walked */
	struct derived_class *classes;
	size_t n_classes;
	bool classes_indexed;
	int error;
};

static int emit_op(struct builder *b, struct ann_op o)
{
	if (b->n_ops == b->cap_ops) {
		uint32_t cap = b->cap_ops ? 2 * b->cap_ops : 64;
		struct ann_op *ops = realloc(b->ops, cap * sizeof(*ops));

		if (!ops) {
			b->error = -ENOMEM;
			return -1;
		}
		b->ops = ops;
		b->cap_ops = cap;
	}
	b->ops[b->n_ops++] = o;
	return 0;
}

static void emit_addr(struct builder *b, const struct addr *a)
{
	for (uint32_t i = 0; i < a->n; i++)
		emit_op(b, a->ops[i]);
}

/*
 * The index of a new feature, or of the one already declared with this
 * name and kind (the same field of another dynamic type); -1 when the
 * variable has its max_features already.
 */
static int declare(struct builder *b, const char *name, enum annotate_feature_kind kind)
{
	for (uint32_t i = 0; i < b->n_decls; i++) {
		if (strcmp(b->decls[i].expr, name) == 0)
			return b->decls[i].kind == kind ? (int)i : -1;
	}
	if (b->var_features >= b->max_features)
		return -1;
	if (b->n_decls == b->cap_decls) {
		uint32_t cap = b->cap_decls ? 2 * b->cap_decls : 32;
		struct annotate_feature_decl *d = realloc(b->decls, cap * sizeof(*d));

		if (!d) {
			b->error = -ENOMEM;
			return -1;
		}
		b->decls = d;
		b->cap_decls = cap;
	}
	b->decls[b->n_decls].expr = strdup(name);
	if (!b->decls[b->n_decls].expr) {
		b->error = -ENOMEM;
		return -1;
	}
	b->decls[b->n_decls].kind = kind;
	b->var_features++;
	return (int)b->n_decls++;
}

/* ------------------------------------------------------------ DWARF helpers */

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;

	return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
}

static bool die_type(Dwarf_Die *die, Dwarf_Die *type)
{
	Dwarf_Attribute a;

	return dwarf_formref_die(dwarf_attr_integrate(die, DW_AT_type, &a), type) != NULL;
}

/* The type with typedefs and qualifiers peeled; false for void. */
static bool peeled_type(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Die t;

	return die_type(die, &t) && dwarf_peel_type(&t, out) == 0;
}

static bool die_udata(Dwarf_Die *die, unsigned name, Dwarf_Word *v)
{
	Dwarf_Attribute a;

	return dwarf_formudata(dwarf_attr_integrate(die, name, &a), v) == 0;
}

static bool die_flag(Dwarf_Die *die, unsigned name)
{
	Dwarf_Attribute a;
	bool f = false;

	return dwarf_formflag(dwarf_attr_integrate(die, name, &a), &f) == 0 && f;
}

static Dwarf_Word type_size(Dwarf_Die *type)
{
	Dwarf_Word size = 0;

	if (dwarf_aggregate_size(type, &size) != 0)
		return 0;
	return size;
}

static bool is_aggregate(int tag)
{
	return tag == DW_TAG_structure_type || tag == DW_TAG_class_type || tag == DW_TAG_union_type;
}

/* A member's byte offset (0 in unions); false for a bit field or a static. */
static bool member_offset(Dwarf_Die *m, int64_t *off)
{
	Dwarf_Attribute a;
	Dwarf_Word w;

	if (dwarf_hasattr(m, DW_AT_bit_size) || die_flag(m, DW_AT_external) ||
	    die_flag(m, DW_AT_declaration))
		return false;
	if (!dwarf_attr(m, DW_AT_data_member_location, &a)) {
		*off = 0;
		return true;
	}
	if (dwarf_formudata(&a, &w) == 0) {
		*off = (int64_t)w;
		return true;
	}
	/* DWARF 2 style: DW_OP_plus_uconst N */
	Dwarf_Op *expr;
	size_t len;

	if (dwarf_getlocation(&a, &expr, &len) == 0 && len == 1 &&
	    expr[0].atom == DW_OP_plus_uconst) {
		*off = (int64_t)expr[0].number;
		return true;
	}
	return false;
}

/* The qualified name of a type ("ns::cls"), malloc'ed; NULL if anonymous. */
static char *qualified_name(Dwarf_Die *die)
{
	Dwarf_Die *scopes = NULL;
	int n = dwarf_getscopes_die(die, &scopes);
	char buf[NAME_MAX_LEN] = "";
	size_t len = 0;
	const char *own = die_name(die);

	if (!own) {
		free(scopes);
		return NULL;
	}
	for (int i = n - 1; i >= 1; i--) {
		int tag = dwarf_tag(&scopes[i]);
		const char *s;

		if (tag != DW_TAG_namespace && !is_aggregate(tag))
			continue;
		s = die_name(&scopes[i]);
		len += (size_t)snprintf(buf + len, sizeof(buf) - len,
					"%s::", s ? s : "(anonymous namespace)");
		if (len >= sizeof(buf))
			break;
	}
	free(scopes);
	if (len >= sizeof(buf))
		return NULL;
	snprintf(buf + len, sizeof(buf) - len, "%s", own);
	return strdup(buf);
}

/*
 * The Itanium typeinfo name (what std::type_info::name() returns) of a
 * class: "7derived", "N8whatever7derivedE". False for names this simple
 * mangler does not cover (templates, anonymous namespaces, local classes).
 */
static bool typeinfo_name(Dwarf_Die *die, char *out, size_t size)
{
	Dwarf_Die *scopes = NULL;
	int n = dwarf_getscopes_die(die, &scopes);
	const char *parts[16];
	int np = 0;
	size_t len = 0;
	bool ok = true;

	for (int i = n - 1; i >= 0 && ok; i--) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_compile_unit || tag == DW_TAG_partial_unit)
			continue;
		if (tag != DW_TAG_namespace && !is_aggregate(tag)) {
			ok = false; /* a class local to a function */
			break;
		}
		parts[np] = die_name(&scopes[i]);
		if (!parts[np] || strchr(parts[np], '<') || np == 15)
			ok = false;
		np++;
	}
	if (n <= 0) {
		parts[0] = die_name(die);
		np = parts[0] ? 1 : 0;
		ok = np == 1 && !strchr(parts[0], '<');
	}
	free(scopes);
	if (!ok || np == 0)
		return false;
	if (np > 1)
		len += (size_t)snprintf(out + len, size - len, "N");
	for (int i = 0; i < np && len < size; i++)
		len += (size_t)snprintf(out + len, size - len, "%zu%s", strlen(parts[i]), parts[i]);
	if (np > 1 && len < size)
		len += (size_t)snprintf(out + len, size - len, "E");
	return len < size;
}

/* A class with a virtual table pointer (its own or a base's). */
static bool is_polymorphic(Dwarf_Die *type, unsigned depth)
{
	Dwarf_Die c;

	if (depth > 8 || dwarf_child(type, &c) != 0)
		return false;
	do {
		const char *name = die_name(&c);
		Dwarf_Die base;

		if (dwarf_tag(&c) == DW_TAG_member && name && strncmp(name, "_vptr", 5) == 0)
			return true;
		if (dwarf_tag(&c) == DW_TAG_inheritance && peeled_type(&c, &base) &&
		    is_polymorphic(&base, depth + 1))
			return true;
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

/* ------------------------------------------------------------ derived classes */

static void index_classes_in(struct builder *b, Dwarf_Die *parent, unsigned depth)
{
	Dwarf_Die c;

	if (depth > 8 || dwarf_child(parent, &c) != 0)
		return;
	do {
		int tag = dwarf_tag(&c);

		if (tag == DW_TAG_namespace) {
			index_classes_in(b, &c, depth + 1);
			continue;
		}
		if (!is_aggregate(tag) || die_flag(&c, DW_AT_declaration))
			continue;
		Dwarf_Die m;

		if (dwarf_child(&c, &m) == 0) {
			do {
				Dwarf_Die base;

				if (dwarf_tag(&m) != DW_TAG_inheritance || !peeled_type(&m, &base))
					continue;
				struct derived_class *n =
				    realloc(b->classes, (b->n_classes + 1) * sizeof(*n));

				if (!n)
					return;
				b->classes = n;
				n[b->n_classes].die = c;
				n[b->n_classes].qualified = qualified_name(&c);
				n[b->n_classes].base_qualified = qualified_name(&base);
				if (n[b->n_classes].qualified && n[b->n_classes].base_qualified)
					b->n_classes++;
				else {
					free(n[b->n_classes].qualified);
					free(n[b->n_classes].base_qualified);
				}
			} while (dwarf_siblingof(&m, &m) == 0);
		}
		index_classes_in(b, &c, depth + 1); /* nested classes */
	} while (dwarf_siblingof(&c, &c) == 0);
}

static void index_classes(struct builder *b)
{
	Dwarf_Off off = 0, next;
	size_t header;

	if (b->classes_indexed)
		return;
	b->classes_indexed = true;
	while (dwarf_nextcu(b->dw, off, &next, &header, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;

		if (dwarf_offdie(b->dw, off + header, &cu))
			index_classes_in(b, &cu, 0);
		off = next;
	}
}

/* The classes derived, directly or not, from `base` (qualified names, unique). */
static size_t derived_of(struct builder *b, const char *base, struct derived_class **out,
			 size_t max)
{
	const char *frontier[MAX_DERIVED];
	size_t nf = 0, n = 0;

	index_classes(b);
	frontier[nf++] = base;
	for (size_t f = 0; f < nf; f++) {
		for (size_t i = 0; i < b->n_classes && n < max; i++) {
			bool seen = false;

			if (strcmp(b->classes[i].base_qualified, frontier[f]) != 0)
				continue;
			for (size_t j = 0; j < n; j++)
				seen |= strcmp(out[j]->qualified, b->classes[i].qualified) == 0;
			if (seen)
				continue;
			out[n++] = &b->classes[i];
			if (nf < MAX_DERIVED)
				frontier[nf++] = b->classes[i].qualified;
		}
	}
	return n;
}

/* ------------------------------------------------------------ features */

/* Push the value of a scalar of `size` bytes at pl (flags as ANN_OP_LOAD). */
static bool push_scalar(struct builder *b, const struct place *at, unsigned size, unsigned flags)
{
	struct place pl = place_resolve(at, size);

	switch (pl.kind) {
	case PL_MEM:
		if (!addr_load(&pl.addr, (uint16_t)size, flags))
			return false;
		emit_addr(b, &pl.addr);
		return true;
	case PL_GPR:
		emit_op(b, op(ANN_OP_REG, 0, (uint32_t)pl.reg, 0));
		if (size < 8 || pl.offset != 0 || flags != 0)
			emit_op(b, op(ANN_OP_EXTRACT, (uint16_t)(size * 8), flags, pl.offset));
		return true;
	case PL_XMM:
		if (!(flags & ANN_F_FLOAT))
			return false;
		emit_op(b, op(ANN_OP_XMM, (uint16_t)size, (uint32_t)pl.reg, pl.offset));
		return true;
	default:
		return false;
	}
}

/* Push the pointer stored at pl, as an address program. */
static bool pointer_addr(const struct place *at, struct addr *out)
{
	struct place pl = place_resolve(at, 8);

	out->n = 0;
	switch (pl.kind) {
	case PL_MEM:
		*out = pl.addr;
		return addr_load(out, 8, 0);
	case PL_GPR:
		if (pl.offset != 0)
			return false;
		return addr_push(out, op(ANN_OP_REG, 0, (uint32_t)pl.reg, 0));
	default:
		return false;
	}
}

static void feature(struct builder *b, const char *name, enum annotate_feature_kind kind,
		    const struct place *pl, unsigned size, unsigned flags, bool nonzero)
{
	uint32_t mark = b->n_ops;
	int idx = declare(b, name, kind);

	if (idx < 0)
		return;
	if (!push_scalar(b, pl, size, flags)) {
		b->n_ops = mark;
		return;
	}
	if (nonzero)
		emit_op(b, op(ANN_OP_NONZERO, 0, 0, 0));
	emit_op(b, op(ANN_OP_EMIT, 0, (uint32_t)idx, 0));
}

static void base_feature(struct builder *b, Dwarf_Die *type, const struct place *pl,
			 const struct expr *e)
{
	Dwarf_Word enc = 0, size = 0;
	char name[NAME_MAX_LEN];

	if (!die_udata(type, DW_AT_encoding, &enc) || !die_udata(type, DW_AT_byte_size, &size))
		return;
	if (size != 1 && size != 2 && size != 4 && size != 8)
		return; /* long double, __int128: not read */
	if (!expr_wrap(name, sizeof(name), "", e, ""))
		return;
	switch (enc) {
	case DW_ATE_boolean:
		feature(b, name, ANNOTATE_BOOL, pl, (unsigned)size, 0, true);
		break;
	case DW_ATE_float:
		if (size == 4 || size == 8)
			feature(b, name, ANNOTATE_FLOAT, pl, (unsigned)size, ANN_F_FLOAT, false);
		break;
	case DW_ATE_signed:
	case DW_ATE_signed_char:
		feature(b, name, ANNOTATE_INTEGER, pl, (unsigned)size, ANN_F_SIGNED, false);
		break;
	case DW_ATE_unsigned:
	case DW_ATE_unsigned_char:
	case DW_ATE_UTF:
		feature(b, name, ANNOTATE_INTEGER, pl, (unsigned)size, 0, false);
		break;
	default:
		break;
	}
}

static void enum_feature(struct builder *b, Dwarf_Die *type, const struct place *pl,
			 const struct expr *e)
{
	Dwarf_Word size = 0, enc = DW_ATE_signed;
	Dwarf_Die under;
	char name[NAME_MAX_LEN];

	if (!die_udata(type, DW_AT_byte_size, &size) ||
	    (size != 1 && size != 2 && size != 4 && size != 8))
		return;
	if (peeled_type(type, &under))
		die_udata(&under, DW_AT_encoding, &enc);
	if (!expr_wrap(name, sizeof(name), "", e, ""))
		return;
	feature(b, name, ANNOTATE_ENUM, pl, (unsigned)size,
		enc == DW_ATE_unsigned || enc == DW_ATE_unsigned_char ? 0 : ANN_F_SIGNED, false);
}

static void walk(struct builder *b, Dwarf_Die *type_in, const struct place *pl,
		 const struct expr *e, unsigned depth);

/* A member found anywhere inside an aggregate (members and bases, no pointers). */
static bool find_member(Dwarf_Die *agg, const char *name, int64_t *off, Dwarf_Die *member,
			unsigned depth)
{
	Dwarf_Die c;

	if (depth > 6 || dwarf_child(agg, &c) != 0)
		return false;
	do {
		int tag = dwarf_tag(&c);
		const char *n = die_name(&c);
		Dwarf_Die t;
		int64_t o;

		if (tag != DW_TAG_member && tag != DW_TAG_inheritance)
			continue;
		if (!member_offset(&c, &o))
			continue;
		if (tag == DW_TAG_member && n && strcmp(n, name) == 0) {
			*off = o;
			*member = c;
			return true;
		}
		if (peeled_type(&c, &t) && is_aggregate(dwarf_tag(&t)) &&
		    find_member(&t, name, off, member, depth + 1)) {
			*off += o;
			return true;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

/* Size of a libstdc++ container; true if the type was one (handled). */
static bool container_feature(struct builder *b, Dwarf_Die *type, const struct place *pl,
			      const struct expr *e)
{
	static const struct {
		const char *prefix, *member, *method;
	} counted[] = {
	    {"list<", "_M_size", ".size()"},
	    {"map<", "_M_node_count", ".size()"},
	    {"multimap<", "_M_node_count", ".size()"},
	    {"set<", "_M_node_count", ".size()"},
	    {"multiset<", "_M_node_count", ".size()"},
	    {"unordered_map<", "_M_element_count", ".size()"},
	    {"unordered_set<", "_M_element_count", ".size()"},
	    {"unordered_multimap<", "_M_element_count", ".size()"},
	    {"unordered_multiset<", "_M_element_count", ".size()"},
	    {"basic_string<", "_M_string_length", ".length()"},
	};
	char *q = qualified_name(type);
	char name[NAME_MAX_LEN];
	const char *simple;
	bool is_std;
	int64_t off, off2;
	Dwarf_Die m, m2, elem;

	if (!q)
		return false;
	is_std = strncmp(q, "std::", 5) == 0;
	simple = strrchr(q, ':') ? strrchr(q, ':') + 1 : q;
	/* the template arguments may contain "::": find the last scope before '<' */
	for (const char *p = q; *p && *p != '<'; p++)
		if (p[0] == ':' && p[1] == ':')
			simple = p + 2;
	if (!is_std || pl->kind != PL_MEM) {
		free(q);
		return false;
	}
	if (strncmp(simple, "vector<", 7) == 0) {
		free(q);
		if (!find_member(type, "_M_start", &off, &m, 0) ||
		    !find_member(type, "_M_finish", &off2, &m2, 0))
			return false;
		Dwarf_Die ptr;
		Dwarf_Word esize;

		if (!peeled_type(&m, &ptr) || dwarf_tag(&ptr) != DW_TAG_pointer_type ||
		    !peeled_type(&ptr, &elem) || (esize = type_size(&elem)) == 0)
			return true; /* vector<bool> and friends: no plain size */
		if (!expr_wrap(name, sizeof(name), "", e, "") ||
		    snprintf(name, sizeof(name), "%s%s", e->s, e->deref ? "->size()" : ".size()") >=
			(int)sizeof(name))
			return true;
		int idx = declare(b, name, ANNOTATE_CONTAINER_SIZE);
		struct place a = place_member(pl, off2), s = place_member(pl, off);

		if (idx < 0 || a.kind != PL_MEM || s.kind != PL_MEM)
			return true;
		if (!addr_load(&a.addr, 8, 0) || !addr_load(&s.addr, 8, 0))
			return true;
		emit_addr(b, &a.addr);
		emit_addr(b, &s.addr);
		emit_op(b, op(ANN_OP_SUB, 0, 0, 0));
		emit_op(b, op(ANN_OP_DIV, 0, 0, (int64_t)esize));
		emit_op(b, op(ANN_OP_EMIT, 0, (uint32_t)idx, 0));
		return true;
	}
	for (size_t i = 0; i < sizeof(counted) / sizeof(counted[0]); i++) {
		if (strncmp(simple, counted[i].prefix, strlen(counted[i].prefix)) != 0)
			continue;
		free(q);
		if (!find_member(type, counted[i].member, &off, &m, 0))
			return true; /* e.g. the old-ABI std::list: no stored size */
		const char *method = counted[i].method;

		if (snprintf(name, sizeof(name), "%s%s%s", e->s, e->deref ? "->" : "",
			     e->deref ? method + 1 : method) >= (int)sizeof(name))
			return true;
		struct place s = place_member(pl, off);

		feature(b, name, ANNOTATE_CONTAINER_SIZE, &s, 8, 0, false);
		return true;
	}
	free(q);
	return false;
}

static bool name_has(const char *name, const char *const *words)
{
	for (; *words; words++) {
		size_t n = strlen(*words);

		for (const char *p = name; *p; p++)
			if (strncasecmp(p, *words, n) == 0)
				return true;
	}
	return false;
}

/*
 * Freud's derived feature (spec §4.2.3): two pointers of one type named like
 * begin/end, start/finish or first/last give their difference, an element
 * count: "E.finish - E.start".
 */
static void span_feature(struct builder *b, Dwarf_Die *agg, const struct place *pl,
			 const struct expr *e)
{
	static const char *const lo_words[] = {"begin", "start", "first", NULL};
	static const char *const hi_words[] = {"end", "finish", "last", "stop", NULL};
	Dwarf_Die c, lo_die, hi_die, lo_t, hi_t, elem;
	int64_t lo_off = -1, hi_off = -1, o;
	const char *lo_name = NULL, *hi_name = NULL;

	if (pl->kind != PL_MEM || dwarf_child(agg, &c) != 0)
		return;
	do {
		const char *n = die_name(&c);
		Dwarf_Die t;

		if (dwarf_tag(&c) != DW_TAG_member || !n || !member_offset(&c, &o) ||
		    !peeled_type(&c, &t) || dwarf_tag(&t) != DW_TAG_pointer_type)
			continue;
		if (!lo_name && name_has(n, lo_words)) {
			lo_name = n, lo_off = o, lo_die = c;
		} else if (!hi_name && name_has(n, hi_words)) {
			hi_name = n, hi_off = o, hi_die = c;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	if (!lo_name || !hi_name || !peeled_type(&lo_die, &lo_t) || !peeled_type(&hi_die, &hi_t))
		return;
	Dwarf_Die lo_e, hi_e;
	Dwarf_Word esize;

	if (!peeled_type(&lo_t, &lo_e) || !peeled_type(&hi_t, &hi_e) ||
	    dwarf_dieoffset(&lo_e) != dwarf_dieoffset(&hi_e))
		return;
	elem = lo_e;
	esize = type_size(&elem);
	if (esize == 0)
		return;
	struct expr lo_x, hi_x;
	char name[NAME_MAX_LEN];

	if (!expr_member(&lo_x, e, lo_name) || !expr_member(&hi_x, e, hi_name) ||
	    snprintf(name, sizeof(name), "%s - %s", hi_x.s, lo_x.s) >= (int)sizeof(name))
		return;
	int idx = declare(b, name, ANNOTATE_INTEGER);
	struct place h = place_member(pl, hi_off), l = place_member(pl, lo_off);

	if (idx < 0 || h.kind != PL_MEM || l.kind != PL_MEM)
		return;
	if (!addr_load(&h.addr, 8, 0) || !addr_load(&l.addr, 8, 0))
		return;
	emit_addr(b, &h.addr);
	emit_addr(b, &l.addr);
	emit_op(b, op(ANN_OP_SUB, 0, 0, 0));
	emit_op(b, op(ANN_OP_DIV, 0, 0, (int64_t)esize));
	emit_op(b, op(ANN_OP_EMIT, 0, (uint32_t)idx, 0));
}

static void walk_members(struct builder *b, Dwarf_Die *agg, const struct place *pl,
			 const struct expr *e, unsigned depth)
{
	Dwarf_Die c;

	if (dwarf_child(agg, &c) != 0)
		return;
	do {
		int tag = dwarf_tag(&c);
		const char *n = die_name(&c);
		Dwarf_Die t;
		int64_t off;

		if ((tag != DW_TAG_member && tag != DW_TAG_inheritance) || !member_offset(&c, &off))
			continue;
		if (!die_type(&c, &t))
			continue;
		struct place m = place_member(pl, off);

		if (tag == DW_TAG_inheritance) {
			Dwarf_Die base;

			if (dwarf_peel_type(&t, &base) != 0)
				continue;
			if (b->skip_base) {
				char *q = qualified_name(&base);
				bool skip = q && strcmp(q, b->skip_base) == 0;

				free(q);
				if (skip)
					continue;
			}
			walk_members(b, &base, &m, e, depth); /* a base's members are E.m */
			continue;
		}
		if (!n || strncmp(n, "_vptr", 5) == 0 || strcmp(n, "next") == 0 ||
		    strcmp(n, "prev") == 0)
			continue;
		struct expr me;

		if (expr_member(&me, e, n))
			walk(b, &t, &m, &me, depth);
	} while (dwarf_siblingof(&c, &c) == 0 && !b->error);
	span_feature(b, agg, pl, e);
}

static bool on_path(struct builder *b, Dwarf_Die *type)
{
	Dwarf_Off off = dwarf_dieoffset(type);

	for (unsigned i = 0; i < b->path_len; i++)
		if (b->path[i] == off)
			return true;
	return false;
}

static void walk_aggregate(struct builder *b, Dwarf_Die *agg, const struct place *pl,
			   const struct expr *e, unsigned depth)
{
	if (container_feature(b, agg, pl, e))
		return;
	if (on_path(b, agg) || b->path_len == PATH_DEPTH)
		return;
	b->path[b->path_len++] = dwarf_dieoffset(agg);
	walk_members(b, agg, pl, e, depth);
	b->path_len--;
}

static void array_features(struct builder *b, Dwarf_Die *arr, const struct place *pl,
			   const struct expr *e)
{
	Dwarf_Die sub, elem;
	Dwarf_Word count = 0, upper, enc, esize;
	char name[NAME_MAX_LEN];

	if (dwarf_child(arr, &sub) != 0 || dwarf_tag(&sub) != DW_TAG_subrange_type)
		return;
	if (!die_udata(&sub, DW_AT_count, &count)) {
		if (!die_udata(&sub, DW_AT_upper_bound, &upper))
			return; /* unknown bound */
		count = upper + 1;
	}
	if (!expr_wrap(name, sizeof(name), "countof(", e, ")"))
		return;
	int idx = declare(b, name, ANNOTATE_ARRAY_COUNT);

	if (idx < 0)
		return;
	emit_op(b, op(ANN_OP_CONST, 0, 0, (int64_t)count));
	emit_op(b, op(ANN_OP_EMIT, 0, (uint32_t)idx, 0));
	struct expr elem_e = *e;
	Dwarf_Die next;

	/* a sum of a one-dimensional array of numbers in memory */
	if (dwarf_siblingof(&sub, &next) == 0 && dwarf_tag(&next) == DW_TAG_subrange_type)
		return;
	if (pl->kind != PL_MEM || !peeled_type(arr, &elem) ||
	    dwarf_tag(&elem) != DW_TAG_base_type || !die_udata(&elem, DW_AT_encoding, &enc) ||
	    !die_udata(&elem, DW_AT_byte_size, &esize))
		return;
	if (esize != 1 && esize != 2 && esize != 4 && esize != 8)
		return;
	unsigned flags = enc == DW_ATE_float				     ? ANN_F_FLOAT
			 : enc == DW_ATE_signed || enc == DW_ATE_signed_char ? ANN_F_SIGNED
									     : 0;

	if (enc == DW_ATE_float && esize < 4)
		return;
	if (!expr_wrap(name, sizeof(name), "sum(", &elem_e, ")"))
		return;
	idx = declare(b, name, enc == DW_ATE_float ? ANNOTATE_FLOAT : ANNOTATE_INTEGER);
	if (idx < 0)
		return;
	emit_addr(b, &pl->addr);
	emit_op(b, op(ANN_OP_CONST, 0, 0, (int64_t)count));
	emit_op(b, op(ANN_OP_SUM, (uint16_t)esize, flags, 0));
	emit_op(b, op(ANN_OP_EMIT, 0, (uint32_t)idx, 0));
}

/*
 * A polymorphic object at `obj` (its address program) named by e: its
 * dynamic type, then for every class derived from its static type, the
 * derived class's own fields under a test of the dynamic type.
 */
static void dynamic_features(struct builder *b, Dwarf_Die *cls, const struct addr *obj,
			     const struct expr *e, unsigned depth)
{
	char name[NAME_MAX_LEN], tname[NAME_MAX_LEN];
	struct derived_class *derived[MAX_DERIVED];
	char *q = qualified_name(cls);
	size_t n;
	int idx;

	if (!q)
		return;
	if (snprintf(name, sizeof(name), "typeid(%s%s)", e->deref ? "*" : "", e->s) >=
	    (int)sizeof(name)) {
		free(q);
		return;
	}
	idx = declare(b, name, ANNOTATE_DYNAMIC_TYPE);
	if (idx >= 0) {
		emit_addr(b, obj);
		emit_op(b, op(ANN_OP_DYNTYPE, 0, 0, 0));
		emit_op(b, op(ANN_OP_EMIT, 0, (uint32_t)idx, 0));
	}
	n = derived_of(b, q, derived, MAX_DERIVED);
	for (size_t i = 0; i < n && !b->error; i++) {
		Dwarf_Die d = derived[i]->die;
		struct place top = {.kind = PL_MEM, .addr = *obj};
		uint32_t header;
		const char *saved_skip = b->skip_base;
		bool saved_mode = b->derived_mode;

		if (!typeinfo_name(&d, tname, sizeof(tname)) ||
		    !addr_push(&top.addr, op(ANN_OP_TOPOBJ, 0, 0, 0)))
			continue;
		emit_addr(b, obj);
		emit_op(b, op(ANN_OP_DYNTYPE, 0, 0, 0));
		header = b->n_ops;
		emit_op(b, op(ANN_OP_SKIP_NE, 0, 0, (int64_t)ann_type_hash(tname)));
		b->skip_base = q;
		b->derived_mode = true;
		walk_aggregate(b, &d, &top, e, depth);
		b->skip_base = saved_skip;
		b->derived_mode = saved_mode;
		if (b->n_ops == header + 1)
			b->n_ops -= (uint32_t)(obj->n + 2); /* nothing of its own */
		else if (b->n_ops > header)
			b->ops[header].index = b->n_ops - header - 1;
	}
	free(q);
}

/* The object a pointer or reference at pl points to. */
static void walk_pointee(struct builder *b, Dwarf_Die *ptr, const struct place *pl,
			 const struct expr *e, unsigned depth)
{
	int tag = dwarf_tag(ptr);
	Dwarf_Die target;
	struct addr a;
	struct expr pe;
	char name[NAME_MAX_LEN];

	if (tag == DW_TAG_ptr_to_member_type || depth + 1 > b->max_depth)
		return;
	if (!peeled_type(ptr, &target))
		return; /* void * */
	if (!pointer_addr(pl, &a))
		return;
	/* A reference names the object itself; a pointer P names *P. */
	if (e->deref)
		return; /* reached through a pointer to a pointer: the callee's output */
	memcpy(pe.s, e->s, sizeof(pe.s));
	pe.deref = tag == DW_TAG_pointer_type;
	int ttag = dwarf_tag(&target);
	struct place obj = {.kind = PL_MEM, .addr = a};

	if (ttag == DW_TAG_base_type && tag == DW_TAG_pointer_type) {
		Dwarf_Word enc = 0, size = 0;

		die_udata(&target, DW_AT_encoding, &enc);
		die_udata(&target, DW_AT_byte_size, &size);
		if (size == 1 && (enc == DW_ATE_signed_char || enc == DW_ATE_unsigned_char)) {
			if (snprintf(name, sizeof(name), "strlen(%s)", pe.s) >= (int)sizeof(name))
				return;
			int idx = declare(b, name, ANNOTATE_STRING_LENGTH);

			if (idx < 0)
				return;
			emit_addr(b, &a);
			emit_op(b, op(ANN_OP_STRLEN, 0, 0, STRLEN_BOUND));
			emit_op(b, op(ANN_OP_EMIT, 0, (uint32_t)idx, 0));
			return;
		}
	}
	if (ttag == DW_TAG_pointer_type && tag == DW_TAG_pointer_type)
		return; /* pointer to pointer */
	if (is_aggregate(ttag) && is_polymorphic(&target, 0) && !b->derived_mode)
		dynamic_features(b, &target, &a, &pe, depth + 1);
	walk(b, &target, &obj, &pe, depth + 1);
}

static void walk(struct builder *b, Dwarf_Die *type_in, const struct place *pl,
		 const struct expr *e, unsigned depth)
{
	Dwarf_Die type;

	if (b->error || pl->kind == PL_NONE || dwarf_peel_type(type_in, &type) != 0)
		return;
	switch (dwarf_tag(&type)) {
	case DW_TAG_base_type:
		base_feature(b, &type, pl, e);
		break;
	case DW_TAG_enumeration_type:
		enum_feature(b, &type, pl, e);
		break;
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
		walk_pointee(b, &type, pl, e, depth);
		break;
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
		walk_aggregate(b, &type, pl, e, depth);
		break;
	case DW_TAG_array_type:
		array_features(b, &type, pl, e);
		break;
	default:
		break;
	}
}

/* ------------------------------------------------------------ the SysV ABI at the entry */

enum abi_class { AC_NONE, AC_INTEGER, AC_SSE, AC_MEMORY };

static const int gpr_args[6] = {5, 4, 1, 2, 8, 9}; /* rdi rsi rdx rcx r8 r9, DWARF numbers */

struct abi_state {
	int next_gpr, next_xmm;
	int64_t stack; /* offset of the next stack argument from the CFA */
};

static void merge_class(enum abi_class *slot, enum abi_class c)
{
	if (*slot == c || c == AC_NONE)
		return;
	if (*slot == AC_NONE)
		*slot = c;
	else if (*slot == AC_MEMORY || c == AC_MEMORY)
		*slot = AC_MEMORY;
	else
		*slot = AC_INTEGER; /* INTEGER wins over SSE */
}

/* The classes of the eightbytes a type covers at byte offset off. */
static void classify_at(Dwarf_Die *type_in, int64_t off, enum abi_class eb[2], unsigned depth)
{
	Dwarf_Die type, c;
	Dwarf_Word size;

	if (depth > 8 || dwarf_peel_type(type_in, &type) != 0) {
		eb[0] = AC_MEMORY;
		return;
	}
	size = type_size(&type);
	switch (dwarf_tag(&type)) {
	case DW_TAG_base_type:
	case DW_TAG_enumeration_type:
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
	case DW_TAG_ptr_to_member_type: {
		Dwarf_Word enc = 0;

		die_udata(&type, DW_AT_encoding, &enc);
		bool complex = enc == DW_ATE_complex_float;
		bool sse = enc == DW_ATE_float || complex;
		int64_t align = (int64_t)(complex ? size / 2 : size);

		if (align > 8)
			align = 8;
		if (size == 0 || align == 0 || off % align != 0 || off + (int64_t)size > 16 ||
		    (enc == DW_ATE_float && size > 8)) {
			eb[0] = AC_MEMORY; /* unaligned, or x87 long double */
			return;
		}
		for (int64_t at = off; at < off + (int64_t)size; at += 8)
			merge_class(&eb[at / 8], sse ? AC_SSE : AC_INTEGER);
		return;
	}
	case DW_TAG_array_type: {
		Dwarf_Die elem;
		Dwarf_Word esize;

		if (!peeled_type(&type, &elem) || (esize = type_size(&elem)) == 0) {
			eb[0] = AC_MEMORY;
			return;
		}
		for (Dwarf_Word at = 0; at + esize <= size; at += esize)
			classify_at(&elem, off + (int64_t)at, eb, depth + 1);
		return;
	}
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
		if (dwarf_child(&type, &c) != 0)
			return;
		do {
			int64_t moff;
			Dwarf_Die mt;

			if (dwarf_tag(&c) != DW_TAG_member && dwarf_tag(&c) != DW_TAG_inheritance)
				continue;
			if (die_flag(&c, DW_AT_external) || die_flag(&c, DW_AT_declaration))
				continue;
			if (dwarf_hasattr(&c, DW_AT_bit_size)) {
				Dwarf_Word bo = 0;

				if (die_udata(&c, DW_AT_data_bit_offset, &bo) ||
				    die_udata(&c, DW_AT_data_member_location, &bo))
					merge_class(&eb[((uint64_t)off + bo / 8) / 8 % 2],
						    AC_INTEGER);
				continue;
			}
			if (member_offset(&c, &moff) && die_type(&c, &mt))
				classify_at(&mt, off + moff, eb, depth + 1);
		} while (dwarf_siblingof(&c, &c) == 0);
		return;
	default:
		eb[0] = AC_MEMORY;
	}
}

/*
 * A C++ class the ABI passes by invisible reference (a non-trivial copy
 * constructor or destructor): DW_AT_calling_convention when the compiler
 * says, else a user-declared destructor or copy constructor.
 */
static bool passed_by_reference(Dwarf_Die *type, unsigned depth)
{
	Dwarf_Word cc;
	Dwarf_Die c;
	const char *own = die_name(type);

	if (die_udata(type, DW_AT_calling_convention, &cc))
		return cc == DW_CC_pass_by_reference;
	if (depth > 6 || dwarf_child(type, &c) != 0)
		return false;
	do {
		const char *n = die_name(&c);
		Dwarf_Die t;

		if (dwarf_tag(&c) == DW_TAG_subprogram && n && !die_flag(&c, DW_AT_artificial) &&
		    (n[0] == '~' ||
		     (own && strcmp(n, own) == 0 && die_flag(&c, DW_AT_declaration)))) {
			if (n[0] == '~')
				return true;
			/* a constructor taking a reference to its own class */
			Dwarf_Die p;
			int params = 0;
			bool ref = false;

			if (dwarf_child(&c, &p) == 0) {
				do {
					if (dwarf_tag(&p) != DW_TAG_formal_parameter ||
					    die_flag(&p, DW_AT_artificial))
						continue;
					params++;
					ref = peeled_type(&p, &t) &&
					      (dwarf_tag(&t) == DW_TAG_reference_type ||
					       dwarf_tag(&t) == DW_TAG_rvalue_reference_type);
				} while (dwarf_siblingof(&p, &p) == 0);
			}
			if (params == 1 && ref)
				return true;
		}
		if ((dwarf_tag(&c) == DW_TAG_member || dwarf_tag(&c) == DW_TAG_inheritance) &&
		    !die_flag(&c, DW_AT_external) && peeled_type(&c, &t) &&
		    is_aggregate(dwarf_tag(&t)) && passed_by_reference(&t, depth + 1))
			return true;
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

static struct place stack_place(struct abi_state *s, Dwarf_Word size, Dwarf_Word align)
{
	struct place pl = {.kind = PL_MEM};

	if (align > 8)
		s->stack = (s->stack + (int64_t)align - 1) & ~((int64_t)align - 1);
	pl.addr.ops[0] = op(ANN_OP_CFA, 0, 0, s->stack);
	pl.addr.n = 1;
	s->stack += ((int64_t)size + 7) & ~7ll;
	return pl;
}

/* A pointer passed as the next INTEGER argument: the object it points to. */
static struct place pointed_place(struct abi_state *s)
{
	struct place pl = {.kind = PL_MEM};

	if (s->next_gpr < 6) {
		pl.addr.ops[0] = op(ANN_OP_REG, 0, (uint32_t)gpr_args[s->next_gpr++], 0);
		pl.addr.n = 1;
		return pl;
	}
	pl = stack_place(s, 8, 8);
	addr_load(&pl.addr, 8, 0);
	return pl;
}

/* __float128 / _Float128 (not the x87 long double, which is also 16 bytes). */
static bool is_float128(Dwarf_Die *type)
{
	Dwarf_Word enc = 0;
	const char *name = die_name(type);

	return dwarf_tag(type) == DW_TAG_base_type && die_udata(type, DW_AT_encoding, &enc) &&
	       enc == DW_ATE_float && type_size(type) == 16 && name && !strstr(name, "long double");
}

/* Where the ABI puts a parameter of this type at the function's entry. */
static struct place abi_place(struct abi_state *s, Dwarf_Die *type_in)
{
	Dwarf_Die type;
	enum abi_class eb[2] = {AC_NONE, AC_NONE};
	Dwarf_Word size;
	int need_gpr = 0, need_xmm = 0;
	struct place pl = {.kind = PL_REGS};

	if (dwarf_peel_type(type_in, &type) != 0)
		return (struct place){.kind = PL_NONE};
	size = type_size(&type);
	if (is_aggregate(dwarf_tag(&type)) && passed_by_reference(&type, 0))
		return pointed_place(s);
	if (size == 0)
		return (struct place){.kind = PL_NONE};
	if (size > 16)
		return stack_place(s, size, 8);
	if (is_float128(&type)) {
		/* SSE + SSEUP: one whole XMM register (not read as a feature) */
		if (s->next_xmm < 8)
			return (struct place){.kind = PL_XMM, .reg = s->next_xmm++};
		return stack_place(s, size, 16);
	}
	classify_at(&type, 0, eb, 0);
	if (eb[0] == AC_MEMORY || eb[1] == AC_MEMORY)
		return stack_place(s, size, size > 8 ? 16 : 8);
	for (int i = 0; i < 2; i++) {
		need_gpr += eb[i] == AC_INTEGER;
		need_xmm += eb[i] == AC_SSE;
	}
	if (s->next_gpr + need_gpr > 6 || s->next_xmm + need_xmm > 8)
		return stack_place(s, size, 8);
	for (int i = 0; i < 2; i++) {
		if (eb[i] == AC_INTEGER) {
			pl.eb_kind[i] = PL_GPR;
			pl.eb_reg[i] = gpr_args[s->next_gpr++];
		} else if (eb[i] == AC_SSE) {
			pl.eb_kind[i] = PL_XMM;
			pl.eb_reg[i] = s->next_xmm++;
		} else {
			pl.eb_kind[i] = PL_NONE;
		}
	}
	return pl;
}

/* The hidden pointer of a function returning an aggregate in memory. */
static void abi_return(struct abi_state *s, Dwarf_Die *fn)
{
	Dwarf_Die type;
	enum abi_class eb[2] = {AC_NONE, AC_NONE};

	if (!peeled_type(fn, &type) || !is_aggregate(dwarf_tag(&type)))
		return;
	if (passed_by_reference(&type, 0) || type_size(&type) > 16) {
		s->next_gpr++;
		return;
	}
	classify_at(&type, 0, eb, 0);
	if (eb[0] == AC_MEMORY || eb[1] == AC_MEMORY)
		s->next_gpr++;
}

/*
 * The DWARF location of a scalar parameter at the entry pc, where a
 * location list gives one (optimised code); false otherwise.
 */
static bool dwarf_entry_place(Dwarf_Die *param, Dwarf_Die *fn, Dwarf_Addr entry, struct place *out)
{
	Dwarf_Attribute a, fb;
	Dwarf_Op *expr, *fbexpr;
	size_t len, fblen;
	unsigned form;

	if (!dwarf_attr(param, DW_AT_location, &a))
		return false;
	form = dwarf_whatform(&a);
	if (form != DW_FORM_sec_offset && form != DW_FORM_loclistx && form != DW_FORM_data4 &&
	    form != DW_FORM_data8)
		return false; /* one expression for the whole body: after the prologue */
	if (dwarf_getlocation_addr(&a, entry, &expr, &len, 1) != 1 || len == 0)
		return false;
	Dwarf_Op *o = &expr[0];
	unsigned reg = ~0u;

	if (o->atom >= DW_OP_reg0 && o->atom <= DW_OP_reg31 && len == 1)
		reg = o->atom - DW_OP_reg0;
	else if (o->atom == DW_OP_regx && len == 1)
		reg = (unsigned)o->number;
	else if ((o->atom == DW_OP_entry_value || o->atom == DW_OP_GNU_entry_value) && len == 2 &&
		 expr[1].atom == DW_OP_stack_value) {
		Dwarf_Attribute inner;
		Dwarf_Op *iexpr;
		size_t ilen;

		if (dwarf_getlocation_attr(&a, o, &inner) != 0 ||
		    dwarf_getlocation(&inner, &iexpr, &ilen) != 0 || ilen != 1)
			return false;
		if (iexpr[0].atom >= DW_OP_reg0 && iexpr[0].atom <= DW_OP_reg31)
			reg = iexpr[0].atom - DW_OP_reg0;
		else if (iexpr[0].atom == DW_OP_regx)
			reg = (unsigned)iexpr[0].number;
	} else if (o->atom == DW_OP_fbreg && len == 1) {
		if (!dwarf_attr_integrate(fn, DW_AT_frame_base, &fb) ||
		    dwarf_getlocation(&fb, &fbexpr, &fblen) != 0 || fblen != 1 ||
		    fbexpr[0].atom != DW_OP_call_frame_cfa)
			return false;
		*out = (struct place){.kind = PL_MEM};
		out->addr.ops[0] = op(ANN_OP_CFA, 0, 0, (int64_t)o->number);
		out->addr.n = 1;
		return true;
	} else if (o->atom == DW_OP_breg7 && len == 1) {
		*out = (struct place){.kind = PL_MEM};
		out->addr.ops[0] = op(ANN_OP_CFA, 0, 0, (int64_t)o->number - 8);
		out->addr.n = 1;
		return true;
	}
	if (reg < 17) {
		*out = (struct place){.kind = PL_GPR, .reg = (int)reg};
		return true;
	}
	if (reg >= 17 && reg <= 24) {
		*out = (struct place){.kind = PL_XMM, .reg = (int)reg - 17};
		return true;
	}
	return false;
}

/* ------------------------------------------------------------ finding the function */

struct lookup {
	uint64_t pc;
	Dwarf_Addr entry; /* of the function found */
	const char *symbol;
	Dwarf_Die found;
	bool have;
	int quality; /* 3 linkage name or pc, 2 name, 1 name before '(' */
};

static int name_quality(Dwarf_Die *fn, const char *symbol)
{
	Dwarf_Attribute a;
	const char *linkage = dwarf_formstring(dwarf_attr_integrate(fn, DW_AT_linkage_name, &a));
	const char *name = die_name(fn);
	size_t plain;

	if (!linkage)
		linkage = dwarf_formstring(dwarf_attr_integrate(fn, DW_AT_MIPS_linkage_name, &a));
	if (linkage && strcmp(linkage, symbol) == 0)
		return 3;
	if (!name)
		return 0;
	if (strcmp(name, symbol) == 0)
		return 2;
	plain = strcspn(symbol, "(");
	if (symbol[plain] == '(') {
		const char *last = symbol;

		for (const char *p = symbol; p < symbol + plain; p++)
			if (p[0] == ':' && p[1] == ':')
				last = p + 2;
		if ((size_t)(symbol + plain - last) == strlen(name) &&
		    strncmp(last, name, strlen(name)) == 0)
			return 1;
	}
	return 0;
}

/*
 * Whether a subprogram has code, and its entry: DW_AT_entry_pc or low_pc;
 * for a function split in several ranges (GCC's hot/cold partitions) the
 * range starting at `want` if one does, else the first range listed (the
 * lowest address may be the cold part, placed before .text).
 */
static bool function_entry(Dwarf_Die *fn, uint64_t want, Dwarf_Addr *entry)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	bool any = false;

	if (dwarf_entrypc(fn, entry) == 0)
		return true;
	while ((off = dwarf_ranges(fn, off, &base, &start, &end)) > 0) {
		if (!any || (want && start == want))
			*entry = start;
		any = true;
	}
	return any;
}

static void lookup_in(struct lookup *l, Dwarf_Die *parent, unsigned depth)
{
	Dwarf_Die c;

	if (depth > 8 || dwarf_child(parent, &c) != 0)
		return;
	do {
		int tag = dwarf_tag(&c);
		Dwarf_Addr entry;

		if (tag == DW_TAG_namespace || is_aggregate(tag)) {
			lookup_in(l, &c, depth + 1);
			continue;
		}
		if (tag != DW_TAG_subprogram || !function_entry(&c, l->pc, &entry))
			continue;
		if (l->pc && entry == l->pc) {
			l->entry = entry;
			l->found = c;
			l->have = true;
			l->quality = 4;
			return;
		}
		if (l->symbol && *l->symbol) {
			int q = name_quality(&c, l->symbol);

			if (q > l->quality) {
				l->entry = entry;
				l->found = c;
				l->have = true;
				l->quality = q;
			}
		}
	} while (dwarf_siblingof(&c, &c) == 0 && l->quality < 4);
}

static bool find_function(Dwarf *dw, struct lookup *l, Dwarf_Die *cu_out)
{
	Dwarf_Off off = 0, next;
	size_t header;

	while (dwarf_nextcu(dw, off, &next, &header, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		int before = l->quality;

		if (dwarf_offdie(dw, off + header, &cu)) {
			lookup_in(l, &cu, 0);
			if (l->quality > before)
				*cu_out = cu;
			if (l->quality >= 3)
				return true;
		}
		off = next;
	}
	return l->have;
}

/* ------------------------------------------------------------ variables */

static bool has_parameters(Dwarf_Die *fn)
{
	Dwarf_Die c;

	if (dwarf_child(fn, &c) != 0)
		return false;
	do {
		if (dwarf_tag(&c) == DW_TAG_formal_parameter)
			return true;
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

/*
 * Whether the standard calling convention holds for the function: not for
 * GCC's clones (f.isra.0, f.constprop.0, f.part.0), which drop, reorder or
 * replace parameters. Their concrete DIE lists the parameters in another
 * order than the abstract origin, or with a constant for a dropped one
 * (DW_AT_const_value); the symbol's ".suffix" says so too.
 */
static bool standard_convention(Dwarf_Die *fn, const char *symbol)
{
	Dwarf_Attribute a;
	Dwarf_Die origin, c, o;
	Dwarf_Word cc;
	bool more_c, more_o;

	if (symbol && (strstr(symbol, "[clone .") || (!strchr(symbol, '(') && strchr(symbol, '.'))))
		return false;
	if (die_udata(fn, DW_AT_calling_convention, &cc) && cc == DW_CC_nocall)
		return false;
	if (!dwarf_formref_die(dwarf_attr(fn, DW_AT_abstract_origin, &a), &origin))
		return true;
	more_c = dwarf_child(fn, &c) == 0;
	more_o = dwarf_child(&origin, &o) == 0;
	while (more_c || more_o) {
		Dwarf_Die co;

		if (more_c && dwarf_tag(&c) != DW_TAG_formal_parameter) {
			more_c = dwarf_siblingof(&c, &c) == 0;
			continue;
		}
		if (more_o && dwarf_tag(&o) != DW_TAG_formal_parameter) {
			more_o = dwarf_siblingof(&o, &o) == 0;
			continue;
		}
		if (!more_c)
			return true; /* a copy listing no parameters: the origin's hold */
		if (!more_o || dwarf_hasattr(&c, DW_AT_const_value) ||
		    !dwarf_formref_die(dwarf_attr(&c, DW_AT_abstract_origin, &a), &co) ||
		    dwarf_dieoffset(&co) != dwarf_dieoffset(&o))
			return false;
		more_c = dwarf_siblingof(&c, &c) == 0;
		more_o = dwarf_siblingof(&o, &o) == 0;
	}
	return true;
}

/*
 * The parameters. Where the standard convention does not hold (a clone),
 * only those whose DWARF says where they are at the entry are read.
 */
static void plan_parameters(struct builder *b, Dwarf_Die *fn, Dwarf_Addr entry, bool abi)
{
	struct abi_state s = {0, 0, 0};
	Dwarf_Die c, origin;
	Dwarf_Attribute a;
	Dwarf_Die *params_of = fn;

	abi_return(&s, fn);
	/* a concrete out-of-line copy may list no parameters of its own */
	if (!has_parameters(fn) &&
	    dwarf_formref_die(dwarf_attr(fn, DW_AT_abstract_origin, &a), &origin))
		params_of = &origin;
	if (dwarf_child(params_of, &c) != 0)
		return;
	do {
		Dwarf_Die type, peeled;
		struct place pl, dl;
		struct expr e = {.deref = false};
		const char *name;

		if (dwarf_tag(&c) == DW_TAG_unspecified_parameters)
			break;
		if (dwarf_tag(&c) != DW_TAG_formal_parameter || !die_type(&c, &type))
			continue;
		pl = abi_place(&s, &type);
		if (!abi)
			pl.kind = PL_NONE;
		name = die_name(&c);
		if (!name)
			continue; /* unnamed: nothing to call it by */
		snprintf(e.s, sizeof(e.s), "%s", name);
		/* a scalar's location list at the entry pc, where there is one */
		if (dwarf_peel_type(&type, &peeled) == 0 && !is_aggregate(dwarf_tag(&peeled)) &&
		    dwarf_entry_place(&c, fn, entry, &dl))
			pl = dl;
		b->var_features = 0;
		walk(b, &type, &pl, &e, 0);
	} while (dwarf_siblingof(&c, &c) == 0 && !b->error);
}

/* A variable's fixed address: DW_OP_addr, or DW_OP_addrx (DWARF 5, .debug_addr). */
static bool static_address(Dwarf_Attribute *loc, Dwarf_Op *o, Dwarf_Addr *out)
{
	Dwarf_Attribute a;

	if (o->atom == DW_OP_addr) {
		*out = o->number;
		return true;
	}
	if (o->atom != DW_OP_addrx && o->atom != DW_OP_GNU_addr_index)
		return false;
	return dwarf_getlocation_attr(loc, o, &a) == 0 && dwarf_formaddr(&a, out) == 0;
}

/*
 * The compilation unit's global and file-static variables with a fixed
 * address (DW_OP_addr), not const: the globals the function can see (spec
 * §5.2.2 "Globals"). Names starting with '_' (the implementation's) are left
 * out.
 */
static void plan_globals(struct builder *b, Dwarf_Die *cu)
{
	Dwarf_Die c;

	if (dwarf_child(cu, &c) != 0)
		return;
	do {
		Dwarf_Attribute a;
		Dwarf_Op *expr;
		size_t len;
		Dwarf_Die type, raw;
		const char *name;
		struct place pl = {.kind = PL_MEM};
		struct expr e = {.deref = false};
		Dwarf_Addr addr;

		if (dwarf_tag(&c) != DW_TAG_variable || die_flag(&c, DW_AT_declaration))
			continue;
		if (!dwarf_attr(&c, DW_AT_location, &a) ||
		    dwarf_getlocation(&a, &expr, &len) != 0 || len != 1 ||
		    !static_address(&a, &expr[0], &addr))
			continue;
		name = die_name(&c);
		if (!name || name[0] == '_' || !die_type(&c, &raw))
			continue;
		if (dwarf_tag(&raw) == DW_TAG_const_type || dwarf_peel_type(&raw, &type) != 0)
			continue;
		pl.addr.ops[0] = op(ANN_OP_ADDR, 0, 0, (int64_t)addr);
		pl.addr.n = 1;
		snprintf(e.s, sizeof(e.s), "%s", name);
		b->var_features = 0;
		walk(b, &raw, &pl, &e, 0);
	} while (dwarf_siblingof(&c, &c) == 0 && !b->error);
}

/* ------------------------------------------------------------ the cache */

/*
 * Plans are cached per build ID (spec §5.2: planned once per binary) in
 * $XDG_CACHE_HOME/lever/annotate/ (~/.cache/...): one file per (build ID,
 * function, limits), binary, with a checksum. Anything wrong with a file
 * (short, bad magic, other version or key, bad checksum) makes it a miss,
 * and the fresh plan replaces it (written to a temporary name, renamed).
 */
#define CACHE_MAGIC "LVFEAT02"

struct bytes {
	unsigned char *p;
	size_t len, cap;
	bool oom;
};

static void put(struct bytes *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 1024;

		while (cap < b->len + n)
			cap *= 2;
		unsigned char *q = realloc(b->p, cap);

		if (!q) {
			b->oom = true;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void put_u32(struct bytes *b, uint32_t v)
{
	put(b, &v, 4);
}

static bool cache_path(const unsigned char *id, size_t id_len, const char *key, char *out,
		       size_t size)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char dir[4096];
	char hex[2 * 64 + 1];
	int n;

	if (xdg && *xdg)
		n = snprintf(dir, sizeof(dir), "%s/lever", xdg);
	else if (home && *home)
		n = snprintf(dir, sizeof(dir), "%s/.cache/lever", home);
	else
		return false;
	if (n < 0 || (size_t)n >= sizeof(dir) - 16)
		return false;
	/* each level may exist already */
	if (xdg && *xdg)
		mkdir(xdg, 0700);
	else {
		char c[4096];

		snprintf(c, sizeof(c), "%s/.cache", home);
		mkdir(c, 0700);
	}
	mkdir(dir, 0700);
	strcat(dir, "/annotate");
	mkdir(dir, 0700);
	for (size_t i = 0; i < id_len && i < 64; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	n = snprintf(out, size, "%s/%s-%016llx.features", dir, hex,
		     (unsigned long long)ann_type_hash(key));
	return n > 0 && (size_t)n < size;
}

static bool read_whole(const char *path, struct bytes *out)
{
	FILE *f = fopen(path, "rb");
	unsigned char buf[65536];
	size_t n;

	if (!f)
		return false;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		put(out, buf, n);
	fclose(f);
	return !out->oom;
}

static uint64_t checksum(const unsigned char *p, size_t n)
{
	uint64_t h = ANN_TYPE_HASH_INIT;

	for (size_t i = 0; i < n; i++)
		h = ann_type_hash_step(h, p[i]);
	return h;
}

static bool take(const struct bytes *b, size_t *at, void *out, size_t n)
{
	if (*at + n > b->len)
		return false;
	memcpy(out, b->p + *at, n);
	*at += n;
	return true;
}

static bool cache_load(const char *path, const char *key, struct annotate_feature_plan *out)
{
	struct bytes b = {0};
	size_t at = 8, keylen = strlen(key);
	uint32_t version, n_ops, n_decls, n_param_ops, n_param_decls, klen;
	uint64_t sum;
	bool ok = false;

	memset(out, 0, sizeof(*out));
	if (!read_whole(path, &b) || b.len < 8 + 16 + 8 || memcmp(b.p, CACHE_MAGIC, 8) != 0)
		goto done;
	memcpy(&sum, b.p + b.len - 8, 8);
	if (sum != checksum(b.p, b.len - 8))
		goto done;
	b.len -= 8;
	if (!take(&b, &at, &version, 4) || version != ANN_FEATURES_VERSION ||
	    !take(&b, &at, &n_ops, 4) || !take(&b, &at, &n_decls, 4) ||
	    !take(&b, &at, &n_param_ops, 4) || !take(&b, &at, &n_param_decls, 4) ||
	    n_param_ops > n_ops || n_param_decls > n_decls || !take(&b, &at, &klen, 4) ||
	    klen != keylen || at + klen > b.len || memcmp(b.p + at, key, klen) != 0)
		goto done;
	at += klen;
	if (n_ops > (b.len - at) / sizeof(struct ann_op) || n_decls > b.len - at)
		goto done;
	out->ops = malloc((n_ops ? n_ops : 1) * sizeof(struct ann_op));
	out->decls = calloc(n_decls ? n_decls : 1, sizeof(*out->decls));
	if (!out->ops || !out->decls || !take(&b, &at, out->ops, n_ops * sizeof(struct ann_op)))
		goto done;
	out->n_ops = n_ops;
	out->n_param_ops = n_param_ops;
	out->n_param_decls = n_param_decls;
	for (uint32_t i = 0; i < n_decls; i++) {
		uint32_t kind, len;

		if (!take(&b, &at, &kind, 4) || !take(&b, &at, &len, 4) ||
		    kind >= ANNOTATE_N_KINDS || len > b.len - at ||
		    !(out->decls[i].expr = malloc(len + 1)))
			goto done;
		take(&b, &at, out->decls[i].expr, len);
		out->decls[i].expr[len] = 0;
		out->decls[i].kind = (enum annotate_feature_kind)kind;
		out->n_decls = i + 1;
	}
	ok = at == b.len;
done:
	free(b.p);
	if (!ok)
		annotate_feature_plan_free(out);
	return ok;
}

static void cache_store(const char *path, const char *key, const struct annotate_feature_plan *p)
{
	struct bytes b = {0};
	char tmp[4200];
	uint64_t sum;
	FILE *f;

	put(&b, CACHE_MAGIC, 8);
	put_u32(&b, ANN_FEATURES_VERSION);
	put_u32(&b, p->n_ops);
	put_u32(&b, p->n_decls);
	put_u32(&b, p->n_param_ops);
	put_u32(&b, p->n_param_decls);
	put_u32(&b, (uint32_t)strlen(key));
	put(&b, key, strlen(key));
	put(&b, p->ops, p->n_ops * sizeof(struct ann_op));
	for (uint32_t i = 0; i < p->n_decls; i++) {
		put_u32(&b, (uint32_t)p->decls[i].kind);
		put_u32(&b, (uint32_t)strlen(p->decls[i].expr));
		put(&b, p->decls[i].expr, strlen(p->decls[i].expr));
	}
	sum = checksum(b.p, b.len);
	put(&b, &sum, 8);
	if (b.oom ||
	    snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid()) >= (int)sizeof(tmp))
		goto done;
	f = fopen(tmp, "wb");
	if (!f)
		goto done;
	if (fwrite(b.p, 1, b.len, f) != b.len || fclose(f) != 0 || rename(tmp, path) != 0)
		unlink(tmp);
done:
	free(b.p);
}

/* ------------------------------------------------------------ the entry point */

static int fail(char *err, size_t err_size, int code, const char *fmt, ...)
{
	va_list ap;

	if (err && err_size) {
		va_start(ap, fmt);
		vsnprintf(err, err_size, fmt, ap);
		va_end(ap);
	}
	return code;
}

void annotate_feature_plan_free(struct annotate_feature_plan *p)
{
	if (!p)
		return;
	for (uint32_t i = 0; i < p->n_decls; i++)
		free(p->decls[i].expr);
	free(p->decls);
	free(p->ops);
	memset(p, 0, sizeof(*p));
}

struct dwarf_file {
	int fd;
	Elf *elf;
	Dwarf *dw;
};

static void dwarf_file_close(struct dwarf_file *f)
{
	if (f->dw)
		dwarf_end(f->dw);
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
}

static int dwarf_file_open(const char *path, struct dwarf_file *f, unsigned char *id,
			   size_t *id_len, char *err, size_t err_size)
{
	char debug[4096];

	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	f->elf = NULL;
	f->dw = NULL;
	if (f->fd < 0)
		return fail(err, err_size, -errno, "%s: %s", path, strerror(errno));
	elf_version(EV_CURRENT);
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF) {
		dwarf_file_close(f);
		return fail(err, err_size, -ENOEXEC, "%s: not an ELF file", path);
	}
	*id_len = elf_build_id(f->elf, id, 64);
	f->dw = dwarf_begin_elf(f->elf, DWARF_C_READ, NULL);
	if (f->dw)
		return 0;
	/* a separate debug file (build ID, .gnu_debuglink), as gdb finds it */
	if (debug_file_find(path, NULL, debug, sizeof(debug)) && strcmp(debug, path) != 0) {
		struct dwarf_file d;
		unsigned char did[64];
		size_t dlen;

		if (dwarf_file_open(debug, &d, did, &dlen, err, err_size) == 0) {
			dwarf_file_close(f);
			*f = d;
			return 0;
		}
	}
	dwarf_file_close(f);
	return fail(err, err_size, -ENODATA,
		    "%s: no DWARF debug information (build with -g, or install its debug file): "
		    "input features cannot be planned, metrics still can",
		    path);
}

int annotate_plan_features(const char *module_path, uint64_t func_offset, const char *symbol,
			   unsigned max_depth, unsigned max_features,
			   struct annotate_feature_plan *out, char *err, size_t err_size)
{
	struct dwarf_file f;
	unsigned char id[64];
	size_t id_len = 0;
	char key[1024], cpath[4400];
	bool cached;
	struct lookup l = {.pc = func_offset, .symbol = symbol};
	Dwarf_Die cu;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!module_path || (!func_offset && !(symbol && *symbol)))
		return fail(err, err_size, -EINVAL, "a module and a function are needed");
	rc = dwarf_file_open(module_path, &f, id, &id_len, err, err_size);
	if (rc != 0)
		return rc;
	snprintf(key, sizeof(key), "v%d pc=%llx sym=%s depth=%u max=%u", ANN_FEATURES_VERSION,
		 (unsigned long long)func_offset, symbol ? symbol : "", max_depth, max_features);
	cached = id_len > 0 && cache_path(id, id_len, key, cpath, sizeof(cpath));
	if (cached && cache_load(cpath, key, out)) {
		dwarf_file_close(&f);
		return 0;
	}
	if (!find_function(f.dw, &l, &cu)) {
		dwarf_file_close(&f);
		if (func_offset)
			return fail(err, err_size, -ENOENT,
				    "%s: no function with debug information at 0x%llx%s%s",
				    module_path, (unsigned long long)func_offset,
				    symbol ? " or named " : "", symbol ? symbol : "");
		return fail(err, err_size, -ENOENT,
			    "%s: no function named %s in its debug information", module_path,
			    symbol);
	}
	struct builder b = {.dw = f.dw, .max_depth = max_depth, .max_features = max_features};

	plan_parameters(&b, &l.found, l.entry, standard_convention(&l.found, symbol));
	out->n_param_ops = b.n_ops;
	out->n_param_decls = b.n_decls;
	plan_globals(&b, &cu);
	for (size_t i = 0; i < b.n_classes; i++) {
		free(b.classes[i].qualified);
		free(b.classes[i].base_qualified);
	}
	free(b.classes);
	dwarf_file_close(&f);
	out->ops = b.ops;
	out->n_ops = b.n_ops;
	out->decls = b.decls;
	out->n_decls = b.n_decls;
	if (b.error) {
		annotate_feature_plan_free(out);
		return fail(err, err_size, b.error, "%s: out of memory planning features",
			    module_path);
	}
	if (cached)
		cache_store(cpath, key, out);
	return 0;
}
