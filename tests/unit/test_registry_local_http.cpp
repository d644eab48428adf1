// The transport's own HTTP/1.1 engine for registries on this machine, against a canned server on
// 127.0.0.1: bodies by length, chunked and to the end of the connection; HEAD; kept-alive
// connections reused; a body cut short; one over the limit; redirects; streamed bodies.

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include "hwimg/registry/detail/http.hpp"
#include "hwimg/util/fd.hpp"

using namespace hwimg;
using namespace hwimg::registry;

namespace {

// Answers each request read from a connection with the next canned answer; an answer may close
// the connection after it. Counts the connections it accepted.
class CannedServer {
public:
  struct Answer {
    std::string text;
    bool close = false;
  };

  explicit CannedServer(std::vector<Answer> answers) : m_answers(std::move(answers)) {
    m_listener = util::UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(m_listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    socklen_t length = sizeof address;
    ::getsockname(m_listener.get(), reinterpret_cast<sockaddr*>(&address), &length);
    m_port = ntohs(address.sin_port);
    REQUIRE(::listen(m_listener.get(), 8) == 0);
    m_thread = std::thread([this] { serve(); });
  }
  ~CannedServer() {
    ::shutdown(m_listener.get(), SHUT_RDWR);
    m_thread.join();
  }

  [[nodiscard]] std::string url(std::string_view path) const {
    return "http://127.0.0.1:" + std::to_string(m_port) + std::string(path);
  }
  [[nodiscard]] int connections() const { return m_connections; }
  [[nodiscard]] std::vector<std::string> requests() const { return m_requests; }

private:
  void serve() {
    std::size_t next = 0;
    while (next < m_answers.size()) {
      const int connection = ::accept(m_listener.get(), nullptr, nullptr);
      if (connection < 0) return;
      ++m_connections;
      const util::UniqueFd fd(connection);
      std::string buffer;
      while (next < m_answers.size()) {
        char chunk[4096];
        while (buffer.find("\r\n\r\n") == std::string::npos) {
          const auto n = ::recv(fd.get(), chunk, sizeof chunk, 0);
          if (n <= 0) break;
          buffer.append(chunk, static_cast<std::size_t>(n));
        }
        const auto end = buffer.find("\r\n\r\n");
        if (end == std::string::npos) break;
        m_requests.push_back(buffer.substr(0, end));
        buffer.erase(0, end + 4);
        const auto& answer = m_answers[next++];
        [[maybe_unused]] const auto sent = ::send(fd.get(), answer.text.data(), answer.text.size(), MSG_NOSIGNAL);
        if (answer.close) break;
      }
    }
  }

  std::vector<Answer> m_answers;
  util::UniqueFd m_listener;
  std::uint16_t m_port = 0;
  std::thread m_thread;
  std::atomic<int> m_connections{0};
  std::vector<std::string> m_requests;
};

Response exchange(Transport& transport, Request request) {
  Response out;
  transport.submit(std::move(request), [&out](Response r) { out = std::move(r); });
  REQUIRE(transport.run());
  return out;
}

Transport make_transport() {
  return Transport::create({}).value();
}

}  // namespace

TEST_CASE("bodies by length, chunked and to the end of the connection; a kept-alive connection reused") {
  CannedServer server({{"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Name: First\r\n\r\nhello"},
                       {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"},
                       {"HTTP/1.0 200 OK\r\n\r\nuntil the end", true}});
  auto transport = make_transport();
  const auto first = exchange(transport, Request{Method::get, server.url("/v2/a")});
  REQUIRE(first.ok());
  CHECK(first.status == 200);
  CHECK(first.body == "hello");
  CHECK(first.header("x-name") == "First");
  const auto second = exchange(transport, Request{Method::get, server.url("/v2/b")});
  CHECK(second.body == "abcde");
  const auto third = exchange(transport, Request{Method::get, server.url("/v2/c")});
  CHECK(third.body == "until the end");
  CHECK(server.connections() == 1);
  const auto requests = server.requests();
  REQUIRE(requests.size() == 3);
  CHECK(requests[0].starts_with("GET /v2/a HTTP/1.1\r\nHost: 127.0.0.1:"));
}

TEST_CASE("HEAD: the length of what GET would send, no body read") {
  CannedServer server({{"HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n"}, {"HTTP/1.1 204 No Content\r\n\r\n"}});
  auto transport = make_transport();
  const auto head = exchange(transport, Request{Method::head, server.url("/v2/blob")});
  REQUIRE(head.ok());
  CHECK(head.header("content-length") == "1234");
  CHECK(head.body.empty());
  CHECK(exchange(transport, Request{Method::get, server.url("/v2/next")}).status == 204);
  CHECK(server.connections() == 1);
}

TEST_CASE("a body cut short, a body over the limit, a server that closes without answering") {
  CannedServer server({{"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort", true},
                       {"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789"},
                       {"", true}});
  auto transport = make_transport();
  const auto cut = exchange(transport, Request{Method::get, server.url("/cut")});
  CHECK(cut.failure == TransportFailure::truncated);
  Request limited{Method::get, server.url("/big")};
  limited.max_response_body = 4;
  const auto big = exchange(transport, std::move(limited));
  CHECK(big.failure == TransportFailure::too_large);
  CHECK(big.error == "answer larger than 4 bytes");
  const auto silent = exchange(transport, Request{Method::get, server.url("/silent")});
  CHECK(silent.failure == TransportFailure::connect);
}

TEST_CASE("redirects followed on the same origin, with the request's credentials") {
  CannedServer server({{"HTTP/1.1 307 Temporary Redirect\r\nLocation: /moved\r\nContent-Length: 0\r\n\r\n"},
                       {"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"}});
  auto transport = make_transport();
  Request request{Method::get, server.url("/v2/blobs/x")};
  request.follow_redirects = true;
  request.headers.push_back("Authorization: Basic eDp5");
  const auto answer = exchange(transport, std::move(request));
  CHECK(answer.body == "ok");
  const auto requests = server.requests();
  REQUIRE(requests.size() == 2);
  CHECK(requests[1].starts_with("GET /moved HTTP/1.1"));
  CHECK(requests[1].find("Authorization: Basic eDp5") != std::string::npos);
}

TEST_CASE("a streamed body reaches the reader as it comes; an error answer is collected instead") {
  CannedServer server({{"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world"},
                       {"HTTP/1.1 404 Not Found\r\nContent-Length: 7\r\n\r\nmissing"}});
  auto transport = make_transport();
  std::string streamed;
  const auto streaming = [&](Request& request) {
    request.on_response_start = [](const Response& r) { return r.status == 200; };
    request.on_body_data = [&](std::string_view data) {
      streamed += data;
      return true;
    };
  };
  Request found{Method::get, server.url("/found")};
  streaming(found);
  const auto ok = exchange(transport, std::move(found));
  CHECK(ok.status == 200);
  CHECK(ok.body.empty());
  CHECK(streamed == "hello world");
  Request missing{Method::get, server.url("/missing")};
  streaming(missing);
  const auto not_found = exchange(transport, std::move(missing));
  CHECK(not_found.status == 404);
  CHECK(not_found.body == "missing");
  CHECK(streamed == "hello world");
}
