// Paging through the store actor's rebuild scans from inside an actor: each
// page is requested in turn (a page the store fails to answer is asked again),
// handed to `on_page`, and `on_done` runs after the last one. `alive()` says
// whether the scan is still wanted (e.g. the leadership epoch did not change).
// Used by the leader-only actors (trigger, router, retry, backpressure) when
// they rebuild after winning leadership; beside leader_epoch.hpp, the rest of
// that protocol.
#pragma once

#include <chrono>
#include <string>

#include "proto/interfaces.hpp"

namespace aisched::storage {

constexpr uint32_t scan_page_size = 1000;
constexpr auto scan_timeout = std::chrono::seconds(10);

/// Every task (with its runtime facts), in id order, starting after `after_id`.
template <class Self, class Alive, class OnPage, class OnDone>
void scan_tasks(Self* self, proto::store_actor store, uint64_t after_id, Alive alive,
                OnPage on_page, OnDone on_done) {
  proto::task_query q;
  q.after_id = after_id;
  q.limit = scan_page_size;
  self->request(store, scan_timeout, proto::scan_atom::value, q)
      .then(
          [=](proto::schedule_page& page) {
            if (!alive()) return;
            on_page(page);
            if (page.next_cursor.empty() || page.tasks.empty()) return on_done();
            scan_tasks(self, store, page.tasks.back().id, alive, on_page, on_done);
          },
          [=](caf::error&) {
            if (alive()) scan_tasks(self, store, after_id, alive, on_page, on_done);
          });
}

/// Every non-terminal instance, from `cursor` ("" = the start).
template <class Self, class Alive, class OnPage, class OnDone>
void scan_active(Self* self, proto::store_actor store, std::string cursor, Alive alive,
                 OnPage on_page, OnDone on_done) {
  proto::instance_query q;
  q.cursor = cursor;
  q.limit = scan_page_size;
  self->request(store, scan_timeout, proto::scan_atom::value, q)
      .then(
          [=](proto::schedule_page& page) {
            if (!alive()) return;
            on_page(page);
            if (page.next_cursor.empty()) return on_done();
            scan_active(self, store, page.next_cursor, alive, on_page, on_done);
          },
          [=](caf::error&) {
            if (alive()) scan_active(self, store, cursor, alive, on_page, on_done);
          });
}

}  // namespace aisched::storage
