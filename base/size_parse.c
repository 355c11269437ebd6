/* Size strings: DIGITS[.DIGITS][K|M|G|T|P|E][B|iB], case-insensitive, powers of 1024.
 * A fraction needs a unit ("1.5G"; "1.5" alone is not a whole number of bytes) and is rounded
 * down to whole bytes. Everything is exact integer arithmetic, so large sizes do not lose bits. */
#include "base/size_parse.h"

#include <ctype.h>
#include <stddef.h>

/* 10^19 overflows uint64_t, so a fraction keeps at most this many digits. */
enum { MAX_FRACTION_DIGITS = 18 };

static int unit_shift(char unit, unsigned *shift) {
  static const char units[] = "KMGTPE";
  for (unsigned i = 0; units[i] != '\0'; i++) {
    if (toupper((unsigned char)unit) == units[i]) {
      *shift = 10 * (i + 1);
      return 0;
    }
  }
  return -1;
}

/* floor(numerator * 2^shift / denominator) for numerator < denominator <= 10^18, by binary long
 * division (the result is < 2^shift, and the running remainder stays below 2 * 10^18). */
static uint64_t scaled_fraction(uint64_t numerator, uint64_t denominator, unsigned shift) {
  uint64_t quotient = 0;
  for (unsigned bit = 0; bit < shift; bit++) {
    numerator *= 2;
    quotient *= 2;
    if (numerator >= denominator) {
      numerator -= denominator;
      quotient += 1;
    }
  }
  return quotient;
}

int h5g_parse_size(const char *text, uint64_t *bytes) {
  if (text == NULL) return -1;
  const char *p = text;

  uint64_t whole = 0;
  size_t whole_digits = 0;
  for (; isdigit((unsigned char)*p); p++, whole_digits++) {
    unsigned digit = (unsigned)(*p - '0');
    if (whole > (UINT64_MAX - digit) / 10) return -1;
    whole = whole * 10 + digit;
  }

  uint64_t fraction = 0, fraction_scale = 1;
  size_t fraction_digits = 0;
  int has_point = *p == '.';
  if (has_point) {
    for (p++; isdigit((unsigned char)*p); p++, fraction_digits++) {
      if (fraction_digits == MAX_FRACTION_DIGITS) return -1;
      fraction = fraction * 10 + (uint64_t)(*p - '0');
      fraction_scale *= 10;
    }
  }
  if (whole_digits == 0 || (has_point && fraction_digits == 0)) return -1;

  unsigned shift = 0;
  int has_unit = *p != '\0' && unit_shift(*p, &shift) == 0;
  if (has_unit) p++;
  if (has_point && !has_unit) return -1;

  /* Byte suffix: "B" after any number, "iB" only after a unit ("KiB", not "5iB"). */
  if (has_unit && (*p == 'i' || *p == 'I')) {
    p++;
    if (*p != 'b' && *p != 'B') return -1;
  }
  if (*p == 'b' || *p == 'B') p++;
  if (*p != '\0') return -1;

  if (shift > 0 && whole > (UINT64_MAX >> shift)) return -1;
  /* whole << shift <= 2^64 - 2^shift and the fraction adds less than 2^shift: no overflow */
  *bytes = (whole << shift) +
           (has_point ? scaled_fraction(fraction, fraction_scale, shift) : 0);
  return 0;
}
