/* render_heat.c - time heat maps from `pagemap track -J` and `pagemap wss -J` recordings: exact page counts. */
#include <errno.h>
#include <stdlib.h>
#include "render.h"

int heat_parse(struct heat_rec *rec, const char *buf, size_t len, char *err, size_t errsize) { return -EINVAL; }
void heat_free(struct heat_rec *rec) {}
int heat_axis_from_rec(struct rnd_model *m, const struct heat_rec *rec) { return -EINVAL; }
uint64_t *heat_grid(const struct rnd_model *m, const struct heat_rec *rec) { return NULL; }
int heat_write_svg(FILE *f, const struct rnd_model *m, const struct heat_rec *rec, const uint64_t *grid) { return -EIO; }
int heat_write_json(FILE *f, const struct rnd_model *m, const struct heat_rec *rec, const uint64_t *grid) { return -EIO; }
int heat_write_ansi(FILE *f, const struct rnd_model *m, const struct heat_rec *rec, const uint64_t *grid) { return -EIO; }
