// Live output of a run as Server-Sent Events; see output_stream.hpp.
#include "gateway/output_stream.hpp"

#include <chrono>
#include <memory>

#include <boost/json.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>

#include "proto/errors.hpp"
#include "proto/json.hpp"

namespace aisched::gateway {

namespace json = boost::json;
using namespace proto;

namespace {

using poll_atom = caf::atom_constant<caf::atom("poll")>;

constexpr auto poll_every = std::chrono::milliseconds(500);
constexpr int keepalive_polls = 30;  // a comment line every 15 s finds a gone client

std::string sse(const char* event, const json::value& data) {
  std::string out;
  if (event) out += std::string("event: ") + event + "\n";
  out += "data: " + json::serialize(data) + "\n\n";
  return out;
}

std::string chunk_event(const std::string& chunk) {
  return sse(nullptr, json::object{{"chunk", chunk}});
}

/// What the follower knows between messages.
struct follow_state {
  std::string tenant, id;
  std::shared_ptr<stream_writer> out;
  bool subscribed = false;   // receiving (or asking for) live chunks from a worker
  bool got_live = false;     // some output came live: the stored tail is not repeated
  int idle_polls = 0;
  int report_waits = 0;      // looks at a cancelled run before its worker's report came
};

// A run cancelled while it ran commits before its worker kills it and reports
// what it printed and how it ended (its exit code): the end event waits for
// that report this many looks (about 4 s), not for a worker that never answers.
constexpr int report_wait_checks = 8;

/// Whether cancelled run `x` may still get its worker's report.
bool awaits_report(const instance& x) {
  return x.state == instance_state::cancelled && x.dispatched_at != 0 && x.exit_code == 0 &&
         x.output.empty();
}

void finish(caf::event_based_actor* self, follow_state& st, const instance& x) {
  if (!st.got_live && !x.output.empty()) st.out->write(chunk_event(x.output));
  json::object end{{"state", std::string(name_of(x.state))}, {"exit_code", x.exit_code}};
  if (!x.error.empty()) end["error"] = x.error;
  st.out->write(sse("end", end));
  st.out->close();
  self->quit();
}

/// Reads the instance: ends the stream when it ended for good; otherwise, when
/// not following yet, tries to follow the attempt that runs now. (A follower
/// keeps polling: a worker that dies never says `done`.)
void check(caf::event_based_actor* self, std::shared_ptr<follow_state> st, api_context ctx) {
  if (!st->out->open()) return self->quit();
  self->request(ctx.store, ctx.timeout, get_instance_atom::value, st->tenant, st->id)
      .then(
          [=](instance& x) {
            if (is_terminal(x.state)) {
              if (awaits_report(x) && ++st->report_waits <= report_wait_checks) return;
              return finish(self, *st, x);
            }
            if (st->subscribed ||
                (x.state != instance_state::running && x.state != instance_state::dispatched))
              return;  // following already, or pending / waiting to retry: look again later
            st->subscribed = true;  // until the router says otherwise: one request at a time
            self->request(ctx.router, ctx.timeout, output_atom::value, st->id,
                          caf::actor_cast<caf::actor>(self))
                .then([=](bool following) { st->subscribed = following; },
                      [=](caf::error&) { st->subscribed = false; });
          },
          [=](caf::error& e) {
            st->out->write(sse("error", error_to_json(e)));
            st->out->close();
            self->quit();
          });
}

caf::behavior follower(caf::event_based_actor* self, std::shared_ptr<follow_state> st,
                       api_context ctx) {
  check(self, st, ctx);
  self->delayed_send(self, poll_every, poll_atom::value);
  return {
      [=](output_atom, const std::string&, const std::string& chunk) {
        st->got_live = true;
        if (!st->out->write(chunk_event(chunk))) self->quit();
      },
      [=](done_atom, const std::string&) {
        // The attempt ended on the worker; its result commits shortly.
        st->subscribed = false;
        check(self, st, ctx);
      },
      [=](poll_atom) {
        if (!st->out->open()) return self->quit();
        if (++st->idle_polls % keepalive_polls == 0 && !st->out->write(": keep-alive\n\n"))
          return self->quit();
        check(self, st, ctx);
        self->delayed_send(self, poll_every, poll_atom::value);
      },
  };
}

}  // namespace

void follow_output(const api_context& ctx, const std::string& tenant, const std::string& id,
                   reply_fn reply) {
  // Look the instance up first so a wrong id is a plain 404, not a stream.
  ctx.sys->spawn([ctx, tenant, id, reply](caf::event_based_actor* self) {
    self->request(ctx.store, ctx.timeout, get_instance_atom::value, tenant, id)
        .then(
            [=](instance&) {
              http_response res;
              res.content_type = "text/event-stream";
              res.stream = [ctx, tenant, id](std::shared_ptr<stream_writer> out) {
                auto st = std::make_shared<follow_state>();
                st->tenant = tenant;
                st->id = id;
                st->out = std::move(out);
                ctx.sys->spawn(follower, st, ctx);
              };
              reply(std::move(res));
            },
            [=](caf::error& e) {
              reply(error_response(e));
            });
  });
}

}  // namespace aisched::gateway
