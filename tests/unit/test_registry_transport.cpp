// The transport (libcurl) against canned servers on 127.0.0.1, plain and TLS: bodies by length,
// chunked and to the end of the connection; HEAD; kept-alive connections reused; a body cut short;
// one over the limit; redirects and the https -> http rule; streamed bodies; the connection limit;
// TLS sessions resumed; exchanges cancelled from another thread.

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "canned_server.hpp"
#include "test_support.hpp"
#include "tls_canned_server.hpp"
#include "hwimg/registry/detail/http.hpp"

using namespace hwimg;
using namespace hwimg::registry;
using hwimg::test::CannedServer;

namespace {

Response exchange(Transport& transport, Request request) {
  Response out;
  transport.submit(std::move(request), [&out](Response r) { out = std::move(r); });
  REQUIRE(transport.run());
  return out;
}

Transport make_transport() {
  return Transport::create({}).value();
}

// For a TlsCannedServer whose certificate is in `ca_file`.
TransportOptions tls_options(const std::filesystem::path& ca_file) {
  TransportOptions options;
  options.ca_file = ca_file;
  options.stall_timeout = std::chrono::seconds(5);
  return options;
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
      return BodyIntake::taken;
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

TEST_CASE("exchanges beyond the connection limit wait for a connection and reuse it") {
  const std::string ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
  // This server serves one connection at a time: a second connection would wait for the first to close.
  CannedServer server({{ok}, {ok}, {ok}, {ok}});
  TransportOptions options;
  options.max_host_connections = 1;
  options.stall_timeout = std::chrono::seconds(2);
  auto transport = Transport::create(options).value();
  std::vector<Response> answers(4);
  for (std::size_t i = 0; i < answers.size(); ++i) {
    transport.submit(Request{Method::get, server.url("/v2/" + std::to_string(i))},
                     [&answers, i](Response r) { answers[i] = std::move(r); });
  }
  REQUIRE(transport.run());
  for (const auto& answer : answers) {
    CHECK(answer.ok());
    CHECK(answer.status == 200);
    CHECK(answer.body == "ok");
  }
  CHECK(server.connections() == 1);
  CHECK(server.requests().size() == 4);
}

TEST_CASE("a second TLS connection to the same origin resumes the first one's session") {
  const auto dir = test::scratch_directory("hwimg-tls");
  const auto ca_file = dir.path() / "ca.pem";
  test::TlsCannedServer server(ca_file, 3);
  auto transport = Transport::create(tls_options(ca_file)).value();
  for (const auto* path : {"/v2/", "/v2/a", "/v2/b"}) {
    const auto answer = exchange(transport, Request{Method::get, server.url(path)});
    CHECK_MESSAGE(answer.ok(), answer.error);
    CHECK(answer.body == "ok");
  }
  // The server closes each connection after its answer: three handshakes, the later two resumed.
  const auto resumed = server.resumed();
  REQUIRE(resumed.size() == 3);
  CHECK_FALSE(resumed[0]);
  CHECK(resumed[1]);
  CHECK(resumed[2]);
}

TEST_CASE("TLS sessions are shared between transports on different threads") {
  const auto dir = test::scratch_directory("hwimg-tls");
  const auto ca_file = dir.path() / "ca.pem";
  test::TlsCannedServer server(ca_file, 2);
  const auto options = tls_options(ca_file);
  for (const auto* path : {"/v2/a", "/v2/b"}) {
    // Each copier of `hwimg copy -j` runs its own transport on its own thread.
    std::thread([&] {
      auto transport = Transport::create(options).value();
      const auto answer = exchange(transport, Request{Method::get, server.url(path)});
      CHECK_MESSAGE(answer.ok(), answer.error);
    }).join();
  }
  const auto resumed = server.resumed();
  REQUIRE(resumed.size() == 2);
  CHECK_FALSE(resumed[0]);
  CHECK(resumed[1]);
}

TEST_CASE("a redirect from HTTPS to plain HTTP is followed only to this machine") {
  const auto dir = test::scratch_directory("hwimg-tls");
  const auto ca_file = dir.path() / "ca.pem";
  CannedServer plain({{"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nplain"}});
  const auto redirect_to = [](const std::string& url) {
    return "HTTP/1.1 307 Temporary Redirect\r\nLocation: " + url + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
  };
  auto transport = Transport::create(tls_options(ca_file)).value();
  SUBCASE("to another host: refused before connecting, the content never travels in clear") {
    test::TlsCannedServer server(ca_file, 1, redirect_to("http://blobs.example.invalid/sha256:ab"));
    Request request{Method::get, server.url("/v2/app/blobs/sha256:ab")};
    request.follow_redirects = true;
    const auto answer = exchange(transport, std::move(request));
    CHECK(answer.failure == TransportFailure::other);
    CHECK(answer.error ==
          "refused a redirect from HTTPS to plain HTTP (http://blobs.example.invalid/sha256:ab); use --insecure to allow it");
  }
  SUBCASE("to a loopback address: followed") {
    test::TlsCannedServer server(ca_file, 1, redirect_to(plain.url("/blob")));
    Request request{Method::get, server.url("/v2/app/blobs/sha256:ab")};
    request.follow_redirects = true;
    request.headers.push_back("Authorization: Basic eDp5");
    const auto answer = exchange(transport, std::move(request));
    CHECK_MESSAGE(answer.ok(), answer.error);
    CHECK(answer.body == "plain");
    const auto requests = plain.requests();
    REQUIRE(requests.size() == 1);
    CHECK(requests[0].find("Authorization") == std::string::npos);  // another origin
  }
}

TEST_CASE("a cancellation from another thread ends a stalled exchange at once, not at the stall timeout") {
  // A server that takes the request and never answers.
  std::uint16_t port = 0;
  const auto listener = test::listen_on_loopback(port);
  const auto cancellation = std::make_shared<Cancellation>();
  TransportOptions options;
  options.cancellation = cancellation;
  auto transport = Transport::create(options).value();
  const auto started = std::chrono::steady_clock::now();
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cancellation->cut_stalled(std::chrono::milliseconds(500));
  });
  const auto answer = exchange(transport, Request{Method::get, "http://127.0.0.1:" + std::to_string(port) + "/v2/"});
  stopper.join();
  const auto took = std::chrono::steady_clock::now() - started;
  CHECK(answer.failure == TransportFailure::cancelled);
  CHECK(answer.error == "cancelled: the program is stopping, and nothing moved for 500 ms");
  // Nothing moved since the request went: cut at the first look after the cut (at most 1 s apart).
  CHECK(took < std::chrono::milliseconds(2500));
  CHECK(took >= std::chrono::milliseconds(300));
}

TEST_CASE("a cancellation spares an exchange that moves, until its limit is zero") {
  // A body that trickles a byte every 100 ms, for 3 s.
  std::uint16_t port = 0;
  const auto listener = test::listen_on_loopback(port);
  std::thread server([&] {
    const util::UniqueFd connection(::accept(listener.get(), nullptr, nullptr));
    if (!connection.valid()) return;
    char request[4096];
    [[maybe_unused]] const auto got = ::recv(connection.get(), request, sizeof request, 0);
    const std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 30\r\n\r\n";
    if (::send(connection.get(), head.data(), head.size(), MSG_NOSIGNAL) < 0) return;
    for (int i = 0; i < 30; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (::send(connection.get(), "x", 1, MSG_NOSIGNAL) < 0) return;
    }
  });
  const auto cancellation = std::make_shared<Cancellation>();
  cancellation->cut_stalled(std::chrono::milliseconds(700));
  TransportOptions options;
  options.cancellation = cancellation;
  auto transport = Transport::create(options).value();
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    cancellation->cut_stalled(std::chrono::milliseconds(0));
  });
  const auto answer = exchange(transport, Request{Method::get, "http://127.0.0.1:" + std::to_string(port) + "/v2/"});
  stopper.join();
  server.join();
  CHECK(answer.failure == TransportFailure::cancelled);
  CHECK(answer.error == "cancelled: the program is stopping");
  // It went on past its 700 ms limit while bytes came (about 15 of them by the cut).
  CHECK(answer.body.size() >= 5);
}
