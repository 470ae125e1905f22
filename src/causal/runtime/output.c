/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The profile writer: Coz's legacy tab-separated format (doc/formats/profile.md),
 * appended to the output file. Only the profiler thread (and shutdown, after
 * the profiler thread has stopped) writes; records are buffered per
 * experiment and written with one write(2) of whole records, so a crash loses
 * at most the experiment in flight, and runs appending to one file at once
 * interleave whole records only.
 *
 * Three ways a profile could be lost without a word, and what is done here:
 * - The program closes the descriptor (daemons close every inherited one)
 *   and reuses its number for a file of its own: before each write the
 *   descriptor is checked (fstat: same device and inode as the profile
 *   opened); if it is not the profile any more it is left to the program and
 *   the profile is opened again by its absolute path.
 * - Several runs append to one file: every record carries the run's tag
 *   (run=PID-NS), so the reader sorts records into runs wherever they lie.
 * - A write fails (full disk, /dev/full): one line on stderr at once, no
 *   further writes (the file keeps the whole records written before, and at
 *   most one cut record, which the reader drops), and output_failed() makes
 *   the runtime turn a successful exit status into a failure.
 * Everything here is a plain system call after output_open: _exit may run it
 * from a signal handler.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "causal/runtime/fd_guard.h"
#include "causal/runtime/output.h"
#include "causal/runtime/runtime.h"

static int out_fd = -1;
static dev_t out_dev;
static ino_t out_ino;
static char out_path[PATH_MAX]; /* absolute: the program may chdir */
static char run_tag[64];	/* "<TAB>run=PID-NS" */
static _Atomic int failed;
static char buffer[1 << 16];
static size_t used;

static void report_failure(const char *what, int err)
{
	if (atomic_exchange(&failed, 1))
		return;
	LOG_WARN("cannot %s the profile %s: %s; the profile is incomplete, and a successful "
		 "exit of the program will return status %d\n",
		 what, out_path, strerror(err), OUTPUT_EXIT_FAILED);
}

bool output_failed(void)
{
	return atomic_load(&failed) != 0;
}

static void remember_path(const char *path)
{
	char cwd[PATH_MAX];

	if (path[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		str_copy(out_path, path, sizeof(out_path));
	else
		fmt_buffer(out_path, sizeof(out_path), "%s/%s", cwd, path);
}

/* Open out_path and remember which file it is; -1 (errno set) on failure. */
static int open_profile(void)
{
	struct stat st;
	int fd = open(out_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	out_dev = st.st_dev;
	out_ino = st.st_ino;
	return fd;
}

static void set_profile_fd(int fd)
{
	out_fd = fd;
	if (fd >= 0)
		fd_guard_protect(&out_fd);
}

bool output_open(const char *path)
{
	atomic_store(&failed, 0);
	used = 0;
	remember_path(path);
	fmt_buffer(run_tag, sizeof(run_tag), PROFILE_FIELD(PROFILE_KEY_RUN) "%d-%llu",
		   (int)getpid(), (unsigned long long)time_realtime_ns());
	set_profile_fd(open_profile());
	if (out_fd < 0) {
		LOG_WARN("cannot open profile %s: %s; profiling disabled\n", out_path,
			 strerror(errno));
		atomic_store(&failed, 1);
		return false;
	}
	return true;
}

/* Whether out_fd still is the profile: the program may have closed it and reused the number. */
static bool fd_is_profile(int fd)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == out_dev && st.st_ino == out_ino;
}

/* The profile's descriptor, opened again if the program took ours; -1 if none. */
static int profile_fd(void)
{
	if (out_fd < 0 || fd_is_profile(out_fd))
		return out_fd;
	/* never close that number: it is the program's now */
	set_profile_fd(open_profile());
	if (out_fd < 0)
		report_failure("reopen", errno);
	else if (rt.cfg.verbose)
		LOG_INFO("the program closed the profile's descriptor; reopened %s\n", out_path);
	return out_fd;
}

void output_flush(void)
{
	size_t done = 0;
	int fd = output_failed() ? -1 : profile_fd();

	while (fd >= 0 && done < used) {
		ssize_t n = write(fd, buffer + done, used - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* stop here: later records after a hole would read as whole */
			report_failure("write", n < 0 ? errno : ENOSPC);
			break;
		}
		done += (size_t)n;
	}
	used = 0;
}

/* Append the run tag before the record's end of line. */
static void queue_record(const char *line, size_t len)
{
	size_t end = strlen(PROFILE_END_OF_RECORD);
	size_t tag = strlen(run_tag);

	if (len >= end && memcmp(line + len - end, PROFILE_END_OF_RECORD, end) == 0)
		len -= end;
	else
		end = 0;
	if (len + tag + end > sizeof(buffer))
		len = sizeof(buffer) - tag - end; /* cannot happen: records are < 8 KiB */
	memcpy(buffer + used, line, len);
	memcpy(buffer + used + len, run_tag, tag);
	memcpy(buffer + used + len + tag, PROFILE_END_OF_RECORD, end);
	used += len + tag + end;
}

void output_line(const char *line)
{
	size_t len = strlen(line);

	if (used + len + sizeof(run_tag) > sizeof(buffer))
		output_flush();
	queue_record(line, len);
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
	if (fd_is_profile(out_fd) && close(out_fd) < 0 && errno != EINTR)
		report_failure("close", errno);
	out_fd = -1;
}

/*
 * After fork, the child must not write into the parent's buffer or file, nor
 * inherit its failure: its exit status is its own.
 */
void output_forget(void)
{
	used = 0;
	if (fd_is_profile(out_fd))
		close(out_fd);
	out_fd = -1;
	atomic_store(&failed, 0);
}
