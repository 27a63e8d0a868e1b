// The crypto of the secret store, pure (no I/O but the key file): AES-256-GCM
// seal/open through OpenSSL's EVP, the wrapping of a tenant's data key under
// the cluster key, loading the cluster key file and its key check value.
// Used by storage/secret_keeper (the gateway encrypts, the router decrypts).
#pragma once

#include <array>
#include <string>
#include <string_view>

#include <caf/expected.hpp>

namespace aisched::secret_crypto {

/// An AES-256 key. Kept in memory only.
using key = std::array<unsigned char, 32>;

/// A fresh random key (RAND_bytes). Aborts if the CSPRNG fails: no key is
/// better than a predictable one.
key random_key();

/// Reads the key file at `path`: 64 hex digits (optionally followed by a
/// newline: `openssl rand -hex 32 > key`) or exactly 32 raw bytes. Refuses a
/// file group or others may access (mode 0600 expected), naming `flag` (the
/// command-line option, e.g. "--secrets-key-file") in the error.
caf::expected<key> load_key_file(const std::string& path, std::string_view flag);

/// A short public fingerprint of `k` (16 hex digits of an HMAC-SHA256 of a
/// fixed label): tells which cluster key wrapped a data key and lets a node
/// detect a wrong key file at startup without revealing anything of the key.
std::string key_check(const key& k);

/// Encrypts `plain` under `k` with a random 96-bit nonce; `aad` is
/// authenticated, not stored (callers bind the ciphertext to its owner, so it
/// cannot be moved to another name or tenant). Output: version byte 1, nonce,
/// ciphertext, 16-byte tag.
std::string seal(const key& k, std::string_view plain, std::string_view aad);

/// Decrypts what seal() made with the same `k` and `aad`; invalid_argument if
/// the tag does not verify (wrong key, other aad, altered bytes).
caf::expected<std::string> open(const key& k, std::string_view sealed, std::string_view aad);

/// A data key sealed under the cluster key `kek`, bound to its tenant and id.
std::string wrap(const key& kek, const key& data_key, std::string_view tenant,
                 std::string_view key_id);

/// The data key wrap() sealed; an error if `kek` is not the key that wrapped it.
caf::expected<key> unwrap(const key& kek, std::string_view wrapped, std::string_view tenant,
                          std::string_view key_id);

}  // namespace aisched::secret_crypto
