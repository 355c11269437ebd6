/* The writers of the programs' manuals, --help (plain text) and the man page (roff), shared by
 * h5gsort (src/option_table.c, src/manpage.c) and h5gsort-gen (tools/gen_options.c,
 * tools/gen_manpage.c): each program keeps its text in tables, and both pages are written from
 * them by the same code, so that the two programs read alike. */
#ifndef H5G_BASE_MANUAL_H
#define H5G_BASE_MANUAL_H

#include <stdio.h>

/* One entry of a manual's list: an example (tag: the command, text: what it does), an exit
 * status, a file, an environment variable. A list ends with a NULL tag. */
typedef struct {
  const char *tag;
  const char *text;
} h5g_manual_item;

/* An option's value written "[=SECONDS]" is optional: given only as --name=VALUE, and shown
 * after the name without a space. */
static inline int h5g_manual_value_optional(const char *value) { return value && value[0] == '['; }

/* ---- --help ------------------------------------------------------------------------------- */

/* --help's column of option texts, its width, and how many examples it ends with (the first of
 * the man page's). */
enum { H5G_HELP_COLUMN = 29, H5G_HELP_WIDTH = 79, H5G_HELP_EXAMPLES = 3 };
/* `text` wrapped to H5G_HELP_WIDTH, starting at `column`; each line after the first indented
 * by `indent`. */
void h5g_help_wrap(FILE *out, const char *text, int column, int indent);
/* "  -d, --dataset PATH   help...": `short_name` 0 for none, `value` NULL for a flag; an
 * optional value ("[=SECONDS]") follows the name without a space. */
void h5g_help_option(FILE *out, char short_name, const char *name, const char *value,
                     const char *help);
/* "heading:" then each item as "  TAG  text" (an exit status). */
void h5g_help_items(FILE *out, const char *heading, const h5g_manual_item *items);
/* "Examples:" then the first `count` examples of the list: what each does, its command. */
void h5g_help_examples(FILE *out, const h5g_manual_item *examples, int count);

/* ---- the man page (roff) ------------------------------------------------------------------ */

/* `text` as roff text: a leading '.' or '\'' would be a request, '\\' an escape, '-' a hyphen. */
void h5g_man_text(FILE *out, const char *text);
/* .TH, NAME ("program \- purpose") and SYNOPSIS (NULL-terminated lines). */
void h5g_man_begin(FILE *out, const char *program, const char *version, const char *purpose,
                   const char *const *synopsis);
/* .SH `title`, then `text` as a paragraph unless NULL. */
void h5g_man_section(FILE *out, const char *title, const char *text);
/* One option of OPTIONS, as h5g_help_option takes it. */
void h5g_man_option(FILE *out, char short_name, const char *name, const char *value,
                    const char *help);
/* A tagged list (exit statuses, files, environment): each tag's names in bold ("A" or "A, B"),
 * its value after '=' or ' ' in italics ("NAME=FILE", "--report FILE"). */
void h5g_man_items(FILE *out, const h5g_manual_item *items);
/* EXAMPLES: what each does, then its command unfilled and indented. */
void h5g_man_examples(FILE *out, const h5g_manual_item *examples);

#endif
