// serve::HeaderDeadlines over a real socket pair: a connection that owes a header past the limit
// is shut down (its peer reads the end), one that sent its header is left alone until answered,
// and a closed one is never touched again.

#include <sys/socket.h>

#include <chrono>

#include <doctest/doctest.h>

#include "hwimg/serve/header_deadlines.hpp"
#include "hwimg/util/fd.hpp"

using namespace hwimg;
using namespace std::chrono_literals;

namespace {

struct Pair {
  util::UniqueFd server;
  util::UniqueFd client;
};

Pair socket_pair() {
  int fds[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
  return {util::UniqueFd(fds[0]), util::UniqueFd(fds[1])};
}

// Whether the peer of `fd` shut it down: recv sees the end instead of blocking.
bool shut(const util::UniqueFd& fd) {
  char byte = 0;
  return ::recv(fd.get(), &byte, 1, MSG_DONTWAIT) == 0;
}

}  // namespace

TEST_CASE("a header owed past the limit shuts the connection; one being answered is left alone") {
  serve::HeaderDeadlines deadlines(10s);
  const auto t0 = serve::HeaderDeadlines::Clock::now();
  auto waiting = socket_pair();
  auto answering = socket_pair();
  int a = 0;
  int b = 0;
  deadlines.opened(&a, waiting.server.get(), t0);
  deadlines.opened(&b, answering.server.get(), t0);
  deadlines.header_received(&b);

  CHECK(deadlines.shut_overdue(t0 + 9s) == 0);
  CHECK_FALSE(shut(waiting.client));
  CHECK(deadlines.shut_overdue(t0 + 10s) == 1);
  CHECK(shut(waiting.client));
  CHECK_FALSE(shut(answering.client));
  CHECK(deadlines.shut_overdue(t0 + 20s) == 0);  // once is enough

  // Answered: the next header is owed from then on.
  deadlines.answered(&b, t0 + 30s);
  CHECK(deadlines.shut_overdue(t0 + 39s) == 0);
  CHECK(deadlines.shut_overdue(t0 + 40s) == 1);
  CHECK(shut(answering.client));
  CHECK(deadlines.shut_total() == 2);
}

TEST_CASE("a closed connection is never shut, and shut_waiting takes every one that owes a header") {
  serve::HeaderDeadlines deadlines(10s);
  const auto t0 = serve::HeaderDeadlines::Clock::now();
  auto gone = socket_pair();
  auto idle = socket_pair();
  int a = 0;
  int b = 0;
  deadlines.opened(&a, gone.server.get(), t0);
  deadlines.opened(&b, idle.server.get(), t0);
  deadlines.closed(&a);
  CHECK(deadlines.shut_overdue(t0 + 60s) == 1);
  CHECK_FALSE(shut(gone.client));

  auto fresh = socket_pair();
  int c = 0;
  deadlines.opened(&c, fresh.server.get(), serve::HeaderDeadlines::Clock::now());
  CHECK(deadlines.shut_waiting() == 1);
  CHECK(shut(fresh.client));
}
