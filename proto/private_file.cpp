// Reading a secret-holding file; see private_file.hpp.
#include "proto/private_file.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "proto/errors.hpp"

namespace aisched::proto {

caf::error private_file_error(const std::string& path, std::string_view flag,
                              const std::string& why) {
  auto dashes = flag.find_first_not_of('-');
  auto field = dashes == std::string_view::npos ? std::string_view{} : flag.substr(dashes);
  return make_error(errc::invalid_argument, std::string(field),
                    std::string(flag) + " '" + path + "': " + why);
}

caf::expected<std::string> read_private_file(const std::string& path, std::string_view flag) {
  auto fail = [&](const std::string& why) { return private_file_error(path, flag, why); };
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return fail(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return fail("not a regular file");
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%03o", static_cast<unsigned>(st.st_mode & 0777));
    return fail(std::string("is accessible by group or others (mode ") + mode +
                "); run: chmod 600 '" + path + "'");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(std::strerror(errno));
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return fail("cannot read");
  return data;
}

}  // namespace aisched::proto
