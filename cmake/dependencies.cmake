# Finds every library aisched builds against. All come from Debian packages
# (tools/bootstrap.sh installs them); nothing is downloaded at build time.

find_package(Threads REQUIRED)
find_package(OpenSSL REQUIRED)

# Debian's libcaf-dev (0.17.6) ships no CMake package config.
find_path(CAF_INCLUDE_DIR caf/all.hpp REQUIRED)
find_library(CAF_CORE_LIB caf_core REQUIRED)
find_library(CAF_IO_LIB caf_io REQUIRED)
find_library(CAF_OPENSSL_LIB caf_openssl REQUIRED)
add_library(caf::core UNKNOWN IMPORTED)
set_target_properties(caf::core PROPERTIES IMPORTED_LOCATION "${CAF_CORE_LIB}"
  INTERFACE_INCLUDE_DIRECTORIES "${CAF_INCLUDE_DIR}"
  INTERFACE_LINK_LIBRARIES Threads::Threads)
add_library(caf::io UNKNOWN IMPORTED)
set_target_properties(caf::io PROPERTIES IMPORTED_LOCATION "${CAF_IO_LIB}"
  INTERFACE_LINK_LIBRARIES caf::core)
add_library(caf::openssl UNKNOWN IMPORTED)
set_target_properties(caf::openssl PROPERTIES IMPORTED_LOCATION "${CAF_OPENSSL_LIB}"
  INTERFACE_LINK_LIBRARIES "caf::io;OpenSSL::SSL;OpenSSL::Crypto")

find_package(RocksDB CONFIG REQUIRED)
find_package(Boost 1.81.0 EXACT CONFIG REQUIRED COMPONENTS json url)
find_package(CURL REQUIRED)
find_package(prometheus-cpp CONFIG REQUIRED)
find_package(date CONFIG REQUIRED)
find_package(spdlog CONFIG REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(GTest REQUIRED)
find_package(rapidcheck CONFIG REQUIRED)
find_package(benchmark CONFIG REQUIRED)

# Authentication (gateway/auth.cpp): JWTs and argon2id password hashes.
find_library(LIBJWT_LIBRARY jwt REQUIRED)
find_library(ARGON2_LIBRARY argon2 REQUIRED)
