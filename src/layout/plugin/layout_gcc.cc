/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * lever-layout-gcc: the GCC plugin of `lever cc --layout`, the `instr`
 * source of `lever layout record` (spec autocpa.md §8.3 item 3: ground-truth
 * field attribution; issue 17). Contract: layout/runtime/instr_format.h.
 *
 * Late in the GIMPLE passes (so that only the field accesses that stay
 * memory accesses are counted, and inlining is decided on the original
 * code), just before ivopts turns p[i].f into address arithmetic, every load or store whose
 * reference goes through a COMPONENT_REF of a struct (p->f, s.f of a global, a[i].f, p->a[i].f,
 * p->in.x) becomes
 *
 *     if (--__lever_layout_countdown == 0)         // TLS, one asm
 *             __lever_layout_access (&site_i, &REF);
 *     REF ...                                      // the access, unchanged
 *
 * The countdown is decremented in an asm ("subl $1, %fs:(x@gottpoff)" with
 * the zero flag as its output) so that no GIMPLE memory operation and no
 * declaration of a TLS variable is added; the slow path is a cold block.
 *
 * The field is the top-level member of the outermost struct the reference
 * starts from (p->in.x counts for `in` of *p's struct; the offset and size
 * are the bytes actually accessed), what a reordering of that struct moves.
 * Accesses to locals that are not already addressable are left alone: they
 * live in registers or private stack slots, and taking their address this
 * late would change the code. Unions and bit-fields are not instrumented.
 *
 * At the end of the unit, the site table and the members of every struct
 * with a site go into the sections of instr_format.h, as assembly.
 */
#include "gcc-plugin.h"
#include "plugin-version.h"

#include "tree.h"
#include "tree-pass.h"
#include "context.h"
#include "function.h"
#include "basic-block.h"
#include "gimple.h"
#include "gimple-iterator.h"
#include "gimplify.h"
#include "gimplify-me.h"
#include "stringpool.h"
#include "ssa.h"
#include "attribs.h"
#include "output.h"
#include "cfg.h"
#include "toplev.h"
#include "tree-pretty-print.h"
#include "stor-layout.h"
#include "tree-ssa-operands.h"
#include "tree-into-ssa.h"
#include "asan.h"
#include "hash-set.h"

#include "layout/runtime/instr_format.h"

int plugin_is_GPL_compatible;

struct site {
	const char *struct_name, *field_name, *function, *file;
	unsigned line, offset, size, field_index;
	bool write;
};

static vec<site> sites;
static vec<tree> structs; /* main variants with a site, in order of first use */
static char table_name[64];
static tree hook_decl;
static hash_set<tree> *instrumented; /* functions done, by either instance of the pass */

static const char *get_table_name(void)
{
	if (!table_name[0]) {
		unsigned long long h =
		    1469598103934665603ull ^ (unsigned long long)get_random_seed(false);

		for (const char *c = main_input_filename ? main_input_filename : ""; *c; c++)
			h = (h ^ (unsigned char)*c) * 1099511628211ull;
		snprintf(table_name, sizeof(table_name), "%s.%016llx", LAYOUT_INSTR_SITE_SYMBOL, h);
	}
	return table_name;
}

/* The struct's name: its tag, or its typedef's name; NULL if it has neither. */
static const char *struct_name(tree type)
{
	tree name = TYPE_NAME(TYPE_MAIN_VARIANT(type));

	if (name && TREE_CODE(name) == TYPE_DECL)
		name = DECL_NAME(name);
	if (!name || TREE_CODE(name) != IDENTIFIER_NODE)
		return NULL;
	return IDENTIFIER_POINTER(name);
}

static bool constant_size(tree size)
{
	return size && tree_fits_uhwi_p(size);
}

/*
 * The reference's outermost struct member: the COMPONENT_REF nearest to
 * the base whose object is a named struct of constant size. Returns it, or
 * NULL_TREE if the reference does not access a struct field.
 */
static tree outermost_field_ref(tree ref)
{
	tree found = NULL_TREE;

	for (tree t = ref; handled_component_p(t); t = TREE_OPERAND(t, 0)) {
		if (TREE_CODE(t) != COMPONENT_REF)
			continue;
		tree object = TREE_TYPE(TREE_OPERAND(t, 0));
		tree field = TREE_OPERAND(t, 1);

		if (TREE_CODE(object) != RECORD_TYPE || !struct_name(object) ||
		    !constant_size(TYPE_SIZE_UNIT(object)) || !DECL_NAME(field) ||
		    DECL_BIT_FIELD(field) || !tree_fits_shwi_p(DECL_FIELD_OFFSET(field)))
			found = NULL_TREE;
		else
			found = t;
	}
	return found;
}

/* Whether the address of ref can be taken here without changing the code. */
static bool address_is_free(tree ref)
{
	tree base = get_base_address(ref);

	if (!base)
		return false;
	if (TREE_CODE(base) == MEM_REF || TREE_CODE(base) == TARGET_MEM_REF)
		return true;
	if (VAR_P(base))
		return is_global_var(base) || TREE_ADDRESSABLE(base);
	return false;
}

/*
 * The access's bytes within its struct: the member's offset plus the
 * constant offsets of the references inside it (p->in.x, p->a[3]); a
 * variable index leaves the member's start.
 */
static bool access_extent(tree ref, tree outer, unsigned *offset, unsigned *size)
{
	HOST_WIDE_INT bytes = int_size_in_bytes(TREE_TYPE(ref));
	HOST_WIDE_INT inner = 0;

	if (bytes <= 0)
		return false;
	for (tree t = ref; t != outer; t = TREE_OPERAND(t, 0)) {
		if (TREE_CODE(t) == COMPONENT_REF &&
		    tree_fits_shwi_p(DECL_FIELD_OFFSET(TREE_OPERAND(t, 1)))) {
			inner += int_byte_position(TREE_OPERAND(t, 1));
		} else if (TREE_CODE(t) == ARRAY_REF && tree_fits_shwi_p(TREE_OPERAND(t, 1)) &&
			   tree_fits_shwi_p(array_ref_element_size(t))) {
			inner += (tree_to_shwi(TREE_OPERAND(t, 1)) -
				  tree_to_shwi(array_ref_low_bound(t))) *
				 tree_to_shwi(array_ref_element_size(t));
		} else {
			inner = 0;
			break;
		}
	}
	*offset = (unsigned)(int_byte_position(TREE_OPERAND(outer, 1)) + inner);
	*size = (unsigned)bytes;
	return true;
}

static unsigned field_ordinal(tree record, tree field)
{
	unsigned i = 0;

	for (tree f = TYPE_FIELDS(record); f; f = DECL_CHAIN(f)) {
		if (TREE_CODE(f) != FIELD_DECL)
			continue;
		if (f == field)
			return i;
		i++;
	}
	return i;
}

static void remember_struct(tree record)
{
	tree main = TYPE_MAIN_VARIANT(record);

	for (tree t : structs)
		if (t == main)
			return;
	structs.safe_push(main);
}

/* The last bytes of a path that does not fit. */
static const char *path_tail(const char *path)
{
	size_t len = path ? strlen(path) : 0;

	if (!path)
		return "";
	return len < LAYOUT_INSTR_FILE_MAX ? path : path + len - (LAYOUT_INSTR_FILE_MAX - 1);
}

/* A new site for the access; its index in the unit's table. */
static unsigned add_site(gimple *stmt, tree ref, tree outer, unsigned offset, unsigned size,
			 bool write)
{
	tree record = TYPE_MAIN_VARIANT(TREE_TYPE(TREE_OPERAND(outer, 0)));
	tree field = TREE_OPERAND(outer, 1);
	expanded_location loc = expand_location(gimple_location(stmt));
	site s;

	(void)ref;
	s.struct_name = struct_name(record);
	s.field_name = IDENTIFIER_POINTER(DECL_NAME(field));
	s.function = IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(current_function_decl));
	s.file = path_tail(loc.file);
	s.line = (unsigned)loc.line;
	s.offset = offset;
	s.size = size;
	s.field_index = field_ordinal(record, field);
	s.write = write;
	remember_struct(record);
	sites.safe_push(s);
	return sites.length() - 1;
}

/* asm volatile ("movq C@gottpoff(%rip),%1; subl $1,%%fs:(%1)" : "=@ccz"(zero), "=&r"(tmp)) */
static gasm *build_countdown(tree *zero)
{
	vec<tree, va_gc> *outputs = NULL;
	tree flag = make_ssa_name(unsigned_char_type_node);
	tree scratch = make_ssa_name(ptr_type_node);

	vec_safe_push(outputs,
		      build_tree_list(build_tree_list(NULL_TREE, build_string(6, "=@ccz")), flag));
	vec_safe_push(outputs,
		      build_tree_list(build_tree_list(NULL_TREE, build_string(4, "=&r")), scratch));
	gasm *stmt = gimple_build_asm_vec("movq\t" LAYOUT_INSTR_COUNTDOWN
					  "@gottpoff(%%rip), %1\n\tsubl\t$1, %%fs:(%1)",
					  NULL, outputs, NULL, NULL);
	gimple_asm_set_volatile(stmt, true);
	SSA_NAME_DEF_STMT(flag) = stmt;
	SSA_NAME_DEF_STMT(scratch) = stmt;
	*zero = flag;
	return stmt;
}

/* site = &table[index], out of an asm the optimizers cannot see into. */
static gasm *build_site_address(unsigned index, tree *out)
{
	char text[160];
	vec<tree, va_gc> *outputs = NULL;
	tree addr = make_ssa_name(ptr_type_node);

	snprintf(text, sizeof(text), "leaq\t%s+%u(%%%%rip), %%0", get_table_name(),
		 index * LAYOUT_INSTR_ENTRY_SIZE);
	vec_safe_push(outputs,
		      build_tree_list(build_tree_list(NULL_TREE, build_string(3, "=r")), addr));
	gasm *stmt = gimple_build_asm_vec(ggc_strdup(text), NULL, outputs, NULL, NULL);
	SSA_NAME_DEF_STMT(addr) = stmt;
	*out = addr;
	return stmt;
}

static tree get_hook_decl(void)
{
	if (!hook_decl) {
		tree type = build_function_type_list(void_type_node, ptr_type_node, ptr_type_node,
						     NULL_TREE);
		hook_decl = build_fn_decl(LAYOUT_INSTR_HOOK, type);
		TREE_NOTHROW(hook_decl) = 1;
		DECL_ATTRIBUTES(hook_decl) =
		    tree_cons(get_identifier("leaf"), NULL_TREE, DECL_ATTRIBUTES(hook_decl));
	}
	return hook_decl;
}

/* Before stmt: the countdown, and in a cold block the hook's call. */
static void instrument_access(gimple *stmt, tree ref, unsigned index)
{
	gimple_stmt_iterator gsi = gsi_for_stmt(stmt);
	basic_block then_bb, join_bb;
	tree zero, site;

	gsi_insert_before(&gsi, build_countdown(&zero), GSI_SAME_STMT);
	gimple_stmt_iterator cond_gsi =
	    create_cond_insert_point(&gsi, true, false, true, &then_bb, &join_bb);
	gcond *cond = gimple_build_cond(NE_EXPR, zero, build_int_cst(unsigned_char_type_node, 0),
					NULL_TREE, NULL_TREE);
	gsi_insert_after(&cond_gsi, cond, GSI_NEW_STMT);

	gimple_stmt_iterator then_gsi = gsi_start_bb(then_bb);
	gsi_insert_after(&then_gsi, build_site_address(index, &site), GSI_NEW_STMT);
	tree addr = force_gimple_operand_gsi(&then_gsi, build_fold_addr_expr(unshare_expr(ref)),
					     true, NULL_TREE, false, GSI_CONTINUE_LINKING);
	gcall *call = gimple_build_call(get_hook_decl(), 2, site, addr);
	gimple_set_location(call, gimple_location(stmt));
	gsi_insert_after(&then_gsi, call, GSI_NEW_STMT);
}

struct pending {
	gimple *stmt;
	tree ref;
	unsigned site;
};

/* A load or store of a struct member the pass instruments: its site, or -1. */
static int consider(gimple *stmt, tree ref, bool write)
{
	tree outer;
	unsigned offset, size;

	if (!ref || !handled_component_p(ref))
		return -1;
	outer = outermost_field_ref(ref);
	if (!outer || !address_is_free(ref) || !access_extent(ref, outer, &offset, &size))
		return -1;
	return (int)add_site(stmt, ref, outer, offset, size, write);
}

static bool wants_instrumentation(function *fn)
{
	tree decl = fn->decl;

	return !lookup_attribute("naked", DECL_ATTRIBUTES(decl)) &&
	       !lookup_attribute("no_instrument_function", DECL_ATTRIBUTES(decl));
}

static unsigned int instrument_function(function *fn)
{
	auto_vec<pending> todo;
	basic_block bb;

	if (!wants_instrumentation(fn) || instrumented->add(fn->decl))
		return 0;
	FOR_EACH_BB_FN(bb, fn)
	{
		for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi); gsi_next(&gsi)) {
			gimple *stmt = gsi_stmt(gsi);
			int site;

			if (!gimple_assign_single_p(stmt) || gimple_clobber_p(stmt))
				continue;
			/* an aggregate copy a.s = b.s counts as the store and the load */
			site = consider(stmt, gimple_assign_lhs(stmt), true);
			if (site >= 0)
				todo.safe_push({stmt, gimple_assign_lhs(stmt), (unsigned)site});
			site = consider(stmt, gimple_assign_rhs1(stmt), false);
			if (site >= 0)
				todo.safe_push({stmt, gimple_assign_rhs1(stmt), (unsigned)site});
		}
	}
	if (todo.is_empty())
		return 0;
	for (pending &p : todo)
		instrument_access(p.stmt, p.ref, p.site);
	mark_virtual_operands_for_renaming(fn);
	return TODO_update_ssa;
}

namespace
{
const pass_data layout_pass_data = {
    GIMPLE_PASS,
    "lever_layout",
    OPTGROUP_NONE,
    TV_NONE,
    PROP_gimple_any | PROP_cfg | PROP_ssa,
    0,
    0,
    0,
    0,
};

struct layout_pass : gimple_opt_pass {
	layout_pass(gcc::context *ctx) : gimple_opt_pass(layout_pass_data, ctx)
	{
	}
	unsigned int execute(function *fn) override
	{
		return instrument_function(fn);
	}
};
} // namespace

/* --- the tables, as assembly at the end of the unit --- */

/* A NUL-padded string of exactly `width` bytes (truncated to width - 1). */
static void emit_fixed_string(const char *s, unsigned width)
{
	unsigned n = 0;

	fputs("\t.byte\t", asm_out_file);
	for (; s && s[n] && n + 1 < width; n++)
		fprintf(asm_out_file, "%u,", (unsigned char)s[n]);
	fputs("0\n", asm_out_file);
	if (width - n - 1)
		fprintf(asm_out_file, "\t.zero\t%u\n", width - n - 1);
}

static void emit_words(const unsigned *w, unsigned n)
{
	fputs("\t.long\t", asm_out_file);
	for (unsigned i = 0; i < n; i++)
		fprintf(asm_out_file, "%u%s", w[i], i + 1 < n ? "," : "\n");
}

static void emit_sites(void)
{
	const char *name = get_table_name();

	fprintf(asm_out_file,
		"\t.pushsection\t" LAYOUT_INSTR_SITES ",\"a\",@progbits\n"
		"\t.balign\t8\n\t.type\t%s, @object\n\t.size\t%s, %u\n%s:\n",
		name, name, sites.length() * LAYOUT_INSTR_ENTRY_SIZE, name);
	for (const site &s : sites) {
		unsigned words[6] = {s.line,	    s.offset,
				     s.size,	    s.write ? LAYOUT_INSTR_SITE_WRITE : 0u,
				     s.field_index, 0};

		emit_fixed_string(s.struct_name, LAYOUT_INSTR_NAME_MAX);
		emit_fixed_string(s.field_name, LAYOUT_INSTR_NAME_MAX);
		emit_fixed_string(s.function, LAYOUT_INSTR_NAME_MAX);
		emit_fixed_string(s.file, LAYOUT_INSTR_FILE_MAX);
		emit_words(words, 6);
	}
	fputs("\t.popsection\n", asm_out_file);
}

/* TYPE and ARRAY of a member as C writes them around its name. */
static void member_type(tree type, char *text, size_t text_size, char *array, size_t array_size)
{
	size_t used = 0;

	array[0] = '\0';
	while (TREE_CODE(type) == ARRAY_TYPE) {
		tree domain = TYPE_DOMAIN(type);
		tree max = domain ? TYPE_MAX_VALUE(domain) : NULL_TREE;

		if (max && tree_fits_shwi_p(max))
			used += snprintf(array + used, used < array_size ? array_size - used : 0,
					 "[%ld]", (long)tree_to_shwi(max) + 1);
		else
			used +=
			    snprintf(array + used, used < array_size ? array_size - used : 0, "[]");
		type = TREE_TYPE(type);
	}
	char *printed = print_generic_expr_to_str(type);
	snprintf(text, text_size, "%s", printed);
	free(printed);
}

static bool struct_supported(tree record)
{
	for (tree f = TYPE_FIELDS(record); f; f = DECL_CHAIN(f))
		if (TREE_CODE(f) == FIELD_DECL &&
		    (!DECL_NAME(f) || DECL_BIT_FIELD(f) || !tree_fits_shwi_p(DECL_FIELD_OFFSET(f))))
			return false;
	return true;
}

static void emit_struct_fields(tree record)
{
	bool supported = struct_supported(record);
	unsigned index = 0;

	for (tree f = TYPE_FIELDS(record); f; f = DECL_CHAIN(f)) {
		char type[LAYOUT_INSTR_TYPE_MAX], array[LAYOUT_INSTR_ARRAY_MAX];
		unsigned words[5];
		bool sized;

		if (TREE_CODE(f) != FIELD_DECL)
			continue;
		member_type(TREE_TYPE(f), type, sizeof(type), array, sizeof(array));
		sized = constant_size(DECL_SIZE_UNIT(f));
		words[0] =
		    tree_fits_shwi_p(DECL_FIELD_OFFSET(f)) ? (unsigned)int_byte_position(f) : 0;
		words[1] = sized ? (unsigned)tree_to_uhwi(DECL_SIZE_UNIT(f)) : 0;
		words[2] = DECL_ALIGN_UNIT(f);
		words[3] = (supported ? 0u : LAYOUT_INSTR_FIELD_UNSUPPORTED) |
			   (TREE_CODE(TREE_TYPE(f)) == ARRAY_TYPE && (!sized || !words[1])
				? LAYOUT_INSTR_FIELD_FLEXIBLE
				: 0u);
		words[4] = index++;
		emit_fixed_string(struct_name(record), LAYOUT_INSTR_NAME_MAX);
		emit_fixed_string(DECL_NAME(f) ? IDENTIFIER_POINTER(DECL_NAME(f)) : "",
				  LAYOUT_INSTR_NAME_MAX);
		emit_fixed_string(type, LAYOUT_INSTR_TYPE_MAX);
		emit_fixed_string(array, LAYOUT_INSTR_ARRAY_MAX);
		emit_words(words, 5);
	}
}

static void emit_tables(void *gcc_data, void *user_data)
{
	(void)gcc_data;
	(void)user_data;
	if (sites.is_empty() || !asm_out_file)
		return;
	emit_sites();
	fputs("\t.pushsection\t" LAYOUT_INSTR_FIELDS ",\"a\",@progbits\n\t.balign\t8\n",
	      asm_out_file);
	for (tree record : structs)
		emit_struct_fields(record);
	fputs("\t.popsection\n", asm_out_file);
}

int plugin_init(struct plugin_name_args *info, struct plugin_gcc_version *version)
{
	/* As the stack pad plugin: another GCC release compiles without it. */
	if (strcmp(version->basever, gcc_version.basever) != 0) {
		fprintf(stderr,
			"lever cc: the layout plugin was built for GCC %s, not %s; "
			"compiling without layout instrumentation\n",
			gcc_version.basever, version->basever);
		return 0;
	}
	/*
	 * Before the loop optimizations rewrite field accesses into bare
	 * address arithmetic (ivopts makes TARGET_MEM_REFs of p[i].f), and, for
	 * the functions that never get there (no loops, -O0), after the last
	 * GIMPLE pass.
	 */
	instrumented = new hash_set<tree>;
	struct register_pass_info in_loops = {
	    new layout_pass(g),
	    "ivopts",
	    1,
	    PASS_POS_INSERT_BEFORE,
	};
	struct register_pass_info at_end = {
	    new layout_pass(g),
	    "optimized",
	    1,
	    PASS_POS_INSERT_AFTER,
	};
	register_callback(info->base_name, PLUGIN_PASS_MANAGER_SETUP, NULL, &in_loops);
	register_callback(info->base_name, PLUGIN_PASS_MANAGER_SETUP, NULL, &at_end);
	register_callback(info->base_name, PLUGIN_FINISH_UNIT, emit_tables, NULL);
	return 0;
}
