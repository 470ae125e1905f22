/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * lever-stack-pads-gcc: GCC plugin for `lever cc` (Stabilizer's stack
 * padding, spec stabilizer.md 3.3 T-S, as option C of 12.3).
 *
 * At the entry of every function it compiles, after all GIMPLE optimizations
 * (so that inlining is decided on the original code), it inserts
 *
 *     __asm__ ("leaq T+i(%rip), %0" : "=r" (slot)); // this function's slot
 *     pad = *(unsigned char *) slot;
 *     p = __builtin_alloca ((size_t) pad * 16);
 *     __asm__ volatile ("" : : "r" (p));               // keep p alive
 *
 * so that the frames of everything this function calls sit pad*16 bytes
 * lower. T (__lever_stack_pads.<unique>) is a per-translation-unit byte
 * array, local to the object file, in section "lever_stack_pads"; the plugin
 * emits it as zeros at the end of the unit. Zero pads leave the program as it
 * was; the runtime (runtime/stack.c) finds every module's tables through the
 * section's __start/__stop symbols (cc/stub.c) and fills them.
 *
 * The table is not a declaration GCC knows: an extern, unit-local array
 * (how this began) let the RTL passes fold slot addresses into debug-value
 * expressions that no instruction accepts, and with the table's full type
 * they miscompiled in other ways (both on the sqlite3 amalgamation with -g
 * -O2). The slot's address comes out of an asm the optimizers cannot see
 * into; a load through it is an ordinary byte load.
 *
 * Functions marked naked or no_instrument_function are left alone.
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
#include "stringpool.h"
#include "ssa.h"
#include "attribs.h"
#include "output.h"
#include "cfg.h"
#include "toplev.h"

#include "stabilizer/runtime/stack_pads.h"

int plugin_is_GPL_compatible;

static char table_name[64]; /* the unit's table: STACK_PADS_SYMBOL.<unique> */
static unsigned n_slots;    /* slots handed out so far in this unit */

/*
 * A name no other unit of an LTO partition shares: the symbol is local to
 * the object, but LTO may put several units' functions in one.
 */
static const char *get_table_name(void)
{
	if (!table_name[0]) {
		unsigned long long h =
		    1469598103934665603ull ^ (unsigned long long)get_random_seed(false);

		for (const char *c = main_input_filename ? main_input_filename : ""; *c; c++)
			h = (h ^ (unsigned char)*c) * 1099511628211ull;
		snprintf(table_name, sizeof(table_name), "%s.%016llx", STACK_PADS_SYMBOL, h);
	}
	return table_name;
}

static bool wants_pad(function *fn)
{
	tree decl = fn->decl;

	if (lookup_attribute("naked", DECL_ATTRIBUTES(decl)))
		return false;
	if (lookup_attribute("no_instrument_function", DECL_ATTRIBUTES(decl)))
		return false;
	return true;
}

/* slot = &table[i], out of an asm: "=r" output, no inputs. */
static gasm *build_slot_address(unsigned slot, tree *out)
{
	char text[128];
	vec<tree, va_gc> *outputs = NULL;
	tree addr = make_ssa_name(ptr_type_node);
	tree constraint = build_string(3, "=r");

	snprintf(text, sizeof(text), "leaq %s+%u(%%%%rip), %%0", get_table_name(), slot);
	vec_safe_push(outputs, build_tree_list(build_tree_list(NULL_TREE, constraint), addr));
	gasm *stmt = gimple_build_asm_vec(ggc_strdup(text), NULL, outputs, NULL, NULL);
	SSA_NAME_DEF_STMT(addr) = stmt;
	*out = addr;
	return stmt;
}

static gimple_seq build_pad_sequence(unsigned slot)
{
	gimple_seq seq = NULL;
	tree addr;

	gimple_seq_add_stmt(&seq, build_slot_address(slot, &addr));
	tree ref = build2(MEM_REF, unsigned_char_type_node, addr,
			  build_int_cst(build_pointer_type(unsigned_char_type_node), 0));
	tree pad = make_ssa_name(unsigned_char_type_node);
	gimple_seq_add_stmt(&seq, gimple_build_assign(pad, ref));
	tree pad_wide = make_ssa_name(size_type_node);
	gimple_seq_add_stmt(&seq, gimple_build_assign(pad_wide, NOP_EXPR, pad));
	tree bytes = make_ssa_name(size_type_node);
	gimple_seq_add_stmt(&seq,
			    gimple_build_assign(bytes, MULT_EXPR, pad_wide,
						build_int_cst(size_type_node, STACK_PAD_UNIT)));

	gcall *call = gimple_build_call(builtin_decl_explicit(BUILT_IN_ALLOCA), 1, bytes);
	tree area = make_ssa_name(ptr_type_node);
	gimple_call_set_lhs(call, area);
	gimple_seq_add_stmt(&seq, call);

	/* An unused alloca would be deleted; an empty volatile asm keeps it. */
	vec<tree, va_gc> *inputs = NULL;
	tree constraint = build_string(2, "r");
	vec_safe_push(inputs, build_tree_list(build_tree_list(NULL_TREE, constraint), area));
	gasm *keep = gimple_build_asm_vec("", inputs, NULL, NULL, NULL);
	gimple_asm_set_volatile(keep, true);
	gimple_seq_add_stmt(&seq, keep);
	return seq;
}

/*
 * The tail-call pass ran before this one and may have marked calls as tail
 * calls; with an alloca in the frame none can be one (GCC's own tailcall pass
 * refuses functions that call alloca), and expanding them so breaks.
 */
static void unmark_tail_calls(function *fn)
{
	basic_block bb;

	FOR_EACH_BB_FN(bb, fn)
	{
		for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi); gsi_next(&gsi)) {
			gcall *call = dyn_cast<gcall *>(gsi_stmt(gsi));

			if (call && gimple_call_tail_p(call))
				gimple_call_set_tail(call, false);
		}
	}
}

static unsigned int insert_stack_pad(function *fn)
{
	if (!wants_pad(fn))
		return 0;
	unmark_tail_calls(fn);
	gimple_seq seq = build_pad_sequence(n_slots++);
	edge entry = single_succ_edge(ENTRY_BLOCK_PTR_FOR_FN(fn));
	gsi_insert_seq_on_edge_immediate(entry, seq);
	fn->calls_alloca = 1;
	return TODO_update_ssa;
}

namespace
{
const pass_data stack_pad_pass_data = {
    GIMPLE_PASS,
    "lever_stack_pads",
    OPTGROUP_NONE,
    TV_NONE,
    PROP_gimple_any | PROP_cfg | PROP_ssa,
    0,
    0,
    0,
    0,
};

struct stack_pad_pass : gimple_opt_pass {
	stack_pad_pass(gcc::context *ctx) : gimple_opt_pass(stack_pad_pass_data, ctx)
	{
	}
	unsigned int execute(function *fn) override
	{
		return insert_stack_pad(fn);
	}
};
} // namespace

/*
 * The table itself: one zero byte per slot, in the unit's assembly.
 */
static void emit_pads_table(void *gcc_data, void *user_data)
{
	const char *name;

	if (!n_slots || !asm_out_file)
		return;
	name = get_table_name();
	fprintf(asm_out_file,
		"\t.pushsection\t" STACK_PADS_SECTION ",\"aw\",@progbits\n"
		"\t.type\t%s, @object\n"
		"\t.size\t%s, %u\n"
		"%s:\n"
		"\t.zero\t%u\n"
		"\t.popsection\n",
		name, name, n_slots, name, n_slots);
}

int plugin_init(struct plugin_name_args *info, struct plugin_gcc_version *version)
{
	/*
	 * The plugin interface is stable within a GCC release; a distribution's
	 * rebuild of the same release changes only its date and revision. For
	 * another release, compile as if the plugin were not there.
	 */
	if (strcmp(version->basever, gcc_version.basever) != 0) {
		fprintf(stderr,
			"lever cc: the stack pad plugin was built for GCC %s, not %s; "
			"compiling without stack pads\n",
			gcc_version.basever, version->basever);
		return 0;
	}
	struct register_pass_info pass = {
	    new stack_pad_pass(g),
	    "optimized",
	    1,
	    PASS_POS_INSERT_AFTER,
	};
	register_callback(info->base_name, PLUGIN_PASS_MANAGER_SETUP, NULL, &pass);
	register_callback(info->base_name, PLUGIN_FINISH_UNIT, emit_pads_table, NULL);
	return 0;
}
