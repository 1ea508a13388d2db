# Where the GPU build (RUNG_TRAINER_ONLY, deploy/README.md "GPU build") finds what rung-train links
# besides LibTorch when the machine has no -dev packages: RUNG_DEPS_PREFIX, a folder of Debian
# packages unpacked by deploy/gpu/vendor-deps.sh (yaml-cpp, nlohmann-json, CLI11, OpenSSL), searched
# before the system. RUNG_YAML_CPP_SOURCE_DIR instead compiles yaml-cpp from a source tree with this
# build's flags (needed when LibTorch uses the pre-C++11 string ABI). Included before find_package.
set(RUNG_DEPS_PREFIX "" CACHE PATH "Folder of Debian packages unpacked by deploy/gpu/vendor-deps.sh")
set(RUNG_YAML_CPP_SOURCE_DIR "" CACHE PATH "yaml-cpp source tree to compile instead of a prebuilt yaml-cpp")

if(RUNG_DEPS_PREFIX)
  if(NOT EXISTS "${RUNG_DEPS_PREFIX}/usr/include")
    message(FATAL_ERROR "RUNG_DEPS_PREFIX=${RUNG_DEPS_PREFIX} holds no unpacked packages: run `make gpu-deps` "
                        "(deploy/gpu/vendor-deps.sh) on a Debian 12 machine and copy the folder here")
  endif()
  file(GLOB _rung_multiarch_libs LIST_DIRECTORIES true "${RUNG_DEPS_PREFIX}/usr/lib/*-linux-gnu")
  file(GLOB _rung_multiarch_includes LIST_DIRECTORIES true "${RUNG_DEPS_PREFIX}/usr/include/*-linux-gnu")
  list(PREPEND CMAKE_PREFIX_PATH "${RUNG_DEPS_PREFIX}/usr")
  # Debian keeps OpenSSL's configuration.h in the multiarch include folder, which compilers of other
  # distributions do not search.
  include_directories(SYSTEM ${_rung_multiarch_includes})
  list(PREPEND CMAKE_LIBRARY_PATH ${_rung_multiarch_libs})
  # FindOpenSSL: headers and libcrypto from the unpacked libssl-dev/libssl3.
  set(OPENSSL_ROOT_DIR "${RUNG_DEPS_PREFIX}/usr")
  set(OPENSSL_USE_STATIC_LIBS OFF)
  message(STATUS "rung: dependencies from ${RUNG_DEPS_PREFIX} first")
endif()

# yaml-cpp: from source when asked, else the package (system or RUNG_DEPS_PREFIX).
macro(rung_find_yaml_cpp)
  if(RUNG_YAML_CPP_SOURCE_DIR)
    set(YAML_CPP_BUILD_TESTS OFF CACHE BOOL "" FORCE)
    set(YAML_CPP_BUILD_TOOLS OFF CACHE BOOL "" FORCE)
    set(YAML_CPP_BUILD_CONTRIB OFF CACHE BOOL "" FORCE)
    set(YAML_BUILD_SHARED_LIBS OFF CACHE BOOL "" FORCE)
    set(YAML_CPP_INSTALL OFF CACHE BOOL "" FORCE)
    add_subdirectory("${RUNG_YAML_CPP_SOURCE_DIR}" "${CMAKE_BINARY_DIR}/third_party/yaml-cpp" EXCLUDE_FROM_ALL)
    set(RUNG_YAML_CPP_PREBUILT OFF)
  else()
    find_package(yaml-cpp REQUIRED)
    set(RUNG_YAML_CPP_PREBUILT ON)
  endif()
endmacro()

# LibTorch's C++ string ABI (TORCH_CXX_FLAGS: -D_GLIBCXX_USE_CXX11_ABI=0 in PyTorch pip wheels
# before 2.7) must be the ABI of every C++ library linked with it and of every target of this
# build: applied to all targets here; a prebuilt yaml-cpp (C++11 ABI) or gRPC cannot follow.
function(rung_apply_torch_abi)
  if(NOT TORCH_CXX_FLAGS MATCHES "_GLIBCXX_USE_CXX11_ABI=([01])")
    return()
  endif()
  set(abi ${CMAKE_MATCH_1})
  if(abi STREQUAL "0")
    if(NOT RUNG_TRAINER_ONLY)
      message(FATAL_ERROR "rung: this LibTorch uses the pre-C++11 string ABI (_GLIBCXX_USE_CXX11_ABI=0), which the "
                          "system's gRPC and Protobuf do not: build it with -DRUNG_TRAINER_ONLY=ON (make gpu-build)")
    endif()
    if(RUNG_YAML_CPP_PREBUILT)
      message(FATAL_ERROR "rung: this LibTorch uses the pre-C++11 string ABI (_GLIBCXX_USE_CXX11_ABI=0; PyTorch pip "
                          "wheels before 2.7) and the prebuilt yaml-cpp the C++11 one: use torch >= 2.7, or pass "
                          "-DRUNG_YAML_CPP_SOURCE_DIR=<yaml-cpp source> to compile yaml-cpp with LibTorch's ABI")
    endif()
  endif()
  # Trainer-only builds state the ABI for every target (a compiler may default to the other one);
  # the full build (Debian's LibTorch, C++11 ABI, the compiler's default) leaves its flags alone.
  if(RUNG_TRAINER_ONLY)
    add_compile_definitions(_GLIBCXX_USE_CXX11_ABI=${abi})
  endif()
endfunction()
