/* replay_main.h - plain main() for fuzz targets built without libFuzzer: runs every file or directory given. */
#ifndef PM_FUZZ_REPLAY_MAIN_H
#define PM_FUZZ_REPLAY_MAIN_H

#ifdef PM_FUZZ_REPLAY
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifndef PM_FUZZ_NAME
#define PM_FUZZ_NAME "fuzz"
#endif

#if defined(__SANITIZE_ADDRESS__)
#define PM_REPLAY_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PM_REPLAY_SANITIZER 1
#endif
#endif
#ifdef PM_REPLAY_SANITIZER
#include <sanitizer/common_interface_defs.h>
#endif

static const char *replay_current;	/* the input being run, named when it crashes */

static void replay_report(void)
{
	if (replay_current)
		fprintf(stderr, "%s: crashed on input %s\n", PM_FUZZ_NAME, replay_current);
}

static void replay_signal(int sig)
{
	replay_report();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Run one file through the target; an exact-size heap copy lets ASan see overreads. */
static int replay_file(const char *path, unsigned long *count)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f) {
		fprintf(stderr, "%s: cannot open %s\n", PM_FUZZ_NAME, path);
		return -1;
	}
	for (;;) {
		if (len == cap) {
			uint8_t *nb = realloc(buf, cap = cap ? cap * 2 : 4096);
			if (!nb) {
				free(buf);
				fclose(f);
				return -1;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len, f);
		if (!n)
			break;
		len += n;
	}
	fclose(f);
	{
		uint8_t *exact = malloc(len ? len : 1);
		if (!exact) {
			free(buf);
			return -1;
		}
		if (len)
			memcpy(exact, buf, len);
		free(buf);
		replay_current = path;
		LLVMFuzzerTestOneInput(exact, len);
		replay_current = NULL;
		free(exact);
	}
	(*count)++;
	return 0;
}

static int replay_path(const char *path, unsigned long *count)
{
	struct dirent **names;
	struct stat st;
	int i, n, r = 0;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "%s: cannot stat %s\n", PM_FUZZ_NAME, path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return replay_file(path, count);
	n = scandir(path, &names, NULL, alphasort);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		char sub[4096];
		if (names[i]->d_name[0] != '.' &&
		    snprintf(sub, sizeof(sub), "%s/%s", path, names[i]->d_name) < (int)sizeof(sub) &&
		    replay_path(sub, count) < 0)
			r = -1;
		free(names[i]);
	}
	free(names);
	return r;
}

int main(int argc, char **argv)
{
	unsigned long count = 0;
	int i, r = 0;

	signal(SIGABRT, replay_signal);
	signal(SIGSEGV, replay_signal);
#ifdef PM_REPLAY_SANITIZER
	__sanitizer_set_death_callback(replay_report);
#endif
	for (i = 1; i < argc; i++)
		if (replay_path(argv[i], &count) < 0)
			r = 1;
	printf("  %s: %lu inputs\n", PM_FUZZ_NAME, count);
	if (r || !count) {	/* exit 2: the FAIL line is printed; a crash exits otherwise */
		printf("FAIL %s-replay\n", PM_FUZZ_NAME);
		return 2;
	}
	printf("PASS %s-replay\n", PM_FUZZ_NAME);
	return 0;
}
#endif

#endif
