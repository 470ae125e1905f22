/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Are heap addresses random? Allocates objects in a fixed, deterministic
 * pattern, takes address bits 6-17 of each (the cache index bits the
 * Stabilizer paper tests, §3.2) as one bit sequence and runs four NIST
 * SP 800-22 tests on it. Prints one line per test and exits 0 when every
 * p-value is at least 0.01, 1 when one is not.
 *
 * usage: heap_bits [live|mixed] [COUNT]
 *   live   COUNT objects of 48 bytes, all kept live (default)
 *   mixed  COUNT objects of sizes cycling through 8, 16, ..., 112, all live,
 *          a quarter of them freed again in a fixed pattern
 *
 * Sizes whose size class is a multiple of 128 bytes are left out: their
 * objects are aligned to it, so address bit 6 is always 0 (spec §4.2: only
 * the index bits above the alignment can be random).
 *
 * The pattern has no randomness of its own, so any randomness in the
 * addresses comes from the allocator: glibc's malloc fails.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats/stats.h"

#define BITS_LO	  6
#define BITS_HI	  17
#define WORD_BITS (BITS_HI - BITS_LO + 1)
#define ALPHA	  0.01

static uintptr_t *addresses;

static void record(size_t i, void *p)
{
	if (!p) {
		fprintf(stderr, "heap_bits: out of memory\n");
		exit(2);
	}
	memset(p, 0xa5, 16); /* use it, as a program would */
	addresses[i] = (uintptr_t)p;
}

static void run_live(size_t count, size_t size)
{
	for (size_t i = 0; i < count; i++)
		record(i, malloc(size));
}

static void run_mixed(size_t count)
{
	void *pending = NULL;

	for (size_t i = 0; i < count; i++) {
		void *p = malloc(8 * (1 + i % 14));

		record(i, p);
		if (i % 4 == 3) { /* free every fourth object one step later */
			free(pending);
			pending = p;
		}
	}
}

/* FNV-1a over address bits 0-29 (lever's heap region is 1 GiB-aligned: ASLR moves none of them) */
static uint64_t fingerprint(size_t count)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < count; i++) {
		h ^= addresses[i] & ((1u << 30) - 1);
		h *= 0x100000001b3ULL;
	}
	return h;
}

static int report(const char *name, int err, const struct stats_test *t)
{
	int ok = !err && t->p >= ALPHA;

	printf("%-16s p = %.6f %s\n", name, t->p, ok ? "random" : "NOT random");
	return ok;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "live";
	size_t count = argc > 2 ? strtoul(argv[2], NULL, 10) : 100000;
	size_t n = count * WORD_BITS, block;
	uint8_t *bits;
	struct stats_test t;
	int ok = 1, err;

	addresses = calloc(count, sizeof(*addresses));
	bits = malloc(n);
	if (!addresses || !bits || count < 100)
		return 2;
	if (strcmp(mode, "live") == 0) {
		run_live(count, 48);
	} else if (strcmp(mode, "mixed") == 0) {
		run_mixed(count);
	} else {
		fprintf(stderr, "heap_bits: unknown mode %s\n", mode);
		return 2;
	}
	for (size_t i = 0; i < count; i++)
		for (int b = 0; b < WORD_BITS; b++)
			bits[i * WORD_BITS + (size_t)b] = (addresses[i] >> (BITS_LO + b)) & 1;
	/* NIST §2.2.7: M >= 20, M > n / 100, fewer than 100 blocks */
	block = n / 50;
	printf("%s: %zu addresses, bits %d-%d, %zu bits\n", mode, count, BITS_LO, BITS_HI, n);
	printf("layout fingerprint %016llx\n", (unsigned long long)fingerprint(count));
	err = stats_nist_frequency(bits, n, &t);
	ok &= report("frequency", err, &t);
	err = stats_nist_block_frequency(bits, n, block, &t);
	ok &= report("block-frequency", err, &t);
	err = stats_nist_runs(bits, n, &t);
	ok &= report("runs", err, &t);
	err = stats_nist_cusum(bits, n, false, &t);
	ok &= report("cusum-forward", err, &t);
	err = stats_nist_cusum(bits, n, true, &t);
	ok &= report("cusum-backward", err, &t);
	printf("%s\n", ok ? "all tests pass" : "some test fails");
	return ok ? 0 : 1;
}
