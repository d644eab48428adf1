#include "hwimg/serve/http_server.hpp"

#include <algorithm>
#include <cstring>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "hwimg/serve/detail/microhttpd_library.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::serve {
namespace {

std::optional<std::string> find_field(const Fields& fields, std::string_view name) {
  for (const auto& [key, value] : fields) {
    if (key == name) return value;
  }
  return std::nullopt;
}

// A streamed body between MHD's reader calls: what the source gave beyond what fitted.
struct StreamContext {
  BodySource source;
  std::string pending;
  std::size_t offset = 0;
};

ssize_t read_stream(void* cls, std::uint64_t, char* buffer, std::size_t max) {
  auto& context = *static_cast<StreamContext*>(cls);
  while (context.offset == context.pending.size()) {
    auto next = context.source();
    if (!next) return MHD_CONTENT_READER_END_WITH_ERROR;
    if (!*next) return MHD_CONTENT_READER_END_OF_STREAM;
    context.pending = std::move(**next);
    context.offset = 0;
  }
  const auto n = std::min(max, context.pending.size() - context.offset);
  std::memcpy(buffer, context.pending.data() + context.offset, n);
  context.offset += n;
  return static_cast<ssize_t>(n);
}

void free_stream(void* cls) {
  delete static_cast<StreamContext*>(cls);
}

MHD_Result collect_field(void* cls, MHD_ValueKind, const char* key, const char* value) {
  static_cast<Fields*>(cls)->emplace_back(key != nullptr ? key : "", value != nullptr ? value : "");
  return MHD_YES;
}

}  // namespace

std::optional<std::string> HttpRequest::header(std::string_view name) const {
  return find_field(headers, name);
}

std::vector<std::string> HttpRequest::header_values(std::string_view name) const {
  std::vector<std::string> values;
  for (const auto& [key, value] : headers) {
    if (key == name) values.push_back(value);
  }
  return values;
}

std::optional<std::string> HttpRequest::query_value(std::string_view name) const {
  return find_field(query, name);
}

std::optional<std::string> HttpResponse::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (util::to_lower(key) == util::to_lower(name)) return value;
  }
  return std::nullopt;
}

struct HttpServer::State {
  const MicrohttpdLibrary* mhd = nullptr;
  MHD_Daemon* daemon = nullptr;
  Handler handler;
  util::Output* output = nullptr;
  std::uint16_t port = 0;
};

namespace {

MHD_Result answer(void* cls, MHD_Connection* connection, const char* url, const char* method, const char*,
                  const char*, std::size_t* upload_size, void** request_state) {
  auto& state = *static_cast<HttpServer::State*>(cls);
  const auto& mhd = *state.mhd;
  // The first call sees only the headers; answering on the second lets MHD handle 100-continue.
  static int headers_seen;
  if (*request_state == nullptr) {
    *request_state = &headers_seen;
    return MHD_YES;
  }
  if (*upload_size != 0) {
    *upload_size = 0;  // the mirror is read-only: a body is ignored and the method refused
    return MHD_YES;
  }
  HttpRequest request;
  request.method = method;
  request.path = url;
  mhd.get_connection_values(connection, MHD_GET_ARGUMENT_KIND, collect_field, &request.query);
  mhd.get_connection_values(connection, MHD_HEADER_KIND, collect_field, &request.headers);
  for (auto& [name, value] : request.headers) name = util::to_lower(name);

  HttpResponse response = state.handler(request);
  MHD_Response* reply = nullptr;
  if (response.stream) {
    auto* context = new StreamContext{std::move(response.stream), {}, 0};
    reply = mhd.create_response_from_callback(response.stream_size.value_or(MHD_SIZE_UNKNOWN), 64 * 1024,
                                              read_stream, context, free_stream);
    if (reply == nullptr) free_stream(context);
  } else {
    reply = mhd.create_response_from_buffer(response.body.size(), response.body.data(), MHD_RESPMEM_MUST_COPY);
  }
  if (reply == nullptr) return MHD_NO;
  for (const auto& [name, value] : response.headers) {
    mhd.add_response_header(reply, name.c_str(), value.c_str());
  }
  const auto queued = mhd.queue_response(connection, response.status, reply);
  mhd.destroy_response(reply);
  return queued;
}

void log_library(void* cls, const char* format, va_list arguments) {
  char text[512];
  std::vsnprintf(text, sizeof text, format, arguments);
  static_cast<HttpServer::State*>(cls)->output->log(fmt::format("http: {}", util::trim(text)));
}

}  // namespace

HttpServer::HttpServer(std::unique_ptr<State> state) : m_state(std::move(state)) {}

HttpServer::~HttpServer() {
  if (m_state->daemon != nullptr) m_state->mhd->stop_daemon(m_state->daemon);
}

Result<std::unique_ptr<HttpServer>> HttpServer::start(const ServerSettings& settings, Handler handler) {
  HWIMG_TRY_ASSIGN(const auto* mhd, load_microhttpd());
  auto state = std::make_unique<State>();
  state->mhd = mhd;
  state->handler = std::move(handler);
  state->output = settings.output;

  sockaddr_storage address{};
  unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ITC |
                   MHD_USE_ERROR_LOG;
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
  state->daemon = mhd->start_daemon(
      flags, settings.port, nullptr, nullptr, answer, state.get(), MHD_OPTION_SOCK_ADDR, &address,
      MHD_OPTION_CONNECTION_LIMIT, settings.connection_limit, MHD_OPTION_CONNECTION_TIMEOUT,
      static_cast<unsigned>(settings.idle_timeout.count()), MHD_OPTION_EXTERNAL_LOGGER, log_library, state.get(),
      MHD_OPTION_END);
  if (state->daemon == nullptr) {
    return fail("failed to listen on {}:{}: the address is in use or not available", settings.address, settings.port);
  }
  const auto* info = mhd->get_daemon_info(state->daemon, MHD_DAEMON_INFO_BIND_PORT);
  state->port = info != nullptr ? info->port : settings.port;
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(state)));
}

std::uint16_t HttpServer::port() const {
  return m_state->port;
}

void HttpServer::shutdown(std::chrono::milliseconds grace) {
  if (m_state->daemon == nullptr) return;
  const auto& mhd = *m_state->mhd;
  mhd.quiesce_daemon(m_state->daemon);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    const auto* info = mhd.get_daemon_info(m_state->daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    if (info == nullptr || info->num_connections == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  mhd.stop_daemon(m_state->daemon);
  m_state->daemon = nullptr;
}

}  // namespace hwimg::serve
