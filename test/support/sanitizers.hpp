#pragma once
// Whether this test binary runs under AddressSanitizer: its allocator (which mallinfo2 does not
// see) and the quarantine of freed memory make memory measures meaningless there.

namespace vmgate::testing {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool under_asan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool under_asan = true;
#else
inline constexpr bool under_asan = false;
#endif
#else
inline constexpr bool under_asan = false;
#endif

}  // namespace vmgate::testing
