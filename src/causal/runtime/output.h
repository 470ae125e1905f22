/* SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef LEVER_CAUSAL_OUTPUT_H
#define LEVER_CAUSAL_OUTPUT_H

#include <stdbool.h>

bool output_open(const char *path);
void output_line(const char *line);
void output_emit(const char *line, void *ctx);
void output_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void output_flush(void);
void output_close(void);
void output_forget(void);

#endif
