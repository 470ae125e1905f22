// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * A program with its own SIGSEGV handling, for tests/e2e/annotate_signals.sh
 * (doc/annotate-record.md "Signals"): under `lever annotate record` it must
 * print what it prints bare. It queries the actions of the signals the
 * runtime takes (SIGSEGV, SIGBUS and the fatal ones), installs its own
 * SIGSEGV handler, reads it back, faults on purpose and recovers with
 * siglongjmp, blocks SIGSEGV in its mask and reads that back, replaces its
 * handler with signal(), and finally (argument "die") restores the default
 * and dies of a fault. Between the steps it calls sum(), a function with
 * features, so that the runtime's safe reads (and their fault fix-up) are
 * in use.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

struct pair {
	int a, b;
};

static sigjmp_buf recover;
static volatile sig_atomic_t faults, other_runs;

__attribute__((noinline)) int sum(const struct pair *p, int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += p[i].a + p[i].b;
	return s;
}

static void on_segv(int sig, siginfo_t *info, void *uc)
{
	(void)uc;
	faults++;
	/* the fault's own siginfo, not one made up on the way */
	if (sig == SIGSEGV && info && info->si_code > 0 && info->si_addr == (void *)16)
		siglongjmp(recover, 1);
	siglongjmp(recover, 2);
}

static void other(int sig)
{
	(void)sig;
	other_runs++;
}

/* A handler's address, whichever member of the union holds it. */
static const char *describe(uintptr_t h)
{
	if (h == (uintptr_t)SIG_DFL)
		return "default";
	if (h == (uintptr_t)SIG_IGN)
		return "ignored";
	if (h == (uintptr_t)on_segv)
		return "on_segv";
	if (h == (uintptr_t)other)
		return "other";
	return "someone else's";
}

static void query(int sig, const char *name)
{
	struct sigaction now;

	memset(&now, 0, sizeof(now));
	if (sigaction(sig, NULL, &now) != 0) {
		printf("%s: sigaction failed\n", name);
		return;
	}
	printf("%s: %s flags=%#x mask-has-usr1=%d\n", name,
	       describe((now.sa_flags & SA_SIGINFO) ? (uintptr_t)now.sa_sigaction
						    : (uintptr_t)now.sa_handler),
	       (unsigned)now.sa_flags, sigismember(&now.sa_mask, SIGUSR1));
}

static int fault(void)
{
	/* laundered: the compiler must not see a constant null-page address */
	uintptr_t addr = 16;
	volatile int *bad;
	int r = sigsetjmp(recover, 1);

	__asm__("" : "+r"(addr));
	bad = (volatile int *)addr;
	if (r == 0)
		return *bad;
	return r;
}

/*
 * sum() on memory unmapped since the runtime last saw it mapped: bare, sum
 * reads nothing (n = 0); under lever its features are read from there, the
 * direct copy faults and is recovered, even though the program's mask
 * blocks SIGSEGV now (a blocked fault would kill the process).
 */
static void stale_read(void)
{
	struct timespec pause = {0, 5000000};
	struct pair *page =
	    mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (page == MAP_FAILED)
		return;
	page->a = 1;
	nanosleep(&pause, NULL);
	printf("fresh read: %d\n",
	       sum(page, 0)); /* the runtime learns the mapping (it snapshots /proc/self/maps) */
	munmap(page, 4096);
	printf("stale read: %d\n", sum(page, 0));
}

int main(int argc, char **argv)
{
	struct pair p[4] = {{1, 2}, {3, 4}, {5, 6}, {7, 8}};
	struct sigaction act, old;
	sigset_t set, cur;
	int total = 0;

	query(SIGSEGV, "SIGSEGV at start");
	query(SIGBUS, "SIGBUS at start");
	query(SIGTERM, "SIGTERM at start");
	query(SIGABRT, "SIGABRT at start");
	total += sum(p, 4);

	memset(&act, 0, sizeof(act));
	act.sa_sigaction = on_segv;
	act.sa_flags = SA_SIGINFO;
	sigemptyset(&act.sa_mask);
	sigaddset(&act.sa_mask, SIGUSR1);
	sigaddset(&act.sa_mask, SIGSEGV);
	memset(&old, 0, sizeof(old));
	if (sigaction(SIGSEGV, &act, &old) != 0)
		printf("install failed\n");
	printf("install: previous %s\n", describe((uintptr_t)old.sa_handler));
	query(SIGSEGV, "SIGSEGV after install");
	total += sum(p, 3);

	for (int i = 0; i < 3; i++) {
		int r = fault();

		printf("fault %d: recovered %d, handler runs %d\n", i, r, (int)faults);
		total += sum(p, i);
	}

	/* the mask: SIGSEGV blocked, read back, a fault would now kill */
	sigemptyset(&set);
	sigaddset(&set, SIGSEGV);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sigprocmask(SIG_SETMASK, NULL, &cur);
	printf("mask blocks SIGSEGV: %d\n", sigismember(&cur, SIGSEGV));
	total += sum(p, 4);
	stale_read();
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	sigprocmask(SIG_SETMASK, NULL, &cur);
	printf("mask blocks SIGSEGV after unblock: %d\n", sigismember(&cur, SIGSEGV));

	/* a handler for another signal whose sa_mask holds SIGSEGV reads back as given */
	act.sa_handler = other;
	act.sa_flags = 0;
	sigaction(SIGUSR2, &act, NULL);
	memset(&old, 0, sizeof(old));
	sigaction(SIGUSR2, NULL, &old);
	printf("SIGUSR2 mask has SIGSEGV: %d\n", sigismember(&old.sa_mask, SIGSEGV));
	raise(SIGUSR2);
	printf("SIGUSR2 handler runs %d\n", (int)other_runs);

	/* siginterrupt: signal() then leaves SA_RESTART out */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	siginterrupt(SIGSEGV, 1);
#pragma GCC diagnostic pop
	printf("signal(): previous %s\n", describe((uintptr_t)signal(SIGSEGV, other)));
	query(SIGSEGV, "SIGSEGV after signal()");
	printf("signal(): previous %s\n", describe((uintptr_t)signal(SIGSEGV, SIG_DFL)));
	total += sum(p, 2);
	printf("total %d\n", total);
	fflush(stdout);
	if (argc > 1 && strcmp(argv[1], "die") == 0)
		return fault(); /* the default action: the process dies of SIGSEGV */
	return 0;
}
