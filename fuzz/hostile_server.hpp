#pragma once
// A registry on this machine whose answers come from the fuzzer, for the harnesses that drive the
// real registry client (fuzz_registry_client, fuzz_serve): each connection gets the next answer
// (raw HTTP: status line, headers, body) and is closed; with none left, a 404.

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace fuzz {

// One listener for the whole run (a harness keeps it in a static).
class HostileServer {
public:
  HostileServer() {
    m_listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(m_listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) __builtin_trap();
    socklen_t length = sizeof address;
    ::getsockname(m_listener, reinterpret_cast<sockaddr*>(&address), &length);
    m_port = ntohs(address.sin_port);
    if (::listen(m_listener, 64) != 0) __builtin_trap();
    std::thread([this] { serve(); }).detach();
  }
  [[nodiscard]] std::string address() const { return "127.0.0.1:" + std::to_string(m_port); }
  void load(std::deque<std::string> answers) {
    std::lock_guard lock(m_mutex);
    m_answers = std::move(answers);
  }

private:
  void serve() {
    while (true) {
      const int fd = ::accept(m_listener, nullptr, nullptr);
      if (fd < 0) continue;
      // Reads the request's head (a body, if any, is left unread: the connection closes).
      std::string head;
      char chunk[4096];
      while (head.find("\r\n\r\n") == std::string::npos && head.size() < (1 << 16)) {
        const auto n = ::recv(fd, chunk, sizeof chunk, 0);
        if (n <= 0) break;
        head.append(chunk, static_cast<std::size_t>(n));
        // A TLS ClientHello (a client that takes this for an HTTPS registry) has no end of head
        // to wait for: hung up on at once, as a plain server's parser would, using no answer.
        if (head.front() == '\x16') break;
      }
      if (head.empty() || head.front() == '\x16') {
        ::close(fd);
        continue;
      }
      std::string answer = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
      {
        std::lock_guard lock(m_mutex);
        if (!m_answers.empty()) {
          answer = std::move(m_answers.front());
          m_answers.pop_front();
        }
      }
      for (std::string_view rest = answer; !rest.empty();) {
        const auto n = ::send(fd, rest.data(), rest.size(), MSG_NOSIGNAL);
        if (n <= 0) break;
        rest.remove_prefix(static_cast<std::size_t>(n));
      }
      ::shutdown(fd, SHUT_WR);
      ::close(fd);
    }
  }

  int m_listener = -1;
  std::uint16_t m_port = 0;
  std::mutex m_mutex;
  std::deque<std::string> m_answers;
};

// `input` cut at each line "===" (the separator's newlines are its own), with every "REALM" in
// a piece replaced by `realm` (the server's address: a token realm or redirect reaches it).
inline std::deque<std::string> sections_of(std::string_view input, const std::string& realm) {
  std::deque<std::string> out;
  constexpr std::string_view separator = "\n===\n";
  while (true) {
    const auto end = input.find(separator);
    std::string section(input.substr(0, end));
    for (auto at = section.find("REALM"); at != std::string::npos; at = section.find("REALM", at + realm.size())) {
      section.replace(at, 5, realm);
    }
    out.push_back(std::move(section));
    if (end == std::string_view::npos) return out;
    input.remove_prefix(end + separator.size());
  }
}

}  // namespace fuzz
