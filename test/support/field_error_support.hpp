#pragma once
// Field errors as text for exact comparisons in the admission, kube and transport tests.
#include <string>

#include "vmgate/admission/field_error.hpp"

namespace vmgate::testing {

/// Causes one per line as "<Type> <field>: <message>\n" ("" for none), for exact EXPECT_EQ.
std::string describe(const admission::ErrorList& causes);

}  // namespace vmgate::testing
