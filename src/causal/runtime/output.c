/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The profile writer: Coz's legacy tab-separated format (doc/formats/profile.md),
 * appended to the output file. Only the profiler thread (and shutdown, after
 * the profiler thread has stopped) writes; records are buffered per
 * experiment and written with one write(2), so a crash loses at most the
 * experiment in flight.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "causal/runtime/output.h"
#include "causal/runtime/runtime.h"

static int out_fd = -1;
static char buffer[1 << 16];
static size_t used;

bool output_open(const char *path)
{
	out_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (out_fd < 0) {
		LOG_WARN("cannot open profile %s: %s; profiling disabled\n", path, strerror(errno));
		return false;
	}
	return true;
}

void output_flush(void)
{
	size_t done = 0;

	while (out_fd >= 0 && done < used) {
		ssize_t n = write(out_fd, buffer + done, used - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	used = 0;
}

void output_line(const char *line)
{
	size_t len = strlen(line);

	if (used + len > sizeof(buffer))
		output_flush();
	if (len > sizeof(buffer))
		len = sizeof(buffer);
	memcpy(buffer + used, line, len);
	used += len;
}

void output_emit(const char *line, void *ctx)
{
	output_line(line);
}

void output_printf(const char *fmt, ...)
{
	char line[8192];
	va_list ap;

	va_start(ap, fmt);
	vfmt_buffer(line, sizeof(line), fmt, ap);
	va_end(ap);
	output_line(line);
}

void output_close(void)
{
	output_flush();
	if (out_fd >= 0)
		close(out_fd);
	out_fd = -1;
}

/* After fork, the child must not write into the parent's buffer or file. */
void output_forget(void)
{
	used = 0;
	if (out_fd >= 0)
		close(out_fd);
	out_fd = -1;
}
