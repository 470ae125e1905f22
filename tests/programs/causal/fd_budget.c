/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The program's descriptor budget is its own (issue 14, point 3): under a
 * soft RLIMIT_NOFILE of 1024 (lowered here if higher), 400 live threads
 * that compute, then the main thread opens 600 files. Bare that always
 * works; the perf sampler used to hold two descriptors per thread and left
 * the program 216. Then a child forked beside the threads counts its
 * descriptors: the threads' sampler descriptors must not follow it. Prints
 * how many files it could open, the child's count, and OK.
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lever.h>

#define THREADS 400
#define FILES	600
#define LIMIT	1024

static atomic_int started;
static atomic_int release;
static volatile uint64_t sink;

/* Each thread computes a little (so that it is sampled) and waits for the end. */
static void *worker(void *arg)
{
	uint64_t x = (uintptr_t)arg;
	struct timespec tick = {0, 2000000L};

	for (int i = 0; i < 200000; i++)
		x = x * 6364136223846793005u + 1442695040888963407u;
	sink = x;
	LEVER_PROGRESS;
	atomic_fetch_add(&started, 1);
	while (!atomic_load(&release))
		nanosleep(&tick, NULL);
	return NULL;
}

/* Descriptors open in this process (/proc/self/fd, less the one reading it). */
static int open_descriptors(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;
}

/*
 * A child forked while the threads live has only the forking thread: the
 * other threads' sampler descriptors must not follow it into its budget.
 */
static int child_descriptors(void)
{
	int pipefd[2], n = -1;
	pid_t pid;

	if (pipe(pipefd) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		close(pipefd[0]);
		n = open_descriptors() - 1; /* less the pipe's write end */
		if (write(pipefd[1], &n, sizeof(n)) != sizeof(n))
			_exit(1);
		_exit(0);
	}
	close(pipefd[1]);
	if (pid < 0 || read(pipefd[0], &n, sizeof(n)) != sizeof(n))
		n = -1;
	close(pipefd[0]);
	waitpid(pid, NULL, 0);
	return n;
}

int main(void)
{
	static pthread_t threads[THREADS];
	static int fds[FILES];
	struct rlimit rl;
	pthread_attr_t attr;
	int created = 0, opened = 0;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > LIMIT) {
		rl.rlim_cur = LIMIT;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&threads[i], &attr, worker, (void *)(uintptr_t)(i + 1)) == 0)
			created++;
	while (atomic_load(&started) < created)
		sched_yield();
	for (int i = 0; i < FILES; i++) {
		fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fds[i] >= 0)
			opened++;
	}
	printf("%d threads, opened %d of %d files\n", created, opened, FILES);
	for (int i = 0; i < FILES; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	printf("a child forked beside them has %d descriptors\n", child_descriptors());
	atomic_store(&release, 1);
	for (int i = 0; i < created; i++)
		pthread_join(threads[i], NULL);
	if (created != THREADS || opened != FILES)
		return 1;
	printf("OK\n");
	return 0;
}
