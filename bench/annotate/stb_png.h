/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The one routine of stb_image_write that stb_png.c drives, declared here
 * so that the driver's translation unit does not see its body and cannot
 * inline it: the probe must find the library's function.
 */
#ifndef LEVER_BENCH_STB_PNG_H
#define LEVER_BENCH_STB_PNG_H

unsigned char *stbi_write_png_to_mem(const unsigned char *pixels, int stride_bytes, int x, int y,
				     int n, int *out_len);

#endif
