/* h5g_parse_size: accepted spellings with their exact byte counts, and rejected inputs. */
#include "base/size_parse.h"
#include "tests/support/check.h"

#include <stddef.h>

int main(void) {
  static const struct {
    const char *text;
    uint64_t bytes;
  } good[] = {
      {"0", 0},
      {"4096", 4096},
      {"10B", 10},
      {"10b", 10},
      {"64k", 64ull << 10},
      {"64K", 64ull << 10},
      {"64KB", 64ull << 10},
      {"64kib", 64ull << 10},
      {"512M", 512ull << 20},
      {"512MiB", 512ull << 20},
      {"2G", 2ull << 30},
      {"2g", 2ull << 30},
      {"1.5GiB", 3ull << 29},
      {"1.5k", 1536},
      {"0.5M", 512ull << 10},
      {"1.1K", 1126}, /* 1126.4 rounds down */
      {"1T", 1ull << 40},
      {"1tb", 1ull << 40},
      {"2P", 2ull << 50},
      {"15E", 15ull << 60},
      {"007", 7},
      {"18446744073709551615", UINT64_MAX},
      {"17179869183G", 17179869183ull << 30},
      {"15.999999999999999999E", (15ull << 60) + ((1ull << 60) - 2)}, /* 18 nines: floor */
  };
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    uint64_t bytes = 12345;
    const int rc = h5g_parse_size(good[i].text, &bytes);
    EXPECT(rc == 0 && bytes == good[i].bytes, "\"%s\": rc %d, %llu bytes, expected %llu",
           good[i].text, rc, (unsigned long long)bytes, (unsigned long long)good[i].bytes);
  }

  static const char *const bad[] = {
      "", "-1", "-1G", "+1G", "abc", "G", "1X", "1.5", "1.", ".5G", "1GG", "1 G", " 1", "1G ",
      "5iB", "1Gi", "1GiBx", "1BB", "1.2.3M", "0x10", "1e3",
      "18446744073709551616",       /* 2^64 */
      "99999999999999999999999",    /* far too many digits */
      "17179869184G",               /* 2^64 bytes */
      "16E",                        /* 2^64 bytes */
      "15.9999999999999999999E",    /* 19 fraction digits */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    uint64_t bytes = 12345;
    const int rc = h5g_parse_size(bad[i], &bytes);
    EXPECT(rc == -1, "\"%s\" was accepted as %llu bytes", bad[i], (unsigned long long)bytes);
    EXPECT(bytes == 12345, "\"%s\" was rejected but changed the output", bad[i]);
  }
  uint64_t bytes = 0;
  EXPECT(h5g_parse_size(NULL, &bytes) == -1, "NULL was accepted");
  return test_summary("test_size_parse");
}
