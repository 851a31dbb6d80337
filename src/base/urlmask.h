/*
 * urlmask: URLs as they may be shown — the journal, the messages and the broker options never
 * show a password. Pure string work on any scheme://user:password@host/… URL (AMQP's and the
 * management API's alike), no parsing library. url_mask returns a new string the caller frees;
 * the other functions return pointers into the URL given.
 */
#ifndef DLQX_URLMASK_H
#define DLQX_URLMASK_H

#include <stdbool.h>

/* A URL as it may be shown: the password (if any) removed. A new string. A password may hold
 * any character, so once a ':' comes before an '@', everything up to the last '@' is taken
 * for user information (a vhost with a raw '@' is then shown cut: never a password). */
char *url_mask(const char *url);
/* The '@' that ends a URL's user information (by the rule above), or NULL. */
const char *url_userinfo_end(const char *url);
/* Whether the URL carries a password (user:password@). */
bool url_has_password(const char *url);

#endif
