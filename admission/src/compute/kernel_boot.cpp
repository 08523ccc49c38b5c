// Reads: spec.domain.firmware.kernelBoot.{kernelArgs, container.{image, kernelPath, initrdPath}}.
// Follows vmi-create-admitter.go validateKernelBoot.
#include <string>

#include "vmgate/admission/validation/absolute_path.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

ErrorList validate_kernel_boot(const json::Value& spec, const FieldPath& path) {
  ErrorList causes;
  const json::Value* kernel_boot = json::find_path(spec, {"domain", "firmware", "kernelBoot"});
  if (kernel_boot == nullptr || !kernel_boot->IsObject()) {
    return causes;
  }
  const FieldPath field = path.child("domain").child("firmware").child("kernelBoot");
  const json::Value* container = json::find_object(*kernel_boot, "container");
  if (container == nullptr) {
    if (!json::find_string(*kernel_boot, "kernelArgs").empty()) {
      causes.push_back({CauseType::field_value_invalid, field.child("kernelArgs").str(),
                        "kernel arguments cannot be provided without an external kernel"});
    }
    return causes;
  }
  const FieldPath container_field = field.child("container");
  if (json::find_string(*container, "image").empty()) {
    causes.push_back({CauseType::field_value_required, container_field.child("image").str(),
                      container_field.str() + " must be defined with an image"});
  }
  const std::string_view kernel_path = json::find_string(*container, "kernelPath");
  const std::string_view initrd_path = json::find_string(*container, "initrdPath");
  if (kernel_path.empty() && initrd_path.empty()) {
    causes.push_back(
        {CauseType::field_value_required, container_field.str(),
         container_field.str() + " must be defined with at least one of the following: kernelPath, initrdPath"});
  }
  for (const auto& [name, value] : {std::pair{"kernelPath", kernel_path}, std::pair{"initrdPath", initrd_path}}) {
    if (!value.empty()) {
      append(causes, validate_absolute_path(container_field.child(name), value));
    }
  }
  return causes;
}

}  // namespace vmgate::admission::validation
