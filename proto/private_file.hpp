// Reading a file that holds a secret: the cluster secret (--cluster-secret-file)
// and the secrets key (--secrets-key-file). Like ssh with its keys, a file
// that group or others can read, or replace, holds no secret.
#pragma once

#include <string>
#include <string_view>

#include <caf/expected.hpp>

namespace aisched::proto {

/// The bytes of `path`, a regular file only its owner may access. Errors are
/// invalid_argument on the field `flag` names (without its dashes), and the
/// message reads "<flag> '<path>': why" (missing, not a regular file, mode
/// open to group or others with the chmod to run, unreadable).
caf::expected<std::string> read_private_file(const std::string& path, std::string_view flag);

/// The error read_private_file would give for `path` and `flag`, with `why`:
/// for the callers' own checks of what the file holds.
caf::error private_file_error(const std::string& path, std::string_view flag,
                              const std::string& why);

}  // namespace aisched::proto
