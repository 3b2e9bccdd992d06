# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Installation, man page, completion, systemd unit, libhdrstrip.
include lib/lib.mk
include tests/vlog/vlog.mk

install:
uninstall:
