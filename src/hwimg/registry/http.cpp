#include "hwimg/registry/detail/http.hpp"

#include <algorithm>
#include <list>
#include <map>

#include <sys/select.h>
#include <unistd.h>

#include "hwimg/registry/detail/curl_library.hpp"
#include "hwimg/registry/detail/transfer.hpp"
#include "hwimg/registry/reference.hpp"

namespace hwimg::registry {
namespace {

using Clock = std::chrono::steady_clock;

struct MultiDeleter {
  void operator()(CURLM* multi) const { curl().multi_cleanup(multi); }
};
using MultiHandle = std::unique_ptr<CURLM, MultiDeleter>;

}  // namespace

struct Transport::State {
  TransportOptions options;
  // Two pools of connections, made with the first exchange: the multiplexed exchanges' and the bulk
  // uploads'. libcurl 7.88 can attach a transfer waiting for a multiplexed connection (PIPEWAIT) to
  // a pending HTTP/1.1 connection of the same host that another transfer opened, and then answer
  // one exchange with the other's response (a manifest PUT checked against another PUT's digest);
  // with separate multi handles the pools never see each other's connections.
  MultiHandle multi;
  MultiHandle bulk;
  std::list<Transfer> transfers;
  std::multimap<Clock::time_point, std::function<void()>> timers;
  std::uint64_t exchanges = 0;
  Clock::time_point last_finished;  // an exchange ended: what follows (a retry) counts from there

  void submit(Request request, std::function<void(Response)> done, int redirects = 0);
  // Ends `t` (out of its pool) with libcurl's `code`: its response filled in, its redirect
  // followed, or its `done` called.
  void finish(Transfer& t, CURLcode code);
  // Ends every exchange and runs every timer now when the cancellation's limit passed with
  // nothing moving since `waited_since`; whatever they start meets the same test at the next turn.
  void cancel_if_stalled(Clock::time_point waited_since);
  // Follows a redirect of a finished exchange; false when it is not one to follow.
  bool follow_redirect(Transfer& t);
  // Runs the transfers as far as they go; calls `done` of the finished ones.
  Result<std::size_t> step();
  // Waits up to `wait_ms` for a socket of either pool (or a timeout libcurl asked for).
  Result<void> wait(int wait_ms);
  void log(const Transfer& t) const;

  Result<MultiHandle> make_multi() const {
    MultiHandle made(curl().multi_init());
    if (!made) return fail("failed to initialise libcurl: curl_multi_init returned null");
    for (const auto code : {curl().multi_setopt(made.get(), CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX),
                            curl().multi_setopt(made.get(), CURLMOPT_MAX_HOST_CONNECTIONS,
                                                options.max_host_connections)}) {
      if (code != CURLM_OK) return fail("failed to initialise libcurl: {}", curl().multi_strerror(code));
    }
    return made;
  }

  Result<void> start() {
    if (multi) return {};
    HWIMG_TRY(load_curl());
    HWIMG_TRY_ASSIGN(bulk, make_multi());
    HWIMG_TRY_ASSIGN(multi, make_multi());
    return {};
  }

  // Answers `done` like a transport failure, on the next turn of the loop, as every exchange is.
  void answer_failure(const Request& request, std::string error, std::function<void(Response)> done) {
    Response response;
    response.failure = TransportFailure::other;
    response.error = std::move(error);
    response.url = request.url;
    timers.emplace(Clock::now(), [done = std::move(done), response = std::move(response)]() mutable {
      done(std::move(response));
    });
  }
};

Transport::Transport(std::unique_ptr<State> state) : m_state(std::move(state)) {}
Transport::Transport(Transport&&) noexcept = default;
Transport& Transport::operator=(Transport&&) noexcept = default;
Transport::~Transport() {
  if (m_state && m_state->multi) {
    for (auto& t : m_state->transfers) curl().multi_remove_handle(t.multi, t.easy.get());
  }
}

Result<Transport> Transport::create(TransportOptions options) {
  auto state = std::make_unique<State>();
  state->options = std::move(options);
  return Transport(std::move(state));
}

std::uint64_t Transport::exchanges() const { return m_state->exchanges; }

void Transport::State::submit(Request request, std::function<void(Response)> done, int redirects) {
  if (auto started = start(); !started) return answer_failure(request, started.error().message, std::move(done));
  auto& t = transfers.emplace_back();
  t.request = std::move(request);
  t.done = std::move(done);
  t.redirects = redirects;
  t.started = Clock::now();
  t.moved = t.started;
  t.response.url = t.request.url;
  t.multi = t.request.channel == Channel::bulk ? bulk.get() : multi.get();
  auto prepared = prepare_transfer(t, options);
  if (prepared) {
    if (const auto code = curl().multi_add_handle(t.multi, t.easy.get()); code != CURLM_OK) {
      prepared = fail("failed to start an HTTP exchange: {}", curl().multi_strerror(code));
    }
  }
  if (!prepared) {
    auto failed = std::move(t);
    transfers.pop_back();
    return answer_failure(failed.request, prepared.error().message, std::move(failed.done));
  }
  ++exchanges;
}

void Transport::submit(Request request, std::function<void(Response)> done) {
  m_state->submit(std::move(request), std::move(done));
}

void Transport::after(std::chrono::milliseconds delay, std::function<void()> action) {
  m_state->timers.emplace(Clock::now() + delay, std::move(action));
}

void Transport::State::log(const Transfer& t) const {
  if (!options.output->logging()) return;
  const auto& r = t.response;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t.started).count();
  options.output->log(fmt::format("{} {} -> {} ({} ms)", method_name(t.request.method), redact_url(t.request.url),
                                  r.ok() ? std::to_string(r.status) : r.error, ms));
}

Result<std::size_t> Transport::State::step() {
  std::vector<std::pair<Transfer*, CURLcode>> finished;
  for (auto* pool : {multi.get(), bulk.get()}) {
    int running = 0;
    if (const auto code = curl().multi_perform(pool, &running); code != CURLM_OK) {
      return fail("failed to run HTTP transfers: {}", curl().multi_strerror(code));
    }
    int queued = 0;
    while (CURLMsg* message = curl().multi_info_read(pool, &queued)) {
      if (message->msg != CURLMSG_DONE) continue;
      Transfer* t = nullptr;
      curl().easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, &t);
      finished.emplace_back(t, message->data.result);
    }
  }
  for (auto [t, code] : finished) finish(*t, code);
  return finished.size();
}

void Transport::State::finish(Transfer& t, CURLcode code) {
  curl().multi_remove_handle(t.multi, t.easy.get());
  complete_transfer(t, code);
  log(t);
  last_finished = Clock::now();
  const bool followed = follow_redirect(t);
  auto done = std::move(t.done);
  auto response = std::move(t.response);
  transfers.remove_if([&t](const Transfer& x) { return &x == &t; });
  if (!followed) done(std::move(response));
}

void Transport::State::cancel_if_stalled(Clock::time_point waited_since) {
  const auto limit = options.cancellation ? options.cancellation->stall_limit() : std::nullopt;
  if (!limit) return;
  auto moved = std::max(waited_since, last_finished);
  for (const auto& t : transfers) moved = std::max(moved, t.moved);
  if (Clock::now() - moved < *limit) return;
  // Their `done` may start exchanges (a redirect is not followed, a cancelled one not retried).
  auto cancelled = std::move(transfers);
  transfers.clear();
  for (auto& t : cancelled) {
    curl().multi_remove_handle(t.multi, t.easy.get());
    t.response.failure = TransportFailure::cancelled;
    t.response.error = "cancelled: the program is stopping";
    if (limit->count() != 0) t.response.error += fmt::format(", and nothing moved for {} ms", limit->count());
    log(t);
    t.done(std::move(t.response));
  }
  // A waiting retry's `done` must be called too: a token fetch left unanswered would keep every
  // request for its scope waiting.
  auto due = std::move(timers);
  timers.clear();
  for (auto& [when, action] : due) action();
}

Result<void> Transport::State::wait(int wait_ms) {
  // The bulk pool's sockets and timeout join the multiplexed pool's wait.
  fd_set read_set;
  fd_set write_set;
  fd_set error_set;
  FD_ZERO(&read_set);
  FD_ZERO(&write_set);
  FD_ZERO(&error_set);
  int max_fd = -1;
  long bulk_timeout = -1;
  if (const auto code = curl().multi_fdset(bulk.get(), &read_set, &write_set, &error_set, &max_fd); code != CURLM_OK) {
    return fail("failed to wait for HTTP transfers: {}", curl().multi_strerror(code));
  }
  if (const auto code = curl().multi_timeout(bulk.get(), &bulk_timeout); code != CURLM_OK) {
    return fail("failed to wait for HTTP transfers: {}", curl().multi_strerror(code));
  }
  if (bulk_timeout >= 0 && bulk_timeout < wait_ms) wait_ms = static_cast<int>(bulk_timeout);
  std::vector<curl_waitfd> extra;
  for (int fd = 0; fd <= max_fd; ++fd) {
    short events = 0;
    if (FD_ISSET(fd, &read_set)) events |= CURL_WAIT_POLLIN;
    if (FD_ISSET(fd, &write_set)) events |= CURL_WAIT_POLLOUT;
    if (FD_ISSET(fd, &error_set)) events |= CURL_WAIT_POLLPRI;
    if (events != 0) extra.push_back({fd, events, 0});
  }
  if (const auto code = curl().multi_poll(multi.get(), extra.data(), static_cast<unsigned>(extra.size()), wait_ms,
                                          nullptr);
      code != CURLM_OK) {
    return fail("failed to wait for HTTP transfers: {}", curl().multi_strerror(code));
  }
  return {};
}

bool Transport::State::follow_redirect(Transfer& t) {
  const auto& r = t.response;
  const auto location = r.header("location");
  const bool readable = t.request.method == Method::get || t.request.method == Method::head;
  if (!t.request.follow_redirects || !readable || !r.ok() || r.status < 300 || r.status > 399 || !location ||
      t.redirects >= max_followed_redirects) {
    return false;
  }
  auto next = t.request;
  next.url = resolve_url(t.request.url, *location);
  // Plain HTTP only where the registry itself may be spoken to in plain HTTP: a host on this
  // machine, or with --insecure. Otherwise an https registry's redirect would expose the content.
  if (t.request.url.starts_with("https://") && !next.url.starts_with("https://") && options.verify_tls &&
      !is_loopback_host(url_host(next.url))) {
    t.response.failure = TransportFailure::other;
    t.response.error = fmt::format("refused a redirect from HTTPS to plain HTTP ({}); use --insecure to allow it",
                                   redact_url(next.url));
    return false;
  }
  if (!same_origin(t.request.url, next.url)) strip_authorization(next.headers);
  submit(std::move(next), std::move(t.done), t.redirects + 1);
  return true;
}

Result<void> Transport::run() {
  return run_until([] { return false; });
}

Result<void> Transport::run_until(const std::function<bool()>& stop) {
  auto& s = *m_state;
  // A body paused for its reader, or a reader busy elsewhere, is no stall of the exchange.
  const auto entered = Clock::now();
  while ((!s.transfers.empty() || !s.timers.empty()) && !stop()) {
    s.cancel_if_stalled(entered);
    if (stop() || (s.transfers.empty() && s.timers.empty())) break;
    std::size_t finished = 0;
    if (!s.transfers.empty()) {
      HWIMG_TRY_ASSIGN(finished, s.step());
    }
    const auto now = Clock::now();
    while (!s.timers.empty() && s.timers.begin()->first <= now) {
      auto action = std::move(s.timers.begin()->second);
      s.timers.erase(s.timers.begin());
      action();
    }
    if (finished != 0 || stop()) continue;
    int wait_ms = 1000;
    if (!s.timers.empty()) {
      const auto until = std::chrono::duration_cast<std::chrono::milliseconds>(s.timers.begin()->first - now).count();
      wait_ms = static_cast<int>(std::clamp<long long>(until, 0, 1000));
    }
    if (s.transfers.empty()) {
      ::usleep(static_cast<useconds_t>(wait_ms) * 1000);
    } else {
      HWIMG_TRY(s.wait(wait_ms));
    }
  }
  return {};
}

void Transport::resume_bodies() {
  auto& s = *m_state;
  std::vector<Transfer*> paused;
  for (auto& t : s.transfers) {
    if (t.paused) paused.push_back(&t);
  }
  for (auto* t : paused) {
    // Unpaused first: on_write may run inside curl_easy_pause and pause it again.
    t->paused = false;
    if (const auto code = curl().easy_pause(t->easy.get(), CURLPAUSE_CONT); code != CURLE_OK) s.finish(*t, code);
  }
}

}  // namespace hwimg::registry
