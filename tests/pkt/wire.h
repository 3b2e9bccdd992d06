/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The wire (wire.c): tests beyond the one-packet tables. Each returns the
 * number of mismatches. */
#ifndef HDRSTRIP_TEST_PKT_WIRE_H
#define HDRSTRIP_TEST_PKT_WIRE_H

#include "pkttest.h"

/* The same inner 4-tuple through two tunnels, or two ids of one: two
 * connections (state never mixes), at both hooks. */
int pt_wire_zones(struct th *h);
/* UDP tunnel sockets made after the attach, in a namespace of its own
 * (a VXLAN device on a port the table does not name, an ESP-in-UDP
 * socket): dropped by the on-error policy; other UDP passed. */
int pt_wire_late(struct th *h);
/* The object at @obj_path (NULL: the skeleton's) loaded for a device
 * without a link header: the HTTP and layer tables on IP-first frames and
 * pt_l3_cases, at both hooks; @cases gets the cases run. */
int pt_l3(const char *obj_path, const char *label, int *cases);

/* The builder's frames of the wire and layer tables against its checker:
 * each one's checksums hold, and damage that only one of them sees is
 * refused; @frames gets the frames checked. */
int pt_builder_sums(int *frames);

#endif /* HDRSTRIP_TEST_PKT_WIRE_H */
