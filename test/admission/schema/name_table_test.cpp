#include "vmgate/admission/schema/name_table.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "support/json_test_support.hpp"

namespace vmgate::admission {
namespace {

using testing::parse;

// Each name found at its position; and a name of the same length that differs from it in one
// byte (first, middle or last), a name one byte longer or shorter, not found unless listed.
void expect_exact(const std::vector<std::string_view>& names) {
  const NameTable table(names);
  const auto listed = [&names](std::string_view name) {
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i] == name) {
        return i;
      }
    }
    return NameTable::absent;
  };
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string name(names[i]);
    EXPECT_EQ(table.find(name), listed(name)) << name;
    std::vector<std::string> near_misses = {name + "x", name + '\0'};
    if (!name.empty()) {
      near_misses.push_back(name.substr(0, name.size() - 1));
      near_misses.push_back(name.substr(1));
      for (const std::size_t at : {std::size_t{0}, name.size() / 2, name.size() - 1}) {
        std::string changed = name;
        changed[at] = static_cast<char>(changed[at] ^ 0x20);
        near_misses.push_back(changed);
        changed[at] = static_cast<char>(changed[at] ^ 0x21);
        near_misses.push_back(changed);
      }
    }
    for (const std::string& near_miss : near_misses) {
      EXPECT_EQ(table.find(near_miss), listed(near_miss)) << name << " / " << near_miss;
    }
  }
  EXPECT_EQ(table.find(""), listed(""));
}

// The property names of every definition in an embedded schema file: the raw string literals
// of the .inc, concatenated, are one JSON document.
void collect_properties(const json::Value& node, std::vector<std::vector<std::string_view>>& tables) {
  if (node.IsObject()) {
    for (auto it = node.MemberBegin(); it != node.MemberEnd(); ++it) {
      if (json::as_view(it->name) == "properties" && it->value.IsObject()) {
        std::vector<std::string_view>& names = tables.emplace_back();
        for (auto p = it->value.MemberBegin(); p != it->value.MemberEnd(); ++p) {
          names.push_back(json::as_view(p->name));
        }
      }
      collect_properties(it->value, tables);
    }
  } else if (node.IsArray()) {
    for (const json::Value& item : node.GetArray()) {
      collect_properties(item, tables);
    }
  }
}

std::string embedded_json(const std::string& file) {
  const std::string text = testing::read_file(std::string(VMGATE_SOURCE_DIR) + "/admission/src/schema/schemas/" + file);
  std::string json;
  for (std::size_t at = text.find("R\"json("); at != std::string::npos; at = text.find("R\"json(", at)) {
    const std::size_t begin = at + 7;
    const std::size_t end = text.find(")json\"", begin);
    json += text.substr(begin, end - begin);
    at = end;
  }
  return json;
}

TEST(NameTable, FindsEveryPropertyOfEveryEmbeddedDefinitionAndNoNearMiss) {
  std::size_t definitions = 0;
  std::size_t largest = 0;
  for (const char* file : {"known_fields.inc", "common.inc", "virtualmachine.inc", "instancetype.inc"}) {
    const json::Document document = parse(embedded_json(file));
    std::vector<std::vector<std::string_view>> tables;
    collect_properties(document, tables);
    ASSERT_FALSE(tables.empty()) << file;
    for (const std::vector<std::string_view>& names : tables) {
      expect_exact(names);
      largest = std::max(largest, names.size());
    }
    definitions += tables.size();
  }
  EXPECT_GT(definitions, 100U);
  EXPECT_GT(largest, 20U);  // tables of 64 slots and more
}

TEST(NameTable, AnEmptyTableFindsNothing) {
  const NameTable empty;
  EXPECT_EQ(empty.find(""), NameTable::absent);
  EXPECT_EQ(empty.find("name"), NameTable::absent);
  expect_exact({});
}

TEST(NameTable, TheEmptyNameIsANameLikeAnyOther) {
  const NameTable table({"a", "", "b"});
  EXPECT_EQ(table.find(""), 1U);
  EXPECT_EQ(table.find("a"), 0U);
  EXPECT_EQ(table.find(std::string_view("\0", 1)), NameTable::absent);
  expect_exact({"", "a", "ab", "abc"});
}

// Every length up to past two loads, names that differ only in their last byte.
TEST(NameTable, NamesThatDifferOnlyInTheLastByte) {
  std::vector<std::string> storage;
  for (std::size_t length = 1; length <= 40; ++length) {
    for (const char last : {'a', 'b', 'c', 'A'}) {
      storage.push_back(std::string(length - 1, 'n') + last);
    }
  }
  const std::vector<std::string_view> names(storage.begin(), storage.end());
  expect_exact(names);
}

// Long names that agree in their first and last 8 bytes and differ only in the middle: the
// same hash, so they share a probe sequence; each is still told apart.
TEST(NameTable, LongNamesThatDifferOnlyInTheMiddle) {
  std::vector<std::string> storage;
  for (const std::string middle : {"", "x", "y", "xy", "yx", "middle--part", "middle--parT", "Middle--part"}) {
    storage.push_back("requiredDuring" + middle + "IgnoredDuringExecution");
  }
  const std::vector<std::string_view> names(storage.begin(), storage.end());
  expect_exact(names);
  const NameTable table(names);
  EXPECT_EQ(table.find("requiredDuringmiddle--parXIgnoredDuringExecution"), NameTable::absent);
}

TEST(NameTable, ManyNamesAndEveryByteValue) {
  std::vector<std::string> storage;
  storage.reserve(600 + 255);
  for (int i = 0; i < 600; ++i) {
    storage.push_back("p" + std::to_string(i * 7919));
  }
  for (int byte = 1; byte < 256; ++byte) {
    storage.push_back(std::string(1, static_cast<char>(byte)) + "\xff" + std::string(1, static_cast<char>(byte)));
  }
  const std::vector<std::string_view> names(storage.begin(), storage.end());
  expect_exact(names);
}

TEST(NameTable, ARepeatedNameIsFoundAtItsFirstPosition) {
  const NameTable table({"name", "image", "name"});
  EXPECT_EQ(table.find("name"), 0U);
  EXPECT_EQ(table.find("image"), 1U);
}

}  // namespace
}  // namespace vmgate::admission
