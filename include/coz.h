/* SPDX-License-Identifier: MIT */
/*
 * coz.h - Coz-compatible progress points, provided by lever.
 *
 * Copyright (c) 2026 the lever authors.
 *
 * Permission is hereby granted, free of charge, to any person obtaining a copy
 * of this software and associated documentation files (the "Software"), to
 * deal in the Software without restriction, including without limitation the
 * rights to use, copy, modify, merge, publish, distribute, sublicense, and/or
 * sell copies of the Software, and to permit persons to whom the Software is
 * furnished to do so, subject to the following conditions:
 *
 * The above copyright notice and this permission notice shall be included in
 * all copies or substantial portions of the Software.
 *
 * THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 * IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
 * FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
 * AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
 * LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING
 * FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS
 * IN THE SOFTWARE.
 *
 * A source-compatible stand-in for Coz's coz.h, written for lever (it is not
 * Coz's file). Programs written against Coz build unchanged with it, and the
 * result runs under `lever causal` or `coz run` alike: both runtimes export
 * _coz_get_counter(type, name), _coz_pre_block(), _coz_post_block(skip) and
 * _coz_add_delays(). Use each macro as a statement, with a semicolon:
 *
 *   COZ_PROGRESS;  COZ_PROGRESS_NAMED("name");  COZ_BEGIN("name");  COZ_END("name");
 *   COZ_ARRIVAL;  (a request arrives: load amplification, lever causal --arrival-speedup;
 *                  COZ_BEGIN counts as an arrival too)
 *   COZ_PRE_BLOCK;  COZ_POST_BLOCK(skip);  COZ_CATCH_UP;
 *
 * No -ldl is needed at link time; see lever.h.
 */
#ifndef COZ_H
#define COZ_H

#include "lever.h"

#define COZ_COUNTER_TYPE_THROUGHPUT LEVER_COUNTER_THROUGHPUT
#define COZ_COUNTER_TYPE_BEGIN	    LEVER_COUNTER_BEGIN
#define COZ_COUNTER_TYPE_END	    LEVER_COUNTER_END

/* Same layout as lever's counter: { size_t count; size_t backoff; }. */
typedef struct lever_counter coz_counter_t;

#define COZ_PROGRESS		 LEVER_PROGRESS
#define COZ_PROGRESS_NAMED(name) LEVER_PROGRESS_NAMED(name)
#define COZ_BEGIN(name)		 LEVER_BEGIN(name)
#define COZ_END(name)		 LEVER_END(name)
#define COZ_ARRIVAL		 LEVER_ARRIVAL("arrival")

#define COZ_PRE_BLOCK	     LEVER_PRE_BLOCK
#define COZ_POST_BLOCK(skip) LEVER_POST_BLOCK(skip)
#define COZ_CATCH_UP	     LEVER_CATCH_UP

#endif /* COZ_H */
