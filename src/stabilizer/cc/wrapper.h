/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The public face of `lever cc` / `lever c++` (doc/cc.md): what the command
 * line and the other commands need of the compiler wrapper, and nothing of
 * how it reads and rewrites a compiler command (cc.h, internal to cc/).
 */
#ifndef LEVER_STABILIZER_CC_WRAPPER_H
#define LEVER_STABILIZER_CC_WRAPPER_H

#include <stdbool.h>

enum cc_language { CC_LANG_C, CC_LANG_CXX };

/*
 * lever cc --randomize-link records its seed in what it links: an allocated
 * (so strip keeps it), retained section holding the NUL-terminated text
 * "lever-link-seed N". lever bench --randomize=link reads it.
 */
#define CC_LINK_SEED_SECTION ".lever.link"
#define CC_LINK_SEED_PREFIX  "lever-link-seed "

/*
 * Run the wrapped compiler on argv (its arguments, without argv[0]) as
 * `lever cc` does: lever's options from LEVER_CC_* and then the command line,
 * the compiler from LEVER_CC/LEVER_CXX (default cc, c++), plugins and the
 * stub from runtime_dir. Returns the compiler's exit status, or 2 after
 * printing a usage error. With --help among lever's options nothing runs:
 * *help is set and 0 returned, for the caller to print its help.
 */
int cc_main(enum cc_language language, int argc, char **argv, const char *runtime_dir, bool *help);

#endif
