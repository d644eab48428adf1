// Whole exchanges with a hostile registry, through the real session and client (libcurl, the
// session's scheme, challenge and token handling, the client's checks): a server on this machine
// answers each request with the next of the answers the fuzzer made (raw HTTP: status line,
// headers, body), and the client reads manifests, tags, blobs and referrers from it (issue 23).
// What the client accepts must be what it asked for: a manifest or blob that hashes to its digest.
//
// Input: answers separated by a line "===" (the seeds in fuzz/corpus/registry_client show the
// shape: a 401 with a Bearer challenge whose realm is "http://REALM/token", a token, a manifest,
// a tag list, ...). REALM is replaced by the server's address, so a token request reaches it.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "hwimg/oci/digest.hpp"
#include "hwimg/registry/client.hpp"
#include "hwimg/registry/referrers.hpp"

namespace {

// One listener for the whole run; each connection gets the next answer, then is closed.
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

std::deque<std::string> answers_of(std::string_view input, const std::string& realm) {
  std::deque<std::string> out;
  constexpr std::string_view separator = "\n===\n";
  while (true) {
    const auto end = input.find(separator);
    std::string answer(input.substr(0, end));
    for (auto at = answer.find("REALM"); at != std::string::npos; at = answer.find("REALM", at + realm.size())) {
      answer.replace(at, 5, realm);
    }
    out.push_back(std::move(answer));
    if (end == std::string_view::npos) return out;
    input.remove_prefix(end + separator.size());
  }
}

void require(bool condition) {
  if (!condition) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hwimg;
  static HostileServer server;
  if (size > (1 << 16)) return 0;
  server.load(answers_of(std::string_view(reinterpret_cast<const char*>(data), size), server.address()));

  registry::ClientOptions options;
  options.plain_http = true;
  options.max_attempts = 1;  // no backoff: a Retry-After would stall the run for a minute
  auto client = registry::Client::create(options);
  if (!client) return 0;
  const auto repository = registry::parse_reference(server.address() + "/team/app").value();
  const auto wanted = oci::Digest::sha256_of("the blob");

  if (const auto manifest = client->get_manifest(repository.with_tag("v1"))) {
    require(oci::Digest::sha256_of(manifest->bytes) == manifest->digest);
  }
  auto at_digest = repository;
  at_digest.digest = wanted;
  if (const auto by_digest = client->get_manifest(at_digest)) {
    require(by_digest->digest == wanted);
  }
  static_cast<void>(client->list_tags(repository, 2));
  static_cast<void>(client->head_blob(repository, wanted));
  if (const auto blob = client->get_blob(repository, wanted, 1 << 16)) require(oci::Digest::sha256_of(*blob) == wanted);
  std::string streamed;
  if (client->read_blob(repository, wanted, std::nullopt, [&](std::string_view piece) -> Result<void> {
        streamed += piece;
        return {};
      })) {
    require(oci::Digest::sha256_of(streamed) == wanted);
  }
  static_cast<void>(registry::list_referrers_of(*client, repository, {wanted}, ""));
  return 0;
}
