/* The option table of h5gsort (src/option_table.c): what the parser, --help and the man page
 * h5gsort(1) are made from. Internal to src/. */
#ifndef H5G_SRC_OPTION_TABLE_H
#define H5G_SRC_OPTION_TABLE_H

#include <stdio.h>

#include "base/manual.h"
#include "src/options.h"

typedef struct {
  const char *name;  /* the long name, without "--" */
  char short_name;   /* 'd', or 0 */
  const char *value; /* what the value looks like ("PATH"); NULL: a flag; "[=SECONDS]": optional,
                      * given only as --name=VALUE */
  int (*set)(h5g_options *opt, char *value); /* an h5g status; a usage error names the option */
  const char *help;  /* one paragraph */
} h5g_option_spec;

static inline int h5g_option_value_optional(const h5g_option_spec *o) {
  return h5g_manual_value_optional(o->value);
}

extern const h5g_option_spec h5g_option_table[];
extern const int h5g_option_count;
extern const char *const h5g_option_synopsis[]; /* NULL-terminated */
extern const char *const h5g_option_summary;

/* An absolute HDF5 path of `option` made canonical in place: empty and "." components dropped, as
 * HDF5's own traversal drops them. A ".." component is a usage error: HDF5 reads it as a link
 * named "..", not the group above, so collapsing it as text would name another dataset. */
int h5g_options_normalize_path(char *path, const char *option);

/* src/option_rules.c: the rules between options, once all are parsed (usage errors). */
int h5g_options_check(h5g_options *opt);

#endif
