/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Exercises the whole allocation API and checks what the C library and
 * POSIX promise: alignment of malloc, calloc, realloc, posix_memalign,
 * aligned_alloc, memalign, valloc, pvalloc and reallocarray; realloc growing,
 * shrinking and moving with the contents kept; calloc zeroing reused memory
 * and refusing overflowing sizes; malloc_usable_size; threads that free each
 * other's objects; fork while other threads allocate. Prints one line per
 * check and exits 0 when all pass, so it checks glibc as well as lever.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS	   8
#define PER_THREAD 20000

static int failures;
/* Sizes the compiler cannot see, so that it neither warns about nor folds the overflow checks. */
static volatile size_t huge = SIZE_MAX / 2, two_33 = (size_t)1 << 33;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);                                \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

static bool aligned(const void *p, size_t a)
{
	return ((uintptr_t)p & (a - 1)) == 0;
}

static const size_t sizes[] = {0,     1,      7,      15,     16,     17,      24,
			       100,   128,    129,    1000,   4095,   4096,    4097,
			       65536, 100000, 262143, 262144, 262145, 1 << 20, 5000000};

static void check_malloc_family(void)
{
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];
		char *p = malloc(n), *c = calloc(1, n);

		CHECK(p && aligned(p, alignof(max_align_t)), "malloc(%zu) = %p", n, (void *)p);
		CHECK(c && aligned(c, alignof(max_align_t)), "calloc(1, %zu) = %p", n, (void *)c);
		CHECK(malloc_usable_size(p) >= n, "malloc_usable_size(malloc(%zu)) = %zu", n,
		      malloc_usable_size(p));
		if (p) {
			memset(p, 0x5a, malloc_usable_size(p)); /* all of it is ours to use */
		}
		for (size_t k = 0; c && k < n; k++)
			if (c[k]) {
				CHECK(0, "calloc(1, %zu)[%zu] = %d", n, k, c[k]);
				break;
			}
		free(p);
		free(c);
	}
	printf("ok malloc, calloc, malloc_usable_size: %zu sizes\n",
	       sizeof(sizes) / sizeof(sizes[0]));
}

static void check_aligned_family(void)
{
	long page = sysconf(_SC_PAGESIZE);

	for (size_t a = sizeof(void *); a <= (size_t)1 << 21; a <<= 1) {
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			size_t n = sizes[i];
			void *p = NULL, *q, *m;
			int rc = posix_memalign(&p, a, n);

			CHECK(rc == 0 && aligned(p, a), "posix_memalign(%zu, %zu) = %d %p", a, n,
			      rc, p);
			CHECK(malloc_usable_size(p) >= n, "usable(posix_memalign(%zu, %zu))", a, n);
			if (p)
				memset(p, 1, n);
			q = aligned_alloc(a, n ? (n + a - 1) / a * a : a);
			CHECK(q && aligned(q, a), "aligned_alloc(%zu, %zu) = %p", a, n, q);
			m = memalign(a, n);
			CHECK(m && aligned(m, a), "memalign(%zu, %zu) = %p", a, n, m);
			if (m)
				memset(m, 2, n);
			m = realloc(m, n + 100); /* realloc of an aligned block */
			CHECK(m && aligned(m, alignof(max_align_t)), "realloc(memalign(%zu, %zu))",
			      a, n);
			free(p);
			free(q);
			free(m);
		}
	}
	{
		void *p = NULL;

		CHECK(posix_memalign(&p, 24, 10) == EINVAL, "posix_memalign(24) is EINVAL");
		CHECK(posix_memalign(&p, 2, 10) == EINVAL, "posix_memalign(2) is EINVAL");
	}
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		void *v = valloc(sizes[i]), *pv = pvalloc(sizes[i]);

		CHECK(v && aligned(v, (size_t)page), "valloc(%zu) = %p", sizes[i], v);
		size_t rounded = (sizes[i] + (size_t)page - 1) / (size_t)page * (size_t)page;

		CHECK(pv && aligned(pv, (size_t)page) && malloc_usable_size(pv) >= rounded,
		      "pvalloc(%zu) = %p", sizes[i], pv);
		free(v);
		free(pv);
	}
	printf(
	    "ok posix_memalign, aligned_alloc, memalign, valloc, pvalloc: alignments 8 to 2 MiB\n");
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(seed + i * 31);
}

static bool same(const unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (unsigned char)(seed + i * 31))
			return false;
	return true;
}

static void check_realloc(void)
{
	size_t steps[] = {1, 10, 100, 5000, 300000, 3000000, 200, 20, 70000, 1};
	size_t have = 1;
	unsigned char *p = malloc(1), *q;

	fill(p, 1, 7);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		size_t n = steps[i], keep = n < have ? n : have;

		p = realloc(p, n);
		CHECK(p && aligned(p, alignof(max_align_t)), "realloc(%zu)", n);
		CHECK(p && same(p, keep, 7), "realloc %zu -> %zu keeps the contents", have, n);
		fill(p, n, 7);
		have = n;
	}
	free(p);
	p = realloc(NULL, 50); /* realloc(NULL) is malloc */
	CHECK(p != NULL, "realloc(NULL, 50)");
	p = reallocarray(p, 1000, 8);
	CHECK(p && aligned(p, alignof(max_align_t)), "reallocarray(1000, 8)");
	errno = 0;
	q = reallocarray(p, huge, 4);
	CHECK(!q && errno == ENOMEM, "reallocarray overflow gives ENOMEM");
	if (!q)
		free(p);
	printf("ok realloc grow/shrink/move keeps contents, reallocarray\n");
}

static void check_calloc(void)
{
	for (int round = 0; round < 2000; round++) {
		size_t n = 1 + (size_t)round % 700;
		unsigned char *dirty = malloc(n), *c;

		memset(dirty, 0xff, n);
		free(dirty); /* calloc may get this very block back */
		c = calloc(n, 1);
		for (size_t k = 0; c && k < n; k++)
			if (c[k]) {
				CHECK(0, "calloc(%zu) not zero at %zu", n, k);
				break;
			}
		free(c);
	}
	errno = 0;
	CHECK(calloc(huge, 3) == NULL && errno == ENOMEM, "calloc overflow gives ENOMEM");
	CHECK(calloc(two_33, two_33) == NULL, "calloc(2^33, 2^33) is NULL");
	printf("ok calloc zeroes reused memory and refuses overflow\n");
}

/* ------------------------------------------------------------ threads */

static void *_Atomic exchange[THREADS][64];

static void *thread_main(void *arg)
{
	size_t id = (size_t)arg;
	uint64_t x = id * 7919 + 1;

	for (size_t i = 0; i < PER_THREAD; i++) {
		size_t slot, size;
		unsigned char *p, *old;

		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		size = 1 + (x >> 33) % 2000;
		slot = (x >> 20) % 64;
		p = malloc(size);
		if (!p) {
			CHECK(0, "malloc in thread");
			continue;
		}
		p[0] = (unsigned char)id;
		p[size - 1] = (unsigned char)id;
		/* hand it to another thread's slot; free what was there (another thread's) */
		old = atomic_exchange(&exchange[(id + 1 + i) % THREADS][slot], p);
		free(old);
	}
	return NULL;
}

static void check_threads(void)
{
	pthread_t t[THREADS];

	for (size_t i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, thread_main, (void *)i);
	for (size_t i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (size_t i = 0; i < THREADS; i++)
		for (size_t s = 0; s < 64; s++)
			free(exchange[i][s]);
	printf("ok %d threads allocating and freeing each other's objects\n", THREADS);
}

/* ------------------------------------------------------------ short-lived threads */

static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

static void *short_thread(void *arg)
{
	void **keep = arg, *p[100];

	for (int i = 0; i < 100; i++) {
		p[i] = malloc(24 + (size_t)i * 8);
		memset(p[i], i, 24);
	}
	for (int i = 1; i < 100; i++)
		free(p[i]);
	*keep = p[0]; /* freed by the main thread */
	return NULL;
}

/* 2000 threads that allocate and exit: memory does not grow with their number */
static void check_thread_churn(void)
{
	long before = rss_kib(), after;

	for (int round = 0; round < 250; round++) {
		pthread_t t[8];
		void *keep[8];

		for (int i = 0; i < 8; i++)
			pthread_create(&t[i], NULL, short_thread, &keep[i]);
		for (int i = 0; i < 8; i++) {
			pthread_join(t[i], NULL);
			free(keep[i]);
		}
	}
	after = rss_kib();
	CHECK(after - before < 64 * 1024, "resident memory grew by %ld KiB over 2000 threads",
	      after - before);
	printf("ok 2000 short-lived threads (resident memory grew by %s 64 MiB)\n",
	       after - before < 64 * 1024 ? "less than" : "MORE than");
}

static _Atomic int stop_churn;

static void *churn(void *arg)
{
	(void)arg;
	while (!stop_churn) {
		void *p[32];

		for (int i = 0; i < 32; i++)
			p[i] = malloc(16 + (size_t)i * 40);
		for (int i = 0; i < 32; i++)
			free(p[i]);
	}
	return NULL;
}

/* fork while other threads hold allocator locks now and then: the child must not hang */
static void check_fork(void)
{
	pthread_t t[3];
	int forks = 40, ok = 0;

	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, churn, NULL);
	for (int i = 0; i < forks; i++) {
		pid_t pid = fork();
		int status;

		if (pid == 0) {
			void *p = malloc(100), *q = malloc(1 << 20);

			memset(p, 1, 100);
			memset(q, 1, 1 << 20);
			free(p);
			free(q);
			_exit(0);
		}
		if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		    WEXITSTATUS(status) == 0)
			ok++;
	}
	stop_churn = 1;
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	CHECK(ok == forks, "%d of %d forked children allocated and exited", ok, forks);
	printf("ok fork in a threaded program: %d children allocated and exited\n", ok);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	check_malloc_family();
	check_aligned_family();
	check_realloc();
	check_calloc();
	check_threads();
	check_thread_churn();
	check_fork();
	printf("%s\n", failures ? "FAILED" : "all checks pass");
	return failures ? 1 : 0;
}
