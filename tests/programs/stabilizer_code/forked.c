/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fork() with moved code: the child inherits the copies, relocates on its
 * own afterwards (its code area is private), and neither rewrites the
 * other's code. Both compute while code keeps being re-randomized. */
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) static unsigned long churn(unsigned long x, int n)
{
	for (int i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

__attribute__((noinline)) static unsigned long work(int rounds)
{
	unsigned long x = 1;

	for (int r = 0; r < rounds; r++) {
		struct timespec ts = {0, 1000000L};

		x ^= churn(x, 1000);
		if (r % 10 == 0)
			nanosleep(&ts, NULL);
	}
	return x;
}

int main(void)
{
	unsigned long before = work(20);
	pid_t child;
	int status = 0;

	fflush(stdout);
	child = fork();
	if (child == 0) {
		printf("child %lx\n", work(60) ^ before);
		return 0;
	}
	unsigned long mine = work(60) ^ before;

	waitpid(child, &status, 0);
	printf("parent %lx child exit %d\n", mine, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}
