// Helpers an inspected actor uses in its .cpp: `counted(self, {...})` wraps the
// behaviour it returns so every handled message bumps `self->state.activity`,
// and `summary_of(self, details)` answers the `inspect` request.
//
// Why a wrapped behaviour: CAF 0.17.6 from Debian is built without
// CAF_ENABLE_ACTOR_PROFILER, so the actor_profiler hooks never run, and there
// is no other per-message hook. A behaviour whose invoke() counts, then hands
// the message to the real one, costs one increment and one clock read per
// message and needs no change to the handlers. It sees what the behaviour
// matches: replies to the actor's own requests (then-handlers) and system
// messages (down, exit) bypass the behaviour and are not counted.
// It relies on caf::detail::behavior_impl, stable through the 0.17 series;
// an actor that calls become() would need to wrap the new behaviour as well.
// The clock read is the actor's: `self->state.clock` (common/clock.hpp) read
// with its actor clock, or the system's for an actor that keeps none.
#pragma once

#include <cstdio>
#include <map>
#include <string>
#include <type_traits>
#include <utility>

#include <caf/behavior.hpp>
#include <caf/detail/behavior_impl.hpp>
#include <caf/typed_behavior.hpp>

#include "common/activity.hpp"
#include "common/clock.hpp"
#include "proto/inspection.hpp"
#include "proto/interfaces.hpp"

namespace aisched::inspector {

namespace detail {

/// Counts each message the wrapped behaviour matches into `*counts`, stamped
/// with `wall` read on `clock`. All three must outlive the behaviour (the
/// first two live in the actor's state, the last is its system's).
class counting_behavior final : public caf::detail::behavior_impl {
 public:
  counting_behavior(activity* counts, const wall_clock* wall, const caf::actor_clock* clock,
                    pointer inner)
      : behavior_impl(inner->timeout()),
        counts_(counts),
        wall_(wall),
        clock_(clock),
        inner_(std::move(inner)) {}

  using behavior_impl::invoke;

  caf::match_case::result invoke(caf::detail::invoke_result_visitor& f,
                                 caf::type_erased_tuple& xs) override {
    auto before = begin_count();
    return end_count(before, inner_->invoke(f, xs));
  }

  caf::match_case::result invoke_empty(caf::detail::invoke_result_visitor& f) override {
    auto before = begin_count();
    return end_count(before, inner_->invoke_empty(f));
  }

  void handle_timeout() override { inner_->handle_timeout(); }

 private:
  // Counted before the handler runs, so an `inspect` answer includes itself;
  // taken back when no handler matched.
  activity begin_count() {
    auto before = *counts_;
    ++counts_->handled;
    counts_->last_active = wall_->now(*clock_);
    return before;
  }

  caf::match_case::result end_count(const activity& before, caf::match_case::result r) {
    if (r == caf::match_case::no_match) *counts_ = before;
    return r;
  }

  activity* counts_;
  const wall_clock* wall_;
  const caf::actor_clock* clock_;
  pointer inner_;
};

inline caf::behavior count_into(activity& counts, const wall_clock& wall,
                                const caf::actor_clock& clock, caf::behavior& inner) {
  caf::behavior::impl_ptr ptr{
      caf::make_counted<counting_behavior>(&counts, &wall, &clock, inner.as_behavior_impl())};
  return caf::behavior{std::move(ptr)};
}

/// The system's wall clock, for the stamps of an actor that keeps no clock.
inline const wall_clock system_wall{};

template <class State, class = void>
struct keeps_clock : std::false_type {};
template <class State>
struct keeps_clock<State, std::void_t<decltype(std::declval<const State&>().clock)>>
    : std::is_same<std::decay_t<decltype(std::declval<const State&>().clock)>, wall_clock> {};

/// `state.clock` when the state keeps a wall_clock by that name, else the system's.
template <class State>
const wall_clock& wall_of(const State& state) {
  if constexpr (keeps_clock<State>::value)
    return state.clock;
  else
    return system_wall;
}

}  // namespace detail

/// The behaviour `bhvr` of actor `self`, counting into `self->state.activity`.
/// Use as `return inspector::counted(self, { handlers... });`.
template <class Self>
typename std::remove_pointer_t<Self>::behavior_type counted(
    Self self, typename std::remove_pointer_t<Self>::behavior_type bhvr) {
  using behavior_type = typename std::remove_pointer_t<Self>::behavior_type;
  const auto& wall = detail::wall_of(self->state);
  if constexpr (std::is_same_v<behavior_type, caf::behavior>) {
    return detail::count_into(self->state.activity, wall, self->clock(), bhvr);
  } else {
    // The typed behaviour was checked against the interface when `bhvr` was built.
    return behavior_type{typename behavior_type::unsafe_init{},
                         detail::count_into(self->state.activity, wall, self->clock(),
                                            bhvr.unbox())};
  }
}

/// The answer to `inspect` for actor `self` (call from its own handler only:
/// the mailbox may be read by its owner alone). Kind and name are the state's
/// `name`; the inspector renames the row to what the node registered.
template <class Self>
proto::actor_summary summary_of(Self self, std::map<std::string, std::string> details) {
  proto::actor_summary s;
  s.kind = std::decay_t<decltype(self->state)>::name;
  s.name = s.kind;
  s.actor_id = self->id();
  s.mailbox = self->mailbox().size();
  s.handled = self->state.activity.handled;
  s.last_active_ms = self->state.activity.last_active;
  s.details = std::move(details);
  return s;
}

// -- text of detail values -----------------------------------------------------

inline std::string text(bool b) { return b ? "true" : "false"; }
inline std::string text(proto::pressure_level l) {
  static const char* names[] = {"green", "yellow", "red"};
  return names[static_cast<size_t>(l)];
}
/// A ratio with two decimals ("0.85").
inline std::string fixed2(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", x);
  return buf;
}
/// An instant as RFC 3339, "-" for none (0).
inline std::string instant(unix_ms t) { return t == 0 ? "-" : format_rfc3339(t); }

}  // namespace aisched::inspector
