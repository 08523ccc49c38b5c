#include "support/field_error_support.hpp"

namespace vmgate::testing {

std::string describe(const admission::ErrorList& causes) {
  std::string out;
  for (const admission::FieldError& cause : causes) {
    out += std::string(admission::to_string(cause.type)) + " " + cause.field + ": " + cause.message + "\n";
  }
  return out;
}

}  // namespace vmgate::testing
