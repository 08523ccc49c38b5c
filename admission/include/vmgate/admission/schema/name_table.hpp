#pragma once
// The lookup of a member name among a schema definition's property names, for the walks of
// structure.cpp (TreeChecker) and known_fields.cpp, which look up every member of every
// object of every VM they check. A linear scan compared each name against up to a few dozen
// properties (libc memcmp was a third of both walks), and std::unordered_map hashed every byte
// through an out-of-line std::_Hash_bytes; this table hashes a name with at most two 8-byte
// loads, and its slots are placed at construction so that nearly every lookup reads one slot
// and compares the name once.
//
// An open-addressed table, at most half full, probed linearly. A name's hash reads its length
// and its first and last bytes (all of them up to 16); the table picks, among a fixed list of
// multipliers, the one that puts the names nearest their home slots (usually all in them). A
// found name was compared byte for byte, so the hash decides only the speed, never the answer.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>
#include <vector>

namespace vmgate::admission {

class NameTable {
 public:
  static constexpr std::size_t absent = std::numeric_limits<std::size_t>::max();

  NameTable() : NameTable(std::vector<std::string_view>{}) {}

  /// A table of `names` (distinct; a repeated name is found at its first position). The views
  /// must outlive the table.
  explicit NameTable(const std::vector<std::string_view>& names) {
    std::size_t size = 2;
    while (size < 2 * names.size()) {
      size *= 2;
    }
    std::vector<Sample> samples;
    samples.reserve(names.size());
    for (const std::string_view name : names) {
      samples.push_back(sample_of(name));
    }
    // The multiplier that leaves the fewest probes in total; stop at the first perfect one.
    std::size_t best_total = std::numeric_limits<std::size_t>::max();
    std::uint64_t best_multiplier = multipliers[0];
    for (const std::uint64_t multiplier : multipliers) {
      place(names, samples, size, multiplier);
      const std::size_t total = total_displacement(samples);
      if (total < best_total) {
        best_total = total;
        best_multiplier = multiplier;
      }
      if (total == 0) {
        return;
      }
    }
    place(names, samples, size, best_multiplier);
  }

  /// The position of `name` in the constructor's list, or `absent`.
  [[nodiscard]] std::size_t find(std::string_view name) const {
    const Sample sample = sample_of(name);
    for (std::size_t slot = home(sample.key());; slot = (slot + 1) & mask_) {
      const Slot& candidate = slots_[slot];
      if (candidate.position == absent) {
        return absent;
      }
      if (candidate.sample.same_as(sample) &&
          (name.size() <= Sample::covered ||
           std::memcmp(candidate.name.data() + Sample::edge, name.data() + Sample::edge,
                       name.size() - Sample::covered) == 0)) {
        return candidate.position;
      }
    }
  }

 private:
  // A name's length and its first and last bytes, read with at most two loads: all of a name
  // up to `covered` bytes long, so that comparing samples compares those names entirely (no
  // libc memcmp call); of a longer one, all but the middle bytes [edge, length - edge).
  struct Sample {
    static constexpr std::size_t edge = 8;
    static constexpr std::size_t covered = 2 * edge;

    std::uint64_t head = 0;
    std::uint64_t tail = 0;
    std::size_t length = 0;

    [[nodiscard]] bool same_as(const Sample& other) const {
      return length == other.length && head == other.head && tail == other.tail;
    }
    [[nodiscard]] std::uint64_t key() const {
      return (head * 0x9E3779B97F4A7C15ULL) ^ ((tail + length) * 0xC2B2AE3D27D4EB4FULL);
    }
  };

  struct Slot {
    Sample sample;
    std::string_view name;
    std::size_t position = absent;
  };

  // Odd 64-bit constants (from splitmix64, murmur3 and xxhash); any fixed list would do.
  static constexpr std::uint64_t multipliers[] = {
      0x9E3779B97F4A7C15ULL, 0xBF58476D1CE4E5B9ULL, 0x94D049BB133111EBULL, 0xD6E8FEB86659FD93ULL,
      0xA0761D6478BD642FULL, 0xE7037ED1A0B428DBULL, 0x8EBC6AF09C88C6E3ULL, 0x589965CC75374CC3ULL,
      0x1D8E4E27C47D124FULL, 0xC2B2AE3D27D4EB4FULL, 0x165667B19E3779F9ULL, 0x27D4EB2F165667C5ULL,
      0xFF51AFD7ED558CCDULL, 0xC4CEB9FE1A85EC53ULL, 0x87C37B91114253D5ULL, 0x4CF5AD432745937FULL,
  };

  static std::uint64_t load64(const char* bytes) {
    std::uint64_t value = 0;
    std::memcpy(&value, bytes, sizeof value);
    return value;
  }
  static std::uint64_t load32(const char* bytes) {
    std::uint32_t value = 0;
    std::memcpy(&value, bytes, sizeof value);
    return value;
  }

  static Sample sample_of(std::string_view name) {
    const std::size_t length = name.size();
    const char* bytes = name.data();
    Sample sample;
    sample.length = length;
    if (length >= 8) {
      sample.head = load64(bytes);
      sample.tail = load64(bytes + length - 8);
    } else if (length >= 4) {
      sample.head = load32(bytes);
      sample.tail = load32(bytes + length - 4);
    } else if (length > 0) {
      const auto byte = [bytes](std::size_t at) { return std::uint64_t{static_cast<unsigned char>(bytes[at])}; };
      sample.head = byte(0) | (byte(length / 2) << 8U);
      sample.tail = byte(length - 1);
    }
    return sample;
  }

  [[nodiscard]] std::size_t home(std::uint64_t key) const {
    return static_cast<std::size_t>((key * multiplier_) >> shift_) & mask_;
  }

  void place(const std::vector<std::string_view>& names, const std::vector<Sample>& samples, std::size_t size,
             std::uint64_t multiplier) {
    slots_.assign(size, Slot{});
    mask_ = size - 1;
    multiplier_ = multiplier;
    shift_ = 64;
    for (std::size_t bits = size; bits > 1; bits /= 2) {
      --shift_;
    }
    for (std::size_t position = 0; position < names.size(); ++position) {
      std::size_t slot = home(samples[position].key());
      bool repeated = false;
      for (; slots_[slot].position != absent; slot = (slot + 1) & mask_) {
        repeated = repeated || slots_[slot].name == names[position];
      }
      if (!repeated) {
        slots_[slot] = Slot{samples[position], names[position], position};
      }
    }
  }

  [[nodiscard]] std::size_t total_displacement(const std::vector<Sample>& samples) const {
    std::size_t total = 0;
    for (std::size_t slot = 0; slot < slots_.size(); ++slot) {
      if (slots_[slot].position != absent) {
        total += (slot - home(samples[slots_[slot].position].key())) & mask_;
      }
    }
    return total;
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::uint64_t multiplier_ = multipliers[0];
  unsigned shift_ = 63;
};

}  // namespace vmgate::admission
