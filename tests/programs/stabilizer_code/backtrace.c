/* SPDX-License-Identifier: GPL-3.0-or-later */
/* backtrace() from inside moved frames: the unwinder must walk from the
 * copies through their callers (copies too) back to main and libc. Prints
 * the number of frames, which is the same whether or not the code moved
 * (a copy without unwind info would cut the walk short). */
#include <execinfo.h>
#include <stdio.h>
#include <time.h>

__attribute__((noinline)) static int count_frames(void)
{
	void *frames[64];

	return backtrace(frames, 64);
}

__attribute__((noinline)) static int level(int depth)
{
	int n;

	if (depth == 0)
		return count_frames();
	n = level(depth - 1);
	__asm__ volatile("" : "+r"(n)); /* keeps the frame: no tail call */
	return n;
}

int main(void)
{
	int first = level(5);

	for (int i = 0; i < 3; i++) {
		struct timespec ts = {0, 5 * 1000000L};
		int again;

		nanosleep(&ts, NULL);
		again = level(5);
		if (again != first)
			printf("frames changed: %d then %d\n", first, again);
	}
	printf("frames %d\n", first);
	return 0;
}
