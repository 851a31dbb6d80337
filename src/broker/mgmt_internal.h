/*
 * mgmt_internal: what the management client's two files share. The transport (mgmt.c) asks
 * the API for exactly the columns that the parsers (mgmt_parse.c) read, so the lists live
 * beside the parsers and are declared here. Only mgmt*.c include it.
 */
#ifndef DLQX_MGMT_INTERNAL_H
#define DLQX_MGMT_INTERNAL_H

#include "mgmt.h"

/* The `columns` query of each listing: comma-separated, nested paths allowed. */
extern const char mgmt_queue_columns[];
extern const char mgmt_exchange_columns[];
extern const char mgmt_binding_columns[];
extern const char mgmt_overview_columns[];
extern const char mgmt_node_columns[];

#endif
