// The router's view of tasks; see task_book.hpp.
#include "actors/router/task_book.hpp"

namespace aisched::router {

task_terms task_terms::of(const proto::task& t) {
  return {t.id,   t.tenant,  t.labels, t.route, t.max_concurrency,
          t.pool, t.version, t.paused, t.kind == proto::task_kind::noop, t.shards};
}

void task_book::put(const proto::task& t) {
  terms_[t.id] = task_terms::of(t);
  if (auto i = definitions_.find(t.id); i != definitions_.end()) i->second = t;
}

void task_book::erase(uint64_t id) {
  terms_.erase(id);
  definitions_.erase(id);
}

const task_terms* task_book::terms(uint64_t id) const {
  auto i = terms_.find(id);
  return i == terms_.end() ? nullptr : &i->second;
}

const proto::task* task_book::definition(uint64_t id) const {
  auto i = definitions_.find(id);
  return i == definitions_.end() ? nullptr : &i->second;
}

void task_book::cache(proto::task t) {
  auto known = terms_.find(t.id);
  if (known == terms_.end() || t.version < known->second.version) return;
  if (definitions_.size() >= max_definitions) definitions_.clear();
  auto id = t.id;
  definitions_.insert_or_assign(id, std::move(t));
}

}  // namespace aisched::router
