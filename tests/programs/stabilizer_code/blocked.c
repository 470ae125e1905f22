/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A worker thread that blocks every signal for its whole life (as liblzma's
 * threads do) calls 256 functions of ~200 bytes over and over: the
 * runtime's stop signal never reaches it, so no old copy can be freed and,
 * re-randomized every millisecond, the code area fills up. The program must
 * still run to the end, including a function first called after that
 * (late(), like xz's signals_exit at exit). Prints a checksum.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>

#define ROUNDS 200000

/* clang-format off */
#define MIX(k)                                                                                     \
	x ^= x << 13;                                                                              \
	x ^= x >> 7;                                                                               \
	x ^= x << 17;                                                                              \
	x += (k) * 0x9e3779b97f4a7c15UL;
#define BODY(n)                                                                                    \
	__attribute__((noinline)) static unsigned long f##n(unsigned long x)                       \
	{                                                                                          \
		MIX(n) MIX(n + 1) MIX(n + 2) MIX(n + 3) MIX(n + 4) MIX(n + 5) MIX(n + 6) MIX(n + 7) \
		return x;                                                                          \
	}
#define B4(n)  BODY(n##0) BODY(n##1) BODY(n##2) BODY(n##3)
#define B16(n) B4(n##0) B4(n##1) B4(n##2) B4(n##3)
B16(10)
B16(11)
B16(12)
B16(13)
B16(20)
B16(21)
B16(22)
B16(23)
B16(30)
B16(31)
B16(32)
B16(33)
B16(40)
B16(41)
B16(42)
B16(43)
/* clang-format on */

#define P4(n)  f##n##0, f##n##1, f##n##2, f##n##3
#define P16(n) P4(n##0), P4(n##1), P4(n##2), P4(n##3)
static unsigned long (*const table[])(unsigned long) = {
    P16(10), P16(11), P16(12), P16(13), P16(20), P16(21), P16(22), P16(23),
    P16(30), P16(31), P16(32), P16(33), P16(40), P16(41), P16(42), P16(43),
};

static unsigned long result;

static void *worker(void *arg)
{
	unsigned long x = 1;
	sigset_t all;

	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	for (int r = 0; r < ROUNDS; r++)
		for (unsigned i = 0; i < sizeof(table) / sizeof(table[0]); i++)
			x = table[i](x);
	result = x;
	return NULL;
}

__attribute__((noinline)) static unsigned long late(unsigned long x)
{
	return x * 31 + 7;
}

int main(void)
{
	pthread_t t;

	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	printf("functions %zu, rounds %d, checksum %lx\n", sizeof(table) / sizeof(table[0]), ROUNDS,
	       late(result));
	return 0;
}
