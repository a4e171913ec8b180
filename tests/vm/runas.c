/* runas.c - run a program as another user with no groups and no capabilities: setpriv --reuid for guests whose busybox setpriv has no --reuid. */
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct caps[2];
	uid_t uid, ruid, euid, suid;
	char *end;

	if (argc < 3) {
		fprintf(stderr, "usage: runas UID PROGRAM [ARG...]\n");
		return 2;
	}
	errno = 0;
	uid = (uid_t)strtoul(argv[1], &end, 10);
	if (errno || *end || end == argv[1] || uid == 0) {
		fprintf(stderr, "runas: bad uid '%s' (a number, not 0)\n", argv[1]);
		return 2;
	}
	/* The gid equals the uid, as setpriv --reuid=N --regid=N --clear-groups gives it. */
	if (setgroups(0, NULL) < 0 || setresgid((gid_t)uid, (gid_t)uid, (gid_t)uid) < 0 ||
	    setresuid(uid, uid, uid) < 0) {
		fprintf(stderr, "runas: cannot become uid %u: %s\n", (unsigned)uid, strerror(errno));
		return 126;
	}
	/* Leaving uid 0 dropped the permitted and effective sets; clear the inheritable and ambient ones too. */
	memset(caps, 0, sizeof(caps));
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (syscall(SYS_capset, &hdr, caps) < 0 || getresuid(&ruid, &euid, &suid) < 0 || ruid != uid ||
	    euid != uid || suid != uid) {
		fprintf(stderr, "runas: cannot drop capabilities: %s\n", strerror(errno));
		return 126;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "runas: cannot run %s: %s\n", argv[2], strerror(errno));
	return 127;
}
