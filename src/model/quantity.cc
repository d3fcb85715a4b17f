#include "model/quantity.h"

#include <algorithm>
#include <array>

namespace podflow::model {
namespace {

using int128 = __int128;

constexpr int128 kNanoPerUnit = 1'000'000'000;
// Largest magnitude we hold: 10^29 nano-units (10^20 units), beyond any
// real resource and well inside __int128.
constexpr int128 Pow10(int n) {
  int128 v = 1;
  for (int i = 0; i < n; ++i) v *= 10;
  return v;
}
constexpr int128 kMaxNano = Pow10(29);

std::string Int128ToString(int128 v) {
  if (v == 0) return "0";
  bool negative = v < 0;
  unsigned __int128 u = negative ? static_cast<unsigned __int128>(-v) : static_cast<unsigned __int128>(v);
  std::string digits;
  while (u > 0) {
    digits.push_back(static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  if (negative) digits.push_back('-');
  std::reverse(digits.begin(), digits.end());
  return digits;
}

struct Suffix {
  std::string_view text;
  Quantity::Format format;
  int base;      // 10 or 2
  int exponent;  // power of `base`
};

constexpr std::array<Suffix, 16> kSuffixes = {{
    {"Ki", Quantity::Format::kBinarySI, 2, 10},
    {"Mi", Quantity::Format::kBinarySI, 2, 20},
    {"Gi", Quantity::Format::kBinarySI, 2, 30},
    {"Ti", Quantity::Format::kBinarySI, 2, 40},
    {"Pi", Quantity::Format::kBinarySI, 2, 50},
    {"Ei", Quantity::Format::kBinarySI, 2, 60},
    {"n", Quantity::Format::kDecimalSI, 10, -9},
    {"u", Quantity::Format::kDecimalSI, 10, -6},
    {"m", Quantity::Format::kDecimalSI, 10, -3},
    {"", Quantity::Format::kDecimalSI, 10, 0},
    {"k", Quantity::Format::kDecimalSI, 10, 3},
    {"M", Quantity::Format::kDecimalSI, 10, 6},
    {"G", Quantity::Format::kDecimalSI, 10, 9},
    {"T", Quantity::Format::kDecimalSI, 10, 12},
    {"P", Quantity::Format::kDecimalSI, 10, 15},
    {"E", Quantity::Format::kDecimalSI, 10, 18},
}};

Status Bad(std::string_view text, std::string_view why) {
  return Status::Invalid("quantity \"" + std::string(text) + "\" " + std::string(why) +
                         "; must match the regular expression "
                         "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

Result<Quantity> Quantity::Parse(std::string_view text) {
  if (text.empty()) return Bad(text, "is empty");
  size_t pos = 0;
  bool negative = false;
  if (text[pos] == '+' || text[pos] == '-') {
    negative = text[pos] == '-';
    ++pos;
  }
  // Mantissa digits: integer part and fraction, as one big integer plus a
  // count of fractional digits.
  std::string digits;
  int fraction_digits = 0;
  bool seen_point = false;
  size_t mantissa_start = pos;
  for (; pos < text.size(); ++pos) {
    char c = text[pos];
    if (IsDigit(c)) {
      digits.push_back(c);
      if (seen_point) ++fraction_digits;
    } else if (c == '.' && !seen_point) {
      seen_point = true;
    } else {
      break;
    }
  }
  if (digits.empty() || (pos - mantissa_start == 1 && seen_point)) {
    return Bad(text, "has no number");
  }
  std::string_view suffix = text.substr(pos);

  Format format = Format::kDecimalSI;
  int base = 10;
  int exponent = 0;
  bool matched = false;
  for (const Suffix& s : kSuffixes) {
    if (s.text == suffix) {
      format = s.format;
      base = s.base;
      exponent = s.exponent;
      matched = true;
      break;
    }
  }
  if (!matched && suffix.size() >= 2 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    // Decimal exponent: e3, E-6, e+9.
    size_t i = 1;
    bool exp_negative = false;
    if (suffix[i] == '+' || suffix[i] == '-') {
      exp_negative = suffix[i] == '-';
      ++i;
    }
    if (i < suffix.size() && std::all_of(suffix.begin() + i, suffix.end(), IsDigit) &&
        suffix.size() - i <= 3) {
      exponent = std::stoi(std::string(suffix.substr(i)));
      if (exp_negative) exponent = -exponent;
      format = Format::kDecimalExponent;
      matched = true;
    }
  }
  if (!matched) return Bad(text, "has an unknown suffix \"" + std::string(suffix) + "\"");

  // value = digits * 10^-fraction_digits * base^exponent, in nano-units.
  // Strip leading zeros to keep the integer small; 20 significant digits
  // times 2^60 still fits in 128 bits.
  size_t first = digits.find_first_not_of('0');
  digits = first == std::string::npos ? "0" : digits.substr(first);
  if (digits.size() > 20) return Bad(text, "has too many digits");
  int128 mantissa = 0;
  for (char c : digits) mantissa = mantissa * 10 + (c - '0');

  // nano = mantissa * 10^shift * 2^binary_exponent, where a negative shift
  // divides, rounding any remainder up (Kubernetes rounds up below nano).
  int shift = 9 - fraction_digits + (base == 10 ? exponent : 0);
  if (base == 2) mantissa <<= exponent;
  int128 nano = 0;
  if (shift >= 0) {
    if (shift > 29 || (mantissa != 0 && mantissa > kMaxNano / Pow10(shift))) {
      return Bad(text, "is too large");
    }
    nano = mantissa * Pow10(shift);
  } else if (-shift > 38) {
    nano = mantissa == 0 ? 0 : 1;
  } else {
    int128 divisor = Pow10(-shift);
    nano = mantissa / divisor + (mantissa % divisor != 0 ? 1 : 0);
  }
  if (nano > kMaxNano) return Bad(text, "is too large");

  Quantity q;
  q.nano_ = negative ? -nano : nano;
  q.format_ = format;
  return q;
}

Quantity Quantity::FromUnits(int64_t units, Format format) {
  Quantity q;
  q.nano_ = static_cast<int128>(units) * kNanoPerUnit;
  q.format_ = format;
  return q;
}

Quantity Quantity::FromMilli(int64_t milli) {
  Quantity q;
  q.nano_ = static_cast<int128>(milli) * 1'000'000;
  return q;
}

Quantity& Quantity::operator+=(const Quantity& other) {
  if (nano_ == 0) format_ = other.format_;
  nano_ += other.nano_;
  return *this;
}

Quantity& Quantity::operator-=(const Quantity& other) {
  if (nano_ == 0) format_ = other.format_;
  nano_ -= other.nano_;
  return *this;
}

namespace {

int64_t Saturate(int128 v) {
  if (v > INT64_MAX) return INT64_MAX;
  if (v < INT64_MIN) return INT64_MIN;
  return static_cast<int64_t>(v);
}

// Divides rounding away from zero, as Kubernetes' Value()/MilliValue() do.
int128 DivideUp(int128 v, int128 d) {
  int128 q = v / d;
  if (v % d != 0) q += v > 0 ? 1 : -1;
  return q;
}

}  // namespace

int64_t Quantity::Value() const { return Saturate(DivideUp(nano_, kNanoPerUnit)); }
int64_t Quantity::MilliValue() const { return Saturate(DivideUp(nano_, 1'000'000)); }

std::string Quantity::ToString() const {
  if (nano_ == 0) return "0";
  int128 magnitude = nano_ < 0 ? -nano_ : nano_;
  std::string sign = nano_ < 0 ? "-" : "";

  // Binary form: only for whole numbers of at least 1024 in magnitude.
  if (format_ == Format::kBinarySI && magnitude % kNanoPerUnit == 0 &&
      magnitude >= 1024 * kNanoPerUnit) {
    int128 units = magnitude / kNanoPerUnit;
    static constexpr std::array<std::string_view, 7> kBinary = {"", "Ki", "Mi", "Gi",
                                                                 "Ti", "Pi", "Ei"};
    size_t step = 0;
    while (step + 1 < kBinary.size() && units % 1024 == 0) {
      units /= 1024;
      ++step;
    }
    return sign + Int128ToString(units) + std::string(kBinary[step]);
  }

  // Decimal: the largest power of 1000 (from 10^-9 to 10^18) that divides
  // the value exactly.
  int exponent = -9;
  int128 mantissa = magnitude;
  while (exponent < 18 && mantissa % 1000 == 0) {
    mantissa /= 1000;
    exponent += 3;
  }
  if (format_ == Format::kDecimalExponent) {
    std::string suffix = exponent == 0 ? "" : "e" + std::to_string(exponent);
    return sign + Int128ToString(mantissa) + suffix;
  }
  static constexpr std::array<std::string_view, 10> kDecimal = {"n", "u", "m", "",  "k",
                                                                 "M", "G", "T", "P", "E"};
  return sign + Int128ToString(mantissa) + std::string(kDecimal[(exponent + 9) / 3]);
}

}  // namespace podflow::model
