/*
 * target_words.c - why a process could not be opened, in words: pm_target_open()'s errno as the
 * error line and the hint a user reads, from what ROOT/proc says of the process now.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "base.h"

/* A process that is gone or has no memory: "cannot open process NAME: why". */
static void no_memory(struct pm_ctx *ctx, pid_t pid, const char *name, int err, char *buf,
		      size_t size)
{
	enum pm_proc_state st = err == ESRCH ? pm_proc_state(ctx, pid) : PM_PROC_GONE;

	snprintf(buf, size, "cannot open process %s: %s", name,
		 err == ENOENT ? "no such process" :
		 st == PM_PROC_KTHREAD ? "it is a kernel thread and has no user memory" :
		 st == PM_PROC_ZOMBIE ? "it is a zombie and has no memory left" :
		 "it exited or has no memory");
}

/* The hint for a refused open: who may read another process's pagemap, on which kernels. */
static const char *refused_hint(int err)
{
	if (err == EPERM)
		return "Linux 4.0 and 4.1 allow pagemap only to readers with CAP_SYS_ADMIN";
	if (err != EACCES)
		return NULL;
	if (geteuid() == 0)
		return "refused to root: a security module (LSM) or a restricted ptrace scope "
		       "forbids it";
	return "reading another user's, or a non-dumpable, process needs root (or CAP_SYS_PTRACE)";
}

/* A replayed tree that lists the process but has no pagemap: a capture not yet unpacked. */
static bool not_unpacked(struct pm_ctx *ctx, pid_t pid, int err)
{
	return err == ENOENT && strcmp(pm_ctx_root(ctx), "/") &&
	       pm_proc_state(ctx, pid) != PM_PROC_GONE;
}

int pm_target_explain(struct pm_ctx *ctx, pid_t pid, const char *name, int err, char *buf,
		      size_t size, const char **hint)
{
	char num[16];

	if (!ctx || !buf || !size || !hint)
		return -EINVAL;
	*hint = NULL;
	if (err < 0)
		err = -err;
	if (!name) {
		snprintf(num, sizeof(num), "%d", (int)pid);
		name = num;
	}
	if (err == EBADMSG && pm_ctx_tree_error(ctx)) {	/* a damaged or hostile tree */
		snprintf(buf, size, "%s", pm_ctx_tree_error(ctx));
	} else if (not_unpacked(ctx, pid, err)) {
		snprintf(buf, size, "cannot open %s/proc/%s/pagemap: %s", pm_ctx_root(ctx), name,
			 pmi_strerror(err));
		*hint = "a capture stores pagemap as pagemap.sparse: "
			"tests/fixtures/unpack makes the tree replayable";
	} else if (err == ENOENT || err == ESRCH) {
		no_memory(ctx, pid, name, err, buf, size);
	} else {
		snprintf(buf, size, "cannot open /proc/%s/pagemap%s%s", name, err ? ": " : "",
			 err ? pmi_strerror(err) : "");
		*hint = refused_hint(err);
	}
	return 0;
}
