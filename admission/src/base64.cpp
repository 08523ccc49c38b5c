#include "vmgate/admission/base64.hpp"

namespace vmgate::admission {

std::optional<std::string> base64_decode(std::string_view text) {
  std::string clean;
  clean.reserve(text.size());
  for (char c : text) {
    if (c != '\n' && c != '\r') {  // Go's decoder skips line breaks
      clean.push_back(c);
    }
  }
  if (clean.size() % 4 != 0) {
    return std::nullopt;
  }
  auto sextet = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') {
      return c - 'A';
    }
    if (c >= 'a' && c <= 'z') {
      return c - 'a' + 26;
    }
    if (c >= '0' && c <= '9') {
      return c - '0' + 52;
    }
    if (c == '+') {
      return 62;
    }
    if (c == '/') {
      return 63;
    }
    return -1;
  };
  std::string out;
  out.reserve(clean.size() / 4 * 3);
  for (std::size_t i = 0; i < clean.size(); i += 4) {
    const bool last = i + 4 == clean.size();
    std::size_t padding = 0;
    if (last && clean[i + 3] == '=') {
      padding = clean[i + 2] == '=' ? 2 : 1;
    }
    unsigned bits = 0;
    for (std::size_t j = 0; j < 4; ++j) {
      if (j >= 4 - padding) {
        bits <<= 6U;
        continue;
      }
      const int v = sextet(clean[i + j]);
      if (v < 0) {
        return std::nullopt;
      }
      bits = (bits << 6U) | static_cast<unsigned>(v);
    }
    out.push_back(static_cast<char>((bits >> 16U) & 0xFFU));
    if (padding < 2) {
      out.push_back(static_cast<char>((bits >> 8U) & 0xFFU));
    }
    if (padding < 1) {
      out.push_back(static_cast<char>(bits & 0xFFU));
    }
  }
  return out;
}

}  // namespace vmgate::admission
