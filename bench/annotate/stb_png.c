/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A driver of a real library routine for `lever annotate` end to end
 * (issue 16 must-show 3; spec freud.md §3.1, §3.2): PNG encoding by
 * stb_image_write's stbi_write_png_to_mem, whose source Debian ships in the
 * package libstb-dev (/usr/include/stb/stb_image_write.h, the implementation
 * included under STB_IMAGE_WRITE_IMPLEMENTATION, built by stb_png_impl.c).
 * The library is compiled from that source with -g, so its parameters are
 * features: the image's width x, height y, components comp and row stride.
 *
 * It encodes IMAGES images (default 300) of sizes drawn from a fixed LCG
 * (x 8..256, y 8..128, 3 components), filled with a smooth gradient plus
 * noise from the same LCG, so every run does exactly the same work and
 * allocates exactly the same bytes. It prints the number of images and the
 * total PNG size, which only a change of the encoder's output can change.
 *
 * usage: stb_png [IMAGES]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "stb_png.h"

static uint64_t lcg_state = 20260525;

static uint32_t lcg_next(void)
{
	lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(lcg_state >> 33);
}

static void fill_image(unsigned char *px, int w, int h)
{
	for (int j = 0; j < h; j++)
		for (int i = 0; i < w; i++)
			for (int c = 0; c < 3; c++)
				px[(j * w + i) * 3 + c] =
				    (unsigned char)((i * (c + 1) + j * (3 - c)) + lcg_next() % 24);
}

int main(int argc, char **argv)
{
	int images = argc > 1 ? atoi(argv[1]) : 300;
	unsigned long long total = 0;
	unsigned char *px = malloc(256 * 128 * 3);

	if (images <= 0 || !px) {
		fprintf(stderr, "usage: stb_png [IMAGES > 0]\n");
		return 2;
	}
	for (int k = 0; k < images; k++) {
		int w = 8 + (int)(lcg_next() % 249), h = 8 + (int)(lcg_next() % 121), len = 0;
		unsigned char *png;

		fill_image(px, w, h);
		png = stbi_write_png_to_mem(px, w * 3, w, h, 3, &len);
		if (!png) {
			fprintf(stderr, "stb_png: image %d (%dx%d) failed\n", k, w, h);
			return 1;
		}
		total += (unsigned long long)len;
		free(png);
	}
	printf("%d images, %llu bytes of PNG\n", images, total);
	free(px);
	return 0;
}
