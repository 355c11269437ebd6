/* h5g_options_parse (src/options.h): every option's accepted forms and values, the defaults,
 * and every usage error (H5G_ERR_USAGE with a message that names the problem); where carried
 * datasets land (h5g_options_carry_target), h5g_options_moves_records, and the usage text
 * naming every option and ending with three examples; --version's first line. */
#include "src/about.h"
#include "src/options.h"
#include "base/error.h"
#include "tests/support/check.h"

#include <getopt.h>
#include <limits.h>

enum { MAX_WORDS = 80, WORD_BYTES = 1024 };

static h5g_options opt;

/* glibc's getopt keeps its place inside a cluster of short options ("-qv") from one parse to the
 * next unless optind is set to 0, which h5g_options_parse does not do (it sets 1). The test
 * resets it before each parse, except in check_reparse, which checks exactly that. */
static int reset_before_parse = 1;
static void reset_getopt(void) {
  static char name[] = "reset";
  char *none[] = {name, NULL};
  optind = 0;
  getopt(1, none, "");
}

/* Parses h5gsort's argv made of `words` (NULL-terminated). The parser keeps pointers into argv
 * and splits --carry lists in place, so the words are copied into storage that lives until the
 * next parse. Returns the status; the error record is left for the caller to look at. */
static int parse_words(const char *const *words) {
  static char storage[MAX_WORDS][WORD_BYTES];
  static char *argv[MAX_WORDS + 1];
  int argc = 0;
  h5g_error_clear();
  if (reset_before_parse) reset_getopt();
  argv[argc] = strcpy(storage[argc], "h5gsort");
  argc++;
  for (; *words && argc < MAX_WORDS; words++, argc++) {
    snprintf(storage[argc], WORD_BYTES, "%s", *words);
    argv[argc] = storage[argc];
  }
  argv[argc] = NULL;
  return h5g_options_parse(argc, argv, &opt);
}
#define PARSE(...) parse_words((const char *const[]){__VA_ARGS__, NULL})

static int same(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

/* A command line that must parse; `what` names it in failures. */
#define EXPECT_PARSES(what, ...)                                                                  \
  EXPECT(PARSE(__VA_ARGS__) == H5G_OK, "%s: rejected: %s", what, h5g_error_message())

/* A command line that must be a usage error whose message contains `text`. */
#define EXPECT_USAGE(text, ...)                                                                   \
  do {                                                                                            \
    int usage_rc_ = PARSE(__VA_ARGS__);                                                           \
    EXPECT(usage_rc_ == H5G_ERR_USAGE && strstr(h5g_error_message(), text) != NULL,               \
           "expected a usage error mentioning \"%s\", got status %d: '%s'", text, usage_rc_,      \
           h5g_error_message());                                                                  \
  } while (0)

static void check_defaults(void) {
  EXPECT_PARSES("minimal", "in.h5", "out.h5", "-d", "/keys");
  EXPECT(same(opt.input, "in.h5") && same(opt.output, "out.h5"), "files %s %s", opt.input, opt.output);
  EXPECT(same(opt.dataset, "/keys") && same(opt.output_dataset, "/keys") &&
             same(opt.against_dataset, "/keys"),
         "output and against datasets default to the dataset");
  EXPECT(!opt.report && !opt.check && !opt.index_out && !opt.key_field && opt.ncarry == 0 &&
             !opt.stable && !opt.against,
         "no report, check, index, key field, carry, stable or against by default");
  EXPECT(opt.backend == H5G_BACKEND_AUTO && opt.exchange == H5G_EXCHANGE_AUTO, "auto by default");
  EXPECT(opt.device_memory == 0, "device memory %llu", (unsigned long long)opt.device_memory);
  EXPECT(!opt.descending && !opt.force && !opt.verify && !opt.quiet && !opt.verbose &&
             !opt.progress && !opt.help && !opt.version,
         "flags off by default");
  EXPECT(!h5g_options_moves_records(&opt), "keys alone move no records");
}

static void check_forms(void) {
  /* -d and --dataset, separate or joined, anywhere among the file arguments */
  static const char *const forms[][5] = {{"-d", "/g/k", "in.h5", "out.h5", NULL},
                                         {"-d/g/k", "in.h5", "out.h5", NULL, NULL},
                                         {"--dataset", "/g/k", "in.h5", "out.h5", NULL},
                                         {"--dataset=/g/k", "in.h5", "out.h5", NULL, NULL},
                                         {"in.h5", "-d", "/g/k", "out.h5", NULL},
                                         {"in.h5", "out.h5", "--dataset", "/g/k", NULL}};
  for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
    EXPECT(parse_words(forms[i]) == H5G_OK, "form %zu: %s", i, h5g_error_message());
    EXPECT(same(opt.dataset, "/g/k") && same(opt.input, "in.h5") && same(opt.output, "out.h5"),
           "form %zu: dataset %s, files %s %s", i, opt.dataset, opt.input, opt.output);
  }
  EXPECT_PARSES("--output-dataset", "in", "out", "-d", "/k", "--output-dataset", "/sorted/k");
  EXPECT(same(opt.output_dataset, "/sorted/k") && same(opt.dataset, "/k"), "output dataset %s",
         opt.output_dataset);
  EXPECT_PARSES("--output-dataset=", "in", "out", "-d", "/k", "--output-dataset=/o");
  EXPECT(same(opt.output_dataset, "/o"), "output dataset %s", opt.output_dataset);

  EXPECT_PARSES("flags", "in", "out", "-d", "/k", "--descending", "--force", "--verify", "--stable",
                "--progress");
  EXPECT(opt.descending && opt.force && opt.verify && opt.stable && opt.progress, "flags set");
  EXPECT(opt.progress_seconds == 10, "--progress alone: a line every %g s", opt.progress_seconds);
  EXPECT_PARSES("--progress=", "in", "out", "-d", "/k", "--progress=2.5");
  EXPECT(opt.progress && opt.progress_seconds == 2.5, "--progress=2.5: %g", opt.progress_seconds);
  /* an optional value: only as --progress=SECONDS, so "--progress 5" leaves 5 a file argument */
  EXPECT_USAGE("got 3 file arguments", "in", "out", "-d", "/k", "--progress", "5");
  EXPECT_USAGE("--progress takes seconds", "in", "out", "-d", "/k", "--progress=0");
  EXPECT_USAGE("--progress takes seconds", "in", "out", "-d", "/k", "--progress=x");
  EXPECT_USAGE("--progress takes seconds", "in", "out", "-d", "/k", "--progress=");
  EXPECT_PARSES("-q", "in", "out", "-d", "/k", "-q");
  EXPECT(opt.quiet && !opt.verbose, "-q");
  EXPECT_PARSES("--quiet", "in", "out", "-d", "/k", "--quiet");
  EXPECT(opt.quiet, "--quiet");
  EXPECT_PARSES("-v", "in", "out", "-d", "/k", "-v");
  EXPECT(opt.verbose && !opt.quiet, "-v");
  EXPECT_PARSES("--verbose", "in", "out", "-d", "/k", "--verbose");
  EXPECT(opt.verbose, "--verbose");
  EXPECT_PARSES("-qv", "in", "out", "-d", "/k", "-qv");
  EXPECT(opt.quiet && !opt.verbose, "-q wins over -v");
  EXPECT_PARSES("--report", "in", "out", "-d", "/k", "--report", "r.json");
  EXPECT(same(opt.report, "r.json"), "report %s", opt.report);
  EXPECT_PARSES("--report=", "in", "out", "-d", "/k", "--report=r2.json");
  EXPECT(same(opt.report, "r2.json"), "report %s", opt.report);
  /* getopt_long takes an unambiguous prefix of a long option */
  EXPECT_PARSES("--desc", "in", "out", "-d", "/k", "--desc");
  EXPECT(opt.descending, "--desc is --descending");
}

static void check_words(void) {
  static const char *const backends[] = {"auto", "cuda", "cpu"};
  static const h5g_backend_choice backend_values[] = {H5G_BACKEND_AUTO, H5G_BACKEND_CUDA, H5G_BACKEND_CPU};
  static const char *const exchanges[] = {"auto", "mpi", "nccl"};
  static const h5g_exchange_choice exchange_values[] = {H5G_EXCHANGE_AUTO, H5G_EXCHANGE_MPI, H5G_EXCHANGE_NCCL};
  char joined[64];
  for (int i = 0; i < 3; i++) {
    EXPECT_PARSES(backends[i], "in", "out", "-d", "/k", "--backend", backends[i]);
    EXPECT(opt.backend == backend_values[i], "--backend %s", backends[i]);
    snprintf(joined, sizeof joined, "--backend=%s", backends[i]);
    EXPECT_PARSES(joined, "in", "out", "-d", "/k", joined);
    EXPECT(opt.backend == backend_values[i], "%s", joined);
    EXPECT_PARSES(exchanges[i], "in", "out", "-d", "/k", "--exchange", exchanges[i]);
    EXPECT(opt.exchange == exchange_values[i], "--exchange %s", exchanges[i]);
    snprintf(joined, sizeof joined, "--exchange=%s", exchanges[i]);
    EXPECT_PARSES(joined, "in", "out", "-d", "/k", joined);
    EXPECT(opt.exchange == exchange_values[i], "%s", joined);
  }
  EXPECT_USAGE("--backend takes auto, cuda or cpu, not 'gpu'", "in", "out", "-d", "/k", "--backend", "gpu");
  EXPECT_USAGE("--backend takes", "in", "out", "-d", "/k", "--backend", "CPU");
  EXPECT_USAGE("--backend takes", "in", "out", "-d", "/k", "--backend=");
  EXPECT_USAGE("--exchange takes auto, mpi or nccl, not 'ucx'", "in", "out", "-d", "/k", "--exchange", "ucx");
  EXPECT_USAGE("--exchange takes", "in", "out", "-d", "/k", "--exchange", "MPI");

  static const struct {
    const char *text;
    uint64_t bytes;
  } good[] = {{"512M", 512ull << 20}, {"4G", 4ull << 30}, {"1.5GiB", 3ull << 29}, {"4096", 4096},
              {"64k", 64ull << 10}};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    EXPECT_PARSES(good[i].text, "in", "out", "-d", "/k", "--device-memory", good[i].text);
    EXPECT(opt.device_memory == good[i].bytes, "--device-memory %s: %llu", good[i].text,
           (unsigned long long)opt.device_memory);
  }
  EXPECT_PARSES("--device-memory=", "in", "out", "-d", "/k", "--device-memory=8M");
  EXPECT(opt.device_memory == 8ull << 20, "--device-memory=8M: %llu", (unsigned long long)opt.device_memory);
  static const char *const bad[] = {"0", "0G", "abc", "-1", "1X", "", "16E"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    EXPECT_USAGE("--device-memory takes a size", "in", "out", "-d", "/k", "--device-memory", bad[i]);
}

static void check_records(void) {
  EXPECT_PARSES("--carry list", "in", "out", "-d", "/k", "--carry", "/a,/g/b,/c");
  EXPECT(opt.ncarry == 3 && same(opt.carry[0], "/a") && same(opt.carry[1], "/g/b") &&
             same(opt.carry[2], "/c"),
         "--carry /a,/g/b,/c gave %d paths", opt.ncarry);
  EXPECT(h5g_options_moves_records(&opt), "--carry moves records");
  EXPECT_PARSES("--carry repeated", "in", "out", "-d", "/k", "--carry", "/a", "--carry=/b,/c");
  EXPECT(opt.ncarry == 3 && same(opt.carry[0], "/a") && same(opt.carry[2], "/c"), "%d paths", opt.ncarry);
  EXPECT_PARSES("--index-out", "in", "out", "-d", "/k", "--index-out", "/idx");
  EXPECT(same(opt.index_out, "/idx") && h5g_options_moves_records(&opt), "--index-out %s", opt.index_out);
  EXPECT_PARSES("--key-field", "in", "out", "-d", "/table", "--key-field", "energy");
  EXPECT(same(opt.key_field, "energy") && h5g_options_moves_records(&opt), "--key-field %s", opt.key_field);

  /* H5G_MAX_CARRY paths, then one more */
  char list[H5G_MAX_CARRY * 8 + 8] = "";
  size_t used = 0;
  for (int i = 0; i < H5G_MAX_CARRY; i++)
    used += (size_t)snprintf(list + used, sizeof list - used, "%s/c%d", i ? "," : "", i);
  EXPECT_PARSES("H5G_MAX_CARRY paths", "in", "out", "-d", "/k", "--carry", list);
  EXPECT(opt.ncarry == H5G_MAX_CARRY, "%d paths carried", opt.ncarry);
  snprintf(list + used, sizeof list - used, ",/one_more");
  EXPECT_USAGE("at most", "in", "out", "-d", "/k", "--carry", list);

  static const char *const bad_lists[] = {"", ",/a", "/a,", "/a,,/b"};
  for (size_t i = 0; i < sizeof bad_lists / sizeof *bad_lists; i++)
    EXPECT_USAGE("--carry takes a comma-separated list", "in", "out", "-d", "/k", "--carry", bad_lists[i]);
  EXPECT_USAGE("--carry paths must be absolute, not 'b'", "in", "out", "-d", "/k", "--carry", "/a,b");
  EXPECT_USAGE("--carry /k names a key dataset", "in", "out", "-d", "/k", "--carry", "/a,/k");
  EXPECT_USAGE("--index-out needs an absolute path", "in", "out", "-d", "/k", "--index-out", "idx");
  EXPECT_USAGE("--index-out needs an absolute path", "in", "out", "-d", "/k", "--index-out", "/k");
  EXPECT_USAGE("--index-out needs an absolute path", "in", "out", "-d", "/k", "--output-dataset", "/o",
               "--index-out", "/o");
  /* two outputs at one path, or one inside another */
  EXPECT_USAGE("two outputs would land", "in", "out", "-d", "/k", "--carry", "/a,/a");
  EXPECT_USAGE("two outputs would land", "in", "out", "-d", "/k", "--carry", "/a", "--index-out", "/a");
  EXPECT_USAGE("two outputs would land", "in", "out", "-d", "/k", "--carry", "/k/x");
  EXPECT_USAGE("two outputs would land", "in", "out", "-d", "/k", "--index-out", "/k/i");
  EXPECT_USAGE("two outputs would land", "in", "out", "-d", "/g/k", "--carry", "/g");
  /* --output-dataset moves carried datasets beside the keys: /g/a and /h/a both land at /o/a */
  EXPECT_USAGE("two outputs would land", "in", "out", "-d", "/k", "--output-dataset", "/o/k",
               "--carry", "/g/a,/h/a");
  EXPECT_PARSES("prefix is not nesting", "in", "out", "-d", "/k", "--carry", "/kx", "--index-out", "/k2");
}

/* The target, allocated by h5g_options_carry_target, compared and freed. */
static int lands_at(const char *path, const char *expected) {
  char *target = h5g_options_carry_target(&opt, path);
  int ok = same(target, expected);
  if (!ok) fprintf(stderr, "carried %s lands at %s, not %s\n", path, target, expected);
  free(target);
  return ok;
}

static void check_carry_target(void) {
  EXPECT_PARSES("same output dataset", "in", "out", "-d", "/k", "--carry", "/g/a");
  EXPECT(lands_at("/g/a", "/g/a"), "carried /g/a, same output dataset");
  EXPECT_PARSES("moved output dataset", "in", "out", "-d", "/k", "--output-dataset", "/out/sorted", "--carry", "/g/a");
  EXPECT(lands_at("/g/a", "/out/a"), "carried /g/a, moved output dataset");
  EXPECT_PARSES("output dataset at the root", "in", "out", "-d", "/g/k", "--output-dataset", "/k2", "--carry", "/g/a");
  EXPECT(lands_at("/g/a", "/a"), "carried /g/a, output dataset at the root");
}

static void check_check_mode(void) {
  EXPECT_PARSES("--check", "--check", "sorted.h5", "-d", "/k");
  EXPECT(opt.check && same(opt.input, "sorted.h5") && !opt.output && !opt.against, "--check FILE");
  EXPECT_PARSES("--check --against", "--check", "sorted.h5", "-d", "/k", "--against", "in.h5",
                "--against-dataset", "/raw");
  EXPECT(opt.check && same(opt.against, "in.h5") && same(opt.against_dataset, "/raw"),
         "against %s:%s", opt.against, opt.against_dataset);
  EXPECT_PARSES("--check --against, dataset default", "--check", "sorted.h5", "-d", "/k", "--against=in.h5",
                "--descending");
  EXPECT(same(opt.against_dataset, "/k") && opt.descending, "against dataset %s", opt.against_dataset);
  EXPECT_USAGE("--check takes one file, got 0", "--check", "-d", "/k");
  EXPECT_USAGE("--check takes one file, got 2", "--check", "a.h5", "b.h5", "-d", "/k");
  EXPECT_USAGE("--against goes with --check", "in", "out", "-d", "/k", "--against", "x.h5");
  EXPECT_USAGE("--against goes with --check", "in", "out", "-d", "/k", "--against-dataset", "/x");
  EXPECT_USAGE("do not go with --check", "--check", "s.h5", "-d", "/k", "--carry", "/a");
  EXPECT_USAGE("do not go with --check", "--check", "s.h5", "-d", "/k", "--index-out", "/i");
  EXPECT_USAGE("missing -d/--dataset", "--check", "s.h5");
}

static void check_usage_errors(void) {
  EXPECT_USAGE("missing -d/--dataset PATH", "in", "out");
  EXPECT_USAGE("expected INPUT.h5 and OUTPUT.h5, got 0 file arguments", "-d", "/k");
  EXPECT_USAGE("expected INPUT.h5 and OUTPUT.h5, got 1 file argument ", "in", "-d", "/k");
  EXPECT_USAGE("expected INPUT.h5 and OUTPUT.h5, got 3 file arguments", "a", "b", "c", "-d", "/k");
  EXPECT_USAGE("unknown option '--bogus'", "in", "out", "-d", "/k", "--bogus");
  EXPECT_USAGE("unknown option '--bogus=1'", "in", "out", "-d", "/k", "--bogus=1");
  EXPECT_USAGE("unknown option '-x'", "in", "out", "-d", "/k", "-x");
  EXPECT_USAGE("unknown option '--verify=yes'", "in", "out", "-d", "/k", "--verify=yes");
  EXPECT_USAGE("ambiguous option '--d'", "in", "out", "-d", "/k", "--d"); /* a prefix of several */
  EXPECT_USAGE("ambiguous option '--h'", "in", "out", "-d", "/k", "--h"); /* --help, --host-memory */
  EXPECT_USAGE("option -d needs a value", "in", "out", "-d");
  EXPECT_USAGE("option --dataset needs a value", "in", "out", "--dataset");
  EXPECT_USAGE("needs a value", "in", "out", "-d", "/k", "--backend");
  EXPECT_USAGE("needs a value", "in", "out", "-d", "/k", "--device-memory");
  EXPECT_USAGE("needs a value", "in", "out", "-d", "/k", "--carry");
  EXPECT_USAGE("dataset path must be absolute and name a dataset, not 'k'", "in", "out", "-d", "k");
  EXPECT_USAGE("dataset path must be absolute and name a dataset, not '/'", "in", "out", "-d", "/");
  EXPECT_USAGE("output dataset path must be absolute and name a dataset, not 'o'", "in", "out", "-d",
               "/k", "--output-dataset", "o");
  EXPECT_USAGE("output dataset path must be absolute and name a dataset, not '/'", "in", "out", "-d",
               "/k", "--output-dataset", "/");
  EXPECT_USAGE("output dataset path must be absolute", "in", "out", "-d", "/k", "--output-dataset",
               "o", "--carry", "/a");
}

static void check_help_version(void) {
  /* -h, --help and --version need no files and no dataset */
  static const char *const words[][2] = {{"-h", NULL}, {"--help", NULL}, {"--version", NULL}};
  for (int i = 0; i < 3; i++) {
    EXPECT(parse_words(words[i]) == H5G_OK, "%s alone: %s", words[i][0], h5g_error_message());
    EXPECT(i < 2 ? opt.help && !opt.version : opt.version && !opt.help, "%s", words[i][0]);
  }
  EXPECT_PARSES("--help among errors", "--help", "--backend", "cpu", "only-one-file");
  EXPECT(opt.help, "--help");
  /* but a bad option before them is still an error */
  EXPECT_USAGE("unknown option", "--bogus", "--help");

  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  EXPECT(out != NULL, "open_memstream");
  if (!out) return;
  h5g_options_usage(out);
  fclose(out);
  static const char *const named[] = {
      "usage:", "-d, --dataset", "--output-dataset", "--descending", "--force", "--backend",
      "--exchange", "--device-memory", "--verify", "--report", "--carry", "--index-out",
      "--key-field", "--stable", "--check", "--against", "--against-dataset", "-q, --quiet",
      "--layout keep|contiguous|chunked", "--chunk ROWS", "--compress keep|none|gzip[=L]",
      "--whole-file", "--order asc|desc", "--na-position first|last", "--key-column J", "--top K",
      "--unique", "--counts PATH", "--scratch DIR", "--no-spill",
      "-v, --verbose", "--progress", "-h, --help", "--version", "Exit codes"};
  for (size_t i = 0; i < sizeof named / sizeof *named; i++)
    EXPECT(strstr(text, named[i]) != NULL, "the usage text does not name %s", named[i]);
  /* it ends with the man page's first three examples (src/about.c), each command on a line */
  const char *examples = strstr(text, "\nExamples:\n"), *at = examples;
  EXPECT(examples != NULL, "the usage text has no examples");
  for (int i = 0; at && i < 3; i++) {
    char line[256];
    snprintf(line, sizeof line, "\n    %s\n", h5g_about_examples[i].tag);
    at = strstr(at, line);
    EXPECT(at != NULL, "the usage text does not show example %d: %s", i + 1, line);
    if (at && i == 2)
      EXPECT(at + strlen(line) == text + len, "the usage text goes on after its third example");
  }
  free(text);

  /* --version: its first line is "h5gsort X.Y.Z", which scripts parse */
  out = open_memstream(&text, &len);
  EXPECT(out != NULL, "open_memstream");
  if (!out) return;
  h5g_about_version(out);
  fclose(out);
  EXPECT(strncmp(text, "h5gsort " H5G_VERSION "\n", strlen("h5gsort " H5G_VERSION "\n")) == 0,
         "--version's first line: %s", text);
  EXPECT(strstr(text, "\nbackends: cpu") && strstr(text, "\nMPI: ") && strstr(text, "\nHDF5: "),
         "--version names no backends, MPI or HDF5: %s", text);
  free(text);
}

/* Several keys (-d repeated, --key-field and --key-column lists) and --order. */
static void check_keys(void) {
  EXPECT_PARSES("one key", "in", "out", "-d", "/k");
  EXPECT(h5g_options_key_count(&opt) == 1 && !h5g_options_composed(&opt), "one key");
  EXPECT_PARSES("three -d", "in", "out", "-d", "/a", "-d", "/g/b", "--dataset=/c", "--order",
                "asc,desc,asc");
  h5g_key_source k = h5g_options_key(&opt, 1);
  EXPECT(h5g_options_key_count(&opt) == 3 && h5g_options_composed(&opt) &&
             same(opt.dataset, "/a") && same(k.dataset, "/g/b") && k.descending && !k.field &&
             k.column == -1 && !h5g_options_key(&opt, 2).descending && same(opt.output_dataset, "/a"),
         "three -d: %d keys", h5g_options_key_count(&opt));
  EXPECT(!h5g_options_moves_records(&opt), "several -d alone move no records");
  EXPECT_PARSES("--descending applies to every key", "in", "out", "-d", "/a", "-d", "/b",
                "--descending");
  EXPECT(h5g_options_key(&opt, 0).descending && h5g_options_key(&opt, 1).descending, "descending");
  EXPECT_PARSES("fields", "in", "out", "-d", "/t", "--key-field", "run,time", "--order", "desc,asc");
  k = h5g_options_key(&opt, 1);
  EXPECT(h5g_options_key_count(&opt) == 2 && same(opt.key_field, "run") && same(k.field, "time") &&
             same(k.dataset, "/t") && !k.descending && h5g_options_key(&opt, 0).descending &&
             h5g_options_moves_records(&opt),
         "fields");
  EXPECT_PARSES("one column", "in", "out", "-d", "/m", "--key-column", "3");
  EXPECT(h5g_options_key_count(&opt) == 1 && h5g_options_composed(&opt) &&
             h5g_options_key(&opt, 0).column == 3 && h5g_options_moves_records(&opt),
         "one column");
  EXPECT_PARSES("columns", "in", "out", "-d", "/m", "--key-column", "2,0");
  EXPECT(h5g_options_key_count(&opt) == 2 && h5g_options_key(&opt, 0).column == 2 &&
             h5g_options_key(&opt, 1).column == 0, "columns");
  EXPECT_PARSES("--order desc of one key", "in", "out", "-d", "/k", "--order", "desc");
  EXPECT(opt.descending && !h5g_options_composed(&opt), "--order desc of one key");
  EXPECT_USAGE("one per key", "in", "out", "-d", "/a", "-d", "/b", "--order", "asc");
  EXPECT_USAGE("one per key", "in", "out", "-d", "/a", "--order", "asc,desc");
  EXPECT_USAGE("one per key", "in", "out", "-d", "/m", "--key-column", "0,1", "--order", "asc");
  EXPECT_USAGE("asc or desc", "in", "out", "-d", "/a", "--order", "up");
  EXPECT_USAGE("comma-separated", "in", "out", "-d", "/a", "--order", "asc,");
  EXPECT_USAGE("not both", "in", "out", "-d", "/a", "--order", "desc", "--descending");
  /* --na-position: every key's, in either direction; numpy's place without it; --check too */
  EXPECT_PARSES("no --na-position", "in", "out", "-d", "/a", "-d", "/b");
  EXPECT(opt.na_position == H5G_NA_DEFAULT && h5g_options_key(&opt, 1).na == H5G_NA_DEFAULT,
         "without --na-position: numpy's place");
  EXPECT_PARSES("--na-position first", "in", "out", "-d", "/a", "-d", "/b", "--order", "asc,desc",
                "--na-position", "first");
  EXPECT(h5g_options_key(&opt, 0).na == H5G_NA_FIRST &&
             h5g_options_key(&opt, 1).na == H5G_NA_FIRST && h5g_options_key(&opt, 1).descending,
         "--na-position first: every key");
  EXPECT_PARSES("--na-position=last", "--check", "s.h5", "-d", "/k", "--descending",
                "--na-position=last");
  EXPECT(opt.check && opt.na_position == H5G_NA_LAST && opt.descending, "--check --na-position");
  EXPECT_USAGE("--na-position takes first or last, not 'up'", "in", "out", "-d", "/a",
               "--na-position", "up");
  EXPECT_USAGE("--na-position takes first or last, not ''", "in", "out", "-d", "/a",
               "--na-position=");
  EXPECT_USAGE("--output-dataset goes with one -d", "in", "out", "-d", "/a", "-d", "/b",
               "--output-dataset", "/c");
  EXPECT_USAGE("do not go with --key-field", "in", "out", "-d", "/a", "-d", "/b", "--key-field", "x");
  EXPECT_USAGE("do not go with --key-field", "in", "out", "-d", "/a", "-d", "/b", "--key-column", "0");
  EXPECT_USAGE("do not go together", "in", "out", "-d", "/a", "--key-field", "x", "--key-column", "0");
  EXPECT_USAGE("column numbers from 0", "in", "out", "-d", "/m", "--key-column", "-1");
  EXPECT_USAGE("column numbers from 0", "in", "out", "-d", "/m", "--key-column", "1,x");
  EXPECT_USAGE("comma-separated", "in", "out", "-d", "/m", "--key-column", "1,,2");
  EXPECT_USAGE("key 2 repeats key 1", "in", "out", "-d", "/m", "--key-column", "1,1");
  EXPECT_USAGE("key 2 repeats key 1", "in", "out", "-d", "/t", "--key-field", "a,a");
  EXPECT_USAGE("names a key dataset", "in", "out", "-d", "/a", "-d", "/b", "--carry", "/b");
  EXPECT_USAGE("name a dataset", "in", "out", "-d", "/a", "-d", "/");
}

/* --top K, --unique, --counts */
static void check_selection(void) {
  EXPECT_PARSES("default", "in", "out", "-d", "/k");
  EXPECT(opt.top == -1 && !opt.unique && !opt.counts, "no selection by default");
  EXPECT_PARSES("--top", "in", "out", "-d", "/k", "--top", "1000");
  EXPECT(opt.top == 1000 && !h5g_options_composed(&opt), "--top 1000: %lld", (long long)opt.top);
  EXPECT_PARSES("--top 0", "in", "out", "-d", "/k", "--top=0");
  EXPECT(opt.top == 0, "--top 0");
  EXPECT_PARSES("--unique --counts", "in", "out", "-d", "/k", "--unique", "--counts", "/g/./n");
  EXPECT(opt.unique && same(opt.counts, "/g/n") && h5g_options_composed(&opt), "--unique");
  EXPECT_PARSES("--unique --top", "in", "out", "-d", "/k", "--unique", "--top", "5");
  /* a K past any N keeps everything, even past 2^63 - 1 */
  EXPECT_PARSES("--top huge", "in", "out", "-d", "/k", "--top", "99999999999999999999");
  EXPECT(opt.top == LLONG_MAX, "--top 99999999999999999999: %lld", (long long)opt.top);
  EXPECT_PARSES("--top 2^63-1", "in", "out", "-d", "/k", "--top", "9223372036854775807");
  EXPECT(opt.top == LLONG_MAX, "--top 9223372036854775807: %lld", (long long)opt.top);
  static const char *const bad[] = {"-1", "x", "1.5", "", "5k", "+3", " 3"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    EXPECT_USAGE("--top takes", "in", "out", "-d", "/k", "--top", bad[i]);
  EXPECT_USAGE("--counts goes with --unique", "in", "out", "-d", "/k", "--counts", "/n");
  EXPECT_USAGE("absolute", "in", "out", "-d", "/k", "--unique", "--counts", "n");
  EXPECT_USAGE("two outputs would land", "in", "out", "-d", "/k", "--unique", "--counts", "/k");
  EXPECT_USAGE("two outputs would land", "in", "out", "-d", "/k", "--unique", "--counts", "/i",
               "--index-out", "/i");
  EXPECT_USAGE("do not go with --check", "--check", "f", "-d", "/k", "--top", "3");
  EXPECT_USAGE("do not go with --check", "--check", "f", "-d", "/k", "--unique");
}

/* Two parses in one process, the second with a different command line. */
static void check_reparse(void) {
  reset_before_parse = 0;
  EXPECT_PARSES("first parse", "in", "out", "-d", "/k", "-q");
  EXPECT_PARSES("second parse (h5g_options_parse must reset getopt: optind = 0 with glibc)", "in",
                "out", "-d", "/k", "--quiet");
  EXPECT(opt.quiet && same(opt.input, "in"), "second parse");
  reset_before_parse = 1;
}

/* Dataset paths are made canonical as HDF5's traversal reads them: empty and "." components
 * dropped. ".." is refused for every option that names a dataset (HDF5 reads it as a link named
 * "..", not the group above: a lexical collapse named another dataset, issue 56 item 2), and a
 * name that merely starts with dots is a name. */
static void check_paths(void) {
  static const char *const cases[][2] = {
      {"/./g//k/", "/g/k"}, {"//k", "/k"}, {"/a/..b", "/a/..b"}, {"/.k", "/.k"},
      {"/a/b../c", "/a/b../c"}, {"/...", "/..."}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    EXPECT_PARSES(cases[i][0], "in", "out", "-d", "/k", "--output-dataset", cases[i][0]);
    EXPECT(same(opt.output_dataset, cases[i][1]), "%s resolved to %s, not %s", cases[i][0],
           opt.output_dataset, cases[i][1]);
  }
  EXPECT_PARSES("-d resolved", "in", "out", "-d", "/./g/./k", "--carry", "/x/./c,//d",
                "--index-out", "/i/./j");
  EXPECT(same(opt.dataset, "/g/k") && same(opt.output_dataset, "/g/k"), "-d %s", opt.dataset);
  EXPECT(opt.ncarry == 2 && same(opt.carry[0], "/x/c") && same(opt.carry[1], "/d"), "carry");
  EXPECT(same(opt.index_out, "/i/j"), "index %s", opt.index_out);
  static const char *const dotdot[] = {"/a/../k", "/..", "/../k", "/a/..", "/a/b/../../c"};
  for (size_t i = 0; i < sizeof dotdot / sizeof dotdot[0]; i++) {
    const char *p = dotdot[i];
    EXPECT_USAGE("-d: '..' in a dataset path is refused", "in", "out", "-d", p);
    EXPECT_USAGE("--output-dataset: '..'", "in", "out", "-d", "/k", "--output-dataset", p);
    EXPECT_USAGE("--carry: '..'", "in", "out", "-d", "/k", "--carry", p);
    EXPECT_USAGE("--index-out: '..'", "in", "out", "-d", "/k", "--index-out", p);
    EXPECT_USAGE("--counts: '..'", "in", "out", "-d", "/k", "--unique", "--counts", p);
    EXPECT_USAGE("--against-dataset: '..'", "--check", "o.h5", "-d", "/k", "--against", "in.h5",
                 "--against-dataset", p);
  }
  EXPECT_USAGE("key 2 repeats key 1", "in", "out", "-d", "/a", "-d", "/./a");
  EXPECT_USAGE("name a dataset", "in", "out", "-d", "/k", "--carry", "/c,/.");
  EXPECT_USAGE("--index-out needs", "in", "out", "-d", "/k", "--index-out", "/.");
}

/* --scratch and --no-spill (issue 54): off by default; the directory as given. */
static void check_spill(void) {
  EXPECT_PARSES("default", "in", "out", "-d", "/k");
  EXPECT(!opt.scratch && !opt.no_spill, "a scratch directory or --no-spill by default");
  EXPECT_PARSES("--scratch", "in", "out", "-d", "/k", "--scratch", "/tmp/s", "--no-spill");
  EXPECT(same(opt.scratch, "/tmp/s") && opt.no_spill, "--scratch %s, --no-spill %d",
         opt.scratch ? opt.scratch : "(none)", opt.no_spill);
  EXPECT_USAGE("needs a value", "in", "out", "-d", "/k", "--scratch");
}

static void check_io_threads(void) {
  EXPECT_PARSES("--io-threads", "in", "out", "-d", "/k", "--io-threads", "7");
  EXPECT(opt.io_threads == 7, "io threads %d", opt.io_threads);
  EXPECT_PARSES("default", "in", "out", "-d", "/k");
  EXPECT(opt.io_threads == 0, "default io threads %d", opt.io_threads);
  static const char *const bad[] = {"0", "-1", "x", "3x", "", "1025"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    EXPECT_USAGE("--io-threads takes", "in", "out", "-d", "/k", "--io-threads", bad[i]);
}

/* --layout, --chunk, --compress, --whole-file: each accepted form, and each usage error. */
static void check_storage(void) {
  EXPECT_PARSES("storage default", "in", "out", "-d", "/k");
  EXPECT(opt.storage.layout == H5G_LAYOUT_KEEP && opt.storage.chunk_rows == 0 &&
             opt.storage.compress == H5G_COMPRESS_KEEP && !opt.whole_file,
         "keep the input's storage, no --whole-file by default");
  static const char *const layouts[] = {"keep", "contiguous", "chunked"};
  static const h5g_layout_choice layout_values[] = {H5G_LAYOUT_KEEP, H5G_LAYOUT_CONTIGUOUS,
                                                    H5G_LAYOUT_CHUNKED};
  for (int i = 0; i < 3; i++) {
    EXPECT_PARSES(layouts[i], "in", "out", "-d", "/k", "--layout", layouts[i]);
    EXPECT(opt.storage.layout == layout_values[i], "--layout %s", layouts[i]);
  }
  EXPECT_PARSES("--chunk", "in", "out", "-d", "/k", "--chunk", "7");
  EXPECT(opt.storage.chunk_rows == 7 && opt.storage.layout == H5G_LAYOUT_KEEP, "--chunk 7");
  EXPECT_PARSES("--chunk=", "in", "out", "-d", "/k", "--chunk=1000000", "--layout=chunked");
  EXPECT(opt.storage.chunk_rows == 1000000 && opt.storage.layout == H5G_LAYOUT_CHUNKED, "--chunk=");
  static const struct {
    const char *word;
    h5g_compress_choice compress;
    int level;
  } compress[] = {{"keep", H5G_COMPRESS_KEEP, 0}, {"none", H5G_COMPRESS_NONE, 0},
                  {"gzip", H5G_COMPRESS_GZIP, 6}, {"gzip=0", H5G_COMPRESS_GZIP, 0},
                  {"gzip=9", H5G_COMPRESS_GZIP, 9}, {"gzip=4", H5G_COMPRESS_GZIP, 4}};
  for (size_t i = 0; i < sizeof compress / sizeof *compress; i++) {
    EXPECT_PARSES(compress[i].word, "in", "out", "-d", "/k", "--compress", compress[i].word);
    EXPECT(opt.storage.compress == compress[i].compress && opt.storage.gzip_level == compress[i].level,
           "--compress %s: %d level %d", compress[i].word, (int)opt.storage.compress,
           opt.storage.gzip_level);
  }
  EXPECT_PARSES("gzip with chunked", "in", "out", "-d", "/k", "--layout", "chunked", "--compress",
                "gzip=1", "--chunk", "64");
  EXPECT_PARSES("none with contiguous", "in", "out", "-d", "/k", "--layout", "contiguous",
                "--compress", "none");
  EXPECT_PARSES("--whole-file", "in", "out", "-d", "/k", "--whole-file");
  EXPECT(opt.whole_file, "--whole-file");

  EXPECT_USAGE("--layout takes keep, contiguous or chunked, not 'compact'", "in", "out", "-d", "/k",
               "--layout", "compact");
  static const char *const bad_chunks[] = {"0", "-1", "x", "7x", "", "18446744073709551616"};
  for (size_t i = 0; i < sizeof bad_chunks / sizeof *bad_chunks; i++)
    EXPECT_USAGE("--chunk takes a number of rows", "in", "out", "-d", "/k", "--chunk", bad_chunks[i]);
  EXPECT_USAGE("--compress takes keep, none or gzip[=0-9], not 'lzf'", "in", "out", "-d", "/k",
               "--compress", "lzf");
  EXPECT_USAGE("--compress takes", "in", "out", "-d", "/k", "--compress", "GZIP");
  static const char *const bad_levels[] = {"gzip=10", "gzip=-1", "gzip=", "gzip=x", "gzip=66"};
  for (size_t i = 0; i < sizeof bad_levels / sizeof *bad_levels; i++)
    EXPECT_USAGE("takes a level from 0 to 9", "in", "out", "-d", "/k", "--compress", bad_levels[i]);
  EXPECT_USAGE("--compress gzip needs chunked storage", "in", "out", "-d", "/k", "--layout",
               "contiguous", "--compress", "gzip");
  EXPECT_USAGE("--chunk needs chunked storage", "in", "out", "-d", "/k", "--chunk", "10", "--layout",
               "contiguous");
  EXPECT_USAGE("needs a value", "in", "out", "-d", "/k", "--chunk");
  EXPECT_USAGE("do not go with --check", "--check", "s.h5", "-d", "/k", "--whole-file");
  EXPECT_USAGE("do not go with --check", "--check", "s.h5", "-d", "/k", "--compress", "none");
}

int main(void) {
  check_defaults();
  check_storage();
  check_paths();
  check_io_threads();
  check_spill();
  check_forms();
  check_words();
  check_records();
  check_carry_target();
  check_check_mode();
  check_usage_errors();
  check_help_version();
  check_keys();
  check_selection();
  check_reparse();
  h5g_error_clear();
  return test_summary("test_options");
}
