// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * Probe test program (tests/e2e/annotate_probe_threads.sh): threads calling
 * a probed function, one leaving with pthread_exit from inside a probed
 * call, then a fork whose child calls it too and an exec'd child.
 * `many N` (tests/e2e/annotate_record_counts.sh): the main thread and four
 * others call it N times each, all at once, and nothing else.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define THREADS	 4

NOINLINE long work(long x)
{
	__asm__ volatile("" ::: "memory");
	return x * 2 + 1;
}

NOINLINE void quit_now(void)
{
	pthread_exit(NULL);
}

static void *many_main(void *arg)
{
	long n = (long)arg, s = 0;

	for (long i = 0; i < n; i++)
		s += work(i);
	return (void *)s;
}

static int many(long n)
{
	pthread_t t[THREADS];
	long total = (long)many_main((void *)n);

	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, many_main, (void *)n);
	for (int i = 0; i < THREADS; i++) {
		void *r;

		pthread_join(t[i], &r);
		total += (long)r;
	}
	printf("many %ld\n", total);
	return 0;
}

static void *thread_main(void *arg)
{
	long n = (long)arg, s = 0;

	for (long i = 0; i < n; i++)
		s += work(i);
	if (n == 1001)
		quit_now();
	return (void *)s;
}

int main(int argc, char **argv)
{
	pthread_t t[THREADS];
	long total = 0;
	pid_t pid;
	int status;

	if (argc > 1 && strcmp(argv[1], "child") == 0) {
		for (int i = 0; i < 7; i++)
			total += work(i);
		printf("exec'd child %ld\n", total);
		return 0;
	}
	if (argc > 2 && strcmp(argv[1], "many") == 0)
		return many(atol(argv[2]));
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, thread_main, (void *)(i == 0 ? 1001L : 1000L));
	for (int i = 0; i < THREADS; i++) {
		void *r;

		pthread_join(t[i], &r);
		total += (long)r;
	}
	printf("threads %ld\n", total);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		long s = 0;

		for (int i = 0; i < 5; i++)
			s += work(i);
		printf("forked child %ld\n", s);
		fflush(stdout);
		execl("/proc/self/exe", argv[0], "child", (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
