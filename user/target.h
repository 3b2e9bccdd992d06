/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What attach, update and detach act on (an interface, or a cgroup in proxy
 * mode): found, locked, and named in their messages.
 */
#ifndef HDRSTRIP_TARGET_H
#define HDRSTRIP_TARGET_H

#include "loader.h"

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

/* Pins under @d's name are another namespace's live attachment (@pi). */
void pins_elsewhere_err(const struct dev *d, const struct pins_info *pi, const char *cmd);
/* @d's hooks use two sets of maps: refused, with the way out. */
void split_err(const struct dev *d, const char *cmd);

#endif /* HDRSTRIP_TARGET_H */
