// Failed-login limits and the login guard; see auth_limiter.hpp.
#include "gateway/auth_limiter.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstdlib>

#include "gateway/auth.hpp"
#include "proto/random.hpp"
#include "proto/invariant.hpp"

namespace aisched::gateway {

namespace {

using clock = failure_limiter::clock;

std::chrono::seconds whole_seconds_until(clock::time_point t, clock::time_point now) {
  auto left = std::chrono::ceil<std::chrono::seconds>(t - now);
  return std::max(left, std::chrono::seconds(1));
}

}  // namespace

// -- failure_limiter ---------------------------------------------------------------

failure_limiter::verdict failure_limiter::check(const std::string& key, clock::time_point now) {
  auto i = keys_.find(key);
  if (i == keys_.end()) return {};
  auto& e = i->second;
  if (now < e.locked_until) return {false, whole_seconds_until(e.locked_until, now)};
  while (!e.failures.empty() && e.failures.front() + opts_.window <= now) e.failures.pop_front();
  // Quiet for max_lockout after the last lockout: its count is forgiven.
  if (e.lockouts > 0 && e.locked_until + opts_.max_lockout <= now) e.lockouts = 0;
  if (e.failures.size() < opts_.max_failures) return {};
  // The limit is reached: lock the key, twice as long as the previous time.
  ++e.lockouts;
  auto doublings = std::min<uint32_t>(e.lockouts - 1, 20);
  auto lock = std::min<std::chrono::seconds>(opts_.window * (int64_t{1} << doublings),
                                             opts_.max_lockout);
  e.locked_until = now + lock;
  e.failures.clear();
  return {false, whole_seconds_until(e.locked_until, now)};
}

void failure_limiter::record(const std::string& key, clock::time_point now) {
  if (keys_.size() >= opts_.max_keys && !keys_.count(key)) make_room(now);
  auto& e = keys_[key];
  e.failures.push_back(now);
  while (e.failures.size() > opts_.max_failures) e.failures.pop_front();
}

void failure_limiter::release(const std::string& key) {
  auto i = keys_.find(key);
  if (i == keys_.end()) return;
  auto& e = i->second;
  if (!e.failures.empty()) e.failures.pop_back();
  if (e.failures.empty() && e.lockouts == 0) keys_.erase(i);
}

void failure_limiter::reset(const std::string& key) { keys_.erase(key); }

clock::time_point failure_limiter::expiry(const entry& e) const {
  auto t = e.locked_until;
  if (!e.failures.empty()) t = std::max(t, e.failures.back() + opts_.window);
  if (e.lockouts > 0) t = std::max(t, e.locked_until + opts_.max_lockout);
  return t;
}

void failure_limiter::make_room(clock::time_point now) {
  for (auto i = keys_.begin(); i != keys_.end();) {
    if (expiry(i->second) <= now) i = keys_.erase(i);
    else ++i;
  }
  if (keys_.size() < opts_.max_keys) return;
  // Every key still matters: drop the one whose protection ends first.
  auto victim = std::min_element(keys_.begin(), keys_.end(), [&](auto& a, auto& b) {
    return expiry(a.second) < expiry(b.second);
  });
  keys_.erase(victim);
}

// -- login_guard -------------------------------------------------------------------

std::string source_key(const std::string& address) {
  in6_addr a6{};
  if (address.find(':') == std::string::npos || inet_pton(AF_INET6, address.c_str(), &a6) != 1)
    return address;
  if (IN6_IS_ADDR_V4MAPPED(&a6)) return address.substr(address.rfind(':') + 1);
  std::fill(a6.s6_addr + 8, a6.s6_addr + 16, 0);
  char text[INET6_ADDRSTRLEN];
  if (!inet_ntop(AF_INET6, &a6, text, sizeof text)) return address;
  return std::string(text) + "/64";
}

login_guard::verdict login_guard::begin(const std::string& user, const std::string& source,
                                        clock::time_point now) {
  std::lock_guard<std::mutex> lock(mtx_);
  auto by_user = users_.check(user, now);
  auto by_source = source.empty() ? failure_limiter::verdict{} : sources_.check(source, now);
  if (!by_user.allowed || !by_source.allowed) {
    verdict v{false, std::max(by_user.retry_after, by_source.retry_after),
              by_user.allowed ? "source" : "username"};
    return v;
  }
  users_.record(user, now);
  if (!source.empty()) sources_.record(source, now);
  return {};
}

void login_guard::succeeded(const std::string& user, const std::string& source) {
  std::lock_guard<std::mutex> lock(mtx_);
  users_.reset(user);
  if (!source.empty()) sources_.release(source);
}

void login_guard::released(const std::string& user, const std::string& source) {
  std::lock_guard<std::mutex> lock(mtx_);
  users_.release(user);
  if (!source.empty()) sources_.release(source);
}

const std::string& login_guard::dummy_hash() {
  std::call_once(dummy_once_, [this] {
    auto h = hash_password(proto::random_hex(16));
    // Without it unknown users would answer at once, telling which names exist.
    AISCHED_INVARIANT(h, "cannot hash the dummy password");
    dummy_ = std::move(*h);
  });
  return dummy_;
}

}  // namespace aisched::gateway
