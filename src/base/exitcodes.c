/*
 * exitcodes: lookups in EXIT_LIST.
 */
#include "exitcodes.h"

#include <stddef.h>

static const struct {
    int number;
    const char *name, *meaning;
} exit_table[] = {
#define X(name, number, meaning) {number, #name, meaning},
    EXIT_LIST(X)
#undef X
};

const char *exit_code_name(int code)
{
    for (size_t i = 0; i < sizeof exit_table / sizeof *exit_table; i++)
        if (exit_table[i].number == code)
            return exit_table[i].name;
    return NULL;
}

const char *exit_code_meaning(int code)
{
    for (size_t i = 0; i < sizeof exit_table / sizeof *exit_table; i++)
        if (exit_table[i].number == code)
            return exit_table[i].meaning;
    return NULL;
}
