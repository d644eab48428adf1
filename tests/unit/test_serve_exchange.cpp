// serve::Exchange without sockets: the connection is suspended while it waits and resumed exactly
// once per suspension; a streamed body is held to the buffer's bound (the worker waits for the
// client), arrives in order, ends or breaks; a closed connection stops the worker; abandon()
// resumes a waiting connection and breaks the body off.

#include <atomic>
#include <chrono>
#include <thread>

#include <doctest/doctest.h>

#include "hwimg/serve/exchange.hpp"

using namespace hwimg;
using namespace std::chrono_literals;

namespace {

struct Signals {
  std::atomic<int> suspended = 0;
  std::atomic<int> resumed = 0;
};

std::shared_ptr<serve::Exchange> make_exchange(Signals& signals, std::size_t max_buffered) {
  return std::make_shared<serve::Exchange>([&signals] { ++signals.suspended; }, [&signals] { ++signals.resumed; },
                                           max_buffered);
}

void wait_until(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!condition() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  REQUIRE(condition());
}

// A body of `pieces` strings "0", "1", ... then its end.
serve::BodySource counting(int pieces, std::atomic<int>& given) {
  return [pieces, &given]() -> Result<std::optional<std::string>> {
    if (given == pieces) return std::optional<std::string>();
    return std::optional<std::string>(std::to_string(given++ % 10));
  };
}

}  // namespace

TEST_CASE("the answer resumes the waiting connection once; a whole one has no body to read") {
  Signals signals;
  auto exchange = make_exchange(signals, 16);
  exchange->wait_for_answer();
  CHECK(signals.suspended == 1);
  CHECK_FALSE(exchange->take_answer());
  serve::HttpResponse response;
  response.status = 404;
  exchange->deliver(response, serve::Body::whole);
  exchange->deliver(response, serve::Body::whole);  // a second answer is ignored
  CHECK(signals.resumed == 1);
  const auto answer = exchange->take_answer();
  REQUIRE(answer);
  CHECK(answer->first.status == 404);
  CHECK(answer->second == serve::Body::whole);
}

TEST_CASE("a streamed body keeps to the buffer's bound and arrives in order") {
  Signals signals;
  auto exchange = make_exchange(signals, 4);
  std::atomic<int> given = 0;
  exchange->deliver({}, serve::Body::streamed);
  std::thread worker([&] { exchange->pump(counting(100, given)); });
  wait_until([&] { return given >= 4; });
  std::this_thread::sleep_for(20ms);
  CHECK(given == 4);  // the client took nothing yet: the worker waits

  std::string received;
  while (true) {
    char buffer[3];
    const auto piece = exchange->read(buffer, sizeof buffer);
    if (piece.kind == serve::Exchange::Piece::Kind::end) break;
    REQUIRE(piece.kind != serve::Exchange::Piece::Kind::broken);
    if (piece.kind == serve::Exchange::Piece::Kind::waiting) {
      // Suspended: the worker resumes the connection when it has more.
      wait_until([&] { return signals.resumed == signals.suspended; });
      continue;
    }
    received.append(buffer, piece.size);
  }
  worker.join();
  std::string expected;
  for (int i = 0; i < 100; ++i) expected += std::to_string(i % 10);
  CHECK(received == expected);
  CHECK(signals.resumed == signals.suspended);
}

TEST_CASE("a body that fails or throws breaks off after what was sent") {
  Signals signals;
  auto exchange = make_exchange(signals, 1024);
  exchange->deliver({}, serve::Body::streamed);
  int calls = 0;
  exchange->pump([&calls]() -> Result<std::optional<std::string>> {
    if (++calls == 1) return std::optional<std::string>("abc");
    throw std::runtime_error("boom");
  });
  char buffer[16];
  const auto first = exchange->read(buffer, sizeof buffer);
  CHECK(first.kind == serve::Exchange::Piece::Kind::data);
  CHECK(first.size == 3);
  CHECK(exchange->read(buffer, sizeof buffer).kind == serve::Exchange::Piece::Kind::broken);
}

TEST_CASE("a closed connection stops the worker; abandon() resumes a waiting one and breaks the body") {
  Signals signals;
  auto exchange = make_exchange(signals, 2);
  std::atomic<int> given = 0;
  exchange->deliver({}, serve::Body::streamed);
  std::thread worker([&] { exchange->pump(counting(1'000'000, given)); });
  wait_until([&] { return given >= 2; });
  exchange->close();
  worker.join();
  CHECK(given < 10);

  Signals other;
  auto waiting = make_exchange(other, 2);
  waiting->wait_for_answer();
  waiting->abandon();
  CHECK(other.resumed == 1);
  CHECK_FALSE(waiting->take_answer());
  waiting->deliver({}, serve::Body::whole);  // too late: ignored
  CHECK_FALSE(waiting->take_answer());
  char buffer[4];
  CHECK(waiting->read(buffer, sizeof buffer).kind == serve::Exchange::Piece::Kind::broken);
}
