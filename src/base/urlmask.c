/*
 * urlmask: a URL as it may be shown, its password taken out.
 */
#include "urlmask.h"

#include <string.h>

#include "util.h"

const char *url_userinfo_end(const char *url)
{
    const char *scheme_end = strstr(url, "://");
    const char *auth = scheme_end ? scheme_end + 3 : url;
    const char *last = strrchr(auth, '@');
    if (!last)
        return NULL;
    /* A password may hold any character ('/', '?', '@' unencoded): once a ':' comes before
     * some '@', the user information runs to the last '@', so that none of it is shown. */
    if (memchr(auth, ':', (size_t)(last - auth)))
        return last;
    const char *at = NULL;
    for (const char *p = auth; *p && !strchr("/?#", *p); p++)
        if (*p == '@')
            at = p;
    return at;
}

char *url_mask(const char *url)
{
    const char *at = url_userinfo_end(url);
    if (!at)
        return xstrdup(url);
    const char *scheme_end = strstr(url, "://");
    const char *auth = scheme_end ? scheme_end + 3 : url;
    const char *colon = memchr(auth, ':', (size_t)(at - auth));
    if (!colon)
        return xstrdup(url);
    return xasprintf("%.*s%s", (int)(colon - url), url, at);
}

bool url_has_password(const char *url)
{
    const char *at = url_userinfo_end(url);
    const char *scheme_end = strstr(url, "://");
    const char *auth = scheme_end ? scheme_end + 3 : url;
    return at && memchr(auth, ':', (size_t)(at - auth));
}
