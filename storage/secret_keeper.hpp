// The one holder of the cluster key on a node: seals secret values for the
// gateway (before they are proposed), opens them for the leader's router
// (when it builds a run's execute request), re-wraps the tenants' data keys
// for a rotation, and checks at startup that its key opens the stored ones.
// Reads the replicated records through storage/secret_store; thread-safe.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <caf/expected.hpp>

#include "common/secret_crypto.hpp"
#include "proto/commands.hpp"

namespace aisched::storage {

class rocks;

class secret_keeper {
 public:
  /// `current` seals and wraps; `previous` (a rotation in progress) only
  /// unwraps data keys not re-wrapped yet. Without `current` the keeper is
  /// disabled: it lists and checks names, and refuses to seal, reveal or
  /// re-wrap (unavailable). `db` must outlive this.
  secret_keeper(rocks& db, std::optional<secret_crypto::key> current,
                std::optional<secret_crypto::key> previous);

  /// Whether this node has the cluster key (--secrets-key-file).
  bool enabled() const { return current_.has_value(); }

  /// Whether every data key in the local state opens under the current or
  /// the previous key; else an error saying which key the cluster expects.
  /// A node calls it at startup and refuses to start on an error. Disabled:
  /// nothing to check.
  [[nodiscard]] caf::error check() const;

  /// What the gateway proposes to set secret `name` of `tenant` to `value`:
  /// the record with the value sealed, preceded by `first_key` when the
  /// tenant has no data key yet (propose that first; already_exists means
  /// another gateway created one: call seal() again). The record is set at `now`.
  struct sealed_secret {
    std::optional<proto::put_data_keys> first_key;
    proto::secret_record record;
  };
  [[nodiscard]] caf::expected<sealed_secret> seal(const std::string& tenant,
                                                  const std::string& name,
                                                  std::string_view value, unix_ms now);

  /// The values of secrets `names` of `tenant` in clear (name -> value), for
  /// one execute request; not_found naming the first missing secret.
  [[nodiscard]] caf::expected<std::map<std::string, std::string>> reveal(
      const std::string& tenant, const std::set<std::string>& names);

  /// Every data key re-wrapped under the current key: the command a rotation
  /// proposes. Values are not touched; nothing else changes.
  [[nodiscard]] caf::expected<proto::put_data_keys> rewrap_all();

  /// Whether secret `name` exists in `tenant` (create-time checks of tasks).
  [[nodiscard]] caf::expected<bool> exists(const std::string& tenant, const std::string& name);

  /// The secrets of `tenant` without values, by name.
  [[nodiscard]] caf::expected<std::vector<proto::secret_record>> list(const std::string& tenant);

  /// The current key's check value (public; shown by GET /api/v1/secrets/key).
  const std::string& key_check() const { return current_check_; }

 private:
  [[nodiscard]] caf::expected<secret_crypto::key> unwrap(const proto::data_key& k) const;
  [[nodiscard]] caf::expected<secret_crypto::key> data_key_of(const proto::data_key& k);

  rocks& db_;
  std::optional<secret_crypto::key> current_;
  std::optional<secret_crypto::key> previous_;
  std::string current_check_, previous_check_;
  std::mutex mutex_;  // guards opened_
  std::map<std::string, secret_crypto::key> opened_;  // tenant '\0' key id -> data key
};

}  // namespace aisched::storage
