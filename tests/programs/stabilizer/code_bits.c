/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Material for the randomness test of code placement (e2e
 * stabilize_code_random): 256 small functions of one size, called
 * through a table round after round, so that under lever stabilize --code
 * every re-randomization copies each of them again. Built with lever cc.
 *
 * usage: code_bits [COPIES]
 *        code_bits env   (the runtime's settings, as lever bench passed them)
 * Under the runtime with LEVER_STABILIZE_CODE_LOG set, it runs until that
 * log holds at least COPIES lines (default 20000; each line is at most
 * MAX_LINE bytes) or 120 s pass (exit 3); without the log it runs 1000
 * rounds. It prints a checksum of the results, the same with and without the
 * runtime.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define N_FUNCS	 256
#define MAX_LINE 48 /* "EPOCH ADDRESS SIZE NAME\n" of the code log, with room */
#define TIMEOUT	 120

/*
 * All of the same size (their constants all need 32 bits): the runtime
 * draws one random number per copy, and the position it gives depends on
 * the copy's size, so with equal sizes the k-th copy of a run lands at the
 * same place for a seed whichever function it is (which function comes k-th
 * depends on when the re-randomizations happen).
 */
#define FUNC(n)                                                                                    \
	__attribute__((noinline)) static unsigned f##n(unsigned x)                                 \
	{                                                                                          \
		x = x * 2654435761u + (n);                                                         \
		return x ^ ((n)*40503u);                                                           \
	}
#define FUNC4(n)  FUNC(n##0) FUNC(n##1) FUNC(n##2) FUNC(n##3)
#define FUNC16(n) FUNC4(n##0) FUNC4(n##1) FUNC4(n##2) FUNC4(n##3)
#define FUNC64(n) FUNC16(n##0) FUNC16(n##1) FUNC16(n##2) FUNC16(n##3)
FUNC64(10)
FUNC64(11)
FUNC64(12)
FUNC64(13)

#define REF(n)	 f##n,
#define REF4(n)	 REF(n##0) REF(n##1) REF(n##2) REF(n##3)
#define REF16(n) REF4(n##0) REF4(n##1) REF4(n##2) REF4(n##3)
#define REF64(n) REF16(n##0) REF16(n##1) REF16(n##2) REF16(n##3)

static unsigned (*const table[N_FUNCS])(unsigned) = {REF64(10) REF64(11) REF64(12) REF64(13)};

static unsigned round_of_calls(unsigned x)
{
	for (int i = 0; i < N_FUNCS; i++)
		x = table[i](x);
	return x;
}

static long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long)st.st_size : 0;
}

/*
 * The variable as exec passed it: /proc/self/environ keeps the original
 * block, while the runtime rewrites LEVER_STABILIZE_SEED for children.
 */
static const char *initial_env(const char *name)
{
	static char block[1 << 16];
	static size_t len;
	size_t n = strlen(name);

	if (!len) {
		FILE *f = fopen("/proc/self/environ", "r");

		if (!f)
			return NULL;
		len = fread(block, 1, sizeof(block) - 1, f);
		fclose(f);
	}
	for (size_t i = 0; i < len; i += strlen(block + i) + 1)
		if (strncmp(block + i, name, n) == 0 && block[i + n] == '=')
			return block + i + n + 1;
	return NULL;
}

static void print_settings(void)
{
	static const char *const vars[] = {
	    "LEVER_STABILIZE_HEAP",	"LEVER_STABILIZE_CODE",	       "LEVER_STABILIZE_STACK",
	    "LEVER_STABILIZE_ONE_TIME", "LEVER_STABILIZE_INTERVAL_NS", "LEVER_STABILIZE_SEED",
	};
	const char *preload = initial_env("LD_PRELOAD");
	const char *runtime = preload ? strstr(preload, "liblever-stabilizer.so") : NULL;

	printf("settings");
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = initial_env(vars[i]);

		printf(" %s=%s", vars[i] + strlen("LEVER_STABILIZE_"), v ? v : "-");
	}
	printf(" runtime=%s checksum=%08x\n", runtime ? "yes" : "no", round_of_calls(1));
}

int main(int argc, char **argv)
{
	long copies = argc > 1 ? strtol(argv[1], NULL, 10) : 20000;
	const char *log = getenv("LEVER_STABILIZE_CODE_LOG");
	time_t start = time(NULL);
	unsigned x = 1;

	if (argc > 1 && strcmp(argv[1], "env") == 0) {
		print_settings();
		return 0;
	}
	if (copies < 1)
		return 2;
	if (!log || !*log) {
		for (int r = 0; r < 1000; r++)
			x = round_of_calls(x);
		printf("checksum %08x\n", x);
		return 0;
	}
	for (long r = 0; file_size(log) < copies * MAX_LINE; r++) {
		x = round_of_calls(x);
		if (time(NULL) - start > TIMEOUT) {
			fprintf(stderr, "code_bits: the log has fewer than %ld copies after %d s\n",
				copies, TIMEOUT);
			return 3;
		}
	}
	printf("log filled\n");
	return 0;
}
