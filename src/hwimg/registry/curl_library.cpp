#include "hwimg/registry/detail/curl_library.hpp"

#include <array>
#include <mutex>

#include "hwimg/util/process_library.hpp"

namespace hwimg::registry {
namespace {

// One lock per kind of shared data, as libcurl asks of a share used from several threads.
std::array<std::mutex, CURL_LOCK_DATA_LAST> g_share_locks;

void lock_share(CURL*, curl_lock_data data, curl_lock_access, void*) {
  g_share_locks[static_cast<std::size_t>(data)].lock();
}

void unlock_share(CURL*, curl_lock_data data, void*) {
  g_share_locks[static_cast<std::size_t>(data)].unlock();
}

Result<void> make_share(CurlLibrary& curl) {
  curl.share = curl.share_init();
  if (curl.share == nullptr) return fail("failed to initialise libcurl: curl_share_init returned null");
  for (const auto code : {curl.share_setopt(curl.share, CURLSHOPT_LOCKFUNC, lock_share),
                          curl.share_setopt(curl.share, CURLSHOPT_UNLOCKFUNC, unlock_share),
                          curl.share_setopt(curl.share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION),
                          curl.share_setopt(curl.share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS)}) {
    if (code != CURLSHE_OK) return fail("failed to initialise libcurl's share handle: error {}", static_cast<int>(code));
  }
  return {};
}

Result<void> bind(const util::SharedLibrary& library, CurlLibrary& curl) {
  bool all = true;
  all &= library.bind(curl.global_init, "curl_global_init");
  all &= library.bind(curl.easy_init, "curl_easy_init");
  all &= library.bind(curl.easy_cleanup, "curl_easy_cleanup");
  all &= library.bind(curl.easy_setopt, "curl_easy_setopt");
  all &= library.bind(curl.easy_getinfo, "curl_easy_getinfo");
  all &= library.bind(curl.easy_strerror, "curl_easy_strerror");
  all &= library.bind(curl.easy_pause, "curl_easy_pause");
  all &= library.bind(curl.multi_init, "curl_multi_init");
  all &= library.bind(curl.multi_cleanup, "curl_multi_cleanup");
  all &= library.bind(curl.multi_setopt, "curl_multi_setopt");
  all &= library.bind(curl.multi_add_handle, "curl_multi_add_handle");
  all &= library.bind(curl.multi_remove_handle, "curl_multi_remove_handle");
  all &= library.bind(curl.multi_perform, "curl_multi_perform");
  all &= library.bind(curl.multi_poll, "curl_multi_poll");
  all &= library.bind(curl.multi_info_read, "curl_multi_info_read");
  all &= library.bind(curl.multi_strerror, "curl_multi_strerror");
  all &= library.bind(curl.multi_fdset, "curl_multi_fdset");
  all &= library.bind(curl.multi_timeout, "curl_multi_timeout");
  all &= library.bind(curl.slist_append, "curl_slist_append");
  all &= library.bind(curl.slist_free_all, "curl_slist_free_all");
  all &= library.bind(curl.share_init, "curl_share_init");
  all &= library.bind(curl.share_setopt, "curl_share_setopt");
  if (!all) {
    return fail("failed to load libcurl: libcurl.so.4 lacks functions hwimg needs (libcurl 7.66 or newer is required)");
  }
  if (const auto code = curl.global_init(CURL_GLOBAL_DEFAULT); code != CURLE_OK) {
    return fail("failed to initialise libcurl: {}", curl.easy_strerror(code));
  }
  return make_share(curl);
}

util::ProcessLibrary<CurlLibrary> g_curl("libcurl.so.4", "failed to load libcurl (install libcurl4)", bind);

}  // namespace

Result<const CurlLibrary*> load_curl() {
  return g_curl.get();
}

const CurlLibrary& curl() {
  return g_curl.table();
}

}  // namespace hwimg::registry
