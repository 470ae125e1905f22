/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * lever layout refs BINARY: the static half of a layout record — struct
 * layouts from DWARF, which instruction touches which field, the basic
 * blocks (spec autocpa.md §2.5, §8.5; doc/layout-refs.md). The output is a
 * record without samples, which `lever layout report` reads as it is and
 * the collectors complete with samples.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "layout/layout.h"

#define REFS_USAGE  "usage: lever layout refs [OPTIONS] BINARY"
#define MAX_STRUCTS 256

static const char refs_description[] =
    "Finds, without running BINARY, which struct field each of its instructions reads\n"
    "or writes (what AutoCPA got from Ghidra): struct layouts from its DWARF, the\n"
    "memory operands of every function decoded with capstone, their base registers\n"
    "typed from DWARF variable locations and followed through moves, loads of\n"
    "pointer fields, lea and calls. Prints a layout record without samples\n"
    "(doc/formats/layout-record.md): struct, field, ref and block lines, at\n"
    "link-time addresses. Results are cached by build ID in\n"
    "$XDG_CACHE_HOME/lever/layout (default ~/.cache/lever/layout).\n";

static const char refs_epilogue[] = "Exit status: 0 on success, 1 if BINARY cannot be analysed "
				    "(no DWARF, not x86-64),\n2 on a usage error. See "
				    "doc/layout-refs.md.\n";

struct refs_options {
	const char *structs[MAX_STRUCTS];
	size_t n_structs;
	const char *output;
	bool no_cache, quiet, all_structs;
	const char *binary;
};

static int struct_option(const struct cli_option *opt, const char *arg, void *ctx)
{
	struct refs_options *o = ctx;

	if (!*arg)
		return -1;
	if (o->n_structs == MAX_STRUCTS) {
		fprintf(stderr, "lever layout refs: at most %d --struct options\n", MAX_STRUCTS);
		return EXIT_USAGE;
	}
	o->structs[o->n_structs++] = arg;
	return 0;
}

static int parse_refs_options(struct refs_options *o, int argc, char **argv)
{
	const struct cli_option table[] = {
	    CLI_CALLBACK('s', "struct", "NAME", struct_option,
			 "only this struct (repeatable): its layout and references;\n"
			 "default: every struct some instruction references",
			 .what = "a struct name"),
	    CLI_FLAG('a', "all-structs", &o->all_structs,
		     "every struct of the DWARF, referenced or not (its layout\n"
		     "as pahole shows it; ignored with --struct)"),
	    CLI_STRING('o', "output", &o->output, "FILE",
		       "write the record to FILE (default: stdout)"),
	    CLI_FLAG(0, "no-cache", &o->no_cache,
		     "analyse again, neither reading nor writing the cache"),
	    CLI_FLAG('q', "quiet", &o->quiet, "no summary on stderr"),
	    CLI_END(),
	};
	const struct cli_command cmd = {
	    .name = "lever layout refs",
	    .usage = REFS_USAGE,
	    .description = refs_description,
	    .options = table,
	    .epilogue = refs_epilogue,
	    .help_column = 24,
	};
	int first = 0, ret;

	ret = cli_parse_operands(&cmd, argc, argv, o, &first, 1, 1, "which binary? (one BINARY)",
				 "one BINARY, please");
	if (ret)
		return ret;
	o->binary = argv[first];
	return 0;
}

int cmd_layout_refs(int argc, char **argv)
{
	struct refs_options o = {0};
	struct layout_static_options so;
	struct layout_static_stats stats;
	char err[1024];
	FILE *out = stdout;
	int rc = parse_refs_options(&o, argc, argv);

	if (rc)
		return rc == CLI_HELP ? 0 : rc;
	so = (struct layout_static_options){.structs = o.structs,
					    .n_structs = o.n_structs,
					    .all_structs = o.all_structs,
					    .cache = !o.no_cache};
	if (o.output && !(out = fopen(o.output, "w"))) {
		fprintf(stderr, "lever layout refs: %s: %m\n", o.output);
		return 1;
	}
	fprintf(out, "lever-layout-record\t1\n");
	rc = layout_static_write(o.binary, &so, out, &stats, err, sizeof(err));
	if (out != stdout && fclose(out) != 0 && rc == 0) {
		snprintf(err, sizeof(err), "%s: write error", o.output);
		rc = -1;
	}
	if (rc) {
		fprintf(stderr, "lever layout refs: %s\n", err);
		if (o.output)
			unlink(o.output);
		return 1;
	}
	if (!o.quiet)
		fprintf(stderr,
			"lever layout refs: %s: %zu functions, %zu memory operands, %zu resolved "
			"to struct fields; %zu structs, %zu refs, %zu blocks written; %zu "
			"referenced structs left out (bitfields, packed, unions, system headers: "
			"see the # lines)%s\n",
			o.binary, stats.functions, stats.memory_operands, stats.typed_operands,
			stats.structs, stats.refs, stats.blocks, stats.unsupported,
			stats.from_cache ? " (from the cache)" : "");
	return 0;
}
