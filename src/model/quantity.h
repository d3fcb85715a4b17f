// Resource quantities as Kubernetes writes them: "500m", "0.5", "1Gi", "1G",
// "128974848", "129e6". A Quantity is exact: it holds the value in nano-units
// (10^-9) and the format its suffix implied, so that it prints back in
// Kubernetes' canonical form ("1.5" -> "1500m", "1.5Gi" -> "1536Mi").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"

namespace podflow::model {

class Quantity {
 public:
  // How the quantity is printed; chosen by the suffix it was written with.
  enum class Format { kDecimalSI, kBinarySI, kDecimalExponent };

  Quantity() = default;

  // Parses Kubernetes' quantity grammar: a signed decimal number followed by
  // a binary suffix (Ki Mi Gi Ti Pi Ei), a decimal suffix (n u m k M G T P E)
  // or a decimal exponent (e3, E-6). Digits below 10^-9 round up, as in
  // Kubernetes. Returns Invalid naming what is wrong.
  static Result<Quantity> Parse(std::string_view text);

  // Quantity of `units` whole units (cores, bytes) or milli-units.
  static Quantity FromUnits(int64_t units, Format format = Format::kDecimalSI);
  static Quantity FromMilli(int64_t milli);

  // Canonical text, as Kubernetes prints it.
  std::string ToString() const;

  // Value rounded up to whole units (bytes, cores) / to milli-units, as
  // Kubernetes' Value() and MilliValue() do. Saturates at the int64 range.
  int64_t Value() const;
  int64_t MilliValue() const;

  Format format() const { return format_; }
  // Exact sum and difference. A zero quantity takes the other's format, as
  // Kubernetes' Add and Sub do (0 + 600Mi prints as 600Mi).
  Quantity& operator+=(const Quantity& other);
  Quantity& operator-=(const Quantity& other);
  friend Quantity operator+(Quantity a, const Quantity& b) { return a += b; }
  bool IsZero() const { return nano_ == 0; }

  friend bool operator==(const Quantity& a, const Quantity& b) { return a.nano_ == b.nano_; }
  friend auto operator<=>(const Quantity& a, const Quantity& b) { return a.nano_ <=> b.nano_; }

 private:
  __int128 nano_ = 0;
  Format format_ = Format::kDecimalSI;
};

}  // namespace podflow::model
