#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The loader end to end in origin mode, as a hook (see hook_suite.sh): the
# origins run in a cgroup, attach --cgroup CG --receive.
HOOK=receive
. "$(dirname "$0")/hook_suite.sh"
