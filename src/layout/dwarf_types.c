// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * Struct layouts from DWARF (spec autocpa.md §8.5 step 1; §7 "load all
 * DWARF struct types ... dedupe across CUs"), as pahole shows them: every
 * struct, class and union definition with its members in offset order,
 * each with the type as C writes it before the name, the array or
 * function-pointer suffix after it, offset, size and alignment.
 *
 * What the record format cannot describe is marked, with the reason, and
 * left out by the writer rather than analysed wrongly: bitfields, packed or
 * over-aligned placement (a member not at the next multiple of its natural
 * alignment, a size that is not the natural one), unions. C++ base classes
 * are members named <ancestor> pinned in place, like the vtable pointer.
 * Anonymous struct/union members are one member (anon_union_OFFSET): they
 * move as a unit, as their source does.
 */
#include <dwarf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout/static.h"

#define NAME_HOLE      "\x01"
#define MAX_TYPE_DEPTH 24

struct walker {
	struct st_types *t;
	bool cxx;
	/* typedef names of anonymous structs: (struct DIE, typedef name) */
	struct {
		Dwarf_Off die;
		char *name;
	} * typedefs;
	size_t n_typedefs, cap_typedefs;
};

static bool grow(void **items, size_t *cap, size_t n, size_t size)
{
	void *p;
	size_t new_cap;

	if (n < *cap)
		return true;
	new_cap = *cap ? 2 * *cap : 64;
	p = realloc(*items, new_cap * size);
	if (!p)
		return false;
	*items = p;
	*cap = new_cap;
	return true;
}

/* Typedefs and qualifiers stripped; false if the chain ends in void. */
static bool peel(Dwarf_Die *type, Dwarf_Die *out)
{
	Dwarf_Die cur = *type;

	for (int i = 0; i < MAX_TYPE_DEPTH; i++) {
		Dwarf_Attribute a;
		int tag = dwarf_tag(&cur);

		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type &&
		    tag != DW_TAG_volatile_type && tag != DW_TAG_restrict_type &&
		    tag != DW_TAG_atomic_type) {
			*out = cur;
			return true;
		}
		if (!dwarf_attr_integrate(&cur, DW_AT_type, &a) || !dwarf_formref_die(&a, &cur))
			return false;
	}
	return false;
}

static bool die_type(Dwarf_Die *die, Dwarf_Die *type)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(die, DW_AT_type, &a) && dwarf_formref_die(&a, type);
}

static bool is_struct_tag(int tag)
{
	return tag == DW_TAG_structure_type || tag == DW_TAG_class_type || tag == DW_TAG_union_type;
}

static uint64_t udata(Dwarf_Die *die, int name, uint64_t dflt)
{
	Dwarf_Attribute a;
	Dwarf_Word w;

	if (!dwarf_attr_integrate(die, name, &a) || dwarf_formudata(&a, &w))
		return dflt;
	return w;
}

static uint32_t type_align(Dwarf_Die *type, int depth);

static uint32_t struct_align(Dwarf_Die *die, int depth)
{
	Dwarf_Die child, mt;
	uint32_t align = 1;

	if (dwarf_child(die, &child) != 0)
		return 1;
	do {
		int tag = dwarf_tag(&child);
		uint32_t a;

		if (tag != DW_TAG_member && tag != DW_TAG_inheritance)
			continue;
		if (dwarf_hasattr(&child, DW_AT_external) ||
		    dwarf_hasattr(&child, DW_AT_declaration))
			continue;
		a = (uint32_t)udata(&child, DW_AT_alignment, 0);
		if (!a && die_type(&child, &mt))
			a = type_align(&mt, depth + 1);
		if (a > align)
			align = a;
	} while (dwarf_siblingof(&child, &child) == 0);
	return align;
}

/* The natural x86-64 alignment of a type (DW_AT_alignment wins). */
static uint32_t type_align(Dwarf_Die *type, int depth)
{
	Dwarf_Die t, elem;
	uint64_t explicit_align = udata(type, DW_AT_alignment, 0);

	if (explicit_align)
		return (uint32_t)explicit_align;
	if (depth > MAX_TYPE_DEPTH || !peel(type, &t))
		return 1;
	explicit_align = udata(&t, DW_AT_alignment, 0);
	if (explicit_align)
		return (uint32_t)explicit_align;
	switch (dwarf_tag(&t)) {
	case DW_TAG_base_type:
	case DW_TAG_enumeration_type: {
		uint64_t size = udata(&t, DW_AT_byte_size, 1);

		if (size > 16)
			return 16;
		return size ? (uint32_t)(size & -size) : 1;
	}
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
	case DW_TAG_ptr_to_member_type:
		return 8;
	case DW_TAG_array_type:
		return die_type(&t, &elem) ? type_align(&elem, depth + 1) : 1;
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
		return struct_align(&t, depth);
	default:
		return 1;
	}
}

static char *join3(const char *a, const char *b, const char *c)
{
	char *s;

	if (asprintf(&s, "%s%s%s", a, b, c) < 0)
		return NULL;
	return s;
}

static char *declarator(Dwarf_Die *type, const char *inner, bool cxx, int depth);

static char *named_declarator(Dwarf_Die *t, const char *inner, bool cxx)
{
	const char *name = dwarf_diename(t);
	const char *kw = "";
	int tag = dwarf_tag(t);

	if (tag == DW_TAG_structure_type)
		kw = "struct ";
	else if (tag == DW_TAG_class_type)
		kw = "class ";
	else if (tag == DW_TAG_union_type)
		kw = "union ";
	else if (tag == DW_TAG_enumeration_type)
		kw = "enum ";
	if (cxx && name && tag != DW_TAG_union_type)
		kw = "";
	if (!name)
		name = *kw ? "{...}" : "?";
	{
		char *s;

		if (asprintf(&s, "%s%s %s", kw, name, inner) < 0)
			return NULL;
		return s;
	}
}

static char *array_declarator(Dwarf_Die *t, const char *inner, bool cxx, int depth)
{
	Dwarf_Die child, elem;
	char dims[256] = "", *wrapped, *s;
	size_t used = 0;

	if (dwarf_child(t, &child) == 0)
		do {
			uint64_t count;
			int n;

			if (dwarf_tag(&child) != DW_TAG_subrange_type)
				continue;
			count = udata(&child, DW_AT_count, UINT64_MAX);
			if (count == UINT64_MAX && dwarf_hasattr(&child, DW_AT_upper_bound))
				count = udata(&child, DW_AT_upper_bound, UINT64_MAX - 1) + 1;
			if (count == UINT64_MAX)
				n = snprintf(dims + used, sizeof(dims) - used, "[]");
			else
				n = snprintf(dims + used, sizeof(dims) - used, "[%llu]",
					     (unsigned long long)count);
			if (n < 0 || (size_t)n >= sizeof(dims) - used)
				break;
			used += (size_t)n;
		} while (dwarf_siblingof(&child, &child) == 0);
	if (*inner == '*' || *inner == '&')
		wrapped = join3("(", inner, ")");
	else
		wrapped = strdup(inner);
	if (!wrapped)
		return NULL;
	s = join3(wrapped, dims, "");
	free(wrapped);
	if (!s)
		return NULL;
	wrapped = s;
	s = die_type(t, &elem) ? declarator(&elem, wrapped, cxx, depth + 1)
			       : join3("? ", wrapped, "");
	free(wrapped);
	return s;
}

static char *function_declarator(Dwarf_Die *t, const char *inner, bool cxx, int depth)
{
	Dwarf_Die child, pt, ret;
	char params[512] = "";
	size_t used = 0;
	bool any = false;
	char *wrapped, *s;

	if (dwarf_child(t, &child) == 0)
		do {
			int tag = dwarf_tag(&child);
			char *p = NULL;
			int n;

			if (tag == DW_TAG_formal_parameter)
				p = die_type(&child, &pt) ? declarator(&pt, "", cxx, depth + 1)
							  : strdup("?");
			else if (tag == DW_TAG_unspecified_parameters)
				p = strdup("...");
			else
				continue;
			if (!p)
				return NULL;
			/* "int " from an abstract declarator: drop the space */
			for (size_t k = strlen(p); k && p[k - 1] == ' '; k--)
				p[k - 1] = '\0';
			n = snprintf(params + used, sizeof(params) - used, "%s%s", any ? ", " : "",
				     p);
			free(p);
			if (n < 0 || (size_t)n >= sizeof(params) - used)
				break;
			used += (size_t)n;
			any = true;
		} while (dwarf_siblingof(&child, &child) == 0);
	if (!any && dwarf_hasattr(t, DW_AT_prototyped))
		snprintf(params, sizeof(params), "void");
	if (asprintf(&wrapped, "(%s)(%s)", inner, params) < 0)
		return NULL;
	s = die_type(t, &ret) ? declarator(&ret, wrapped, cxx, depth + 1)
			      : join3("void ", wrapped, "");
	free(wrapped);
	return s;
}

static bool is_pointer_like(Dwarf_Die *t)
{
	int tag = dwarf_tag(t);

	return tag == DW_TAG_pointer_type || tag == DW_TAG_reference_type ||
	       tag == DW_TAG_rvalue_reference_type;
}

/* C declaration of `inner` (the name, NAME_HOLE, and what binds to it) as type. */
static char *declarator(Dwarf_Die *type, const char *inner, bool cxx, int depth)
{
	Dwarf_Die target;
	bool has_target;
	char *in2, *s;
	const char *q;

	if (!type)
		return join3("void ", inner, "");
	if (depth > MAX_TYPE_DEPTH)
		return join3("? ", inner, "");
	has_target = die_type(type, &target);
	switch (dwarf_tag(type)) {
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
		q = dwarf_tag(type) == DW_TAG_pointer_type     ? "*"
		    : dwarf_tag(type) == DW_TAG_reference_type ? "&"
							       : "&&";
		in2 = join3(q, inner, "");
		if (!in2)
			return NULL;
		s = declarator(has_target ? &target : NULL, in2, cxx, depth + 1);
		free(in2);
		return s;
	case DW_TAG_const_type:
	case DW_TAG_volatile_type:
	case DW_TAG_restrict_type:
	case DW_TAG_atomic_type:
		q = dwarf_tag(type) == DW_TAG_const_type      ? "const"
		    : dwarf_tag(type) == DW_TAG_volatile_type ? "volatile"
		    : dwarf_tag(type) == DW_TAG_restrict_type ? "restrict"
							      : "_Atomic";
		if (has_target && is_pointer_like(&target)) {
			/* char *const p: the qualifier binds to the pointer */
			in2 = join3(q, " ", inner);
			if (!in2)
				return NULL;
			s = declarator(&target, in2, cxx, depth + 1);
			free(in2);
			return s;
		}
		in2 = declarator(has_target ? &target : NULL, inner, cxx, depth + 1);
		if (!in2)
			return NULL;
		s = join3(q, " ", in2);
		free(in2);
		return s;
	case DW_TAG_array_type:
		return array_declarator(type, inner, cxx, depth);
	case DW_TAG_subroutine_type:
		return function_declarator(type, inner, cxx, depth);
	case DW_TAG_ptr_to_member_type:
		return join3("/* member pointer */ long ", inner, "");
	default:
		return named_declarator(type, inner, cxx);
	}
}

/* Splits "TYPE \x01SUFFIX" into the record's type and array columns. */
static int member_type_text(Dwarf_Die *type, bool cxx, char **type_out, char **suffix_out)
{
	char *decl = declarator(type, NAME_HOLE, cxx, 0);
	char *hole;
	size_t n;

	if (!decl)
		return -1;
	hole = strstr(decl, NAME_HOLE);
	if (!hole) {
		free(decl);
		return -1;
	}
	*hole = '\0';
	n = strlen(decl);
	while (n && decl[n - 1] == ' ')
		decl[--n] = '\0';
	*suffix_out = strdup(hole + 1);
	*type_out = strdup(decl);
	free(decl);
	if (!*suffix_out || !*type_out) {
		free(*suffix_out);
		free(*type_out);
		return -1;
	}
	return 0;
}

static bool member_offset(Dwarf_Die *m, uint64_t *off)
{
	Dwarf_Attribute a;
	Dwarf_Word w;
	Dwarf_Op *ops;
	size_t n;

	if (!dwarf_attr_integrate(m, DW_AT_data_member_location, &a)) {
		*off = 0; /* union members, and DWARF 5 members at 0 may omit it */
		return true;
	}
	if (dwarf_formudata(&a, &w) == 0) {
		*off = w;
		return true;
	}
	if (dwarf_getlocation(&a, &ops, &n) == 0 && n == 1 && ops[0].atom == DW_OP_plus_uconst) {
		*off = ops[0].number;
		return true;
	}
	return false;
}

static bool has_data_members(Dwarf_Die *type)
{
	Dwarf_Die t, child;

	if (!peel(type, &t) || dwarf_child(&t, &child) != 0)
		return false;
	do {
		int tag = dwarf_tag(&child);

		if ((tag == DW_TAG_member && !dwarf_hasattr(&child, DW_AT_external) &&
		     !dwarf_hasattr(&child, DW_AT_declaration)) ||
		    (tag == DW_TAG_inheritance && has_data_members(&child)))
			return true;
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

static void classify_member(struct st_member *mb, Dwarf_Die *type)
{
	Dwarf_Die t, elem, target;

	mb->nested_die = 0;
	mb->pointee_die = 0;
	mb->pointee2_die = 0;
	if (!peel(type, &t))
		return;
	if (is_struct_tag(dwarf_tag(&t))) {
		mb->nested_die = dwarf_dieoffset(&t);
		mb->elem_size = mb->size;
	} else if (dwarf_tag(&t) == DW_TAG_array_type && die_type(&t, &elem) &&
		   peel(&elem, &elem) && is_struct_tag(dwarf_tag(&elem))) {
		Dwarf_Word size;

		mb->nested_die = dwarf_dieoffset(&elem);
		mb->elem_size = dwarf_aggregate_size(&elem, &size) == 0 ? (uint32_t)size : 0;
	} else if (is_pointer_like(&t) && die_type(&t, &target) && peel(&target, &target)) {
		Dwarf_Die target2;

		if (is_struct_tag(dwarf_tag(&target)))
			mb->pointee_die = dwarf_dieoffset(&target);
		else if (is_pointer_like(&target) && die_type(&target, &target2) &&
			 peel(&target2, &target2) && is_struct_tag(dwarf_tag(&target2)))
			mb->pointee2_die =
			    dwarf_dieoffset(&target2); /* S **: a table of pointers */
	}
}

static void mark_unsupported(struct st_struct *s, const char *fmt, const char *what)
{
	if (!s->unsupported[0])
		snprintf(s->unsupported, sizeof(s->unsupported), fmt, what);
}

static int add_member(struct walker *w, struct st_struct *s, Dwarf_Die *die, bool base_class)
{
	struct st_member *mb;
	Dwarf_Die type;
	Dwarf_Word size = 0;
	uint64_t off;
	const char *name = dwarf_diename(die);
	bool has_type = die_type(die, &type);
	char buf[64];

	if (!has_type)
		return 0;
	if (base_class && !has_data_members(&type))
		return 0; /* an empty base takes no room (empty base optimisation) */
	mb = realloc(s->m, (s->n + 1) * sizeof(*s->m));
	if (!mb)
		return -1;
	s->m = mb;
	mb = &s->m[s->n];
	memset(mb, 0, sizeof(*mb));
	mb->nested = mb->pointee = mb->pointee2 = ST_NONE;
	if (!member_offset(die, &off)) {
		mark_unsupported(s, "member %s: offset is a location expression",
				 name ? name : "?");
		off = 0;
	}
	mb->offset = (uint32_t)off;
	if (dwarf_aggregate_size(&type, &size) != 0) {
		Dwarf_Die t;

		/* an array without bounds: the flexible array member */
		if (peel(&type, &t) && dwarf_tag(&t) == DW_TAG_array_type)
			mb->flexible = true;
		size = 0;
	}
	if (size == 0 && !mb->flexible) {
		Dwarf_Die t;

		if (peel(&type, &t) && dwarf_tag(&t) == DW_TAG_array_type)
			mb->flexible = true; /* GNU zero-length array, char data[0] */
	}
	mb->size = (uint32_t)size;
	mb->align = (uint32_t)udata(die, DW_AT_alignment, 0);
	if (!mb->align)
		mb->align = type_align(&type, 0);
	if (dwarf_hasattr(die, DW_AT_bit_size) || dwarf_hasattr(die, DW_AT_bit_offset) ||
	    dwarf_hasattr(die, DW_AT_data_bit_offset)) {
		mb->bitfield = true;
		mark_unsupported(s, "bitfield %s: a record field is whole bytes",
				 name ? name : "(unnamed)");
	}
	if (member_type_text(&type, w->cxx, &mb->type, &mb->array))
		return -1;
	if (base_class) {
		size_t bases = 0;

		for (size_t i = 0; i < s->n; i++)
			bases += strncmp(s->m[i].name, "<ancestor", 9) == 0;
		if (bases)
			snprintf(buf, sizeof(buf), "<ancestor %zu>", bases + 1);
		else
			snprintf(buf, sizeof(buf), "<ancestor>");
		name = buf;
		mb->pinned = true;
	} else if (!name) {
		Dwarf_Die t;
		bool is_union = peel(&type, &t) && dwarf_tag(&t) == DW_TAG_union_type;

		snprintf(buf, sizeof(buf), "anon_%s_%u", is_union ? "union" : "struct", mb->offset);
		name = buf;
	}
	if (dwarf_hasattr(die, DW_AT_artificial))
		mb->pinned = true; /* the vtable pointer stays where the ABI puts it */
	mb->name = strdup(name);
	if (!mb->name) {
		free(mb->type);
		free(mb->array);
		return -1;
	}
	classify_member(mb, &type);
	s->n++;
	return 0;
}

static int cmp_member_offset(const void *a, const void *b)
{
	const struct st_member *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Marks what the record format (natural SysV placement) cannot describe. */
static void check_placement(struct st_struct *s)
{
	struct layout_struct *ls;

	if (s->unsupported[0])
		return;
	if (s->is_union) {
		mark_unsupported(s, "%s: members share storage, there is no order to change",
				 "a union");
		return;
	}
	if (!s->n) {
		mark_unsupported(s, "%s", "no data members");
		return;
	}
	if (s->align > LAYOUT_LINE_SIZE) {
		mark_unsupported(s, "%s: alignment above 64 bytes", "over-aligned");
		return;
	}
	ls = layout_struct_new(s->name ? s->name : "?");
	if (!ls)
		return;
	for (size_t i = 0; i < s->n; i++) {
		const struct st_member *m = &s->m[i];

		if (layout_struct_add_field(ls, m->type, m->name, m->array, m->offset, m->size,
					    m->align)) {
			snprintf(s->unsupported, sizeof(s->unsupported),
				 "member %s at offset %u (size %u, align %u) is not where natural "
				 "placement puts it: packed or aligned attribute",
				 m->name, m->offset, m->size, m->align);
			layout_struct_free(ls);
			return;
		}
	}
	if (layout_struct_finish(ls) == 0 && ls->size != s->size)
		snprintf(s->unsupported, sizeof(s->unsupported),
			 "size %u, natural placement gives %u: packed or aligned attribute",
			 s->size, ls->size);
	layout_struct_free(ls);
}

/*
 * The thesis's reference finder skipped the C library's types (spec §2.5:
 * /std/, stdlib.h, stdio.h); here: a type declared under /usr/include or a
 * compiler's own directory, or one the compiler made up (gcc's file
 * "<built-in>", such as __va_list_tag). References to it are real, but its layout is not the
 * program's to change.
 */
/*
 * DW_AT_decl_file as a path. libdw 0.188's dwarf_decl_file refuses file 0,
 * which clang 14's DWARF 5 uses for the primary source: read the CU's
 * file table then.
 */
static const char *decl_file(Dwarf_Die *die)
{
	const char *file = dwarf_decl_file(die);
	Dwarf_Die cu;
	Dwarf_Files *files;
	size_t n;
	uint64_t idx = udata(die, DW_AT_decl_file, UINT64_MAX);

	if (file || idx == UINT64_MAX || !dwarf_diecu(die, &cu, NULL, NULL) ||
	    dwarf_getsrcfiles(&cu, &files, &n) != 0 || idx >= n)
		return file;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

static void note_system(struct st_struct *s, Dwarf_Die *die)
{
	const char *file = decl_file(die);
	const char *base = file ? strrchr(file, '/') : NULL;

	if (!file)
		return;
	if (base && strcmp(base, "/<built-in>") == 0)
		snprintf(s->system, sizeof(s->system), "built into the compiler");
	else if (strncmp(file, "/usr/include/", 13) == 0 || strncmp(file, "/usr/lib/", 9) == 0)
		snprintf(s->system, sizeof(s->system), "declared in %s", file);
}

static int add_die_index(struct st_types *t, Dwarf_Off die, int32_t index)
{
	if (!grow((void **)&t->by_die, &t->cap_by_die, t->n_by_die, sizeof(*t->by_die)))
		return -1;
	t->by_die[t->n_by_die++] = (struct st_die_index){die, index};
	return 0;
}

static int build_struct(struct walker *w, Dwarf_Die *die, const char *scope)
{
	struct st_types *t = w->t;
	struct st_struct *s;
	Dwarf_Die child;
	const char *name = dwarf_diename(die);
	int32_t index;

	if (!grow((void **)&t->s, &t->cap, t->n, sizeof(*t->s)))
		return -1;
	index = (int32_t)t->n;
	s = &t->s[t->n++];
	memset(s, 0, sizeof(*s));
	s->canon = index;
	s->die = dwarf_dieoffset(die);
	s->is_union = dwarf_tag(die) == DW_TAG_union_type;
	s->size = (uint32_t)udata(die, DW_AT_byte_size, 0);
	s->align = type_align(die, 0);
	if (name && asprintf(&s->name, "%s%s", scope, name) < 0)
		return -1;
	note_system(s, die);
	if (add_die_index(t, s->die, index))
		return -1;
	if (dwarf_child(die, &child) == 0)
		do {
			int tag = dwarf_tag(&child);

			if (tag == DW_TAG_member && !dwarf_hasattr(&child, DW_AT_external) &&
			    !dwarf_hasattr(&child, DW_AT_declaration)) {
				if (add_member(w, &t->s[index], &child, false))
					return -1;
			} else if (tag == DW_TAG_inheritance) {
				if (add_member(w, &t->s[index], &child, true))
					return -1;
			}
		} while (dwarf_siblingof(&child, &child) == 0);
	s = &t->s[index];
	if (s->n)
		qsort(s->m, s->n, sizeof(*s->m), cmp_member_offset);
	return 0;
}

static int note_typedef(struct walker *w, Dwarf_Die *die)
{
	Dwarf_Die type;
	const char *name = dwarf_diename(die);

	if (!name || !die_type(die, &type) || !is_struct_tag(dwarf_tag(&type)) ||
	    dwarf_diename(&type))
		return 0;
	if (!grow((void **)&w->typedefs, &w->cap_typedefs, w->n_typedefs, sizeof(*w->typedefs)))
		return -1;
	w->typedefs[w->n_typedefs].die = dwarf_dieoffset(&type);
	w->typedefs[w->n_typedefs].name = strdup(name);
	if (!w->typedefs[w->n_typedefs].name)
		return -1;
	w->n_typedefs++;
	return 0;
}

static int walk(struct walker *w, Dwarf_Die *parent, const char *scope, int depth)
{
	Dwarf_Die child;

	if (depth > 64 || dwarf_child(parent, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child);
		const char *name = dwarf_diename(&child);
		char *inner_scope = NULL;

		if (is_struct_tag(tag) && !dwarf_hasattr(&child, DW_AT_declaration) &&
		    dwarf_hasattr(&child, DW_AT_byte_size)) {
			if (build_struct(w, &child, scope))
				return -1;
		} else if (tag == DW_TAG_typedef) {
			if (note_typedef(w, &child))
				return -1;
		}
		/* types nested in namespaces, classes and functions */
		if (tag == DW_TAG_namespace || is_struct_tag(tag)) {
			if (asprintf(&inner_scope, "%s%s::", scope, name ? name : "(anonymous)") <
			    0)
				return -1;
		} else if (tag == DW_TAG_subprogram || tag == DW_TAG_lexical_block) {
			inner_scope = strdup(scope);
			if (!inner_scope)
				return -1;
		}
		if (inner_scope) {
			int rc = walk(w, &child, w->cxx ? inner_scope : "", depth + 1);

			free(inner_scope);
			if (rc)
				return -1;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

static int cmp_die_index(const void *a, const void *b)
{
	const struct st_die_index *x = a, *y = b;

	return x->die < y->die ? -1 : x->die > y->die;
}

static int32_t index_of_die(const struct st_types *t, Dwarf_Off die)
{
	size_t lo = 0, hi = t->n_by_die;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->by_die[mid].die < die)
			lo = mid + 1;
		else if (t->by_die[mid].die > die)
			hi = mid;
		else
			return t->s[t->by_die[mid].index].canon;
	}
	return ST_NONE;
}

static bool same_layout(const struct st_struct *a, const struct st_struct *b)
{
	if (a->size != b->size || a->n != b->n || a->is_union != b->is_union)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (a->m[i].offset != b->m[i].offset || a->m[i].size != b->m[i].size ||
		    strcmp(a->m[i].name, b->m[i].name) != 0 || strcmp(a->m[i].type, b->m[i].type))
			return false;
	return true;
}

struct name_index {
	const char *name;
	int32_t index;
};

static int cmp_name_index(const void *a, const void *b)
{
	const struct name_index *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->index > y->index) - (x->index < y->index);
}

/*
 * One struct per name and layout: the first definition is canonical, later
 * identical ones (the same header in another CU) alias it, and a different
 * layout under a taken name gets "name~2" so record names stay unique.
 */
static int dedupe(struct st_types *t)
{
	struct name_index *names = calloc(t->n ? t->n : 1, sizeof(*names));
	size_t n = 0;

	if (!names)
		return -1;
	for (size_t i = 0; i < t->n; i++)
		if (t->s[i].name)
			names[n++] = (struct name_index){t->s[i].name, (int32_t)i};
	if (n)
		qsort(names, n, sizeof(*names), cmp_name_index);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		int variant = 1;

		while (j < n && strcmp(names[j].name, names[i].name) == 0)
			j++;
		for (size_t k = i + 1; k < j; k++) {
			struct st_struct *s = &t->s[names[k].index];

			for (size_t c = i; c < k; c++) {
				struct st_struct *e = &t->s[names[c].index];

				if (e->canon == names[c].index && same_layout(e, s)) {
					s->canon = names[c].index;
					break;
				}
			}
			if (s->canon == names[k].index) {
				char *renamed;

				if (asprintf(&renamed, "%s~%d", s->name, ++variant) < 0) {
					free(names);
					return -1;
				}
				free(s->name);
				s->name = renamed;
			}
		}
		i = j;
	}
	free(names);
	return 0;
}

/* A pointer to an incomplete `struct foo;` resolves to foo's definition. */
static int32_t index_by_name(const struct st_types *t, Dwarf_Die *decl)
{
	const char *name = dwarf_diename(decl);

	if (!name)
		return ST_NONE;
	for (size_t i = 0; i < t->n; i++)
		if (t->s[i].name && t->s[i].canon == (int32_t)i && strcmp(t->s[i].name, name) == 0)
			return (int32_t)i;
	return ST_NONE;
}

static void resolve_members(struct st_types *t, Dwarf *dw)
{
	for (size_t i = 0; i < t->n; i++)
		for (size_t k = 0; k < t->s[i].n; k++) {
			struct st_member *m = &t->s[i].m[k];
			Dwarf_Die d;

			if (m->nested_die)
				m->nested = index_of_die(t, m->nested_die);
			if (m->pointee_die) {
				m->pointee = index_of_die(t, m->pointee_die);
				if (m->pointee == ST_NONE && dwarf_offdie(dw, m->pointee_die, &d))
					m->pointee = index_by_name(t, &d);
			}
			if (m->pointee2_die) {
				m->pointee2 = index_of_die(t, m->pointee2_die);
				if (m->pointee2 == ST_NONE && dwarf_offdie(dw, m->pointee2_die, &d))
					m->pointee2 = index_by_name(t, &d);
			}
		}
}

int st_types_load(Dwarf *dw, struct st_types *t, char *err, size_t err_size)
{
	struct walker w = {.t = t};
	Dwarf_Off off = 0, next;
	size_t header_size;
	int rc = 0;

	memset(t, 0, sizeof(*t));
	while (rc == 0 && dwarf_nextcu(dw, off, &next, &header_size, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;

		if (dwarf_offdie(dw, off + header_size, &cu)) {
			int lang = dwarf_srclang(&cu);

			w.cxx = lang == DW_LANG_C_plus_plus || lang == DW_LANG_C_plus_plus_11 ||
				lang == DW_LANG_C_plus_plus_14 || lang == DW_LANG_C_plus_plus_03;
			rc = walk(&w, &cu, "", 0);
		}
		off = next;
	}
	if (rc == 0) {
		if (t->n_by_die)
			qsort(t->by_die, t->n_by_die, sizeof(*t->by_die), cmp_die_index);
		for (size_t i = 0; i < w.n_typedefs; i++) {
			int32_t s = index_of_die(t, w.typedefs[i].die);

			if (s != ST_NONE && !t->s[s].name) {
				t->s[s].name = w.typedefs[i].name;
				w.typedefs[i].name = NULL;
			}
		}
		for (size_t i = 0; i < t->n; i++)
			check_placement(&t->s[i]);
		rc = dedupe(t);
	}
	if (rc == 0)
		resolve_members(t, dw);
	for (size_t i = 0; i < w.n_typedefs; i++)
		free(w.typedefs[i].name);
	free(w.typedefs);
	if (rc) {
		snprintf(err, err_size, "out of memory reading struct types");
		st_types_free(t);
	}
	return rc;
}

void st_types_free(struct st_types *t)
{
	for (size_t i = 0; i < t->n; i++) {
		for (size_t k = 0; k < t->s[i].n; k++) {
			free(t->s[i].m[k].name);
			free(t->s[i].m[k].type);
			free(t->s[i].m[k].array);
		}
		free(t->s[i].m);
		free(t->s[i].name);
	}
	free(t->s);
	free(t->by_die);
	memset(t, 0, sizeof(*t));
}

int32_t st_types_struct_of(const struct st_types *t, Dwarf_Die *type)
{
	Dwarf_Die p;
	int32_t s;

	if (!peel(type, &p) || !is_struct_tag(dwarf_tag(&p)))
		return ST_NONE;
	s = index_of_die(t, dwarf_dieoffset(&p));
	if (s == ST_NONE && dwarf_hasattr(&p, DW_AT_declaration))
		s = index_by_name(t, &p);
	return s;
}

int32_t st_types_pointee_of(const struct st_types *t, Dwarf_Die *type)
{
	Dwarf_Die p, target;

	if (!peel(type, &p) || !is_pointer_like(&p) || !die_type(&p, &target))
		return ST_NONE;
	return st_types_struct_of(t, &target);
}

int32_t st_types_pointee2_of(const struct st_types *t, Dwarf_Die *type)
{
	Dwarf_Die p, target;

	if (!peel(type, &p) || !is_pointer_like(&p) || !die_type(&p, &target))
		return ST_NONE;
	return st_types_pointee_of(t, &target);
}

long st_member_at(const struct st_struct *s, uint32_t off)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct st_member *m = &s->m[i];

		if (off >= m->offset && (m->flexible || off < m->offset + (m->size ? m->size : 1)))
			return (long)i;
	}
	return -1;
}
