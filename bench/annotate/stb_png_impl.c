/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * stb_image_write built from Debian's source (package libstb-dev) for
 * stb_png.c. The e2e test annotate_real_stb builds it three ways:
 *  - as shipped;
 *  - -DLEVER_INJECT_ROW_COPY=K: an input-dependent regression, through the
 *    library's own STBIW_MEMMOVE hook: each move of more than 384 bytes (a
 *    row of an image wider than 128 pixels, and the final compressed
 *    stream) is staged K times through a fresh scratch heap block -- bytes
 *    allocated and time grow with x * y, by K times the rows on the wide
 *    part of the input range;
 *  - -DLEVER_INJECT_CONSTANT=N: a constant cost, through the STBIW_MALLOC
 *    hook: every one of the routine's four malloc calls asks N more bytes.
 */
#include <stdlib.h>
#include <string.h>

#ifdef LEVER_INJECT_ROW_COPY
static void *lever_scratch_memmove(void *dst, const void *src, size_t n)
{
	for (int k = 0; n > 384 && k < (LEVER_INJECT_ROW_COPY); k++) {
		unsigned char *scratch = malloc(n);

		if (!scratch)
			break;
		memcpy(scratch, src, n);
		memmove(dst, scratch, n);
		free(scratch);
	}
	return memmove(dst, src, n);
}
#define STBIW_MEMMOVE(a, b, sz) lever_scratch_memmove(a, b, sz)
#endif

#ifdef LEVER_INJECT_CONSTANT
#define STBIW_MALLOC(sz)	malloc((sz) + (LEVER_INJECT_CONSTANT))
#define STBIW_REALLOC(p, newsz) realloc(p, newsz)
#define STBIW_FREE(p)		free(p)
#endif

#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>
