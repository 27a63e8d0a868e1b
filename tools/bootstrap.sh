#!/bin/sh
# Installs exactly the Debian packages aisched's build and tests use, and nothing
# when they are all present already (idempotent). Called by `make run` / `make test`.
set -eu

PACKAGES="
  cmake ninja-build ccache g++ pkg-config lld
  clang-14 libclang-rt-14-dev
  libcaf-dev
  librocksdb-dev
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev
  libcurl4-openssl-dev
  prometheus-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libhowardhinnant-date-dev
  libspdlog-dev libfmt-dev
  libcli11-dev
  librapidcheck-dev
  libssl-dev openssl
  libjwt-dev libargon2-dev
  libjemalloc-dev
  protobuf-compiler
  curl tzdata python3
  dpkg-dev
  iproute2
  nodejs chromium
  prometheus
"
# The console's browser test drives chromium with playwright-core from npm.
# clang-14 and its runtime build the fuzz targets (make fuzz, tests/fuzz);
# dpkg-dev gives cpack the package's library dependencies (ctest -R package).
# protobuf-compiler: protoc reads what the wire codec writes with the schema
# (ctest -R wire_schema); nothing is generated from it at build time.
# Debian's nodejs may already ship npm, and Debian's `npm` package conflicts
# with such a nodejs: ask for it only when the command is missing.
if ! command -v npm >/dev/null 2>&1; then
  PACKAGES="$PACKAGES npm"
fi

missing=""
for p in $PACKAGES; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done

if [ -z "$missing" ]; then
  exit 0
fi

echo "bootstrap: installing$missing"
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends $missing
