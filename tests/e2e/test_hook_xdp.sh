#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The loader end to end at hook xdp (see hook_suite.sh).
HOOK=xdp
. "$(dirname "$0")/hook_suite.sh"
