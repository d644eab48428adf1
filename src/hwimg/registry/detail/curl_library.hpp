#pragma once
// Internal to the HTTP transport: libcurl is loaded with dlopen on first use instead of being linked,
// because its dependency chain (TLS, Kerberos, LDAP, IDN, ...) cost every hwimg start several
// milliseconds, and `probe` and local `select` never talk to a registry.

#include <curl/curl.h>

#include "hwimg/util/error.hpp"

namespace hwimg::registry {

struct CurlLibrary {
  decltype(&::curl_global_init) global_init;
  decltype(&::curl_easy_init) easy_init;
  decltype(&::curl_easy_cleanup) easy_cleanup;
  decltype(&::curl_easy_setopt) easy_setopt;
  decltype(&::curl_easy_getinfo) easy_getinfo;
  decltype(&::curl_easy_strerror) easy_strerror;
  decltype(&::curl_easy_pause) easy_pause;
  decltype(&::curl_multi_init) multi_init;
  decltype(&::curl_multi_cleanup) multi_cleanup;
  decltype(&::curl_multi_setopt) multi_setopt;
  decltype(&::curl_multi_add_handle) multi_add_handle;
  decltype(&::curl_multi_remove_handle) multi_remove_handle;
  decltype(&::curl_multi_perform) multi_perform;
  decltype(&::curl_multi_poll) multi_poll;
  decltype(&::curl_multi_info_read) multi_info_read;
  decltype(&::curl_multi_strerror) multi_strerror;
  decltype(&::curl_multi_fdset) multi_fdset;
  decltype(&::curl_multi_timeout) multi_timeout;
  decltype(&::curl_slist_append) slist_append;
  decltype(&::curl_slist_free_all) slist_free_all;
  decltype(&::curl_share_init) share_init;
  decltype(&::curl_share_setopt) share_setopt;
  // What every exchange of the process shares, whichever transport and thread runs it: TLS
  // sessions (a new connection to a registry resumes instead of a full handshake) and DNS answers.
  // Connections themselves are shared by the exchanges of one transport (its multi handle).
  CURLSH* share = nullptr;
};

// Loads libcurl.so.4 (once, thread-safe), runs curl_global_init and makes the share handle.
[[nodiscard]] Result<const CurlLibrary*> load_curl();

// The loaded library; only valid after load_curl() succeeded, which every transport does first.
[[nodiscard]] const CurlLibrary& curl();

}  // namespace hwimg::registry
