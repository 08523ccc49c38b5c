// Reads: spec.domain.memory.{hugepages.pageSize, guest}, spec.domain.resources.{requests,limits}.memory.
// Follows vmi-create-admitter.go validateHugepagesMemoryRequests (including its message quirks).
#include "vmgate/admission/memory/hugepages.hpp"

#include "vmgate/admission/quantity_json.hpp"

namespace vmgate::admission::hugepages {

namespace {

// Quantity.Value() of an optional quantity; 0 when absent (Go's zero Quantity).
std::int64_t bytes_of(const std::optional<Quantity>& quantity) {
  if (!quantity) {
    return 0;
  }
  Result<std::int64_t> value = quantity->value();
  return value ? *value : 0;
}

}  // namespace

ErrorList validate(const json::Value& spec, const FieldPath& path, Release release) {
  const json::Value* domain = json::find_object(spec, "domain");
  const json::Value* memory = domain != nullptr ? json::find_object(*domain, "memory") : nullptr;
  const json::Value* hugepages = memory != nullptr ? json::find_object(*memory, "hugepages") : nullptr;
  if (hugepages == nullptr) {
    return {};
  }
  const FieldPath page_path = release <= Release::v1_7
                                  ? path.child("domain").child("hugepages").child("size")
                                  : path.child("domain").child("memory").child("hugepages").child("pageSize");
  const FieldPath requests_path = path.child("domain").child("resources").child("requests").child("memory");
  const std::string page_text(json::find_string(*hugepages, "pageSize"));
  Result<Quantity> page = Quantity::parse(page_text);
  if (!page) {
    return {{CauseType::field_value_invalid, page_path.str(),
             page_path.str() + " '" + page_text +
                 "': quantities must match the regular expression "
                 "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"}};
  }
  const std::optional<Quantity> requests = resource_quantity(*domain, "requests", "memory");
  std::int64_t vm_memory = bytes_of(requests);
  if (vm_memory == 0) {
    vm_memory = bytes_of(quantity_at(*memory, "guest"));
  }
  if (vm_memory == 0) {
    vm_memory = bytes_of(resource_quantity(*domain, "limits", "memory"));
  }
  const std::int64_t page_bytes = bytes_of(*page);
  const std::string shown = requests ? requests->to_string() : "0";
  if (vm_memory != 0 && vm_memory < page_bytes) {
    return {{CauseType::field_value_invalid, requests_path.str(),
             requests_path.str() + " '" + shown + "' must be equal to or larger than page size " + page_path.str() +
                 " '" + page_text + "'"}};
  }
  // Go would divide by zero on a zero page size; vmgate reports it instead of crashing.
  if (page_bytes <= 0) {
    return {{CauseType::field_value_invalid, page_path.str(),
             page_path.str() + " '" + page_text + "': must be greater than 0"}};
  }
  if (vm_memory % page_bytes != 0) {
    return {{CauseType::field_value_invalid, requests_path.str(),
             requests_path.str() + " '" + shown + "' is not a multiple of the page size " + page_path.str() + " '" +
                 page_text + "'"}};
  }
  return {};
}

}  // namespace vmgate::admission::hugepages
