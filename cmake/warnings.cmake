# Warnings apply to project targets only (dependencies are SYSTEM includes).
add_library(vmgate_warnings INTERFACE)
target_compile_options(vmgate_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow
  -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Woverloaded-virtual -Wconversion
  -Wsign-conversion -Wnull-dereference -Wimplicit-fallthrough)
# GCC 12 reports false -Wrestrict positives inside libstdc++'s std::string concatenation at -O3
# (GCC bug 105329); clang and GCC 13 do not.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(vmgate_warnings INTERFACE -Wno-restrict)
endif()
if(VMGATE_WERROR)
  target_compile_options(vmgate_warnings INTERFACE -Werror)
endif()
