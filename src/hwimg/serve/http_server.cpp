#include "hwimg/serve/http_server.hpp"

#include <condition_variable>
#include <exception>
#include <set>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "hwimg/serve/detail/microhttpd_library.hpp"
#include "hwimg/serve/exchange.hpp"
#include "hwimg/serve/fetch_workers.hpp"
#include "hwimg/serve/header_deadlines.hpp"
#include "hwimg/util/fd.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::serve {
namespace {

MHD_Result collect_field(void* cls, MHD_ValueKind, const char* key, const char* value) {
  static_cast<Fields*>(cls)->emplace_back(key != nullptr ? key : "", value != nullptr ? value : "");
  return MHD_YES;
}

// A streamed body waiting for its client holds at most this much; the worker waits meanwhile.
constexpr std::size_t max_buffered_body = 256 * 1024;
// How often overdue headers are shut and overdue waits refused.
constexpr std::chrono::milliseconds housekeeping_period{200};

// The path as one printable line, for a log.
std::string printable(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, 200)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out;
}

}  // namespace

struct HttpServer::State {
  State(const ServerSettings& settings, Handlers handlers_)
      : handlers(std::move(handlers_)), grace_over(settings.grace_over), output(settings.output),
        deadlines(settings.header_timeout),
        workers(settings.fetch_limit, settings.fetch_wait, *settings.output) {}

  const MicrohttpdLibrary* mhd = nullptr;
  MHD_Daemon* daemon = nullptr;
  Handlers handlers;
  std::function<void()> grace_over;
  util::Output* output = nullptr;
  std::uint16_t port = 0;
  util::UniqueFd quiesced_listener;  // closed only after the daemon stopped (libmicrohttpd's rule)
  HeaderDeadlines deadlines;
  FetchWorkers workers;

  // Requests a worker answers, abandoned at the stop: libmicrohttpd must not be stopped while a
  // connection is suspended.
  std::mutex exchanges_mutex;
  std::set<std::shared_ptr<Exchange>> exchanges;
  bool stopping = false;

  std::mutex housekeeping_mutex;
  std::condition_variable housekeeping_wake;
  bool housekeeping_stops = false;
  std::thread housekeeper;
};

namespace {

using State = HttpServer::State;

// What libmicrohttpd keeps for a request between its calls (its req_cls).
struct RequestSlot {
  std::shared_ptr<Exchange> exchange;  // set when a worker answers it
};

ssize_t read_body(void* cls, std::uint64_t, char* buffer, std::size_t max) {
  try {
    const auto piece = (*static_cast<std::shared_ptr<Exchange>*>(cls))->read(buffer, max);
    switch (piece.kind) {
      case Exchange::Piece::Kind::data: return static_cast<ssize_t>(piece.size);
      case Exchange::Piece::Kind::waiting: return 0;  // suspended until the worker has more
      case Exchange::Piece::Kind::end: return MHD_CONTENT_READER_END_OF_STREAM;
      case Exchange::Piece::Kind::broken: break;
    }
  } catch (...) {
    // Cut the connection below: a short body, never a wrong one.
  }
  return MHD_CONTENT_READER_END_WITH_ERROR;
}

void free_body(void* cls) {
  auto* exchange = static_cast<std::shared_ptr<Exchange>*>(cls);
  (*exchange)->close();
  delete exchange;
}

// Queues `response`; its body from `streamed` when set.
MHD_Result queue(const State& state, MHD_Connection* connection, const HttpResponse& response,
                 const std::shared_ptr<Exchange>& streamed) {
  const auto& mhd = *state.mhd;
  MHD_Response* reply = nullptr;
  if (streamed) {
    auto* context = new std::shared_ptr<Exchange>(streamed);
    reply = mhd.create_response_from_callback(response.stream_size.value_or(MHD_SIZE_UNKNOWN), 64 * 1024, read_body,
                                              context, free_body);
    if (reply == nullptr) free_body(context);
  } else {
    reply = mhd.create_response_from_buffer(response.body.size(), const_cast<char*>(response.body.data()),
                                            MHD_RESPMEM_MUST_COPY);
  }
  if (reply == nullptr) return MHD_NO;
  bool headers = true;
  for (const auto& [name, value] : response.headers) {
    headers = headers && mhd.add_response_header(reply, name.c_str(), value.c_str()) == MHD_YES;
  }
  const auto queued = headers ? mhd.queue_response(connection, response.status, reply) : MHD_NO;
  mhd.destroy_response(reply);
  return queued;
}

MHD_Result queue_failure(const State& state, MHD_Connection* connection, unsigned status, std::string_view message) {
  try {
    return queue(state, connection, state.handlers.failure(status, message), nullptr);
  } catch (...) {
    return MHD_NO;  // libmicrohttpd closes the connection
  }
}

// A worker's job: the handler's answer, then its streamed body.
void answer_on_worker(const State& state, Exchange& exchange, const HttpRequest& request) {
  HttpResponse response;
  try {
    response = state.handlers.fetch(request);
  } catch (const std::exception& e) {
    state.output->warning(fmt::format("failed to answer {} {}: {}", request.method, printable(request.path), e.what()));
    response = state.handlers.failure(500, "an unexpected error");
  } catch (...) {
    state.output->warning(fmt::format("failed to answer {} {}: an unexpected error", request.method,
                                      printable(request.path)));
    response = state.handlers.failure(500, "an unexpected error");
  }
  auto body = std::exchange(response.stream, nullptr);
  exchange.deliver(std::move(response), body ? Body::streamed : Body::whole);
  if (body) exchange.pump(body);
}

// A worker takes the request; the connection waits suspended for its answer.
MHD_Result hand_to_worker(State& state, MHD_Connection* connection, RequestSlot& slot, HttpRequest request) {
  const auto* mhd = state.mhd;
  auto exchange = std::make_shared<Exchange>([mhd, connection] { mhd->suspend_connection(connection); },
                                             [mhd, connection] { mhd->resume_connection(connection); },
                                             max_buffered_body);
  {
    std::lock_guard lock(state.exchanges_mutex);
    if (state.stopping) return queue_failure(state, connection, 503, "the server is stopping");
    state.exchanges.insert(exchange);
  }
  slot.exchange = exchange;
  exchange->wait_for_answer();
  state.workers.submit({[&state, exchange, request = std::move(request)] { answer_on_worker(state, *exchange, request); },
                        [&state, exchange] {
                          auto busy = state.handlers.failure(503, "every upstream fetch is busy; try again");
                          busy.headers.emplace_back("Retry-After", "5");
                          exchange->deliver(std::move(busy), Body::whole);
                        }});
  return MHD_YES;
}

MHD_Result answer_request(State& state, MHD_Connection* connection, const char* url, const char* method,
                          std::size_t* upload_size, void** request_state) {
  const auto& mhd = *state.mhd;
  // The first call sees only the headers; answering on the last lets MHD handle 100-continue.
  if (*request_state == nullptr) {
    *request_state = new RequestSlot;
    return MHD_YES;
  }
  if (*upload_size != 0) {
    *upload_size = 0;  // the mirror is read-only: a body is ignored and the method refused
    return MHD_YES;
  }
  auto& slot = *static_cast<RequestSlot*>(*request_state);
  if (slot.exchange) {  // resumed: the worker answered, or the server stops
    auto answer = slot.exchange->take_answer();
    if (!answer) return queue_failure(state, connection, 503, "the server is stopping");
    const auto& [response, body] = *answer;
    return queue(state, connection, response, body == Body::streamed ? slot.exchange : nullptr);
  }
  // The whole request is in: a body, if any, counted against the header's deadline, so that one
  // sent a byte at a time holds nothing for longer.
  state.deadlines.header_received(connection);
  HttpRequest request;
  request.method = method;
  request.path = url;
  mhd.get_connection_values(connection, MHD_GET_ARGUMENT_KIND, collect_field, &request.query);
  mhd.get_connection_values(connection, MHD_HEADER_KIND, collect_field, &request.headers);
  for (auto& [name, value] : request.headers) name = util::to_lower(name);
  if (auto now = state.handlers.immediate(request)) return queue(state, connection, *now, nullptr);
  return hand_to_worker(state, connection, slot, std::move(request));
}

// libmicrohttpd's callbacks are C: an exception must not cross them, and one that escapes a
// handler becomes a 500 and a log line instead of std::terminate.
MHD_Result answer(void* cls, MHD_Connection* connection, const char* url, const char* method, const char*,
                  const char*, std::size_t* upload_size, void** request_state) {
  auto& state = *static_cast<State*>(cls);
  try {
    return answer_request(state, connection, url, method, upload_size, request_state);
  } catch (const std::exception& e) {
    state.output->warning(fmt::format("failed to answer {} {}: {}", method, printable(url), e.what()));
  } catch (...) {
    state.output->warning(fmt::format("failed to answer {} {}: an unexpected error", method, printable(url)));
  }
  return queue_failure(state, connection, 500, "an unexpected error");
}

void completed(void* cls, MHD_Connection* connection, void** request_state, MHD_RequestTerminationCode) {
  auto& state = *static_cast<State*>(cls);
  state.deadlines.answered(connection, HeaderDeadlines::Clock::now());
  const std::unique_ptr<RequestSlot> slot(static_cast<RequestSlot*>(std::exchange(*request_state, nullptr)));
  if (!slot || !slot->exchange) return;
  slot->exchange->close();
  std::lock_guard lock(state.exchanges_mutex);
  state.exchanges.erase(slot->exchange);
}

void connection_event(void* cls, MHD_Connection* connection, void**, MHD_ConnectionNotificationCode code) {
  auto& state = *static_cast<State*>(cls);
  if (code == MHD_CONNECTION_NOTIFY_CLOSED) return state.deadlines.closed(connection);
  const auto* info = state.mhd->get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
  try {
    if (info != nullptr) state.deadlines.opened(connection, info->connect_fd, HeaderDeadlines::Clock::now());
  } catch (...) {
    // Out of memory: the connection goes without a header deadline; its idle timeout remains.
  }
}

void log_library(void* cls, const char* format, va_list arguments) {
  char text[512];
  if (std::vsnprintf(text, sizeof text, format, arguments) < 0) return;
  try {
    static_cast<State*>(cls)->output->log(fmt::format("http: {}", util::trim(text)));
  } catch (...) {
    // A log line lost is no reason to end the process.
  }
}

// Shuts connections whose header is overdue and refuses requests that waited too long for a
// worker, until the server stops.
void keep_house(State& state) {
  std::unique_lock lock(state.housekeeping_mutex);
  while (!state.housekeeping_wake.wait_for(lock, housekeeping_period, [&] { return state.housekeeping_stops; })) {
    try {
      const auto now = std::chrono::steady_clock::now();
      state.deadlines.shut_overdue(now);
      state.workers.refuse_overdue(now);
    } catch (const std::exception& e) {
      state.output->warning(fmt::format("failed to close overdue connections: {}", e.what()));
    }
  }
}

}  // namespace

HttpServer::HttpServer(std::unique_ptr<State> state) : m_state(std::move(state)) {}

HttpServer::~HttpServer() {
  shutdown(std::chrono::milliseconds(0));
}

Result<std::unique_ptr<HttpServer>> HttpServer::start(const ServerSettings& settings, Handlers handlers) {
  HWIMG_TRY_ASSIGN(const auto* mhd, load_microhttpd());
  auto state = std::make_unique<State>(settings, std::move(handlers));
  state->mhd = mhd;

  sockaddr_storage address{};
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
  if (auto* v4 = reinterpret_cast<sockaddr_in*>(&address); ::inet_pton(AF_INET, settings.address.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(settings.port);
  } else if (auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
             ::inet_pton(AF_INET6, settings.address.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(settings.port);
    flags |= MHD_USE_IPv6;
  } else {
    return fail_usage("failed to listen on {}: not an IPv4 or IPv6 address", settings.address);
  }
  const auto idle_seconds = std::chrono::ceil<std::chrono::seconds>(settings.idle_timeout).count();
  state->daemon = mhd->start_daemon(
      flags, settings.port, nullptr, nullptr, answer, state.get(), MHD_OPTION_SOCK_ADDR, &address,
      MHD_OPTION_THREAD_POOL_SIZE, std::max(settings.event_threads, 1U), MHD_OPTION_CONNECTION_LIMIT,
      settings.connection_limit, MHD_OPTION_PER_IP_CONNECTION_LIMIT, settings.client_limit,
      MHD_OPTION_CONNECTION_TIMEOUT, static_cast<unsigned>(idle_seconds), MHD_OPTION_NOTIFY_COMPLETED, completed,
      state.get(), MHD_OPTION_NOTIFY_CONNECTION, connection_event, state.get(), MHD_OPTION_EXTERNAL_LOGGER,
      log_library, state.get(), MHD_OPTION_END);
  if (state->daemon == nullptr) {
    return fail("failed to listen on {}:{}: the address is in use or not available", settings.address, settings.port);
  }
  const auto* info = mhd->get_daemon_info(state->daemon, MHD_DAEMON_INFO_BIND_PORT);
  state->port = info != nullptr ? info->port : settings.port;
  state->housekeeper = std::thread([raw = state.get()] { keep_house(*raw); });
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(state)));
}

std::uint16_t HttpServer::port() const {
  return m_state->port;
}

ServerLoad HttpServer::load() const {
  ServerLoad load;
  if (m_state->daemon != nullptr) {
    const auto* info = m_state->mhd->get_daemon_info(m_state->daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    if (info != nullptr) load.connections = info->num_connections;
  }
  const auto workers = m_state->workers.load();
  load.fetches_running = workers.running;
  load.fetches_waiting = workers.waiting;
  load.busy_refusals = workers.refused;
  load.header_timeouts = m_state->deadlines.shut_total();
  return load;
}

void HttpServer::shutdown(std::chrono::milliseconds grace) {
  auto& state = *m_state;
  if (state.daemon == nullptr) return;
  const auto& mhd = *state.mhd;
  state.quiesced_listener = util::UniqueFd(mhd.quiesce_daemon(state.daemon));
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    // Kept-alive connections owe a header; none will come in time to be answered.
    state.deadlines.shut_waiting();
    const auto* info = mhd.get_daemon_info(state.daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    if (info == nullptr || info->num_connections == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::vector<std::shared_ptr<Exchange>> unfinished;
  {
    std::lock_guard lock(state.exchanges_mutex);
    state.stopping = true;
    unfinished.assign(state.exchanges.begin(), state.exchanges.end());
  }
  // From here no connection is suspended, nor about to be resumed by a worker: libmicrohttpd's
  // stop requires both.
  for (const auto& exchange : unfinished) exchange->abandon();
  mhd.stop_daemon(state.daemon);
  state.daemon = nullptr;
  state.quiesced_listener.reset();
  if (state.grace_over) state.grace_over();
  state.workers.stop();
  {
    std::lock_guard lock(state.housekeeping_mutex);
    state.housekeeping_stops = true;
  }
  state.housekeeping_wake.notify_all();
  state.housekeeper.join();
}

}  // namespace hwimg::serve
