/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The collector of `lever layout record` on synthetic bytes (issue 17): the
 * PMU path cannot run on machines without one, so what it reads is built
 * here by hand — PERF_RECORD_SAMPLE with every sample type the pmu and
 * clock sources ask for (data address, data source, weight, registers,
 * call chain, raw), the sample_id trailer, a ring buffer whose records wrap
 * its end, and a sysfs PMU tree (mem-loads with ldlat, split bit ranges).
 * Then the clock source's decoding: memory operands, effective addresses
 * from registers (and when the registers cannot tell), and the previous
 * instruction found from a function's start.
 */
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "layout/layout.h"

/* ------------------------------------------------------------ building records */

struct bytes {
	unsigned char b[1024];
	size_t n;
};

static void put(struct bytes *x, const void *p, size_t n)
{
	assert_true(x->n + n <= sizeof(x->b));
	memcpy(x->b + x->n, p, n);
	x->n += n;
}

static void put_u64(struct bytes *x, uint64_t v)
{
	put(x, &v, 8);
}

static void put_u32_pair(struct bytes *x, uint32_t a, uint32_t b)
{
	put(x, &a, 4);
	put(x, &b, 4);
}

static void finish(struct bytes *x, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = {.type = type, .misc = misc, .size = (uint16_t)x->n};

	memcpy(x->b, &h, sizeof(h));
}

#define PMU_TYPE                                                                                   \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |            \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |         \
	 PERF_SAMPLE_RAW | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC)

/* A PEBS load sample as the kernel lays it out, in sample_type order. */
static void pmu_sample(struct bytes *x)
{
	uint32_t raw_size = 12;
	unsigned char raw[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

	x->n = sizeof(struct perf_event_header);
	put_u64(x, 77);		       /* IDENTIFIER */
	put_u64(x, 0x55550000128aull); /* IP */
	put_u32_pair(x, 4242, 4243);   /* TID */
	put_u64(x, 123456789);	       /* TIME */
	put_u64(x, 0x7f0000001070ull); /* ADDR */
	put_u32_pair(x, 1, 0);	       /* CPU */
	put_u64(x, 2003);	       /* PERIOD */
	put_u64(x, 2);		       /* CALLCHAIN nr */
	put_u64(x, 0x55550000128aull); /* ... ips */
	put_u64(x, 0x555500001111ull); /*     */
	put(x, &raw_size, 4);	       /* RAW size */
	put(x, raw, raw_size);	       /* ... data (4 + 12: 8-aligned) */
	put_u64(x, 187);	       /* WEIGHT: cycles of latency */
	put_u64(x, PERF_MEM_OP_LOAD | (PERF_MEM_LVL_L3 << PERF_MEM_LVL_SHIFT)); /* DATA_SRC */
	finish(x, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
}

static void test_parse_pmu_sample(void **state)
{
	struct layout_perf_sample s;
	struct bytes x;

	(void)state;
	pmu_sample(&x);
	assert_int_equal(layout_perf_parse_sample(x.b, x.n, PMU_TYPE, 0, &s), 0);
	assert_int_equal(s.id, 77);
	assert_int_equal(s.ip, 0x55550000128aull);
	assert_int_equal(s.pid, 4242);
	assert_int_equal(s.tid, 4243);
	assert_int_equal(s.time, 123456789);
	assert_int_equal(s.addr, 0x7f0000001070ull);
	assert_int_equal(s.cpu, 1);
	assert_int_equal(s.period, 2003);
	assert_int_equal(s.n_callchain, 2);
	assert_int_equal(layout_perf_callchain_at(&s, 1), 0x555500001111ull);
	assert_int_equal(s.raw_size, 12);
	assert_int_equal(((const unsigned char *)s.raw)[11], 12);
	assert_int_equal(s.weight, 187);
	assert_int_equal(s.data_src & 0x1f, PERF_MEM_OP_LOAD);
	assert_int_equal(s.misc, PERF_RECORD_MISC_USER);

	/* every truncation is refused, never read past */
	for (size_t n = 8; n < x.n; n += 8) {
		struct bytes y = x;

		y.n = n;
		finish(&y, PERF_RECORD_SAMPLE, 0);
		assert_int_equal(layout_perf_parse_sample(y.b, y.n, PMU_TYPE, 0, &s), -1);
	}
	/* a call chain longer than the record */
	{
		struct bytes y = x;
		uint64_t huge = 1u << 20;

		memcpy(y.b + 8 + 7 * 8, &huge, 8);
		assert_int_equal(layout_perf_parse_sample(y.b, y.n, PMU_TYPE, 0, &s), -1);
	}
	/* sample types this parser does not know, a size that is not the header's */
	assert_int_equal(layout_perf_parse_sample(x.b, x.n, PMU_TYPE | PERF_SAMPLE_READ, 0, &s),
			 -1);
	assert_int_equal(layout_perf_parse_sample(x.b, x.n - 8, PMU_TYPE, 0, &s), -1);
	/* bytes left over mean the layout was misread */
	assert_int_equal(
	    layout_perf_parse_sample(x.b, x.n, PMU_TYPE & ~PERF_SAMPLE_DATA_SRC, 0, &s), -1);
}

#define CLOCK_TYPE (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER)

static void test_parse_clock_sample_registers(void **state)
{
	struct layout_perf_sample s;
	struct bytes x = {.n = sizeof(struct perf_event_header)};
	uint64_t mask = LAYOUT_PERF_REGS_GENERAL;

	(void)state;
	put_u64(&x, 0x401004);
	put_u32_pair(&x, 10, 11);
	put_u64(&x, 99);
	put_u64(&x, PERF_SAMPLE_REGS_ABI_64);
	/* the registers in mask order: AX..IP (0-8), then R8..R15 (16-23) */
	for (unsigned r = 0; r < 24; r++)
		if (mask & (1ull << r))
			put_u64(&x, 0x1000 + r);
	finish(&x, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	assert_int_equal(layout_perf_parse_sample(x.b, x.n, CLOCK_TYPE, mask, &s), 0);
	assert_int_equal(s.regs_valid, mask);
	assert_int_equal(s.regs[LAYOUT_PERF_REG_AX], 0x1000);
	assert_int_equal(s.regs[LAYOUT_PERF_REG_IP], 0x1008);
	assert_int_equal(s.regs[LAYOUT_PERF_REG_R8], 0x1010);
	assert_int_equal(s.regs[LAYOUT_PERF_REG_R8 + 7], 0x1017);
	assert_int_equal(s.regs[9], 0); /* flags were not asked for */

	/* ABI_NONE (a kernel thread): no registers follow */
	x.n = sizeof(struct perf_event_header);
	put_u64(&x, 0x401004);
	put_u32_pair(&x, 10, 11);
	put_u64(&x, 99);
	put_u64(&x, PERF_SAMPLE_REGS_ABI_NONE);
	finish(&x, PERF_RECORD_SAMPLE, 0);
	assert_int_equal(layout_perf_parse_sample(x.b, x.n, CLOCK_TYPE, mask, &s), 0);
	assert_int_equal(s.regs_valid, 0);
}

static void test_record_time_from_trailer(void **state)
{
	struct bytes x = {.n = sizeof(struct perf_event_header)};
	uint64_t t = 0;

	(void)state;
	/* a COMM record: pid, tid, "prog\0" padded, then sample_id {pid,tid} {time} */
	put_u32_pair(&x, 5, 5);
	put(&x, "prog\0\0\0\0", 8);
	put_u32_pair(&x, 5, 5);
	put_u64(&x, 0xabcdef);
	finish(&x, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	assert_int_equal(layout_perf_record_time(x.b, x.n, CLOCK_TYPE, &t), 0);
	assert_int_equal(t, 0xabcdef);
	assert_int_equal(layout_perf_record_time(x.b, x.n, PERF_SAMPLE_IP, &t), -1);
	assert_int_equal(layout_perf_record_time(x.b, 12, CLOCK_TYPE, &t), -1);
}

/* ------------------------------------------------------------ the ring */

struct seen {
	size_t n;
	uint64_t ips[16];
};

static int collect_ip(const struct perf_event_header *h, void *ctx)
{
	struct seen *s = ctx;
	struct layout_perf_sample p;

	assert_int_equal(layout_perf_parse_sample(h, h->size, PERF_SAMPLE_IP, 0, &p), 0);
	s->ips[s->n++] = p.ip;
	return 0;
}

static void test_ring_records_that_wrap(void **state)
{
	/* 64 bytes of ring; 16-byte records starting at 56 wrap the end in their header */
	unsigned char ring[64], scratch[1 << 16];
	struct seen seen = {0};
	uint64_t tail = 56, head = 56;

	(void)state;
	memset(ring, 0xee, sizeof(ring));
	for (uint64_t k = 0; k < 3; k++) {
		struct bytes x = {.n = sizeof(struct perf_event_header)};

		put_u64(&x, 0x1000 + k);
		finish(&x, PERF_RECORD_SAMPLE, 0);
		for (size_t i = 0; i < x.n; i++)
			ring[(head + i) & 63] = x.b[i];
		head += x.n;
	}
	assert_int_equal(
	    layout_perf_ring_read(ring, sizeof(ring), &tail, head, scratch, collect_ip, &seen), 3);
	assert_int_equal(tail, head);
	assert_int_equal(seen.n, 3);
	assert_int_equal(seen.ips[0], 0x1000);
	assert_int_equal(seen.ips[1], 0x1001);
	assert_int_equal(seen.ips[2], 0x1002);

	/* a header whose size runs past head, or is smaller than a header, is refused */
	tail = 0;
	{
		struct perf_event_header h = {.type = PERF_RECORD_SAMPLE, .size = 40};

		memcpy(ring, &h, sizeof(h));
		assert_int_equal(layout_perf_ring_read(ring, sizeof(ring), &tail, 16, scratch,
						       collect_ip, &seen),
				 -1);
		h.size = 4;
		memcpy(ring, &h, sizeof(h));
		tail = 0;
		assert_int_equal(layout_perf_ring_read(ring, sizeof(ring), &tail, 16, scratch,
						       collect_ip, &seen),
				 -1);
	}
	/* a data size that is not a power of two, or more unread than the ring holds */
	tail = 0;
	assert_int_equal(layout_perf_ring_read(ring, 48, &tail, 16, scratch, collect_ip, &seen),
			 -1);
	assert_int_equal(layout_perf_ring_read(ring, 64, &tail, 72, scratch, collect_ip, &seen),
			 -1);
}

/* ------------------------------------------------------------ sysfs PMU events */

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_pmu_events_from_sysfs(void **state)
{
	char root[] = "/tmp/lever-pmu-XXXXXX", cpu[600], sub[700];
	struct perf_event_attr a;
	char err[512];

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(cpu, sizeof(cpu), "%s/cpu", root);
	assert_int_equal(mkdir(cpu, 0700), 0);
	snprintf(sub, sizeof(sub), "%s/events", cpu);
	assert_int_equal(mkdir(sub, 0700), 0);
	snprintf(sub, sizeof(sub), "%s/format", cpu);
	assert_int_equal(mkdir(sub, 0700), 0);
	write_file(cpu, "type", "4\n");
	/* Skylake's sysfs, as perf mem reads it */
	write_file(cpu, "events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
	write_file(cpu, "events/mem-stores", "event=0xd0,umask=0x82\n");
	write_file(cpu, "events/split", "wide=0x1ff\n");
	write_file(cpu, "events/bad", "nosuch=1\n");
	write_file(cpu, "format/event", "config:0-7\n");
	write_file(cpu, "format/umask", "config:8-15\n");
	write_file(cpu, "format/ldlat", "config1:0-15\n");
	write_file(cpu, "format/wide", "config:0-3,32-36\n");
	write_file(cpu, "format/flag", "config2:63\n");

	memset(&a, 0, sizeof(a));
	assert_int_equal(layout_pmu_event_attr(cpu, "mem-loads", NULL, &a, err, sizeof(err)), 0);
	assert_int_equal(a.type, 4);
	assert_int_equal(a.config, 0x1cd);
	assert_int_equal(a.config1, 3);
	/* the user's ldlat replaces the event's */
	assert_int_equal(
	    layout_pmu_event_attr(cpu, "mem-loads", "ldlat=30,flag", &a, err, sizeof(err)), 0);
	assert_int_equal(a.config1, 30);
	assert_int_equal(a.config2, 1ull << 63);
	assert_int_equal(layout_pmu_event_attr(cpu, "mem-stores", NULL, &a, err, sizeof(err)), 0);
	assert_int_equal(a.config, 0x82d0);
	assert_int_equal(a.config1, 0); /* nothing left over from mem-loads */
	/* 0x1ff over bits 0-3 then 32-36: 0xf low, 0x1f high */
	assert_int_equal(layout_pmu_event_attr(cpu, "split", NULL, &a, err, sizeof(err)), 0);
	assert_int_equal(a.config, 0xfull | (0x1full << 32));
	/* errors say what is missing */
	assert_int_equal(
	    layout_pmu_event_attr(cpu, "mem-loads", "ldlat=70000", &a, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "does not fit"));
	assert_int_equal(layout_pmu_event_attr(cpu, "bad", NULL, &a, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no format for term 'nosuch'"));
	assert_int_equal(layout_pmu_event_attr(cpu, "nope", NULL, &a, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no event nope"));
	snprintf(sub, sizeof(sub), "%s/ibs_op", root);
	assert_int_equal(layout_pmu_event_attr(sub, NULL, NULL, &a, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no such PMU"));

	snprintf(sub, sizeof(sub), "rm -rf '%s'", root);
	assert_int_equal(system(sub), 0);
}

/* ------------------------------------------------------------ decoding */

static void decode(struct layout_decoder *d, const char *bytes, size_t n, uint64_t at,
		   struct layout_mem_operand *op)
{
	assert_int_equal(layout_decode_memory(d, (const uint8_t *)bytes, n, at, op), 0);
	assert_int_equal(op->length, n);
}

static void test_effective_addresses(void **state)
{
	struct layout_decoder *d = layout_decoder_new();
	struct layout_mem_operand op;
	uint64_t regs[LAYOUT_PERF_REGS] = {0}, all = LAYOUT_PERF_REGS_GENERAL, ea = 0;

	(void)state;
	assert_non_null(d);
	regs[LAYOUT_PERF_REG_DI] = 0x7f0000001000ull;
	regs[LAYOUT_PERF_REG_AX] = 0x40;
	regs[LAYOUT_PERF_REG_R8 + 4] = 0x300; /* r12 */

	/* add 0x30(%rdi,%rax,1),%rsi: record_hot's load of `hot` */
	decode(d, "\x48\x03\x74\x07\x30", 5, 0x128a, &op);
	assert_true(op.has_memory && op.read && !op.write);
	assert_int_equal(op.size, 8);
	assert_int_equal(layout_effective_address(&op, 0x128a, regs, all, &ea), 0);
	assert_int_equal(ea, 0x7f0000001070ull);
	/* without the index register sampled, no address */
	assert_int_equal(layout_effective_address(&op, 0x128a, regs, all & ~1ull, &ea), -1);

	/* mov %rsi,0x8(%rdi,%r12,8): a store, scaled index */
	decode(d, "\x4a\x89\x74\xe7\x08", 5, 0, &op);
	assert_true(op.write && !op.read);
	assert_int_equal(layout_effective_address(&op, 0, regs, all, &ea), 0);
	assert_int_equal(ea, 0x7f0000001000ull + 0x300 * 8 + 8);

	/* mov 0x30(%rax),%rax: a pointer chase overwrites its base; never guessed */
	decode(d, "\x48\x8b\x40\x30", 4, 0, &op);
	assert_true(op.has_memory && op.clobbers_address);
	assert_int_equal(layout_effective_address(&op, 0, regs, all, &ea), -1);
	/* mov 0x30(%rax),%eax overwrites it too (a 32-bit write clears the top) */
	decode(d, "\x8b\x40\x30", 3, 0, &op);
	assert_true(op.clobbers_address);

	/* mov 0x10(%rip),%rax at 0x400000: after the instruction (7 bytes) */
	decode(d, "\x48\x8b\x05\x10\x00\x00\x00", 7, 0x400000, &op);
	assert_int_equal(op.base, LAYOUT_MEM_BASE_RIP);
	assert_int_equal(layout_effective_address(&op, 0x555555400000ull, regs, all, &ea), 0);
	assert_int_equal(ea, 0x555555400017ull);

	/* mov %fs:0x28,%rax: thread-local, the segment base is not sampled */
	decode(d, "\x64\x48\x8b\x04\x25\x28\x00\x00\x00", 9, 0, &op);
	assert_true(op.has_memory);
	assert_int_equal(op.segment, 1);
	assert_int_equal(layout_effective_address(&op, 0, regs, all, &ea), -1);

	/* mov (%eax),%ecx with an address-size prefix: 32-bit address */
	regs[LAYOUT_PERF_REG_AX] = 0xffffffff00000040ull;
	decode(d, "\x67\x8b\x08", 3, 0, &op);
	assert_int_equal(layout_effective_address(&op, 0, regs, all, &ea), 0);
	assert_int_equal(ea, 0x40);

	/* lea, nop with a memory form, prefetch: no data access */
	decode(d, "\x48\x8d\x47\x30", 4, 0, &op);
	assert_false(op.has_memory);
	decode(d, "\x0f\x1f\x44\x00\x00", 5, 0, &op);
	assert_false(op.has_memory);
	decode(d, "\x0f\x18\x0f", 3, 0, &op);
	assert_false(op.has_memory);
	/* sub $1,%rcx: none */
	decode(d, "\x48\x83\xe9\x01", 4, 0, &op);
	assert_false(op.has_memory);
	/* an invalid opcode */
	assert_int_equal(layout_decode_memory(d, (const uint8_t *)"\x06", 1, 0, &op), -1);
	layout_decoder_free(d);
}

/* A function of known bytes: mov 0x30(%rdi),%rax (4); add $1,%rax (4); ret (1). */
__asm__(".text\n"
	".globl lever_test_probe_code\n"
	".type lever_test_probe_code,@function\n"
	"lever_test_probe_code:\n"
	"  movq 0x30(%rdi),%rax\n"
	"  addq $1,%rax\n"
	"  ret\n"
	".size lever_test_probe_code, .-lever_test_probe_code\n");
extern char lever_test_probe_code[];

static void test_previous_instruction_from_the_binary(void **state)
{
	struct layout_code *c = layout_code_open("/proc/self/exe");
	struct layout_decoder *d = layout_decoder_new();
	struct layout_mem_operand op;
	unsigned long lo = 0, off = 0;
	uint64_t vaddr = 0, prev = 0;
	char line[512], self[512];
	FILE *maps = fopen("/proc/self/maps", "r");
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	(void)state;
	assert_non_null(c);
	assert_non_null(d);
	assert_non_null(maps);
	assert_true(n > 0);
	self[n] = '\0';
	/* the file offset of the probe, from the map that holds it, as the collector does */
	while (fgets(line, sizeof(line), maps)) {
		unsigned long a, b, o;

		if (sscanf(line, "%lx-%lx %*s %lx", &a, &b, &o) == 3 &&
		    (uintptr_t)lever_test_probe_code >= a && (uintptr_t)lever_test_probe_code < b &&
		    strstr(line, self)) {
			lo = a;
			off = o;
		}
	}
	fclose(maps);
	assert_true(lo != 0);
	assert_int_equal(
	    layout_code_offset_to_vaddr(c, (uintptr_t)lever_test_probe_code - lo + off, &vaddr), 0);
	assert_int_equal(layout_code_decode(c, d, vaddr, &op), 0);
	assert_true(op.has_memory && !op.clobbers_address);
	assert_int_equal(op.base, LAYOUT_PERF_REG_DI);
	assert_int_equal(op.disp, 0x30);
	/* the interrupted pc after the load: the previous instruction is the load */
	assert_int_equal(layout_code_previous(c, d, vaddr + 4, &prev), 0);
	assert_int_equal(prev, vaddr);
	assert_int_equal(layout_code_previous(c, d, vaddr + 8, &prev), 0);
	assert_int_equal(prev, vaddr + 4);
	/* a function's first instruction has none in it; the middle of one is no boundary */
	assert_int_equal(layout_code_previous(c, d, vaddr, &prev), -1);
	assert_int_equal(layout_code_previous(c, d, vaddr + 2, &prev), -1);
	assert_true(strlen(layout_code_build_id(c)) >= 2);
	layout_code_free(c);
	layout_decoder_free(d);
	assert_null(layout_code_open("/nonexistent"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_pmu_sample),
	    cmocka_unit_test(test_parse_clock_sample_registers),
	    cmocka_unit_test(test_record_time_from_trailer),
	    cmocka_unit_test(test_ring_records_that_wrap),
	    cmocka_unit_test(test_pmu_events_from_sysfs),
	    cmocka_unit_test(test_effective_addresses),
	    cmocka_unit_test(test_previous_instruction_from_the_binary),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
