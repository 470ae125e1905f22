/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What liblever-annotate.so interposes (exported, everything else is hidden):
 *
 * - dlopen: the plan's functions in a library loaded later are patched
 *   before dlopen returns it (spec/freud.md §7.5 (a)-(b)).
 * - exec*, _exit, _Exit: buffered lines are written first.
 * - C++ exceptions (§7.5 "exit hook"): the unwinder must never meet the exit
 *   trampoline, which has no CFI. When an exception is raised (or rethrown,
 *   or a thread is force-unwound) every return address this thread replaced
 *   is put back; when it is caught, __cxa_begin_catch re-arms the calls still
 *   alive above the catching frame and drops the others (not recorded). The
 *   same restore and re-arm brackets _Unwind_Backtrace (backtrace(3)).
 *   Chosen over CFI for the trampoline because the real return address lives
 *   on the shadow stack, where no CFI expression of the trampoline's frame
 *   can reach it.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>
#include <unwind.h>

#include "annotate/runtime/runtime.h"
#include "annotate/runtime/shadow.h"

#define EXPORT __attribute__((visibility("default")))

bool ann_active(void);

static void *next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

EXPORT void *dlopen(const char *file, int mode)
{
	static void *(*real)(const char *, int);
	void *h;

	if (!real)
		real = (void *(*)(const char *, int))next("dlopen");
	h = real(file, mode);
	if (h && ann_active())
		ann_install_probes();
	return h;
}

/* ------------------------------------------------------------ exec and _exit */

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	static int (*real)(const char *, char *const[], char *const[]);
	int ret;

	if (!real)
		real = (int (*)(const char *, char *const[], char *const[]))next("execve");
	ann_output_flush_paused();
	ret = real(path, argv, envp);
	ann_output_resume(); /* it failed */
	return ret;
}

EXPORT int execv(const char *path, char *const argv[])
{
	static int (*real)(const char *, char *const[]);
	int ret;

	if (!real)
		real = (int (*)(const char *, char *const[]))next("execv");
	ann_output_flush_paused();
	ret = real(path, argv);
	ann_output_resume(); /* it failed */
	return ret;
}

EXPORT int execvp(const char *file, char *const argv[])
{
	static int (*real)(const char *, char *const[]);
	int ret;

	if (!real)
		real = (int (*)(const char *, char *const[]))next("execvp");
	ann_output_flush_paused();
	ret = real(file, argv);
	ann_output_resume(); /* it failed */
	return ret;
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	static int (*real)(const char *, char *const[], char *const[]);
	int ret;

	if (!real)
		real = (int (*)(const char *, char *const[], char *const[]))next("execvpe");
	ann_output_flush_paused();
	ret = real(file, argv, envp);
	ann_output_resume(); /* it failed */
	return ret;
}

/* execl, execlp, execle: their arguments as a vector, then the v-forms above. */
#define COLLECT_ARGS(arg0, ap, argv, extra)                                                        \
	do {                                                                                       \
		size_t n_ = 1;                                                                     \
		va_list c_;                                                                        \
		va_copy(c_, ap);                                                                   \
		while (va_arg(c_, char *))                                                         \
			n_++;                                                                      \
		va_end(c_);                                                                        \
		argv = alloca((n_ + 1) * sizeof(char *));                                          \
		argv[0] = (char *)(arg0);                                                          \
		for (size_t i_ = 1; i_ <= n_; i_++)                                                \
			argv[i_] = va_arg(ap, char *);                                             \
		extra;                                                                             \
	} while (0)

EXPORT int execl(const char *path, const char *arg, ...)
{
	char **argv;
	va_list ap;

	va_start(ap, arg);
	COLLECT_ARGS(arg, ap, argv, (void)0);
	va_end(ap);
	return execv(path, argv);
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
	char **argv;
	va_list ap;

	va_start(ap, arg);
	COLLECT_ARGS(arg, ap, argv, (void)0);
	va_end(ap);
	return execvp(file, argv);
}

EXPORT int execle(const char *path, const char *arg, ...)
{
	char **argv, **envp;
	va_list ap;

	va_start(ap, arg);
	COLLECT_ARGS(arg, ap, argv, envp = va_arg(ap, char **));
	va_end(ap);
	return execve(path, argv, envp);
}

EXPORT void _exit(int status)
{
	static void (*real)(int);

	if (!real)
		real = (void (*)(int))next("_exit");
	ann_output_flush_paused();
	real(status);
	__builtin_unreachable();
}

EXPORT void _Exit(int status)
{
	_exit(status);
}

/* ------------------------------------------------------------ exceptions */

EXPORT _Unwind_Reason_Code _Unwind_RaiseException(struct _Unwind_Exception *e)
{
	static _Unwind_Reason_Code (*real)(struct _Unwind_Exception *);

	if (!real)
		real = (_Unwind_Reason_Code(*)(struct _Unwind_Exception *))next(
		    "_Unwind_RaiseException");
	ann_shadow_restore_all();
	return real(e);
}

EXPORT _Unwind_Reason_Code _Unwind_Resume_or_Rethrow(struct _Unwind_Exception *e)
{
	static _Unwind_Reason_Code (*real)(struct _Unwind_Exception *);

	if (!real)
		real = (_Unwind_Reason_Code(*)(struct _Unwind_Exception *))next(
		    "_Unwind_Resume_or_Rethrow");
	ann_shadow_restore_all();
	return real(e);
}

EXPORT _Unwind_Reason_Code _Unwind_ForcedUnwind(struct _Unwind_Exception *e, _Unwind_Stop_Fn stop,
						void *arg)
{
	static _Unwind_Reason_Code (*real)(struct _Unwind_Exception *, _Unwind_Stop_Fn, void *);

	if (!real)
		real = (_Unwind_Reason_Code(*)(struct _Unwind_Exception *, _Unwind_Stop_Fn,
					       void *))next("_Unwind_ForcedUnwind");
	ann_shadow_restore_all();
	return real(e, stop, arg);
}

EXPORT _Unwind_Reason_Code _Unwind_Backtrace(_Unwind_Trace_Fn fn, void *arg)
{
	static _Unwind_Reason_Code (*real)(_Unwind_Trace_Fn, void *);
	_Unwind_Reason_Code rc;

	if (!real)
		real = (_Unwind_Reason_Code(*)(_Unwind_Trace_Fn, void *))next("_Unwind_Backtrace");
	ann_shadow_restore_all();
	rc = real(fn, arg);
	ann_shadow_rearm(0);
	return rc;
}

/* The catching frame calls this: frames below its stack pointer are gone. */
EXPORT void *__cxa_begin_catch(void *exception)
{
	static void *(*real)(void *);

	if (!real)
		real = (void *(*)(void *))next("__cxa_begin_catch");
	ann_shadow_rearm((uintptr_t)__builtin_dwarf_cfa());
	return real(exception);
}
