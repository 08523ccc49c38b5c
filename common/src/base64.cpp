#include "vmgate/common/base64.hpp"

#include <array>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace vmgate::common {

namespace {

constexpr std::array<char, 64> alphabet = {
    'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J', 'K', 'L', 'M', 'N', 'O', 'P', 'Q', 'R', 'S', 'T', 'U', 'V',
    'W', 'X', 'Y', 'Z', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p', 'q', 'r',
    's', 't', 'u', 'v', 'w', 'x', 'y', 'z', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '+', '/'};

// The two characters of every 12 bits: a group of three bytes is two lookups (the webhook
// encodes each JSON Patch it answers with, and this halves the work per byte).
constexpr std::array<std::array<char, 2>, 4096> make_pairs() {
  std::array<std::array<char, 2>, 4096> pairs{};
  for (std::size_t bits = 0; bits < pairs.size(); ++bits) {
    pairs[bits] = {alphabet[bits >> 6U], alphabet[bits & 0x3FU]};
  }
  return pairs;
}
constexpr std::array<std::array<char, 2>, 4096> pairs = make_pairs();

}  // namespace

void base64_encode_into(std::string_view bytes, std::span<char> out) {
  if (out.size() != base64_encoded_size(bytes.size())) {
    throw std::invalid_argument("base64_encode_into: the output is not base64_encoded_size(input) long");
  }
  const auto byte = [&bytes](std::size_t i) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i]));
  };
  const auto sextet = [](std::uint32_t group, unsigned shift) { return alphabet[(group >> shift) & 0x3FU]; };
  std::size_t i = 0;
  char* o = out.data();
  for (; i + 3 <= bytes.size(); i += 3, o += 4) {
    const std::uint32_t group = (byte(i) << 16U) | (byte(i + 1) << 8U) | byte(i + 2);
    std::memcpy(o, pairs[group >> 12U].data(), 2);
    std::memcpy(o + 2, pairs[group & 0xFFFU].data(), 2);
  }
  const std::size_t rest = bytes.size() - i;
  if (rest == 1) {
    const std::uint32_t group = byte(i) << 16U;
    o[0] = sextet(group, 18);
    o[1] = sextet(group, 12);
    o[2] = '=';
    o[3] = '=';
  } else if (rest == 2) {
    const std::uint32_t group = (byte(i) << 16U) | (byte(i + 1) << 8U);
    o[0] = sextet(group, 18);
    o[1] = sextet(group, 12);
    o[2] = sextet(group, 6);
    o[3] = '=';
  }
}

std::string base64_encode(std::string_view bytes) {
  std::string out(base64_encoded_size(bytes.size()), '=');
  base64_encode_into(bytes, out);
  return out;
}

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

}  // namespace vmgate::common
