# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Operating hdrstrip: installation (make install / make uninstall, PREFIX
# and DESTDIR honoured) and its tests. Uses lib/lib.mk's targets (the top
# Makefile includes it first).
#
#   make install [PREFIX=/usr/local] [DESTDIR=]   make uninstall (same variables)
#   make test-install   install into a scratch DESTDIR and check the result
#   make test-ops       stats --prometheus/--watch and the service helper, on a
#                       real attachment in network namespaces, and the Debian
#                       packages installed and removed (root)
#   make deb            Debian packages in $(OUTPUT)/deb (debhelper)

SBINDIR ?= $(PREFIX)/sbin
LIBDIR ?= $(PREFIX)/lib
PKGLIBDIR ?= $(PREFIX)/lib/hdrstrip
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/hdrstrip
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
# The Prometheus rules and the Grafana dashboard (deploy/).
DATADIR ?= $(PREFIX)/share/hdrstrip
UNITDIR ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR ?= /etc
# Run after installing the shared library into the real root.
LDCONFIG ?= ldconfig

# The unit, the service helper and the man page name the default paths;
# installing rewrites them to the ones of this install.
SUBST_PATHS = sed -e 's|/usr/local/sbin|$(SBINDIR)|g' \
	-e 's|/usr/local/lib/hdrstrip|$(PKGLIBDIR)|g' \
	-e 's|/usr/local/lib/systemd/system|$(UNITDIR)|g' \
	-e 's|/usr/local/share/doc/hdrstrip|$(DOCDIR)|g' \
	-e 's|/usr/local/share/hdrstrip|$(DATADIR)|g' \
	-e 's|/etc/hdrstrip|$(SYSCONFDIR)/hdrstrip|g'

# Every file 'make install' writes: 'make uninstall' removes these, then
# the directories that are hdrstrip's own if they are left empty.
INSTALLED := $(SBINDIR)/hdrstrip \
	$(PKGLIBDIR)/hdrstrip.bpf.o $(PKGLIBDIR)/hdrstrip-service \
	$(UNITDIR)/hdrstrip@.service $(UNITDIR)/hdrstrip-textfile.service \
	$(UNITDIR)/hdrstrip-textfile.timer $(UNITDIR)/hdrstrip-agent.service \
	$(UNITDIR)/hdrstrip-proxy@.service $(UNITDIR)/hdrstrip-origin@.service \
	$(SYSCONFDIR)/hdrstrip/IFACE.conf.example $(SYSCONFDIR)/hdrstrip/agent.conf.example \
	$(MANDIR)/man8/hdrstrip.8 \
	$(BASHCOMPDIR)/hdrstrip \
	$(LIBDIR)/libhdrstrip.a $(LIBDIR)/libhdrstrip.so.$(VERSION) \
	$(LIBDIR)/$(LIB_SONAME) $(LIBDIR)/libhdrstrip.so \
	$(INCLUDEDIR)/hdrstrip.h $(PKGCONFIGDIR)/hdrstrip.pc \
	$(DOCDIR)/example.c $(DOCDIR)/internal-headers.example \
	$(DATADIR)/prometheus/hdrstrip-rules.yml $(DATADIR)/grafana/hdrstrip.json
OWN_DIRS := $(PKGLIBDIR) $(SYSCONFDIR)/hdrstrip $(DOCDIR) $(DATADIR)/prometheus \
	$(DATADIR)/grafana $(DATADIR)

.PHONY: test-install test-ops deb

# make deb: Debian packages (hdrstrip, libhdrstrip0, libhdrstrip-dev) from
# packaging/debian, built with debhelper in a copy of the tracked sources
# under $(OUTPUT)/deb; the .debs land there. Needs debhelper and dpkg-dev
# (scripts/install-deps.sh), no root (fakeroot is not needed either:
# Rules-Requires-Root: no).
DEB_DIR := $(OUTPUT)/deb
DEB_SRC := $(DEB_DIR)/hdrstrip-$(VERSION)

deb:
	$(call msg,DEB,$(DEB_DIR))
	$(Q)rm -rf $(DEB_DIR) && mkdir -p $(DEB_SRC)
	$(Q)if git rev-parse --git-dir >/dev/null 2>&1; then \
		git ls-files -z | xargs -0 cp -P --parents -t $(DEB_SRC); \
	else \
		tar -c --exclude=./$(OUTPUT) --exclude=./.git . | tar -x -C $(DEB_SRC); \
	fi
	$(Q)cp -r packaging/debian $(DEB_SRC)/debian
	$(Q)cd $(DEB_SRC) && dpkg-buildpackage -us -uc -b $(if $(filter 1,$(V)),,>../build.log 2>&1) || \
		{ tail -30 $(DEB_DIR)/build.log; exit 1; }
	$(Q)ls $(DEB_DIR)/*.deb

install: $(OUTPUT)/hdrstrip $(BPF_OBJ) $(LIB_A) $(LIB_SO)
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(PKGLIBDIR) $(DESTDIR)$(UNITDIR) \
		$(DESTDIR)$(SYSCONFDIR)/hdrstrip $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) \
		$(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(DOCDIR) $(DESTDIR)$(DATADIR)/prometheus \
		$(DESTDIR)$(DATADIR)/grafana
	$(Q)install -m 0755 $(OUTPUT)/hdrstrip $(DESTDIR)$(SBINDIR)/hdrstrip
	$(Q)install -m 0644 $(BPF_OBJ) $(DESTDIR)$(PKGLIBDIR)/hdrstrip.bpf.o
	$(Q)$(SUBST_PATHS) packaging/hdrstrip-service > $(DESTDIR)$(PKGLIBDIR)/hdrstrip-service
	$(Q)chmod 0755 $(DESTDIR)$(PKGLIBDIR)/hdrstrip-service
	$(Q)$(SUBST_PATHS) packaging/hdrstrip@.service > $(DESTDIR)$(UNITDIR)/hdrstrip@.service
	$(Q)for u in hdrstrip-textfile.service hdrstrip-textfile.timer hdrstrip-agent.service \
		hdrstrip-proxy@.service hdrstrip-origin@.service; do \
		$(SUBST_PATHS) packaging/$$u > $(DESTDIR)$(UNITDIR)/$$u; done
	$(Q)$(SUBST_PATHS) packaging/IFACE.conf.example > \
		$(DESTDIR)$(SYSCONFDIR)/hdrstrip/IFACE.conf.example
	$(Q)$(SUBST_PATHS) packaging/agent.conf.example > \
		$(DESTDIR)$(SYSCONFDIR)/hdrstrip/agent.conf.example
	$(Q)# The starter list and default.conf: the operator's own copies stay.
	$(Q)for f in internal-headers.txt default.conf; do \
		[ -e $(DESTDIR)$(SYSCONFDIR)/hdrstrip/$$f ] || { \
		$(SUBST_PATHS) packaging/$$f > $(DESTDIR)$(SYSCONFDIR)/hdrstrip/$$f && \
		chmod 0644 $(DESTDIR)$(SYSCONFDIR)/hdrstrip/$$f; } || exit 1; done
	$(Q)$(SUBST_PATHS) man/hdrstrip.8 > $(DESTDIR)$(MANDIR)/man8/hdrstrip.8
	$(Q)install -m 0644 completion/hdrstrip $(DESTDIR)$(BASHCOMPDIR)/hdrstrip
	$(Q)install -m 0644 $(LIB_A) $(DESTDIR)$(LIBDIR)/libhdrstrip.a
	$(Q)install -m 0755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/libhdrstrip.so.$(VERSION)
	$(Q)ln -sf libhdrstrip.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(LIB_SONAME)
	$(Q)ln -sf $(LIB_SONAME) $(DESTDIR)$(LIBDIR)/libhdrstrip.so
	$(Q)install -m 0644 lib/hdrstrip.h $(DESTDIR)$(INCLUDEDIR)/hdrstrip.h
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
		lib/hdrstrip.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/hdrstrip.pc
	$(Q)install -m 0644 lib/example.c $(DESTDIR)$(DOCDIR)/example.c
	$(Q)install -m 0644 packaging/internal-headers.example \
		$(DESTDIR)$(DOCDIR)/internal-headers.example
	$(Q)install -m 0644 deploy/prometheus/hdrstrip-rules.yml \
		$(DESTDIR)$(DATADIR)/prometheus/hdrstrip-rules.yml
	$(Q)install -m 0644 deploy/grafana/hdrstrip.json $(DESTDIR)$(DATADIR)/grafana/hdrstrip.json
	$(Q)chmod 0644 $(DESTDIR)$(UNITDIR)/hdrstrip@.service \
		$(DESTDIR)$(UNITDIR)/hdrstrip-textfile.service \
		$(DESTDIR)$(UNITDIR)/hdrstrip-textfile.timer \
		$(DESTDIR)$(UNITDIR)/hdrstrip-agent.service \
		$(DESTDIR)$(UNITDIR)/hdrstrip-proxy@.service \
		$(DESTDIR)$(SYSCONFDIR)/hdrstrip/IFACE.conf.example \
		$(DESTDIR)$(SYSCONFDIR)/hdrstrip/agent.conf.example \
		$(DESTDIR)$(MANDIR)/man8/hdrstrip.8 $(DESTDIR)$(PKGCONFIGDIR)/hdrstrip.pc
	$(Q)if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v $(LDCONFIG) >/dev/null; then \
		$(LDCONFIG); fi

uninstall:
	$(call msg,UNINSTALL,$(DESTDIR)$(PREFIX))
	$(Q)rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	$(Q)# The starter list and default.conf, unless the operator changed them.
	$(Q)for f in internal-headers.txt default.conf; do \
		$(SUBST_PATHS) packaging/$$f | cmp -s - $(DESTDIR)$(SYSCONFDIR)/hdrstrip/$$f && \
		rm -f $(DESTDIR)$(SYSCONFDIR)/hdrstrip/$$f; done; true
	$(Q)for d in $(addprefix $(DESTDIR),$(OWN_DIRS)); do \
		[ ! -d "$$d" ] || rmdir --ignore-fail-on-non-empty "$$d"; done
	$(Q)if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v $(LDCONFIG) >/dev/null; then \
		$(LDCONFIG); fi

test-install: $(OUTPUT)/hdrstrip $(BPF_OBJ) $(LIB_A) $(LIB_SO)
	$(Q)MAKE='$(MAKE)' VERSION='$(VERSION)' tests/install/test_install.sh

test-ops: $(OUTPUT)/hdrstrip $(BPF_OBJ) deb
	$(Q)HDRSTRIP='$(abspath $(OUTPUT)/hdrstrip)' tests/install/run_ops.sh
