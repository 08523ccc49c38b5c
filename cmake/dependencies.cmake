# Every dependency comes from a Debian 12 package (see tools/install-deps).
find_package(Threads REQUIRED)
find_package(Boost 1.81 CONFIG REQUIRED COMPONENTS program_options)
find_package(OpenSSL 3 REQUIRED)

# RapidJSON 1.1.0 ships no target, only RAPIDJSON_INCLUDE_DIRS.
find_package(RapidJSON CONFIG REQUIRED)
add_library(vmgate_rapidjson INTERFACE)
target_include_directories(vmgate_rapidjson SYSTEM INTERFACE ${RAPIDJSON_INCLUDE_DIRS})
target_compile_definitions(vmgate_rapidjson INTERFACE RAPIDJSON_HAS_STDSTRING=1)

# valijson's config adds VALIJSON_USE_EXCEPTIONS=1; its RapidJSON adapter must be the first
# RapidJSON include everywhere, which vmgate/common/json.hpp guarantees.
find_package(valijson CONFIG REQUIRED)

find_package(yaml-cpp CONFIG REQUIRED)

if(VMGATE_BUILD_TESTS)
  find_package(GTest CONFIG REQUIRED)
  include(GoogleTest)
endif()
if(VMGATE_BUILD_BENCH)
  find_package(benchmark CONFIG REQUIRED)
endif()

# libvirt (the launcher). Optional so that the admission core and server still configure on a
# machine without libvirt-dev; the launcher's libvirt parts are then not built.
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(LIBVIRT IMPORTED_TARGET libvirt)
endif()

# gRPC and protobuf (vmgate-node's kubelet device plugins): protobuf through CMake's FindProtobuf
# (protobuf::libprotobuf, protobuf::protoc), gRPC through Debian's grpc++.pc, grpc_cpp_plugin
# from protobuf-compiler-grpc. Optional, as libvirt: without them vmgate-node is not built.
find_package(Protobuf QUIET)
find_program(VMGATE_GRPC_CPP_PLUGIN grpc_cpp_plugin)
if(PkgConfig_FOUND)
  pkg_check_modules(GRPCPP IMPORTED_TARGET grpc++)
endif()
if(Protobuf_FOUND AND TARGET protobuf::protoc AND TARGET PkgConfig::GRPCPP AND VMGATE_GRPC_CPP_PLUGIN)
  set(VMGATE_HAS_GRPC ON)
else()
  set(VMGATE_HAS_GRPC OFF)
  message(STATUS "gRPC/protobuf not found (tools/install-deps): vmgate-node is not built")
endif()
