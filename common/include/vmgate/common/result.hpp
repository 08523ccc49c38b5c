#pragma once
// A value or an error message: the project's stand-in for std::expected (clang 14 lacks it).
#include <string>
#include <utility>
#include <variant>

namespace vmgate {

/// What went wrong, in words meant for the user (KubeVirt's wording where it has one).
struct Error {
  std::string message;
};

template <class T, class E = Error>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(E error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  [[nodiscard]] bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  /// Precondition: ok().
  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  /// Precondition: !ok().
  [[nodiscard]] const E& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, E> state_;
};

/// The result of an operation that returns nothing but may fail: `return Ok{};` or an Error.
struct Ok {};
using Status = Result<Ok>;

}  // namespace vmgate
