#pragma once
// Internal to the HTTP transport: one exchange in flight as a libcurl easy handle, with everything
// its callbacks write into.

#include <array>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "hwimg/registry/detail/curl_library.hpp"
#include "hwimg/registry/detail/http.hpp"
#include "hwimg/util/fd.hpp"

namespace hwimg::registry {

struct EasyDeleter {
  void operator()(CURL* easy) const { curl().easy_cleanup(easy); }
};
using EasyHandle = std::unique_ptr<CURL, EasyDeleter>;

struct SlistDeleter {
  void operator()(curl_slist* list) const { curl().slist_free_all(list); }
};
using Slist = std::unique_ptr<curl_slist, SlistDeleter>;

struct Transfer {
  EasyHandle easy;
  CURLM* multi = nullptr;  // the pool (multi handle) running it
  Slist header_list;
  Request request;
  std::function<void(Response)> done;
  Response response;
  util::UniqueFd file;
  std::uint64_t body_position = 0;
  std::size_t memory_position = 0;
  std::string open_error;
  std::array<char, CURL_ERROR_SIZE> curl_error{};  // libcurl's own words for a failure
  std::chrono::steady_clock::time_point started;
  std::chrono::steady_clock::time_point moved;  // a byte of the answer arrived, or of the body went
  int redirects = 0;  // followed before this exchange
  bool body_started = false;
  bool streaming = false;  // the body goes to request.on_body_data
  bool paused = false;     // on_body_data was full: libcurl holds the piece until resume_bodies()
};

// Makes `t.easy` for `t.request` with `options`: URL, method, body, headers, TLS, time limits and
// the callbacks that fill `t.response`. `t` must not move while the exchange runs.
[[nodiscard]] Result<void> prepare_transfer(Transfer& t, const TransportOptions& options);

// Fills in `t.response` from libcurl's result once the exchange ended.
void complete_transfer(Transfer& t, CURLcode code);

}  // namespace hwimg::registry
