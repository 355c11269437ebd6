#include "base/manual.h"

#include <string.h>

void h5g_help_wrap(FILE *out, const char *text, int column, int indent) {
  const char *p = text;
  while (*p) {
    int room = H5G_HELP_WIDTH - column, len = (int)strlen(p);
    int cut = len;
    if (len > room) { /* the last space that fits; a word longer than the room goes whole */
      cut = room;
      while (cut > 0 && p[cut] != ' ') cut--;
      if (cut == 0) cut = (int)strcspn(p, " ");
    }
    fprintf(out, "%.*s\n", cut, p);
    p += cut;
    while (*p == ' ') p++;
    if (*p) fprintf(out, "%*s", indent, "");
    column = indent;
  }
}

void h5g_help_option(FILE *out, char short_name, const char *name, const char *value,
                     const char *help) {
  char head[128];
  int used = short_name ? snprintf(head, sizeof head, "  -%c, --%s", short_name, name)
                        : snprintf(head, sizeof head, "      --%s", name);
  if (value)
    snprintf(head + used, sizeof head - (size_t)used, "%s%s",
             h5g_manual_value_optional(value) ? "" : " ", value);
  if ((int)strlen(head) >= H5G_HELP_COLUMN - 1)
    fprintf(out, "%s\n%*s", head, H5G_HELP_COLUMN, "");
  else
    fprintf(out, "%-*s", H5G_HELP_COLUMN, head);
  h5g_help_wrap(out, help, H5G_HELP_COLUMN, H5G_HELP_COLUMN);
}

void h5g_help_items(FILE *out, const char *heading, const h5g_manual_item *items) {
  enum { TAG_COLUMN = 6 };
  fprintf(out, "%s:\n", heading);
  for (const h5g_manual_item *i = items; i->tag; i++) {
    fprintf(out, "  %-*s", TAG_COLUMN - 2, i->tag);
    h5g_help_wrap(out, i->text, TAG_COLUMN, TAG_COLUMN);
  }
}

void h5g_help_examples(FILE *out, const h5g_manual_item *examples, int count) {
  fprintf(out, "Examples:\n");
  for (int i = 0; i < count && examples[i].tag; i++) {
    fprintf(out, "  ");
    h5g_help_wrap(out, examples[i].text, 2, 2);
    fprintf(out, "    %s\n", examples[i].tag); /* a command is not wrapped: it is copied */
  }
}

void h5g_man_text(FILE *out, const char *text) {
  for (const char *p = text; *p; p++) {
    if (p == text && (*p == '.' || *p == '\'')) fputs("\\&", out);
    if (*p == '\\') fputs("\\e", out);
    else if (*p == '-') fputs("\\-", out);
    else putc(*p, out);
  }
}

void h5g_man_begin(FILE *out, const char *program, const char *version, const char *purpose,
                   const char *const *synopsis) {
  char upper[64];
  size_t len = strlen(program) < sizeof upper - 1 ? strlen(program) : sizeof upper - 1;
  for (size_t i = 0; i < len; i++)
    upper[i] = program[i] >= 'a' && program[i] <= 'z' ? (char)(program[i] - 'a' + 'A') : program[i];
  upper[len] = '\0';
  fprintf(out, ".TH ");
  h5g_man_text(out, upper);
  fprintf(out, " 1 \"\" \"h5gsort %s\" \"User Commands\"\n.SH NAME\n", version);
  h5g_man_text(out, program);
  fprintf(out, " \\- ");
  h5g_man_text(out, purpose);
  fprintf(out, "\n.SH SYNOPSIS\n");
  for (int i = 0; synopsis[i]; i++) {
    fprintf(out, ".B ");
    h5g_man_text(out, synopsis[i]);
    fprintf(out, "\n.br\n");
  }
}

void h5g_man_section(FILE *out, const char *title, const char *text) {
  fprintf(out, ".SH %s\n", title);
  if (!text) return;
  h5g_man_text(out, text);
  fputc('\n', out);
}

void h5g_man_option(FILE *out, char short_name, const char *name, const char *value,
                    const char *help) {
  fprintf(out, ".TP\n");
  if (short_name) fprintf(out, "\\fB\\-%c\\fR, ", short_name);
  fprintf(out, "\\fB\\-\\-");
  h5g_man_text(out, name);
  fprintf(out, "\\fR");
  if (value) {
    fprintf(out, "%s\\fI", h5g_manual_value_optional(value) ? "" : " ");
    h5g_man_text(out, value);
    fprintf(out, "\\fR");
  }
  fputc('\n', out);
  h5g_man_text(out, help);
  fputc('\n', out);
}

void h5g_man_items(FILE *out, const h5g_manual_item *items) {
  for (const h5g_manual_item *i = items; i->tag; i++) {
    char bold[256];
    size_t len = 0; /* names, "A, B", up to a value: "=VALUE" or " VALUE" */
    while (i->tag[len] && i->tag[len] != '=' &&
           !(i->tag[len] == ' ' && (len == 0 || i->tag[len - 1] != ',')))
      len++;
    snprintf(bold, sizeof bold, "%.*s", (int)len, i->tag);
    fprintf(out, ".TP\n\\fB");
    h5g_man_text(out, bold);
    fprintf(out, "\\fR");
    if (i->tag[len]) {
      fprintf(out, "%s\\fI", i->tag[len] == '=' ? "=" : " ");
      h5g_man_text(out, i->tag + len + 1);
      fprintf(out, "\\fR");
    }
    fputc('\n', out);
    h5g_man_text(out, i->text);
    fputc('\n', out);
  }
}

void h5g_man_examples(FILE *out, const h5g_manual_item *examples) {
  for (const h5g_manual_item *e = examples; e->tag; e++) {
    fprintf(out, ".PP\n");
    h5g_man_text(out, e->text);
    fprintf(out, "\n.RS\n.nf\n");
    h5g_man_text(out, e->tag);
    fprintf(out, "\n.fi\n.RE\n");
  }
}
