/*
 * error_words.c - what an errno means when this library returns it, in words: the errors with a
 * meaning of their own (include/pagemap.h) said for a user, the rest as strerror says them.
 */
#include <errno.h>
#include <string.h>
#include "base.h"

/*
 * strerror's words without its shared buffer: the library's public calls (pm_strerror,
 * pm_features_row, the audit's findings) run in any thread of a program, and strerror is not
 * thread-safe. GNU strerror_r gives the same words (translated as strerror would be), into a
 * buffer of the calling thread, valid until that thread's next call.
 */
const char *pmi_strerror(int err)
{
	static __thread char buf[128];

	return strerror_r(err, buf, sizeof(buf));
}

const char *pm_strerror(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case ESRCH:
		return "the target has no memory any more: it exited or exec'd, or it is a zombie "
		       "or a kernel thread";
	case ENOENT:
		return "no such process or file";
	case EACCES:
		return "not allowed to read the target (another user, not dumpable, an LSM), "
		       "or a root-only file";
	case EPERM:
		return "refused without CAP_SYS_ADMIN (Linux 4.0-4.1 pagemap, hidden frame numbers, "
		       "ptrace)";
	case EOPNOTSUPP:
		return "not supported by this kernel, this privilege level or a replayed root";
	case EBADMSG:
		return "the replayed tree or snapshot is damaged";
	case EDEADLK:
		return "this thread is inside a call that reads the frame files of this context "
		       "already (a signal handler run during it)";
	default:
		return pmi_strerror(err);
	}
}
