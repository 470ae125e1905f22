/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A tiny printf for runtimes: stdio is neither async-signal-safe nor safe to
 * call while the profiled program may hold its locks.
 */
#include "base/base.h"

#include <unistd.h>

struct out {
	char *buf;
	size_t size;
	size_t len;
};

static void put_char(struct out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

static void put_str(struct out *o, const char *s)
{
	if (!s)
		s = "(null)";
	while (*s)
		put_char(o, *s++);
}

/* Zero- or space-padded to width (the '0' flag and a width are supported). */
static void put_number(struct out *o, bool negative, unsigned long long v, unsigned base, int width,
		       bool zero_pad)
{
	char tmp[32];
	int n = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	width -= n + (negative ? 1 : 0);
	if (negative && zero_pad)
		put_char(o, '-');
	while (width-- > 0)
		put_char(o, zero_pad ? '0' : ' ');
	if (negative && !zero_pad)
		put_char(o, '-');
	while (n)
		put_char(o, tmp[--n]);
}

static void put_signed(struct out *o, long long v, int width, bool zero_pad)
{
	if (v < 0)
		put_number(o, true, 0ULL - (unsigned long long)v, 10, width, zero_pad);
	else
		put_number(o, false, (unsigned long long)v, 10, width, zero_pad);
}

int vfmt_buffer(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct out o = {buf, size, 0};

	for (; *fmt; fmt++) {
		int longs = 0;
		int size_t_arg = 0;
		int width = 0;
		bool zero_pad = false;

		if (*fmt != '%') {
			put_char(&o, *fmt);
			continue;
		}
		fmt++;
		if (*fmt == '0') {
			zero_pad = true;
			fmt++;
		}
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (*fmt++ - '0');
		while (*fmt == 'l') {
			longs++;
			fmt++;
		}
		if (*fmt == 'z') {
			size_t_arg = 1;
			fmt++;
		}
		switch (*fmt) {
		case 's':
			put_str(&o, va_arg(ap, const char *));
			break;
		case 'c':
			put_char(&o, (char)va_arg(ap, int));
			break;
		case 'd':
		case 'i':
			if (longs >= 2)
				put_signed(&o, va_arg(ap, long long), width, zero_pad);
			else if (longs == 1 || size_t_arg)
				put_signed(&o, va_arg(ap, long), width, zero_pad);
			else
				put_signed(&o, va_arg(ap, int), width, zero_pad);
			break;
		case 'u':
		case 'x': {
			unsigned base = *fmt == 'x' ? 16 : 10;
			unsigned long long v;

			if (longs >= 2)
				v = va_arg(ap, unsigned long long);
			else if (longs == 1 || size_t_arg)
				v = va_arg(ap, unsigned long);
			else
				v = va_arg(ap, unsigned int);
			put_number(&o, false, v, base, width, zero_pad);
			break;
		}
		case 'p':
			put_str(&o, "0x");
			put_number(&o, false, (unsigned long)va_arg(ap, void *), 16, 0, false);
			break;
		case '%':
			put_char(&o, '%');
			break;
		case '\0':
			fmt--;
			break;
		default:
			put_char(&o, '%');
			put_char(&o, *fmt);
			break;
		}
	}
	if (size)
		buf[o.len < size ? o.len : size - 1] = '\0';
	return (int)o.len;
}

int fmt_buffer(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vfmt_buffer(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

void fd_printf(int fd, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vfmt_buffer(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 1)
		n = sizeof(buf) - 1;
	while (n > 0) {
		ssize_t w = write(fd, buf, (size_t)n);

		if (w <= 0)
			break;
		n -= (int)w;
	}
}
