/* test_snapshot_users.c - a snapshot's owners: the real UID of a status text (pmi_status_uid, pm_proc_uid's too) (hostile ones refused, never read as
 * another number), and the META users line (names it cannot hold left out, 4 KiB at most). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "harness.h"
#include "base.h"
#include "snapshot.h"

static int uid_of(const char *text, uid_t *uid)
{
	return pmi_status_uid(text, strlen(text), uid);
}

static int status_uid(void)
{
	uid_t u = 7;

	CHECK(uid_of("Name:\tsleep\nUmask:\t0022\nState:\tS (sleeping)\nUid:\t1000\t1001\t1002\t1003\nGid:\t0\n", &u) == 0);
	CHECK_EQ_U64(u, 1000);
	CHECK(uid_of("Name:\tx\nUid:\t0\t0\t0\t0\n", &u) == 0);
	CHECK_EQ_U64(u, 0);
	CHECK(uid_of("Name:\tx\nUid:\t4294967295\t0\n", &u) == 0);	/* (uid_t)-1 as the kernel prints an unmapped id */
	CHECK_EQ_U64(u, 4294967295u);
	u = 7;
	CHECK(uid_of("Name:\tx\nUid:\t4294967296\t0\n", &u) == -EBADMSG);	/* past uid_t: not wrapped to 0 */
	CHECK(uid_of("Name:\tx\nUid:\t99999999999999999999999\n", &u) == -EBADMSG);
	CHECK(uid_of("Name:\tx\nUid:\t-1\n", &u) == -EBADMSG);
	CHECK(uid_of("Name:\tx\nUid:\t\n", &u) == -EBADMSG);
	CHECK(uid_of("Name:\tx\nUid:", &u) == -EBADMSG);			/* cut short */
	CHECK(uid_of("Uid:\t5\n", &u) == -EBADMSG);			/* not after a line: a name, not the field */
	CHECK(uid_of("Name:\tUid:\t5\nState:\tS\n", &u) == -EBADMSG);	/* a comm that reads like the field */
	CHECK(uid_of("", &u) == -EBADMSG);
	CHECK_EQ_U64(u, 7);	/* refused: left as it was */
	/* a text not ending in NUL: only @len bytes are read */
	CHECK(pmi_status_uid("Name:\tx\nUid:\t12345", 16, &u) == 0);
	CHECK_EQ_U64(u, 123);
	return T_PASS;
}

static int users_note(void)
{
	struct snap_users u = { .n = 0 };
	uid_t i;

	CHECK(pmi_snap_users_note(&u, 0, "root") == 0);
	CHECK(pmi_snap_users_note(&u, 0, "other") == 0);	/* once: the first name stays */
	CHECK(pmi_snap_users_note(&u, 65534, NULL) == 0);
	CHECK_EQ_U64(u.n, 2);
	CHECK_STR(u.name[0], "root");
	CHECK(u.name[1] == NULL);
	CHECK(pmi_snap_users_known(&u, 65534) && !pmi_snap_users_known(&u, 1));
	for (i = 1; i < 1000; i++)
		CHECK(pmi_snap_users_note(&u, i, "u") == 0);
	CHECK_EQ_U64(u.n, SNAP_USERS_MAX);	/* the others are left out, shown as numbers on replay */
	pmi_snap_users_free(&u);
	CHECK_EQ_U64(u.n, 0);
	return T_PASS;
}

/*
 * META users is one line of 4 KiB: a commit never fails for it. Names of each length from 1 to 40 for 256
 * UIDs fill the line to every length near its end, where "users=" and the newline made it too long for
 * META before (E2BIG, and the whole snapshot lost). The line holds whole entries only.
 */
static int users_line_fits(void)
{
	char path[] = "/tmp/test_snapshot_users.XXXXXX", name[64], err[256];
	int fd = mkstemp(path);
	size_t len, i;

	CHECK(fd >= 0);
	close(fd);
	for (len = 1; len <= 40; len++) {
		struct pm_snapshot_writer *w = pm_snapshot_create(path);
		struct pm_snapshot *s;
		const char *line;

		CHECK(w != NULL);
		for (i = 0; i < SNAP_USERS_MAX; i++) {
			memset(name, 'a' + (int)(i % 26), len);
			name[len] = '\0';
			CHECK(pmi_snap_users_note(pmi_snap_w_users(w), (uid_t)(1000 + i), name) == 0);
		}
		CHECK(pm_snapshot_commit(w) == 0);
		pm_snapshot_writer_free(w);
		CHECK((s = pm_snapshot_open(path, err, sizeof(err))) != NULL);
		CHECK((line = pm_snapshot_meta(s, "users")) != NULL);
		CHECK(strlen(line) < SNAP_USERS_LINE);
		CHECK(!strncmp(line, "1000=", 5));
		CHECK(strlen(strrchr(line, '=') + 1) == len);	/* the last entry whole */
		pm_snapshot_close(s);
	}
	unlink(path);
	return T_PASS;
}

T_MAIN(T(status_uid), T(users_note), T(users_line_fits))
