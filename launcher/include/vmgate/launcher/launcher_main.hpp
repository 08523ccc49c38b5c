#pragma once
// `vmgate-launcher`'s entry point, callable from tests. Exit codes: 0 success (or guest
// powered off), 1 failure at run time, 2 usage or input error.
#include <iosfwd>
#include <span>
#include <string_view>

namespace vmgate::launcher {

int run_launcher(std::span<const std::string_view> args, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace vmgate::launcher
