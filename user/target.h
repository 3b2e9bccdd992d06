/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What attach, update and detach act on (an interface, or a cgroup in proxy
 * mode): found, locked, and named in their messages.
 */
#ifndef HDRSTRIP_TARGET_H
#define HDRSTRIP_TARGET_H

#include "loader.h"
#include "opts.h"

/* DEV, or the cgroup directory @cgroup when not NULL; -1, or the exit code
 * after the message. */
int target_resolve(const char *dev, const char *cgroup, struct dev *d);
/* DEV alone: -1, or the exit code after "no interface ..." and where to look. */
int target_resolve_dev(const char *name, struct dev *d);
/* The lock of @d's pin directory for the command's length: 0, or -1 after
 * the message. */
int target_lock(const struct dev *d, struct dev_lock *lk);

/* "interface" or "cgroup". */
const char *target_word(const struct dev *d);
/* "'eth0'" or "cgroup '/sys/fs/cgroup/x'". */
const char *target_str(const struct dev *d);
/* What attach or update leaves @d in, when it matters: observe mode
 * (@now 1; loudly), or enforce mode again after observe (@before 1). */
void mode_note(const struct dev *d, int before, int now);

/* Pins under @d's name are another namespace's live attachment (@pi). */
void pins_elsewhere_err(const struct dev *d, const struct pins_info *pi, const char *cmd);
/* @d's hooks use two sets of maps: refused, with the way out. */
void split_err(const struct dev *d, const char *cmd);

/* What attach and update hold while they run. */
struct list_run {
	struct hs_list l; /* the list read */
	struct hs_trie *t; /* the block it compiles into */
	struct dev d;
	struct dev_lock lk;
	struct dev_maps m; /* none yet: each command finds or makes them */
};

/*
 * The start both share: root, the list read (a bad list changes nothing: it
 * is read before anything is touched, and compiled before any map write),
 * the target (DEV, or @s->cgroup) resolved and locked. -1, or the exit code
 * after the message; list_run_end() in either case.
 */
int list_run_begin(const char *cmd, const struct list_settings *s, const char *dev,
		   struct list_run *run);
void list_run_end(struct list_run *run);

#endif /* HDRSTRIP_TARGET_H */
