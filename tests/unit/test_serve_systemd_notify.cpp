// serve::SystemdNotifier against a real unix datagram socket, as systemd listens: a path socket
// and an abstract one receive the state; $NOTIFY_SOCKET, $WATCHDOG_USEC and $WATCHDOG_PID are
// read as sd_notify(3) reads them.

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include <doctest/doctest.h>

#include "hwimg/serve/systemd_notify.hpp"
#include "test_support.hpp"

using namespace hwimg;

namespace {

// A datagram socket bound to `name` (a path, or '@' and an abstract name), as systemd's.
util::UniqueFd listen_datagrams(const std::string& name) {
  util::UniqueFd fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  REQUIRE(fd.valid());
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  REQUIRE(name.size() < sizeof address.sun_path);
  std::memcpy(address.sun_path, name.data(), name.size());
  if (name.starts_with('@')) address.sun_path[0] = '\0';
  const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size() + (name.starts_with('@') ? 0 : 1));
  REQUIRE(::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), length) == 0);
  return fd;
}

std::string receive(const util::UniqueFd& fd) {
  char buffer[256];
  const auto n = ::recv(fd.get(), buffer, sizeof buffer, MSG_DONTWAIT);
  REQUIRE(n >= 0);
  return {buffer, static_cast<std::size_t>(n)};
}

// Sets an environment variable for one test case.
struct Variable {
  Variable(const char* name, const std::string& value) : m_name(name) { ::setenv(name, value.c_str(), 1); }
  ~Variable() { ::unsetenv(m_name); }
  const char* m_name;
};

}  // namespace

TEST_CASE("READY=1 and WATCHDOG=1 reach a path socket and an abstract one") {
  const auto directory = test::scratch_directory();
  const auto path = (directory.path() / "notify").string();
  const auto socket = listen_datagrams(path);
  auto notifier = serve::SystemdNotifier::open(path, std::nullopt);
  REQUIRE_MESSAGE(notifier, notifier.error().message);
  REQUIRE(notifier->notify("READY=1"));
  CHECK(receive(socket) == "READY=1");
  REQUIRE(notifier->notify("WATCHDOG=1"));
  CHECK(receive(socket) == "WATCHDOG=1");

  const auto abstract = "@hwimg-unit-" + std::to_string(::getpid());
  const auto abstract_socket = listen_datagrams(abstract);
  auto to_abstract = serve::SystemdNotifier::open(abstract, std::nullopt);
  REQUIRE(to_abstract);
  REQUIRE(to_abstract->notify("STOPPING=1"));
  CHECK(receive(abstract_socket) == "STOPPING=1");
}

TEST_CASE("the environment: no NOTIFY_SOCKET, none; the watchdog only for this process") {
  ::unsetenv("NOTIFY_SOCKET");
  auto none = serve::SystemdNotifier::from_environment();
  REQUIRE(none);
  CHECK_FALSE(none->has_value());

  const auto directory = test::scratch_directory();
  const auto path = (directory.path() / "notify").string();
  const auto socket = listen_datagrams(path);
  const Variable notify("NOTIFY_SOCKET", path);
  const Variable usec("WATCHDOG_USEC", "30000000");
  {
    const Variable pid("WATCHDOG_PID", std::to_string(::getpid()));
    auto notifier = serve::SystemdNotifier::from_environment();
    REQUIRE(notifier);
    REQUIRE(notifier->has_value());
    CHECK((*notifier)->watchdog() == std::chrono::seconds(30));
    REQUIRE((*notifier)->notify("WATCHDOG=1"));
    CHECK(receive(socket) == "WATCHDOG=1");
  }
  {
    const Variable pid("WATCHDOG_PID", std::to_string(::getpid() + 1));
    auto notifier = serve::SystemdNotifier::from_environment();
    REQUIRE(notifier);
    REQUIRE(notifier->has_value());
    CHECK_FALSE((*notifier)->watchdog());
  }
  const Variable relative("NOTIFY_SOCKET", "run/notify");
  CHECK_FALSE(serve::SystemdNotifier::from_environment());
}
