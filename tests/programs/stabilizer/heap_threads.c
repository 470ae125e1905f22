/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Do objects that two threads allocate share cache lines? Two threads take
 * turns (a step each, in lock step) allocating objects of 16 to 512 bytes
 * and writing them, as malloc_heavy does; then every 64-byte line that
 * objects of both threads touch is counted. Lines written by two threads at
 * once move between their caches at every write (false sharing): the
 * shuffled heap measured twice the CPU time of one thread on two.
 *
 * usage: heap_threads [OBJECTS_PER_THREAD [MAX_SHARED]]  (default 20000 0)
 * Prints the shared lines and the lines touched; exit 1 above MAX_SHARED.
 */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE 64u

struct object {
	uintptr_t lo, hi; /* lines [lo, hi] */
	int owner;
};

static size_t per_thread = 20000;
static struct object *objects;
static pthread_barrier_t step;

static void *worker(void *arg)
{
	int me = (int)(uintptr_t)arg;
	uint64_t x = (uint64_t)me * 2654435761u + 7;

	for (size_t i = 0; i < per_thread; i++) {
		size_t size;
		char *p;

		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		size = 16 + (size_t)(x >> 20) % 497;
		pthread_barrier_wait(&step); /* interleave the two threads' mallocs */
		p = malloc(size);
		if (!p)
			abort();
		memset(p, me, size);
		objects[(size_t)me * per_thread + i] = (struct object){
		    (uintptr_t)p / LINE, ((uintptr_t)p + malloc_usable_size(p) - 1) / LINE, me};
	}
	return NULL;
}

static int by_line(const void *a, const void *b)
{
	const struct object *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

int main(int argc, char **argv)
{
	size_t n, shared = 0, lines = 0, max_shared = 0;
	uintptr_t last_line = 0, last_shared = 0;
	int last_owner = -1;
	pthread_t t[2];

	if (argc > 1)
		per_thread = strtoul(argv[1], NULL, 10);
	if (argc > 2)
		max_shared = strtoul(argv[2], NULL, 10);
	n = 2 * per_thread;
	objects = calloc(n, sizeof(*objects));
	if (!objects || pthread_barrier_init(&step, NULL, 2))
		return 2;
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	/*
	 * Objects do not overlap, so sorted by first line only the previous
	 * object's last line can also be this one's first: a line is shared
	 * when two neighbours of different owners meet in it.
	 */
	qsort(objects, n, sizeof(*objects), by_line);
	for (size_t i = 0; i < n; i++) {
		const struct object *o = &objects[i];

		if (i && o->lo == last_line && o->owner != last_owner && last_shared != o->lo + 1) {
			shared++;
			last_shared = o->lo + 1;
		}
		lines += o->hi - o->lo + 1 - (i && o->lo == last_line);
		last_line = o->hi;
		last_owner = o->owner;
	}
	printf("%zu of %zu lines shared by the two threads' objects\n", shared, lines);
	return shared > max_shared;
}
