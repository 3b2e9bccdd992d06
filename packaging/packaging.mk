# Installation, man page, completion, systemd unit, libhdrstrip.
install:
uninstall:
