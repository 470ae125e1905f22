/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A program shaped like a daemon, for the profile writer's tests
 * (tests/e2e/causal_output.sh; issue 14, point 1): it closes every inherited
 * descriptor above stderr, as daemons do, then opens a file of its own
 * (which gets the lowest free number, the one the profile had) and writes
 * one line per round to it while it computes. Under lever the file must come
 * out byte for byte as in a native run, and the profile must still get the
 * experiments.
 *
 *   daemon OUTFILE ROUNDS [EXIT_STATUS [HOW]]
 *
 * HOW is how the inherited descriptors go: close (one at a time, the
 * default), close_range (one call), dup2 (/dev/null duplicated over each,
 * then closed), or syscall (the close system call itself, past any wrapper).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <lever.h>

static volatile uint64_t sink;

static uint64_t mix(uint64_t x)
{
	for (int i = 0; i < 200000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

static uint64_t fold(uint64_t x)
{
	for (int i = 0; i < 100000; i++)
		x ^= x >> 7 ^ x << 9;
	return x;
}

static void close_inherited(const char *how)
{
	if (strcmp(how, "syscall") == 0) {
		for (long fd = 3; fd < 4096; fd++)
			syscall(SYS_close, fd);
		return;
	}
	if (strcmp(how, "close_range") == 0) {
		close_range(3, ~0U, 0);
		return;
	}
	if (strcmp(how, "dup2") == 0) {
		int null = open("/dev/null", O_RDONLY);

		for (int fd = 3; fd < 64; fd++) {
			if (fd != null)
				dup2(null, fd);
		}
	}
	for (int fd = 3; fd < 4096; fd++)
		close(fd);
}

int main(int argc, char **argv)
{
	uint64_t state = 1;
	int rounds, fd;

	if (argc < 3) {
		fprintf(stderr, "usage: daemon OUTFILE ROUNDS [EXIT_STATUS [HOW]]\n");
		return 2;
	}
	rounds = atoi(argv[2]);
	close_inherited(argc > 4 ? argv[4] : "close");
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	for (int r = 0; r < rounds; r++) {
		char line[64];
		int n;

		state = fold(mix(state));
		n = snprintf(line, sizeof(line), "round %d state %016llx\n", r,
			     (unsigned long long)state);
		if (write(fd, line, (size_t)n) != n) {
			perror("write");
			return 1;
		}
		LEVER_PROGRESS;
	}
	sink = state;
	if (close(fd) < 0) {
		perror("close");
		return 1;
	}
	return argc > 3 ? atoi(argv[3]) : 0;
}
