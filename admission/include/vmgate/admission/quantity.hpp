#pragma once
// Kubernetes resource.Quantity as an exact value type. Follows
// k8s.io/apimachinery/pkg/api/resource/quantity.go (ParseQuantity, CanonicalizeBytes, String,
// Value, Add, Sub, Mul); where vmgate differs, the comment on the member says so and why.
#include <compare>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

#include "vmgate/common/result.hpp"

namespace vmgate::admission {

namespace detail {
// Exact nano-unit counts need more than 64 bits: (2^63 - 1) * 10^9 is about 9.2e27.
__extension__ typedef __int128 quantity_int128;
}  // namespace detail

/// The texts of the errors Quantity returns. The first three are apimachinery's (ErrFormatWrong,
/// ErrNumeric, ErrSuffix), so vmgate's messages match the apiserver's and KubeVirt's.
namespace quantity_error {
inline constexpr std::string_view format =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
inline constexpr std::string_view numeric = "unable to parse numeric part of quantity";
inline constexpr std::string_view suffix = "unable to parse quantity's suffix";
/// vmgate's own: the value lies outside the range a Quantity holds (see Quantity).
inline constexpr std::string_view out_of_range = "quantity out of range";
}  // namespace quantity_error

/// A Kubernetes quantity ("1Gi", "100m", "1e3"), held exactly as a count of nano-units.
///
/// Range: any value in [-2^63, 2^63 - 1] units, with nano precision; that is the int64 range,
/// so from_int() is total and value() always fits. Kubernetes keeps larger decimal values and
/// silently caps binary ones at 2^63 - 1; vmgate reports "quantity out of range" for both
/// instead, because no KubeVirt field it checks can use such a value and a cap would change it.
///
/// Values are immutable; every operation returns a new one. Thread-safety: like an int, a
/// Quantity may be read from many threads at once.
class Quantity {
 public:
  /// How the value prints; taken from the suffix it was parsed with.
  enum class Format { decimal_si, binary_si, decimal_exponent };

  /// Zero, printed "0" (Kubernetes' zero Quantity).
  Quantity() = default;

  /// Kubernetes ParseQuantity: optional sign, digits with at most one '.', then a suffix:
  /// binary Ki Mi Gi Ti Pi Ei, decimal n u m "" k M G T P E, or an exponent e<int>/E<int>.
  /// "1." and ".5" are accepted, as in Kubernetes. Precision below 1n is rounded away from zero.
  /// Errors (quantity_error), checked in apimachinery's order:
  ///  - `format`: text its scanner rejects (whitespace, "1.5.5Gi", "1Gb", "1e+-5");
  ///  - `suffix`: an unknown suffix ("1mi", "--1", "1e") or an exponent beyond int64;
  ///  - `format` again for a number with neither digit nor '.' ("Gi", "+"), `numeric` for one
  ///    with a '.' but no digit ("."). apimachinery reads both as 0 (apimachinery#165); vmgate
  ///    follows the grammar in Quantity's documentation, which requires a digit;
  ///  - `out_of_range`: a value outside the range.
  static Result<Quantity> parse(std::string_view text);

  /// Kubernetes NewQuantity: `value` units printed in `format`, e.g. (805306368, binary_si).
  static Quantity from_int(std::int64_t value, Format format);

  [[nodiscard]] Format format() const { return format_; }
  /// -1, 0 or 1.
  [[nodiscard]] int sign() const;
  [[nodiscard]] bool is_zero() const { return nanos_ == 0; }

  /// Compare by value only: "1536Mi" == "1.5Gi", whatever the format or the text parsed.
  std::strong_ordering operator<=>(const Quantity& other) const;
  bool operator==(const Quantity& other) const { return nanos_ == other.nanos_; }

  /// Exact sum and difference. The result has this quantity's format, or the other's when this
  /// one is zero (as apimachinery's Add and Sub). Error `out_of_range` when outside the range.
  [[nodiscard]] Result<Quantity> add(const Quantity& other) const;
  [[nodiscard]] Result<Quantity> sub(const Quantity& other) const;
  /// Exact product, keeping this quantity's format. Error `out_of_range` when outside the range.
  [[nodiscard]] Result<Quantity> multiply(std::int64_t factor) const;

  /// Quantity.Value(): the value rounded up to an integer away from zero, as Kubernetes does
  /// ("2200m" is 3, "-2200m" is -3). Never fails for a value in the range; the error
  /// (`out_of_range`) remains for the signature's sake.
  [[nodiscard]] Result<std::int64_t> value() const;
  /// Quantity.MilliValue(): value * 1000 rounded away from zero. Error `out_of_range` when that
  /// exceeds int64 (beyond about 9.2e15 units).
  [[nodiscard]] Result<std::int64_t> milli_value() const;

  /// Kubernetes String(). For a parsed quantity whose text apimachinery keeps as its cached
  /// string (its fast path: e.g. "+1", "5.", "1E3", "100m"), that text as written; otherwise the
  /// canonical form: "1Gi", "1536Mi", "512", "100m", "1500m" (1.5), "2k", "1e3", "0".
  [[nodiscard]] std::string to_string() const;
  /// CanonicalizeBytes: always the canonical form, ignoring the text parsed ("+1" gives "1").
  [[nodiscard]] std::string canonical() const;

 private:
  using int128 = detail::quantity_int128;

  Quantity(int128 nanos, Format format, std::string text);

  int128 nanos_ = 0;  // the value times 10^9, exactly
  Format format_ = Format::decimal_si;
  std::string text_;  // the parsed text when Kubernetes' String() would return it
};

/// Prints to_string(); for test diagnostics.
std::ostream& operator<<(std::ostream& out, const Quantity& quantity);

}  // namespace vmgate::admission
