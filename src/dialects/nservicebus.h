/*
 * nservicebus: the NServiceBus dialect's helpers that tests reach (the dialect itself is
 * dialect_nservicebus, dialect.h; its rules are in nservicebus.c and docs/dialects.md).
 */
#ifndef DLQX_NSERVICEBUS_H
#define DLQX_NSERVICEBUS_H

#include <stdbool.h>
#include <stddef.h>

#include "message.h"

/* The first type of an NServiceBus.EnclosedMessageTypes value ("A.B, Asm, Version=…;C.D, …"):
 * its name without the assembly qualifier, and the qualifier ("Asm, Version=…"; length 0 when
 * there is none). Commas inside [...] (generic arguments) do not split. Offsets into s; the
 * name and qualifier are trimmed of spaces. */
struct nsb_type_name {
    size_t name_off, name_len;
    size_t qual_off, qual_len;
};
void nsb_first_type(const void *s, size_t n, struct nsb_type_name *out);

/* ServiceControl's DeterministicGuid: new Guid(MD5(UTF-8(a + b))) as .NET prints it (the first
 * three groups little-endian). out gets 36 characters and a NUL. */
void nsb_deterministic_guid(const void *a, size_t an, const void *b, size_t bn, char out[37]);

/* The id ServiceControl knows a failed message by (TransportMessageExtensions.UniqueId): the
 * ServiceControl.Retry.UniqueMessageId header when there is one (*from_header true), else
 * DeterministicGuid(NServiceBus.MessageId (else id), the processing endpoint: ProcessingEndpoint,
 * else FailedQ before '@', else ReplyToAddress before '@'). False when no endpoint can be named
 * (ServiceControl refuses such a message too). *out is new bytes the caller frees. */
bool nsb_servicecontrol_id(const struct message *m, const struct bytes *id, struct bytes *out,
                           bool *from_header);

#endif
