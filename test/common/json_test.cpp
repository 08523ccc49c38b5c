// Tests of admission/src/json.cpp: the lookup and editing helpers every rule uses.
#include <gtest/gtest.h>

#include "support/json_test_support.hpp"
#include "vmgate/common/json.hpp"

namespace vmgate::json {
namespace {

using vmgate::testing::dump;
using vmgate::testing::parse;

TEST(JsonHelpers, FindReturnsNullForMissingMembersAndNonObjects) {
  const Document doc = parse(R"({"a":{"b":"x","n":1},"list":[1]})");
  EXPECT_EQ(dump(*find(doc, "a")), R"({"b":"x","n":1})");
  EXPECT_EQ(find(doc, "missing"), nullptr);
  EXPECT_EQ(find(*find(doc, "list"), "b"), nullptr);
  EXPECT_EQ(find_path(doc, {"a", "b"})->GetString(), std::string("x"));
  EXPECT_EQ(find_path(doc, {"a", "b", "c"}), nullptr);
  EXPECT_EQ(find_string(*find(doc, "a"), "n"), "");  // a number is not a string
  EXPECT_EQ(find_object(doc, "list"), nullptr);
  EXPECT_NE(find_array(doc, "list"), nullptr);
}

TEST(JsonHelpers, HasAndIsZeroFollowGoPointerAndZeroValueSemantics) {
  const Document doc = parse(R"({"null":null,"empty":"","zero":0,"no":false,"yes":true,"obj":{}})");
  EXPECT_FALSE(has(doc, "null"));
  EXPECT_TRUE(has(doc, "empty"));
  EXPECT_FALSE(has(doc, "absent"));
  EXPECT_TRUE(is_zero(find(doc, "null")));
  EXPECT_TRUE(is_zero(find(doc, "empty")));
  EXPECT_TRUE(is_zero(find(doc, "zero")));
  EXPECT_TRUE(is_zero(find(doc, "no")));
  EXPECT_TRUE(is_zero(nullptr));
  EXPECT_FALSE(is_zero(find(doc, "yes")));
  EXPECT_FALSE(is_zero(find(doc, "obj")));
}

TEST(JsonHelpers, EnsureSetEraseKeepMemberOrder) {
  Document doc = parse(R"({"a":1,"b":null,"c":3})");
  ensure_object(doc, "b", doc.GetAllocator());      // null becomes {}
  ensure_array(doc, "d", doc.GetAllocator());       // appended
  set_string(doc, "a", "one", doc.GetAllocator());  // replaced in place
  erase(doc, "c");
  erase(doc, "absent");
  EXPECT_EQ(dump(doc), R"({"a":"one","b":{},"d":[]})");
}

TEST(JsonHelpers, EqualComparesNumbersByValueAndObjectsByKey) {
  EXPECT_TRUE(equal(parse(R"({"a":1,"b":[1,2]})"), parse(R"({"b":[1,2],"a":1.0})")));
  EXPECT_FALSE(equal(parse(R"({"a":1})"), parse(R"({"a":1,"b":2})")));
  EXPECT_FALSE(equal(parse(R"([1,2])"), parse(R"([2,1])")));
  EXPECT_FALSE(equal(parse(R"("1")"), parse("1")));
}

TEST(JsonHelpers, TypeNamesForMessages) {
  const Document doc = parse(R"([null,true,1,"s",[],{}])");
  std::string names;
  for (const Value& value : doc.GetArray()) {
    names += std::string(type_name(value)) + ";";
  }
  EXPECT_EQ(names, "null;a boolean;a number;a string;an array;an object;");
}

TEST(JsonHelpers, MisuseOfRapidJsonThrowsInsteadOfUndefinedBehaviour) {
  const Document doc = parse("42");
  EXPECT_THROW((void)doc.GetString(), MisuseError);
}

}  // namespace
}  // namespace vmgate::json

namespace vmgate::json {
namespace {

TEST(JsonMakeString, ADefaultConstructedViewIsTheEmptyString) {
  Document document;
  const Value value = make_string(std::string_view{}, document.GetAllocator());
  ASSERT_TRUE(value.IsString());
  EXPECT_EQ(value.GetStringLength(), 0U);
}

TEST(JsonShare, TheSameStorageNotACopy) {
  const Document source =
      parse(R"({"object":{"a":[1,2]},"array":[{"b":"text"}],"text":"longer than a value holds inline","number":7})");
  Document target;
  target.SetObject();
  for (auto it = source.MemberBegin(); it != source.MemberEnd(); ++it) {
    target.AddMember(Value(it->name, target.GetAllocator()), share(it->value), target.GetAllocator());
  }
  EXPECT_EQ(dump(target), dump(source));
  // Containers and strings point at the source's storage: nothing was copied.
  EXPECT_EQ(&*find(target, "object")->MemberBegin(), &*find(source, "object")->MemberBegin());
  EXPECT_EQ(find(target, "array")->Begin(), find(source, "array")->Begin());
  EXPECT_EQ(find(target, "text")->GetString(), find(source, "text")->GetString());
  // And a deep copy of a shared value is the source's content again, in storage of its own.
  const Value copied = copy(*find(target, "object"), target.GetAllocator());
  EXPECT_EQ(dump(copied), R"({"a":[1,2]})");
  EXPECT_NE(&*copied.MemberBegin(), &*find(source, "object")->MemberBegin());
}

}  // namespace
}  // namespace vmgate::json
