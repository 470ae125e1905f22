/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Are these addresses random? Reads hexadecimal addresses, one per line, on
 * standard input (lines starting with '#' are skipped), takes address bits
 * 6-17 of the first COUNT of them (the cache index bits the Stabilizer
 * paper tests, §3.2) as one bit sequence and runs four NIST SP 800-22 tests
 * on it, as heap_bits does for heap objects. Prints one line per test and
 * exits 0 when every p-value is at least 0.01, 1 when one is not, 2 when
 * there are fewer than COUNT addresses or the input is not addresses.
 *
 * usage: addr_bits COUNT < ADDRESSES
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats/stats.h"

#define BITS_LO	  6
#define BITS_HI	  17
#define WORD_BITS (BITS_HI - BITS_LO + 1)
#define ALPHA	  0.01

static size_t read_addresses(uintptr_t *out, size_t count)
{
	char line[256];
	size_t n = 0;

	while (n < count && fgets(line, sizeof(line), stdin)) {
		char *end;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		out[n] = (uintptr_t)strtoull(line, &end, 16);
		if (end == line || (*end && *end != '\n')) {
			fprintf(stderr, "addr_bits: not an address: %s", line);
			exit(2);
		}
		n++;
	}
	return n;
}

static int report(const char *name, int err, const struct stats_test *t)
{
	int ok = !err && t->p >= ALPHA;

	printf("%-16s p = %.6f %s\n", name, t->p, ok ? "random" : "NOT random");
	return ok;
}

int main(int argc, char **argv)
{
	size_t count = argc > 1 ? strtoul(argv[1], NULL, 10) : 0;
	size_t n = count * WORD_BITS, have;
	uintptr_t *addresses;
	struct stats_test t;
	uint8_t *bits;
	int ok = 1;

	if (count < 100) {
		fprintf(stderr, "usage: addr_bits COUNT (at least 100) < ADDRESSES\n");
		return 2;
	}
	addresses = calloc(count, sizeof(*addresses));
	bits = malloc(n);
	if (!addresses || !bits)
		return 2;
	have = read_addresses(addresses, count);
	if (have < count) {
		fprintf(stderr, "addr_bits: only %zu addresses, need %zu\n", have, count);
		return 2;
	}
	for (size_t i = 0; i < count; i++)
		for (int b = 0; b < WORD_BITS; b++)
			bits[i * WORD_BITS + (size_t)b] = (addresses[i] >> (BITS_LO + b)) & 1;
	printf("%zu addresses, bits %d-%d, %zu bits\n", count, BITS_LO, BITS_HI, n);
	/* NIST §2.2.7: M >= 20, M > n / 100, fewer than 100 blocks */
	ok &= report("frequency", stats_nist_frequency(bits, n, &t), &t);
	ok &= report("block-frequency", stats_nist_block_frequency(bits, n, n / 50, &t), &t);
	ok &= report("runs", stats_nist_runs(bits, n, &t), &t);
	ok &= report("cusum-forward", stats_nist_cusum(bits, n, false, &t), &t);
	ok &= report("cusum-backward", stats_nist_cusum(bits, n, true, &t), &t);
	printf("%s\n", ok ? "all tests pass" : "some test fails");
	free(addresses);
	free(bits);
	return ok ? 0 : 1;
}
