// The backup file's writer and reader; see backup_file.hpp.
#include "common/backup_file.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <istream>

#include "proto/errors.hpp"
#include "proto/invariant.hpp"

namespace aisched::backup {

namespace {

constexpr std::string_view magic{"AISCHED-BACKUP\n\0", 16};
constexpr std::string_view end_magic{"AISCHEND", 8};
constexpr uint8_t end_byte = 0xFF;  // no column has this byte
constexpr size_t digest_size = 32;
constexpr size_t prefix_size = 16 + 4 + 4 + 4;                     // magic .. header_len
constexpr size_t trailer_size = 1 + 8 + end_magic.size() + digest_size;

// -- big-endian fields -------------------------------------------------------

void put_u32(std::string& out, uint32_t x) {
  for (int i = 3; i >= 0; --i) out.push_back(static_cast<char>((x >> (i * 8)) & 0xff));
}
void put_u64(std::string& out, uint64_t x) {
  for (int i = 7; i >= 0; --i) out.push_back(static_cast<char>((x >> (i * 8)) & 0xff));
}
void put_str(std::string& out, std::string_view s) {
  put_u32(out, static_cast<uint32_t>(s.size()));
  out.append(s.data(), s.size());
}
uint64_t get_be(std::string_view in, size_t pos, size_t n) {
  uint64_t x = 0;
  for (size_t i = 0; i < n; ++i) x = (x << 8) | static_cast<uint8_t>(in[pos + i]);
  return x;
}

/// Reads fields off a byte range; `ok` turns false at the first overrun.
struct field_reader {
  std::string_view in;
  size_t pos = 0;
  bool ok = true;
  bool has(size_t n) {
    ok = ok && in.size() - pos >= n;
    return ok;
  }
  uint64_t u64() { return has(8) ? (pos += 8, get_be(in, pos - 8, 8)) : 0; }
  uint32_t u32() { return has(4) ? (pos += 4, static_cast<uint32_t>(get_be(in, pos - 4, 4))) : 0; }
  uint8_t u8() { return has(1) ? static_cast<uint8_t>(in[pos++]) : 0; }
  std::string str() {
    auto n = u32();
    if (!has(n)) return {};
    pos += n;
    return std::string(in.substr(pos - n, n));
  }
};

std::string encode_header(const backup_header& h) {
  std::string out;
  put_str(out, h.written_by);
  put_str(out, h.cluster_id);
  put_str(out, h.node_id);
  put_u64(out, h.index);
  put_u64(out, h.term);
  put_u64(out, static_cast<uint64_t>(h.created_at_ms));
  put_u32(out, static_cast<uint32_t>(h.key_checks.size()));
  for (auto& k : h.key_checks) put_str(out, k);
  put_u32(out, static_cast<uint32_t>(h.members.size()));
  for (auto& m : h.members) {
    put_str(out, m.id);
    out.push_back(m.voter ? 1 : 0);
    put_str(out, m.cluster_addr);
    put_str(out, m.http_addr);
  }
  put_u32(out, static_cast<uint32_t>(h.columns.size()));
  for (auto& c : h.columns) {
    out.push_back(static_cast<char>(c.id));
    put_str(out, c.name);
  }
  return out;
}

caf::error corrupted(std::string what) {
  return make_error(errc::corrupted, "file", "not a usable aisched backup: " + std::move(what));
}

caf::expected<backup_header> decode_header(std::string_view bytes) {
  field_reader r{bytes};
  backup_header h;
  h.written_by = r.str();
  h.cluster_id = r.str();
  h.node_id = r.str();
  h.index = r.u64();
  h.term = r.u64();
  h.created_at_ms = static_cast<int64_t>(r.u64());
  for (auto n = r.u32(); r.ok && n > 0; --n) h.key_checks.push_back(r.str());
  for (auto n = r.u32(); r.ok && n > 0; --n) {
    proto::member_info m;
    m.id = r.str();
    m.voter = r.u8() != 0;
    m.cluster_addr = r.str();
    m.http_addr = r.str();
    h.members.push_back(std::move(m));
  }
  for (auto n = r.u32(); r.ok && n > 0; --n) {
    column_info c;
    c.id = r.u8();
    c.name = r.str();
    h.columns.push_back(std::move(c));
  }
  if (!r.ok) return corrupted("its header is malformed");
  return h;  // bytes after the known fields: a later build's additions
}

const column_info* find_column(const std::vector<column_info>& cs, uint8_t id) {
  auto i = std::find_if(cs.begin(), cs.end(), [id](const column_info& c) { return c.id == id; });
  return i == cs.end() ? nullptr : &*i;
}

std::string hex(const unsigned char* p, size_t n) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out += digits[p[i] >> 4];
    out += digits[p[i] & 15];
  }
  return out;
}

/// SHA-256 over what is fed to it, through OpenSSL's EVP.
class sha256 {
 public:
  sha256() : ctx_(EVP_MD_CTX_new()) {
    AISCHED_INVARIANT(ctx_ != nullptr && EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) == 1,
                      "SHA-256 cannot be initialised");
  }
  ~sha256() { EVP_MD_CTX_free(ctx_); }
  sha256(const sha256&) = delete;
  sha256& operator=(const sha256&) = delete;
  void add(std::string_view bytes) {
    AISCHED_INVARIANT(EVP_DigestUpdate(ctx_, bytes.data(), bytes.size()) == 1, "SHA-256 failed");
  }
  std::array<unsigned char, digest_size> finish() {
    std::array<unsigned char, digest_size> out{};
    unsigned int n = 0;
    AISCHED_INVARIANT(EVP_DigestFinal_ex(ctx_, out.data(), &n) == 1 && n == digest_size,
                      "SHA-256 failed");
    return out;
  }

 private:
  EVP_MD_CTX* ctx_;
};

/// Walks the records of `chunk`; calls `each(column byte, key, value)`.
/// Returns what is wrong with the chunk, or "".
template <class Each>
std::string walk_records(std::string_view chunk, Each&& each) {
  size_t pos = 0;
  while (pos < chunk.size()) {
    if (chunk.size() - pos < 5) return "a record header is cut short";
    auto c = static_cast<uint8_t>(chunk[pos]);
    auto klen = static_cast<uint32_t>(get_be(chunk, pos + 1, 4));
    pos += 5;
    if (chunk.size() - pos < size_t{klen} + 4) return "a record's key is cut short";
    auto key = chunk.substr(pos, klen);
    pos += klen;
    auto vlen = static_cast<uint32_t>(get_be(chunk, pos, 4));
    pos += 4;
    if (chunk.size() - pos < vlen) return "a record's value is cut short";
    auto value = chunk.substr(pos, vlen);
    pos += vlen;
    if (auto why = each(c, key, value); !why.empty()) return why;
  }
  return "";
}

}  // namespace

// -- writer ------------------------------------------------------------------

struct backup_writer::digest {
  sha256 sum;
};

backup_writer::backup_writer(backup_header h)
    : header_(std::move(h)), digest_(std::make_unique<digest>()) {}

backup_writer::~backup_writer() = default;

std::string backup_writer::begin() {
  auto header = encode_header(header_);
  std::string out(magic);
  put_u32(out, backup_layout);
  put_u32(out, header_.data_format);
  put_u32(out, static_cast<uint32_t>(header.size()));
  out += header;
  digest_->sum.add(out);
  return out;
}

caf::expected<std::string> backup_writer::records(std::string chunk) {
  uint64_t n = 0;
  auto why = walk_records(chunk, [&](uint8_t c, std::string_view, std::string_view) {
    ++n;
    return find_column(header_.columns, c) ? std::string() : "a record of column " +
                                                                 std::to_string(c) +
                                                                 " the header does not list";
  });
  if (!why.empty()) return make_error(errc::internal, "backup records: " + why);
  records_ += n;
  digest_->sum.add(chunk);
  return chunk;
}

std::string backup_writer::finish() {
  std::string out;
  out.push_back(static_cast<char>(end_byte));
  put_u64(out, records_);
  out += end_magic;
  digest_->sum.add(out);
  auto d = digest_->sum.finish();
  checksum_ = hex(d.data(), d.size());
  out.append(reinterpret_cast<const char*>(d.data()), d.size());
  return out;
}

// -- reader ------------------------------------------------------------------

namespace {

/// Reads exactly `n` bytes at `pos`; false on a short read.
bool read_at(std::istream& in, uint64_t pos, size_t n, std::string& out) {
  out.resize(n);
  in.clear();
  in.seekg(static_cast<std::streamoff>(pos));
  in.read(out.data(), static_cast<std::streamsize>(n));
  return in.gcount() == static_cast<std::streamsize>(n);
}

caf::error unreadable() {
  return make_error(errc::storage_error, "file", "the backup cannot be read");
}

/// One pass over [0, end): the SHA-256 of those bytes.
caf::expected<std::string> hash_range(std::istream& in, uint64_t end) {
  sha256 sum;
  std::string block;
  for (uint64_t pos = 0; pos < end;) {
    auto n = static_cast<size_t>(std::min<uint64_t>(end - pos, 1 << 20));
    if (!read_at(in, pos, n, block)) return unreadable();
    sum.add(block);
    pos += n;
  }
  auto d = sum.finish();
  return hex(d.data(), d.size());
}

}  // namespace

caf::expected<backup_summary> read_backup(std::istream& in, uint32_t data_format_limit,
                                          const record_fn& on_record) {
  backup_summary out;
  in.clear();
  in.seekg(0, std::ios::end);
  auto size = static_cast<int64_t>(in.tellg());
  if (size < 0) return unreadable();
  out.bytes = static_cast<uint64_t>(size);
  std::string prefix;
  if (!read_at(in, 0, std::min<uint64_t>(out.bytes, prefix_size), prefix) ||
      prefix.size() < magic.size() || std::string_view(prefix).substr(0, magic.size()) != magic)
    return corrupted("it does not start with the magic \"AISCHED-BACKUP\" (another kind of file)");
  if (prefix.size() < prefix_size) return corrupted("the file is truncated: it ends in its header");
  auto layout = static_cast<uint32_t>(get_be(prefix, 16, 4));
  auto format = static_cast<uint32_t>(get_be(prefix, 20, 4));
  auto header_len = get_be(prefix, 24, 4);
  if (layout > backup_layout || format > data_format_limit)
    return make_error(errc::invalid_argument, "format",
                      "the backup has file layout " + std::to_string(layout) + " and data format " +
                          std::to_string(format) + ", newer than this build reads (layout " +
                          std::to_string(backup_layout) + ", data format " +
                          std::to_string(data_format_limit) +
                          "): use the build that wrote it, or a newer one");
  if (layout == 0) return corrupted("its file layout is 0, which no build writes");
  if (out.bytes < prefix_size + trailer_size)
    return corrupted("the file is truncated: " + std::to_string(out.bytes) +
                     " bytes are too few for its header and trailer");
  std::string trailer;
  if (!read_at(in, out.bytes - trailer_size, trailer_size, trailer)) return unreadable();
  if (static_cast<uint8_t>(trailer[0]) != end_byte || trailer.substr(9, end_magic.size()) != end_magic)
    return corrupted("the file is truncated: it does not end with the trailer (" +
                     std::to_string(out.bytes) + " bytes; was the save interrupted?)");
  auto stated = hex(reinterpret_cast<const unsigned char*>(trailer.data()) + trailer_size - digest_size,
                    digest_size);
  auto actual = hash_range(in, out.bytes - digest_size);
  if (!actual) return actual.error();
  if (*actual != stated)
    return corrupted("checksum mismatch: the file's SHA-256 is " + *actual + ", its trailer says " +
                     stated + ": the file was altered or damaged");
  out.checksum = stated;

  // The bytes are the ones written: parse them.
  if (out.bytes < prefix_size + header_len + trailer_size)
    return corrupted("its header length " + std::to_string(header_len) + " passes its end");
  std::string header_bytes;
  if (!read_at(in, prefix_size, header_len, header_bytes)) return unreadable();
  auto header = decode_header(header_bytes);
  if (!header) return header.error();
  out.header = std::move(*header);
  out.header.layout = layout;
  out.header.data_format = format;
  uint64_t end = out.bytes - trailer_size;
  std::string block, carry;
  for (uint64_t pos = prefix_size + header_len; pos < end;) {
    auto n = static_cast<size_t>(std::min<uint64_t>(end - pos, 1 << 20));
    if (!read_at(in, pos, n, block)) return unreadable();
    pos += n;
    carry += block;
    // Hand over the whole records of `carry`; keep a record cut by the block end.
    size_t used = 0;
    std::string_view view(carry);
    while (view.size() - used >= 5) {
      auto klen = get_be(view, used + 1, 4);
      if (view.size() - used < 5 + klen + 4) break;
      auto vlen = get_be(view, used + 5 + klen, 4);
      auto size = 5 + klen + 4 + vlen;
      if (view.size() - used < size) break;
      auto c = static_cast<uint8_t>(view[used]);
      auto* col = find_column(out.header.columns, c);
      if (col == nullptr)
        return corrupted("record " + std::to_string(out.records + 1) + " names column " +
                         std::to_string(c) + ", which the header does not list");
      ++out.records;
      ++out.records_by_column[col->name];
      if (on_record) {
        auto err = on_record(*col, view.substr(used + 5, klen), view.substr(used + 9 + klen, vlen));
        if (err) return err;
      }
      used += size;
    }
    carry.erase(0, used);
  }
  if (!carry.empty())
    return corrupted("the last record is cut short (" + std::to_string(carry.size()) + " bytes)");
  auto stated_records = get_be(trailer, 1, 8);
  if (stated_records != out.records)
    return corrupted("the trailer counts " + std::to_string(stated_records) + " records, the file holds " +
                     std::to_string(out.records));
  return out;
}

}  // namespace aisched::backup
