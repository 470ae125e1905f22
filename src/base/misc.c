/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "base/base.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool wildcard_match(const char *pattern, const char *text)
{
	const char *star_p = NULL;
	const char *star_t = NULL;

	/* Greedy match with backtracking to the last '%'. */
	while (*text) {
		if (*pattern == '%') {
			star_p = ++pattern;
			star_t = text;
		} else if (*pattern == *text) {
			pattern++;
			text++;
		} else if (star_p) {
			pattern = star_p;
			text = ++star_t;
		} else {
			return false;
		}
	}
	while (*pattern == '%')
		pattern++;
	return *pattern == '\0';
}

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

uint64_t hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

void rng_seed(struct rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

uint64_t rng_below(struct rng *r, uint64_t n)
{
	/* Rejection sampling avoids modulo bias. */
	uint64_t limit = UINT64_MAX - UINT64_MAX % n;
	uint64_t x;

	do {
		x = rng_next(r);
	} while (x >= limit);
	return x % n;
}

double rng_double(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

size_t str_copy(char *dst, const char *src, size_t size)
{
	size_t len = strlen(src);

	if (size) {
		size_t n = len < size - 1 ? len : size - 1;

		memcpy(dst, src, n);
		dst[n] = '\0';
	}
	return len;
}

bool parse_file_line(const char *spec, char *file_out, size_t file_size, unsigned *line_out)
{
	const char *colon = strrchr(spec, ':');
	char *end;
	unsigned long line;

	if (!colon || colon == spec || colon[1] == '\0')
		return false;
	line = strtoul(colon + 1, &end, 10);
	if (*end != '\0' || line == 0 || line > 0xffffffffUL)
		return false;
	if ((size_t)(colon - spec) >= file_size)
		return false;
	memcpy(file_out, spec, (size_t)(colon - spec));
	file_out[colon - spec] = '\0';
	*line_out = (unsigned)line;
	return true;
}

bool parse_u64_range(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!text || !*text || *text == '-' || *text == '+' || *text == ' ')
		return false;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || *end != '\0' || v < min || v > max)
		return false;
	*out = v;
	return true;
}
