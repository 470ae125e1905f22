/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * stabilizer/cc: the toolchain side of Stabilizer, `lever cc` and `lever c++`
 * (doc/cc.md). A wrapper around the system C/C++ compiler that passes every
 * argument through and adds what the stabilizer runtime needs:
 *
 *   compiling C-family sources   -ffunction-sections -fno-omit-frame-pointer
 *                                -fno-jump-tables, and the stack pad plugin
 *                                (plugins/; runtime/stack_pads.h)
 *   linking a program or .so     -Wl,--emit-relocs and lever-cc-stub.o
 *   --randomize-link[=SEED]      a shuffled object order and a random
 *                                function order (a linker section order)
 *
 * args.c reads a command line (phases, inputs, response files), link_order.c
 * shuffles a link, driver.c builds and runs the compiler commands.
 */
#ifndef LEVER_STABILIZER_CC_H
#define LEVER_STABILIZER_CC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/base.h"
#include "stabilizer/cc/wrapper.h" /* the public part */

enum cc_family { CC_FAMILY_UNKNOWN, CC_FAMILY_GCC, CC_FAMILY_CLANG };

enum cc_linker { CC_LINKER_BFD, CC_LINKER_GOLD, CC_LINKER_LLD, CC_LINKER_OTHER };

/* What one argument of the compiler command line is. */
enum cc_arg_role {
	CC_ARG_OPTION,	     /* an option (with its value, if joined) */
	CC_ARG_OPTION_VALUE, /* the separate value of the option before it */
	CC_ARG_INPUT,	     /* a file to compile, assemble or link */
};

enum cc_input_kind {
	CC_INPUT_NONE,	  /* not an input */
	CC_INPUT_SOURCE,  /* compiled by the compiler proper (C, C++, ...) */
	CC_INPUT_ASM,	  /* assembly, .s/.S */
	CC_INPUT_OBJECT,  /* relocatable object, linked */
	CC_INPUT_LIBRARY, /* .a, .so, -lNAME: linked, never moved */
};

struct cc_arg {
	char *text;
	enum cc_arg_role role;
	enum cc_input_kind kind;
	/* Linker inputs must keep their place relative to this one (-l, -Wl,...). */
	bool link_barrier;
	/* Only meaningful when linking (-l, -L, -Wl, -shared, ...). */
	bool link_only;
	/* -x LANG in effect for an input ("" for none: by file extension). */
	const char *language;
};

/*
 * A compiler command line without lever's options: as given (passthrough,
 * used when nothing in it needs to change) and with response files expanded
 * and every argument classified (v).
 */
struct cc_args {
	char **passthrough;
	size_t n_passthrough;
	struct cc_arg *v;
	size_t n, cap;
	bool from_response_file; /* some arguments came from @FILE */

	/* What the command does. */
	bool preprocess_only; /* -E, -M or -MM */
	bool syntax_only;     /* -fsyntax-only */
	bool no_link;	      /* -c or -S */
	bool relocatable;     /* -r: a partial link */
	bool shared;	      /* -shared */
	bool static_link;     /* -static, -static-pie */
	bool no_libc;	      /* -nostdlib, -nodefaultlibs, -nolibc */
	bool linker_script;   /* -T, -Wl,-T, -Wl,--script: the user's own */
	bool lto;	      /* -flto */
	enum cc_linker linker;
	size_t n_sources, n_asm, n_objects, n_libraries;
};

/* lever cc's own options, found among the compiler's. */
struct cc_options {
	bool help;
	bool randomize_link;
	bool link_seed_given;
	uint64_t link_seed;
	bool no_stack_pads;
	bool annotate; /* --annotate: the NOP sleds lever annotate record patches */
	bool verbose;
};

/* --- args.c --- */
/*
 * Parse argv (the compiler's arguments, without argv[0]): take out lever's
 * options into opts (only from the command line itself, not from response
 * files), expand @FILE response files (as GCC does: a file that cannot be
 * read stays a literal argument), classify the rest. Returns 0, or -1 with a
 * message in err.
 */
int cc_args_parse(struct cc_args *args, int argc, char **argv, struct cc_options *opts, char *err,
		  size_t err_size);
void cc_args_free(struct cc_args *args);
/* Does the command link (an executable, a shared object or -r)? */
bool cc_args_links(const struct cc_args *args);
/* Does it run the compiler proper on a C-family source? */
bool cc_args_compiles(const struct cc_args *args);
/* Split a response file's text into arguments (GCC's rules); NULL-terminated, malloc'ed. */
char **cc_split_response_text(const char *text, size_t *count);
/* Write args as a response file GCC and clang read back identically. */
int cc_write_response_file(FILE *out, char *const *argv, size_t argc);

/* --- link_order.c --- */
/*
 * Shuffle the object files of a link, each only among the positions of
 * objects in the same run between link barriers (libraries, -Wl options,
 * -x), so that every library still follows the objects that need it.
 */
void cc_shuffle_link_inputs(struct cc_args *args, struct rng *rng);

/* A set of section names. */
struct cc_names {
	char **v;
	size_t n, cap;
};
void cc_names_free(struct cc_names *names);
/*
 * Add the names of the function sections (.text.NAME) of an object file or
 * of every member of an archive. Cold and exit-only code (.text.unlikely.*,
 * .text.exit.*) stays where the linker puts it. Returns 0, or -1 with a
 * message in err.
 */
int cc_collect_function_sections(const char *path, struct cc_names *names, char *err,
				 size_t err_size);
/* Sort, remove duplicates, then shuffle with rng. */
void cc_names_shuffle(struct cc_names *names, struct rng *rng);
/*
 * Write the order for the linker: for GNU ld a script that INSERTs, before
 * the default .text, a .text holding these sections in this order and then
 * the rest of what .text holds (so the program keeps one .text); for gold a
 * --section-ordering-file; for lld a --symbol-ordering-file.
 */
int cc_write_section_order(FILE *out, enum cc_linker linker, const struct cc_names *names);

/* --- driver.c --- */
struct cc_settings {
	enum cc_language language;
	const char *compiler;	 /* command, may hold arguments ("ccache gcc") */
	const char *runtime_dir; /* plugins and lever-cc-stub.o */
	struct cc_options opts;
};

/* Which compiler is this (runs `COMPILER --version`)? */
enum cc_family cc_detect_family(char *const *compiler_argv, int *major);
/* Run the compiler for args with what lever adds; returns its exit status. */
int cc_run(const struct cc_settings *settings, struct cc_args *args);

#endif
