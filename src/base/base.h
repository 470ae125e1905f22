/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * base: small utilities safe to use anywhere, including inside runtimes that
 * run in somebody else's program (no allocation, async-signal-safe unless a
 * function says otherwise).
 */
#ifndef LEVER_BASE_H
#define LEVER_BASE_H

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define NSEC_PER_SEC  1000000000ULL
#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_USEC 1000ULL

/* --- time --- */
/* CLOCK_MONOTONIC in nanoseconds (vDSO, no syscall). */
uint64_t time_monotonic_ns(void);
/* CLOCK_REALTIME in nanoseconds. */
uint64_t time_realtime_ns(void);
/* Sleep for ns nanoseconds, restarting on EINTR; returns the time really slept. */
uint64_t time_sleep_ns(uint64_t ns);
/*
 * Parse a duration such as "250", "250ns", "40us", "5ms", "2s" into
 * nanoseconds; a bare number is taken in default_unit_ns. Returns false on
 * malformed input.
 */
bool time_parse_duration(const char *text, uint64_t default_unit_ns, uint64_t *out_ns);

/* --- log: formatted output straight to a file descriptor, no stdio, no malloc --- */
/* vsnprintf-free formatter: %s %c %d %i %u %x %p %% with l, ll, z and a width (0-padded with 0). */
int fmt_buffer(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int vfmt_buffer(char *buf, size_t size, const char *fmt, va_list ap);
/* Write a formatted message to fd (one write call, truncated at 1 KiB). */
void fd_printf(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* --- patterns --- */
/* Match text against a Coz-style pattern where '%' matches any substring. */
bool wildcard_match(const char *pattern, const char *text);

/* --- random numbers (per-caller state, no locking) --- */
struct rng {
	uint64_t s[4];
};
void rng_seed(struct rng *r, uint64_t seed);

static inline uint64_t rng_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/*
 * xoshiro256**. Inline because the shuffling heap draws one or two numbers
 * per malloc and free (issue 14 point 14: the call was 3% of malloc_heavy).
 */
static inline uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rng_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rng_rotl(s[3], 45);
	return result;
}
/* Uniform integer in [0, n). */
uint64_t rng_below(struct rng *r, uint64_t n);
/* Uniform double in [0, 1). */
double rng_double(struct rng *r);

/* --- hashing --- */
#define FNV1A_INIT 0xcbf29ce484222325ULL
/* FNV-1a of n bytes at p, continuing from h (FNV1A_INIT to start). */
uint64_t fnv1a(uint64_t h, const void *p, size_t n);
/*
 * x with every input bit spread over every output bit (MurmurHash3's 64-bit
 * finalizer), so that h & (size - 1) indexes a power-of-two hash table well
 * even for keys that differ only in their high bits. A bijection; 0 maps to 0.
 */
uint64_t hash_u64(uint64_t x);

/*
 * --- interned strings (these allocate: analysis side only, never in a signal
 * handler or on a hot path) ---
 * Ids run 0..n-1 in order of first appearance. A zeroed table is empty.
 */
struct string_table {
	char **text;	  /* text[id]: the string, NUL-terminated */
	uint64_t *hashes; /* hashes[id] */
	size_t n, cap;
	uint32_t *slots; /* id + 1; 0 = empty */
	size_t n_slots;
};

void string_table_init(struct string_table *t);
void string_table_free(struct string_table *t);
/* Id of s[0..len), adding a copy if new; UINT32_MAX when out of memory. */
uint32_t string_table_intern(struct string_table *t, const char *s, size_t len);
/* Id of s[0..len), or UINT32_MAX if absent. */
uint32_t string_table_find(const struct string_table *t, const char *s, size_t len);
/* The string of id, or "" for an id not in the table. */
const char *string_table_text(const struct string_table *t, uint32_t id);
/*
 * Hands the strings over (text[0..*n), each and the array to free()) and
 * empties the table.
 */
char **string_table_release(struct string_table *t, size_t *n);

/* --- strings --- */
/* Copy at most size-1 bytes and always terminate; returns strlen(src). */
size_t str_copy(char *dst, const char *src, size_t size);
/* Parse a decimal integer in [min, max]: no sign, no spaces, nothing after it. */
bool parse_u64_range(const char *text, uint64_t min, uint64_t max, uint64_t *out);
/* Parse "FILE:LINE" (splitting at the last ':'); file is copied into file_out. */
bool parse_file_line(const char *spec, char *file_out, size_t file_size, unsigned *line_out);

/* ------------------------------------------------------------ signal() */

/*
 * The action that signal() installs, built as glibc builds it, for the
 * runtimes that interpose signal() so that the program keeps seeing its own
 * handlers (src/causal/runtime/interpose_signals.c,
 * src/annotate/runtime/interpose_signals.c). BSD semantics, glibc's
 * default: the signal is blocked while its handler runs, and interrupted
 * system calls restart unless siginterrupt(sig, 1) asked otherwise. System V
 * semantics (sysv_signal): the handler is reset to the default and the
 * signal is not blocked. Async-signal-safe; no allocation.
 */
/* 0 and *act filled, or -1 with errno EINVAL for a bad signal or SIG_ERR. */
static inline int signal_compat_action(int sig, sighandler_t handler, bool sysv, bool interrupting,
				       struct sigaction *act)
{
	if (handler == SIG_ERR || sig < 1 || sig >= NSIG) {
		errno = EINVAL;
		return -1;
	}
	memset(act, 0, sizeof(*act));
	act->sa_handler = handler;
	sigemptyset(&act->sa_mask);
	if (sysv) {
		act->sa_flags = SA_RESETHAND | SA_NODEFER;
	} else {
		sigaddset(&act->sa_mask, sig);
		if (!interrupting)
			act->sa_flags = SA_RESTART;
	}
	return 0;
}

#endif
