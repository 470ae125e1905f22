// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * The bytes perf_event_open hands to `lever layout record` (spec autocpa.md
 * §8.6, §8.9): the mmap'ed ring buffer read without losing a record that
 * wraps its end, PERF_RECORD_SAMPLE decoded for the sample types the `clock`
 * and `pmu` sources ask for, and the sample_id trailer of the other records
 * (MMAP2, FORK, COMM...) for their time stamp. Pure functions of the bytes,
 * so that they are tested on synthetic buffers (tests/unit/test_layout_collect.c):
 * the PMU path cannot run on machines without one, and must still be right.
 */
#include <linux/perf_event.h>
#include <string.h>

#include "layout/layout.h"

/* A cursor over one record: every read is bounds-checked. */
struct cursor {
	const unsigned char *p, *end;
};

static int take(struct cursor *c, void *out, size_t n)
{
	if ((size_t)(c->end - c->p) < n)
		return -1;
	if (out)
		memcpy(out, c->p, n);
	c->p += n;
	return 0;
}

static int take_u64(struct cursor *c, uint64_t *out)
{
	return take(c, out, sizeof(*out));
}

/* The sample types this parser understands; anything else is refused. */
#define KNOWN_SAMPLE_TYPES                                                                         \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |            \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |             \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER |    \
	 PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC)

static int take_regs(struct cursor *c, uint64_t regs_mask, struct layout_perf_sample *s)
{
	if (take_u64(c, &s->regs_abi))
		return -1;
	/* ABI_NONE: the sample hit a kernel thread; no registers follow */
	if (s->regs_abi == PERF_SAMPLE_REGS_ABI_NONE)
		return 0;
	for (unsigned r = 0; r < 64; r++) {
		uint64_t v;

		if (!(regs_mask & (1ull << r)))
			continue;
		if (take_u64(c, &v))
			return -1;
		if (r < LAYOUT_PERF_REGS) {
			s->regs[r] = v;
			s->regs_valid |= 1ull << r;
		}
	}
	return 0;
}

int layout_perf_parse_sample(const void *record, size_t size, uint64_t sample_type,
			     uint64_t regs_mask, struct layout_perf_sample *s)
{
	struct cursor c = {record, (const unsigned char *)record + size};
	struct perf_event_header h;
	uint32_t pair[2];

	memset(s, 0, sizeof(*s));
	if (sample_type & ~(uint64_t)KNOWN_SAMPLE_TYPES)
		return -1;
	if (take(&c, &h, sizeof(h)) || h.type != PERF_RECORD_SAMPLE || h.size != size)
		return -1;
	s->misc = h.misc;
	if ((sample_type & PERF_SAMPLE_IDENTIFIER) && take_u64(&c, &s->id))
		return -1;
	if ((sample_type & PERF_SAMPLE_IP) && take_u64(&c, &s->ip))
		return -1;
	if (sample_type & PERF_SAMPLE_TID) {
		if (take(&c, pair, sizeof(pair)))
			return -1;
		s->pid = pair[0];
		s->tid = pair[1];
	}
	if ((sample_type & PERF_SAMPLE_TIME) && take_u64(&c, &s->time))
		return -1;
	if ((sample_type & PERF_SAMPLE_ADDR) && take_u64(&c, &s->addr))
		return -1;
	if ((sample_type & PERF_SAMPLE_ID) && take_u64(&c, &s->id))
		return -1;
	if ((sample_type & PERF_SAMPLE_STREAM_ID) && take(&c, NULL, 8))
		return -1;
	if (sample_type & PERF_SAMPLE_CPU) {
		if (take(&c, pair, sizeof(pair)))
			return -1;
		s->cpu = pair[0];
	}
	if ((sample_type & PERF_SAMPLE_PERIOD) && take_u64(&c, &s->period))
		return -1;
	if (sample_type & PERF_SAMPLE_CALLCHAIN) {
		if (take_u64(&c, &s->n_callchain) ||
		    s->n_callchain > (uint64_t)(c.end - c.p) / sizeof(uint64_t))
			return -1;
		s->callchain = c.p; /* unaligned-safe: read with layout_perf_callchain_at */
		c.p += s->n_callchain * sizeof(uint64_t);
	}
	if (sample_type & PERF_SAMPLE_RAW) {
		if (take(&c, &s->raw_size, sizeof(s->raw_size)) ||
		    s->raw_size > (size_t)(c.end - c.p))
			return -1;
		s->raw = c.p;
		c.p += s->raw_size;
	}
	if ((sample_type & PERF_SAMPLE_REGS_USER) && take_regs(&c, regs_mask, s))
		return -1;
	if ((sample_type & PERF_SAMPLE_WEIGHT) && take_u64(&c, &s->weight))
		return -1;
	if ((sample_type & PERF_SAMPLE_DATA_SRC) && take_u64(&c, &s->data_src))
		return -1;
	/* the kernel pads records to 8 bytes; anything longer is not ours */
	return (size_t)(c.end - c.p) < 8 ? 0 : -1;
}

uint64_t layout_perf_callchain_at(const struct layout_perf_sample *s, uint64_t i)
{
	uint64_t v;

	memcpy(&v, (const unsigned char *)s->callchain + i * sizeof(v), sizeof(v));
	return v;
}

int layout_perf_record_time(const void *record, size_t size, uint64_t sample_type, uint64_t *time)
{
	size_t trailer = 0, at;

	/* sample_id: { pid, tid } { time } { id } { stream_id } { cpu, res } { id } */
	if (!(sample_type & PERF_SAMPLE_TIME))
		return -1;
	trailer += 8; /* time */
	if (sample_type & PERF_SAMPLE_TID)
		trailer += 8;
	if (sample_type & PERF_SAMPLE_ID)
		trailer += 8;
	if (sample_type & PERF_SAMPLE_STREAM_ID)
		trailer += 8;
	if (sample_type & PERF_SAMPLE_CPU)
		trailer += 8;
	if (sample_type & PERF_SAMPLE_IDENTIFIER)
		trailer += 8;
	if (size < sizeof(struct perf_event_header) + trailer)
		return -1;
	at = size - trailer + ((sample_type & PERF_SAMPLE_TID) ? 8 : 0);
	memcpy(time, (const unsigned char *)record + at, sizeof(*time));
	return 0;
}

long layout_perf_ring_read(const unsigned char *data, uint64_t data_size, uint64_t *tail,
			   uint64_t head, unsigned char *scratch,
			   int (*fn)(const struct perf_event_header *h, void *ctx), void *ctx)
{
	long n = 0;

	/* data_size is a power of two: positions wrap with a mask */
	if (!data_size || (data_size & (data_size - 1)) || head - *tail > data_size)
		return -1;
	while (*tail < head) {
		uint64_t at = *tail & (data_size - 1), left = head - *tail;
		struct perf_event_header h;
		const struct perf_event_header *rec;

		if (left < sizeof(h))
			return -1;
		/* the header itself may wrap */
		for (size_t i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] = data[(at + i) & (data_size - 1)];
		if (h.size < sizeof(h) || h.size > left)
			return -1;
		if (at + h.size <= data_size) {
			rec = (const void *)(data + at);
		} else {
			uint64_t first = data_size - at;

			memcpy(scratch, data + at, first);
			memcpy(scratch + first, data, h.size - first);
			rec = (const void *)scratch;
		}
		*tail += h.size;
		n++;
		if (fn(rec, ctx))
			return -1;
	}
	return n;
}
