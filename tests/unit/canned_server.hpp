#pragma once
// A canned HTTP/1.1 server on 127.0.0.1 for unit tests of the transport and the client: it answers
// each request with the next canned answer and records what it was asked.

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include "hwimg/registry/client.hpp"
#include "hwimg/util/fd.hpp"

namespace hwimg::test {

// A listening socket on 127.0.0.1 at `port`, or when it is 0 at a port the kernel picks, which
// goes to `port`.
inline util::UniqueFd listen_on_loopback(std::uint16_t& port) {
  util::UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const int reuse = 1;
  ::setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &reuse, sizeof reuse);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  REQUIRE(::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  socklen_t length = sizeof address;
  ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address), &length);
  port = ntohs(address.sin_port);
  REQUIRE(::listen(listener.get(), 8) == 0);
  return listener;
}

// Answers each request read from a connection with the next canned answer; an answer may close
// the connection after it. Counts the connections it accepted.
class CannedServer {
public:
  struct Answer {
    std::string text;
    bool close = false;
  };

  // On `port`, or a port the kernel picks when it is 0.
  explicit CannedServer(std::vector<Answer> answers, std::uint16_t port = 0)
      : m_answers(std::move(answers)), m_port(port) {
    m_listener = listen_on_loopback(m_port);
    m_thread = std::thread([this] { serve(); });
  }
  ~CannedServer() {
    ::shutdown(m_listener.get(), SHUT_RDWR);
    m_thread.join();
  }

  [[nodiscard]] std::string url(std::string_view path) const {
    return "http://127.0.0.1:" + std::to_string(m_port) + std::string(path);
  }
  [[nodiscard]] std::string address() const { return "127.0.0.1:" + std::to_string(m_port); }
  [[nodiscard]] int connections() const { return m_connections; }
  [[nodiscard]] std::vector<std::string> requests() const { return m_requests; }
  // The body of each request (by its Content-Length), in the order of requests().
  [[nodiscard]] std::vector<std::string> bodies() const { return m_bodies; }

private:
  static std::size_t content_length(std::string_view header) {
    for (std::size_t at = header.find("\r\n"); at != std::string_view::npos; at = header.find("\r\n", at + 2)) {
      const auto line = header.substr(at + 2, header.find("\r\n", at + 2) - at - 2);
      constexpr std::string_view name = "content-length:";
      if (line.size() > name.size() && std::equal(name.begin(), name.end(), line.begin(), [](char a, char b) {
            return a == std::tolower(static_cast<unsigned char>(b));
          })) {
        return std::stoul(std::string(line.substr(name.size())));
      }
    }
    return 0;
  }

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
        const auto length = content_length(m_requests.back());
        buffer.erase(0, end + 4);
        while (buffer.size() < length) {
          const auto n = ::recv(fd.get(), chunk, sizeof chunk, 0);
          if (n <= 0) break;
          buffer.append(chunk, static_cast<std::size_t>(n));
        }
        m_bodies.push_back(buffer.substr(0, length));
        buffer.erase(0, length);
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
  std::vector<std::string> m_bodies;
};

// A client that speaks plain HTTP to a CannedServer.
inline registry::Client canned_client() {
  registry::ClientOptions options;
  options.plain_http = true;
  auto client = registry::Client::create(options);
  REQUIRE(client);
  return std::move(*client);
}

}  // namespace hwimg::test
