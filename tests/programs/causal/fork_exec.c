/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Forks while another thread holds and releases a mutex, and has children
 * that compute and exit, exec /bin/echo, exec this program again, _exit at
 * once, and run through system(). The parent waits for each before going on,
 * so the output is deterministic. If FORK_EXEC_PIDS names a file, the pids of
 * the children that stay dynamically linked programs (the forked one, the
 * echo, the re-exec'd one) are appended to it, one per line.
 *
 * Usage: fork_exec            (parent)
 *        fork_exec child N    (the re-exec'd child: computes and exits 3)
 *
 * The forked and the re-exec'd child compute for long enough, visiting a
 * progress point as they go, that a followed child runs experiments.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lever.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int stop;
static uint64_t shared_counter;

__attribute__((noinline)) static uint64_t compute(uint64_t n)
{
	uint64_t x = n;

	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL + i;
	return x;
}

/*
 * compute(n) in steps, visiting a progress point after each, so that a
 * profiled child runs experiments (they start once a point exists).
 */
static uint64_t compute_in_steps(uint64_t n, unsigned steps)
{
	uint64_t x = 0;

	for (unsigned i = 0; i < steps; i++) {
		x ^= compute(n / steps + i);
		LEVER_PROGRESS;
	}
	return x;
}

static void *busy(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		pthread_mutex_lock(&lock);
		shared_counter += compute(1000) & 1;
		pthread_mutex_unlock(&lock);
		LEVER_PROGRESS;
	}
	return NULL;
}

static void take_lock(void)
{
	pthread_mutex_lock(&lock);
}

static void release_lock(void)
{
	pthread_mutex_unlock(&lock);
}

static void note_pid(pid_t pid)
{
	const char *path = getenv("FORK_EXEC_PIDS");
	FILE *f;

	if (!path || !(f = fopen(path, "a")))
		return;
	fprintf(f, "%d\n", (int)pid);
	fclose(f);
}

static void report(const char *what, pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid) {
		printf("%s: waitpid failed\n", what);
		return;
	}
	if (WIFEXITED(status))
		printf("%s: exited %d\n", what, WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		printf("%s: killed by signal %d\n", what, WTERMSIG(status));
	fflush(stdout);
}

int main(int argc, char **argv)
{
	pthread_t thread;
	char self[4096];
	ssize_t n;
	pid_t pid;

	if (argc > 2 && strcmp(argv[1], "child") == 0) {
		uint64_t k = strtoull(argv[2], NULL, 10);

		printf("re-exec'd child: %016llx\n", (unsigned long long)compute_in_steps(k, 400));
		return 3;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 1;
	self[n] = '\0';

	pthread_atfork(take_lock, release_lock, release_lock);
	pthread_create(&thread, NULL, busy, NULL);
	printf("parent: %016llx\n", (unsigned long long)compute(20000000));
	fflush(stdout);

	pid = fork();
	if (pid == 0) {
		pthread_mutex_lock(&lock); /* consistent: the atfork handlers took it */
		shared_counter = 0;
		pthread_mutex_unlock(&lock);
		printf("forked child: %016llx\n",
		       (unsigned long long)compute_in_steps(60000000, 400));
		exit(0);
	}
	note_pid(pid);
	report("forked child", pid);

	pid = fork();
	if (pid == 0) {
		execl("/bin/echo", "echo", "echo child says hello", (char *)NULL);
		_exit(127);
	}
	note_pid(pid);
	report("echo child", pid);

	pid = fork();
	if (pid == 0) {
		execl(self, argv[0], "child", "60000000", (char *)NULL);
		_exit(127);
	}
	note_pid(pid);
	report("re-exec'd child", pid);

	pid = fork();
	if (pid == 0)
		_exit(5);
	report("_exit child", pid);

	printf("system: status %d\n", system("echo system child; exit 4") >> 8);

	atomic_store(&stop, 1);
	pthread_join(thread, NULL);
	printf("parent done\n");
	return 0;
}
