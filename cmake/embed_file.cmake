# Embeds a file in the binary: writes OUTPUT, a C++ source defining
#   std::string_view NAMESPACE::FUNCTION()
# that returns INPUT's bytes. Run as a script at build time:
#   cmake -DINPUT=... -DOUTPUT=... -DNAMESPACE=... -DFUNCTION=... -P embed_file.cmake
# The bytes are written as hex char literals, not a raw string, so any content
# (a ")" followed by the delimiter, NULs, invalid UTF-8) embeds unchanged.
foreach(var INPUT OUTPUT NAMESPACE FUNCTION)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "embed_file.cmake: ${var} is not set")
  endif()
endforeach()

file(READ "${INPUT}" hex HEX)
file(SIZE "${INPUT}" size)
# "7b0a" -> "'\x7b','\x0a',"; one line per 32 bytes keeps the source diffable.
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${hex}")
string(REGEX REPLACE "(('\\\\x[0-9a-f][0-9a-f]',){32})" "\\1\n    " bytes "${bytes}")

file(WRITE "${OUTPUT}.tmp"
"// Generated from ${INPUT} by cmake/embed_file.cmake; do not edit.
#include <string_view>

namespace ${NAMESPACE} {

namespace {
// One extra NUL so an empty file still makes a valid array.
constexpr char bytes[] = {
    ${bytes}'\\0'};
}  // namespace

std::string_view ${FUNCTION}() { return std::string_view(bytes, ${size}); }

}  // namespace ${NAMESPACE}
")
# Only touch OUTPUT when it changed, so an unchanged document recompiles nothing.
execute_process(COMMAND "${CMAKE_COMMAND}" -E copy_if_different "${OUTPUT}.tmp" "${OUTPUT}")
file(REMOVE "${OUTPUT}.tmp")
