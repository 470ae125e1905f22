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
 * then closed), syscall (the close system call itself, past any wrapper), or
 * watch: for the first 300 ms, look through /proc/self/fd for a descriptor
 * on this program's own executable (lever reads it for the line map while
 * main runs; it must do so out of the program's sight and reach), exit 3 if
 * one is seen, then close one at a time.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
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

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* An open descriptor on the executable, other than the directory's own: its number, or -1. */
static int fd_on_executable(const char *exe)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *d;
	int found = -1;

	if (!dir)
		return -1;
	while (found < 0 && (d = readdir(dir))) {
		char link[320], target[PATH_MAX];
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/self/fd/%s", d->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strcmp(target, exe) == 0)
			found = atoi(d->d_name);
	}
	closedir(dir);
	return found;
}

static void watch_for_executable(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	double end = now_s() + 0.3;

	if (n <= 0)
		return;
	exe[n] = '\0';
	while (now_s() < end) {
		int fd = fd_on_executable(exe);

		if (fd >= 0) {
			fprintf(stderr, "descriptor %d is open on %s, and not by the program\n", fd,
				exe);
			exit(3);
		}
	}
}

static void close_inherited(const char *how)
{
	if (strcmp(how, "watch") == 0)
		watch_for_executable();
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
