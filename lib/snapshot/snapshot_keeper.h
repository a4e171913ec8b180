/* snapshot_keeper.h - a child process that removes a replay's tree when we end, however we end (snapshot_keeper.c). */
#ifndef PMI_SNAPSHOT_KEEPER_H
#define PMI_SNAPSHOT_KEEPER_H

struct pmi_snap_keeper;

/* Start the keeper of directory @dir (made by us, for the replay). NULL with errno. */
struct pmi_snap_keeper *pmi_snap_keeper_start(const char *dir);
/* We removed the tree ourselves: the keeper exits without touching it, and is reaped. NULL is fine. */
void pmi_snap_keeper_end(struct pmi_snap_keeper *k);

/* snapshot_tree.c: remove an extracted snapshot tree (never following symlinks). NULL is fine. */
void pmi_snap_remove_tree(const char *dir);

#endif
