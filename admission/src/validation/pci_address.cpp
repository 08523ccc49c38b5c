#include "validation/pci_address.hpp"

#include <cctype>

namespace vmgate::admission::validation {

bool is_pci_address(std::string_view text) {
  constexpr std::string_view shape = "xxxx:xx:xx.f";  // x: a hex digit, f: a function 0-7
  if (text.size() != shape.size()) {
    return false;
  }
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const char c = text[i];
    const bool ok = shape[i] == 'x'   ? std::isxdigit(static_cast<unsigned char>(c)) != 0
                    : shape[i] == 'f' ? c >= '0' && c <= '7'
                                      : c == shape[i];
    if (!ok) {
      return false;
    }
  }
  return true;
}

}  // namespace vmgate::admission::validation
