#include "vmgate/kube/manifest_loader.hpp"

#include <gtest/gtest.h>
#include <malloc.h>

#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "server/check_test_support.hpp"
#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "support/sanitizers.hpp"

namespace vmgate::kube {
namespace {

using testing::under_asan;

using vmgate::testing::dump;
using vmgate::testing::TempDir;

// "source=json; source=json" or "error: message".
std::string describe(const Result<std::vector<ManifestObject>>& loaded) {
  if (!loaded) {
    return "error: " + loaded.error().message;
  }
  std::string out;
  for (const ManifestObject& object : *loaded) {
    out += out.empty() ? "" : "; ";
    out += object.source + "=" + dump(object.object());
  }
  return out;
}

struct Case {
  std::string name;
  std::string text;
  std::string expected;
};

void PrintTo(const Case& c, std::ostream* out) {
  *out << c.name;
}

class ParseManifests : public ::testing::TestWithParam<Case> {};

TEST_P(ParseManifests, Loads) {
  EXPECT_EQ(describe(parse_manifests(GetParam().text, "vm.yaml")), GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(
    Accepted, ParseManifests,
    ::testing::Values(
        Case{"single_yaml", "kind: A\n", R"(vm.yaml#0={"kind":"A"})"},
        Case{"multi_document", "kind: A\n---\nkind: B\n...\n---\nkind: C\n",
             R"(vm.yaml#0={"kind":"A"}; vm.yaml#1={"kind":"B"}; vm.yaml#2={"kind":"C"})"},
        Case{"empty_documents_skipped", "---\n---\nkind: A\n---\n# nothing\n---\n~\n", R"(vm.yaml#0={"kind":"A"})"},
        Case{"empty_file", "", ""}, Case{"comments_only", "# nothing here\n", ""},
        Case{"list_flattened", "kind: A\n---\napiVersion: v1\nkind: List\nitems:\n- kind: B\n- kind: C\n",
             R"(vm.yaml#0={"kind":"A"}; vm.yaml#1={"kind":"B"}; vm.yaml#2={"kind":"C"})"},
        Case{"typed_list_flattened", "kind: VirtualMachineList\nitems: [{kind: VirtualMachine}]",
             R"(vm.yaml#0={"kind":"VirtualMachine"})"},
        Case{"nested_list_flattened", "kind: List\nitems:\n- kind: A\n- kind: List\n  items: [{kind: B}]\n- kind: C\n",
             R"(vm.yaml#0={"kind":"A"}; vm.yaml#1={"kind":"B"}; vm.yaml#2={"kind":"C"})"},
        Case{"list_without_items", "kind: List\n", ""},
        Case{"yaml_sequence_of_objects", "- kind: A\n- kind: B\n", R"(vm.yaml#0={"kind":"A"}; vm.yaml#1={"kind":"B"})"},
        Case{"json_object", R"(  {"kind": "A", "n": 1.5})", R"(vm.yaml#0={"kind":"A","n":1.5})"},
        Case{"json_array", "\n[{\"kind\": \"A\"}, {\"kind\": \"List\", \"items\": [{\"kind\": \"B\"}]}]",
             R"(vm.yaml#0={"kind":"A"}; vm.yaml#1={"kind":"B"})"},
        Case{"json_empty_array", "[]", ""},
        Case{"utf8_bom", "\xEF\xBB\xBF{\"kind\": \"A\"}", R"(vm.yaml#0={"kind":"A"})"},
        Case{"yaml_typing", "a: yes\nb: \"yes\"\nc: 0x1f\nd: 010\ne: 1e3\nf: ~\ng: !!str 12\n",
             R"(vm.yaml#0={"a":true,"b":"yes","c":31,"d":8,"e":1000,"f":null,"g":"12"})"}));

INSTANTIATE_TEST_SUITE_P(
    Rejected, ParseManifests,
    ::testing::Values(
        Case{"yaml_syntax", "kind: A\nspec:\n  a: [1\n  b: 2\n", "error: vm.yaml:4:4: end of sequence flow not found"},
        Case{"yaml_duplicate_key", "metadata:\n  name: a\n  name: b\n", "error: vm.yaml:3:3: duplicate key \"name\""},
        Case{"json_syntax", "{\"kind\": \"A\",\n \"b\" 1}",
             "error: vm.yaml:2:6: Missing a colon after a name of object member"},
        Case{"json_duplicate_key", "{\"a\": 1, \"a\": 2}",
             "error: vm.yaml:1:10: duplicate key \"a\" in the top-level object"},
        Case{"scalar_document", "kind: A\n---\njust text\n",
             "error: vm.yaml:3:1: document 2 is a string, not an object"},
        Case{"list_of_scalars_document", "- 1\n- 2\n",
             "error: vm.yaml:1:1: document 1, item 0 is a number, not an object"},
        Case{"json_scalar", "[1]", "error: vm.yaml: the JSON text, item 0 is a number, not an object"},
        Case{"json_top_level_scalar", "{\"a\":1} x",
             "error: vm.yaml:1:9: The document root must not be followed by other values"},
        Case{"list_items_not_array", "kind: List\nitems: 3\n",
             "error: vm.yaml:1:1: document 1: List items must be an array, found a number"},
        Case{"list_item_not_object", "kind: List\nitems: [a]\n",
             "error: vm.yaml:1:1: document 1: List item 0 is a string, not an object"},
        Case{"invalid_utf8_yaml", "kind: A\nname: \xFF\n", "error: vm.yaml:2:7: invalid UTF-8"},
        Case{"inf_value", "kind: A\nx: .inf\n", "error: vm.yaml:2:4: infinity cannot be represented in JSON"}));

TEST(ParseManifests, InvalidUtf8InJsonNamesThePosition) {
  const std::string error = describe(parse_manifests("{\"a\": \"\xC3\x28\"}", "x.json"));
  EXPECT_EQ(error.rfind("error: x.json:1:", 0), 0U) << error;
}

TEST(ParseManifests, DeepJsonIsRejectedWithoutACrash) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string error = describe(parse_manifests(deep, "deep.json"));
  EXPECT_NE(error.find("nesting deeper than 1000 levels"), std::string::npos) << error.substr(0, 200);
  EXPECT_EQ(error.rfind("error: deep.json:", 0), 0U) << error.substr(0, 200);
}

TEST(ParseManifests, DeepYamlIsRejectedWithoutACrash) {
  const std::string deep = "a: " + std::string(100000, '[') + std::string(100000, ']');
  const std::string error = describe(parse_manifests(deep, "deep.yaml"));
  EXPECT_NE(error.find("nesting too deep"), std::string::npos) << error.substr(0, 200);
}

TEST(ParseManifests, TenMegabyteStringInJsonAndYaml) {
  const std::string big(10U << 20U, 'x');
  auto json_loaded = parse_manifests("{\"data\": \"" + big + "\"}", "big.json");
  ASSERT_TRUE(json_loaded.ok()) << json_loaded.error().message;
  EXPECT_EQ(json::find((*json_loaded)[0].object(), "data")->GetStringLength(), big.size());
  auto yaml_loaded = parse_manifests("data: " + big + "\n", "big.yaml");
  ASSERT_TRUE(yaml_loaded.ok()) << yaml_loaded.error().message;
  EXPECT_EQ(json::find((*yaml_loaded)[0].object(), "data")->GetStringLength(), big.size());
}

TEST(ParseManifests, AliasBombIsAnError) {
  std::string yaml = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 10; ++i) {
    const std::string previous = "*a" + std::to_string(i - 1);
    yaml += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + previous;
    for (int k = 1; k < 10; ++k) {
      yaml += ", " + previous;
    }
    yaml += "]\n";
  }
  const std::string error = describe(parse_manifests(yaml, "bomb.yaml"));
  EXPECT_NE(error.find("bomb.yaml:"), std::string::npos) << error;
  EXPECT_NE(error.find("once aliases are expanded"), std::string::npos) << error;
}

// Heap bytes in use (what malloc handed out and was not freed), mapped chunks included.
std::size_t heap_in_use() {
  const struct mallinfo2 info = ::mallinfo2();
  return info.uordblks + info.hblkhd;
}

// A CI runner may feed `vmgate check` anything: a stream of many tiny documents must not take
// memory out of proportion to its size (a json::Document per document took ~5 KiB each).
TEST(ParseManifests, ManySmallDocumentsTakeMemoryInProportionToTheirSize) {
  if (under_asan) {
    GTEST_SKIP() << "memory is not measurable under AddressSanitizer";
  }
  std::string yaml;
  for (int i = 0; i < 20000; ++i) {
    yaml += "kind: ConfigMap\nmetadata: {name: c" + std::to_string(i) + "}\n---\n";
  }
  const std::size_t before = heap_in_use();
  auto loaded = parse_manifests(yaml, "many.yaml");
  const std::size_t after = heap_in_use();
  const std::size_t used = after > before ? after - before : 0;
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  ASSERT_EQ(loaded->size(), 20000U);
  EXPECT_EQ(json::find_string((*loaded)[19999].object(), "kind"), "ConfigMap");
  EXPECT_EQ(dump(*json::find((*loaded)[19999].object(), "metadata")), R"({"name":"c19999"})");
  EXPECT_LT(used, 16 * yaml.size()) << used << " bytes for " << yaml.size() << " bytes of YAML";
}

TEST(ParseManifests, ObjectCountLimitNamesTheFile) {
  LoadLimits limits;
  limits.max_objects = 3;
  EXPECT_EQ(describe(parse_manifests("kind: A\n---\nkind: B\n---\nkind: C\n", "three.yaml", limits)),
            "three.yaml#0={\"kind\":\"A\"}; three.yaml#1={\"kind\":\"B\"}; three.yaml#2={\"kind\":\"C\"}");
  EXPECT_EQ(describe(parse_manifests("kind: A\n---\nkind: B\n---\nkind: C\n---\nkind: D\n", "four.yaml", limits)),
            "error: four.yaml: more than 3 objects");
  EXPECT_EQ(describe(parse_manifests(R"([{"kind":"A"},{"kind":"B"},{"kind":"C"},{"kind":"D"}])", "four.json", limits)),
            "error: four.json: more than 3 objects");
  EXPECT_EQ(describe(parse_manifests("kind: List\nitems: [{kind: A}, {kind: B}, {kind: C}, {kind: D}]\n", "list.yaml",
                                     limits)),
            "error: list.yaml: more than 3 objects");
}

// Each document below the per-document limit, together above the per-input one.
TEST(ParseManifests, AliasExpansionIsBoundedForTheWholeInput) {
  std::string yaml;
  for (int d = 0; d < 20; ++d) {
    yaml += "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
    for (int i = 1; i < 4; ++i) {
      const std::string previous = "*a" + std::to_string(i - 1);
      yaml += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + previous;
      for (int k = 1; k < 10; ++k) {
        yaml += ", " + previous;
      }
      yaml += "]\n";
    }
    yaml += "---\n";
  }
  LoadLimits limits;
  limits.max_document_bytes = std::size_t{1} << 20U;  // one document expands to ~0.3 MiB
  limits.max_stream_bytes = std::size_t{4} << 20U;
  ASSERT_TRUE(parse_manifests(yaml.substr(0, yaml.find("---")), "one.yaml", limits).ok());
  const std::string error = describe(parse_manifests(yaml, "many.yaml", limits));
  EXPECT_NE(error.find("error: many.yaml:"), std::string::npos) << error;
  EXPECT_NE(error.find("documents larger than 4 MiB in all once aliases are expanded"), std::string::npos) << error;
}

TEST(LoadManifests, DirectoriesInKubectlWalkOrder) {
  TempDir dir;
  dir.write("b.yaml", "kind: B\n");
  dir.write("a.yaml", "kind: A1\n---\nkind: A2\n");
  dir.write("a/z.json", R"({"kind": "AZ"})");
  dir.write("a/sub/y.yml", "kind: ASY\n");
  dir.write("c.txt", "kind: Ignored\n");
  dir.write("README.md", "# not a manifest\n");
  dir.write("d.YAML", "kind: IgnoredUpperCase\n");
  std::istringstream no_stdin;
  auto loaded = load_manifests({dir.path().string()}, no_stdin);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  std::vector<std::string> kinds;
  std::vector<std::string> sources;
  for (const ManifestObject& object : *loaded) {
    kinds.emplace_back(json::find_string(object.object(), "kind"));
    sources.push_back(object.source.substr(dir.path().string().size() + 1));
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"ASY", "AZ", "A1", "A2", "B"}));
  EXPECT_EQ(sources, (std::vector<std::string>{"a/sub/y.yml#0", "a/z.json#0", "a.yaml#0", "a.yaml#1", "b.yaml#0"}));
}

TEST(LoadManifests, ExplicitFilesKeepTheirOrderWhateverTheExtension) {
  TempDir dir;
  const std::string second = dir.write("2.yaml", "kind: Two\n");
  const std::string first = dir.write("1.txt", "kind: One\n");
  std::istringstream no_stdin;
  auto loaded = load_manifests({second, first}, no_stdin);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  ASSERT_EQ(loaded->size(), 2U);
  EXPECT_EQ((*loaded)[0].source, second + "#0");
  EXPECT_EQ((*loaded)[1].source, first + "#0");
}

TEST(LoadManifests, StdinIsDash) {
  std::istringstream in("kind: A\n---\nkind: B\n");
  auto loaded = load_manifests({"-"}, in);
  EXPECT_EQ(describe(loaded), R"(-#0={"kind":"A"}; -#1={"kind":"B"})");
}

TEST(LoadManifests, StdinErrorsSayDash) {
  std::istringstream in("a: [\n");
  const std::string error = describe(load_manifests({"-"}, in));
  EXPECT_EQ(error.rfind("error: -:", 0), 0U) << error;
}

TEST(LoadManifests, MissingPath) {
  std::istringstream no_stdin;
  EXPECT_EQ(describe(load_manifests({"/nonexistent/vm.yaml"}, no_stdin)),
            "error: /nonexistent/vm.yaml: no such file or directory");
}

TEST(LoadManifests, ErrorsNameTheFileInADirectory) {
  TempDir dir;
  dir.write("a.yaml", "kind: A\n");
  const std::string bad = dir.write("b.yaml", "kind: B\nkind: C\n");
  std::istringstream no_stdin;
  EXPECT_EQ(describe(load_manifests({dir.path().string()}, no_stdin)),
            "error: " + bad + ":2:1: duplicate key \"kind\"");
}

// kubectl apply -f DIR applies the files it can read and reports the others; so does
// load_manifests_keep_going. load_manifests itself still stops at the first.
TEST(LoadManifests, KeepGoingPastUnusableFiles) {
  TempDir dir;
  dir.write("a.yaml", "kind: A\n");
  const std::string bad = dir.write("b.yaml", "kind: B\nkind: C\n");
  dir.write("c.json", R"({"kind": "C"})");
  const std::string not_objects = dir.write("d.yaml", "- 1\n");
  const std::string big = dir.write("e.yaml", "data: " + std::string(2000, 'x') + "\n");
  dir.write("f.yaml", "kind: F\n");
  std::istringstream stdin_text("kind: [\n");
  LoadLimits limits;
  limits.max_input_bytes = 1000;
  auto loaded = load_manifests_keep_going({dir.path().string(), "-"}, stdin_text, limits);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  std::vector<std::string> sources;
  for (const ManifestObject& object : loaded->objects) {
    sources.push_back(object.source.substr(dir.path().string().size() + 1));
  }
  EXPECT_EQ(sources, (std::vector<std::string>{"a.yaml#0", "c.json#0", "f.yaml#0"}));
  std::vector<std::string> errors;
  for (const Error& error : loaded->unusable) {
    errors.push_back(error.message);
  }
  ASSERT_EQ(errors.size(), 4U);
  EXPECT_EQ(errors[0], bad + ":2:1: duplicate key \"kind\"");
  EXPECT_EQ(errors[1].rfind(not_objects + ":1:1: ", 0), 0U) << errors[1];
  EXPECT_EQ(errors[2], big + ": larger than 0 MiB");
  EXPECT_EQ(errors[3].rfind("-:", 0), 0U) << errors[3];

  std::istringstream no_stdin;
  EXPECT_EQ(describe(load_manifests({dir.path().string()}, no_stdin, limits)),
            "error: " + bad + ":2:1: duplicate key \"kind\"");
}

TEST(LoadManifests, KeepGoingStillRefusesAMissingPath) {
  TempDir dir;
  const std::string good = dir.write("a.yaml", "kind: A\n");
  std::istringstream no_stdin;
  auto loaded = load_manifests_keep_going({good, "/nonexistent/vm.yaml"}, no_stdin);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().message, "/nonexistent/vm.yaml: no such file or directory");
}

TEST(LoadManifests, InputSizeLimit) {
  TempDir dir;
  const std::string file = dir.write("big.yaml", "data: " + std::string(2000, 'x') + "\n");
  std::istringstream no_stdin;
  LoadLimits limits;
  limits.max_input_bytes = 1000;
  const std::string error = describe(load_manifests({file}, no_stdin, limits));
  EXPECT_EQ(error, "error: " + file + ": larger than 0 MiB");
}

TEST(ManifestFiles, EmptyDirectory) {
  TempDir dir;
  auto files = manifest_files(dir.path());
  ASSERT_TRUE(files.ok());
  EXPECT_TRUE(files->empty());
}

}  // namespace
}  // namespace vmgate::kube
