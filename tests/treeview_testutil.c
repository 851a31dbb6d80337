#include "treeview_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

char *row_str(const struct treeview *tv, size_t row)
{
    struct strbuf sb;
    sb_init(&sb);
    treeview_row_text(tv, row, &sb);
    sb_addc(&sb, '\0');
    return sb_detach(&sb, NULL);
}
