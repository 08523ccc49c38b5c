# Warnings apply to project targets only (dependencies are SYSTEM includes).
add_library(vmgate_warnings INTERFACE)
target_compile_options(vmgate_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow
  -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Woverloaded-virtual -Wconversion
  -Wsign-conversion -Wnull-dereference -Wimplicit-fallthrough)
if(VMGATE_WERROR)
  target_compile_options(vmgate_warnings INTERFACE -Werror)
endif()
