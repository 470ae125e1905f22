/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A header-defined inline function: out of scope when only prog.c is. */
#ifndef SYMBOLIZE_INL_H
#define SYMBOLIZE_INL_H

static inline unsigned mix_bits(unsigned x)
{
	unsigned h = x * 2654435761u; /* LINE:mix_first */
	h ^= h >> 15;
	h *= 2246822519u;
	h ^= h >> 13;
	h *= 3266489917u;
	h ^= h >> 16; /* LINE:mix_last */
	return h;
}

#endif
