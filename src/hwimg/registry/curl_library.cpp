#include "hwimg/registry/detail/curl_library.hpp"

#include <mutex>
#include <optional>

#include "hwimg/util/shared_library.hpp"

namespace hwimg::registry {
namespace {

CurlLibrary g_curl{};

Result<void> resolve(const util::SharedLibrary& library) {
  bool missing = false;
  const auto bind = [&]<typename F>(F& slot, const char* name) {
    slot = reinterpret_cast<F>(library.find<void>(name));
    missing = missing || slot == nullptr;
  };
  bind(g_curl.global_init, "curl_global_init");
  bind(g_curl.easy_init, "curl_easy_init");
  bind(g_curl.easy_cleanup, "curl_easy_cleanup");
  bind(g_curl.easy_setopt, "curl_easy_setopt");
  bind(g_curl.easy_getinfo, "curl_easy_getinfo");
  bind(g_curl.easy_strerror, "curl_easy_strerror");
  bind(g_curl.multi_init, "curl_multi_init");
  bind(g_curl.multi_cleanup, "curl_multi_cleanup");
  bind(g_curl.multi_setopt, "curl_multi_setopt");
  bind(g_curl.multi_add_handle, "curl_multi_add_handle");
  bind(g_curl.multi_remove_handle, "curl_multi_remove_handle");
  bind(g_curl.multi_perform, "curl_multi_perform");
  bind(g_curl.multi_poll, "curl_multi_poll");
  bind(g_curl.multi_info_read, "curl_multi_info_read");
  bind(g_curl.multi_strerror, "curl_multi_strerror");
  bind(g_curl.slist_append, "curl_slist_append");
  bind(g_curl.slist_free_all, "curl_slist_free_all");
  if (missing) {
    return fail("failed to load libcurl: libcurl.so.4 lacks functions hwimg needs (libcurl 7.66 or newer is required)");
  }
  if (const auto code = g_curl.global_init(CURL_GLOBAL_DEFAULT); code != CURLE_OK) {
    return fail("failed to initialise libcurl: {}", g_curl.easy_strerror(code));
  }
  return {};
}

}  // namespace

Result<const CurlLibrary*> load_curl() {
  static std::once_flag once;
  static std::optional<util::SharedLibrary> library;
  static Result<void> loaded;
  std::call_once(once, [] {
    auto opened = util::SharedLibrary::open("libcurl.so.4");
    if (!opened) {
      loaded = std::unexpected(opened.error().context("failed to load libcurl (install libcurl4)"));
      return;
    }
    library.emplace(std::move(*opened));
    loaded = resolve(*library);
  });
  if (!loaded) return std::unexpected(loaded.error());
  return &g_curl;
}

const CurlLibrary& curl() {
  return g_curl;
}

}  // namespace hwimg::registry
