/* pagecache.h - internal pieces of the page cache view (pagecache.c, cacheset.c), apart for unit tests. */
#ifndef PM_PAGECACHE_H
#define PM_PAGECACHE_H

#include <stdint.h>

/* Open @path for cachestat without reading it (O_NOATIME where allowed, O_NONBLOCK). fd or -errno. */
int pm_cache_open(const char *path);
/* The value of "@name:" in meminfo-style @text, in bytes (the text says kB). Pure. 0, -ENOENT or -EINVAL. */
int pm_meminfo_field(const char *text, const char *name, uint64_t *bytes);
/* "START-END" of a map_files name for a mapping (lower-case hex, no 0x), into @buf. Pure. 0 or -ENAMETOOLONG. */
int pm_map_files_name(uint64_t start, uint64_t end, char *buf, size_t size);

#endif
