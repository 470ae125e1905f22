/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The layout room's error convention, private to src/layout: a function
 * that can fail takes a caller's buffer (err, size) for one line saying why
 * and returns -1. fail() writes that line and returns the -1, so that an
 * error path is one statement: `return fail(err, size, "...", ...);`.
 */
#ifndef LEVER_LAYOUT_FAIL_H
#define LEVER_LAYOUT_FAIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

static inline int fail(char *err, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline int fail(char *err, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, size, fmt, ap);
	va_end(ap);
	return -1;
}

#endif /* LEVER_LAYOUT_FAIL_H */
