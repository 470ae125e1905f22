/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The runtime's descriptors, kept out of the program's reach (fd_guard.c).
 * An owner protects the int that holds its descriptor; if the program dup2s
 * onto that number, the guard moves the descriptor and updates the int.
 */
#ifndef LEVER_CAUSAL_FD_GUARD_H
#define LEVER_CAUSAL_FD_GUARD_H

/* *slot is one of the runtime's descriptors: the program cannot close it. */
void fd_guard_protect(int *slot);

/*
 * Run fn(arg) with a descriptor table of its own, for file work done while
 * the program runs (the line map's ELF and debug files), and wait for it.
 */
void fd_guard_run_private(void (*fn)(void *), void *arg);

#endif
