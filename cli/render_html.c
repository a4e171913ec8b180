/* render_html.c - pagemap render's HTML: one self-contained page (inline CSS and JavaScript, no network). */
#include <errno.h>
#include "render.h"

int rnd_write_html(FILE *f, const struct rnd_model *m)
{
	return -ENOSYS;
}
