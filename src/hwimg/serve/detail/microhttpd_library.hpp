#pragma once
// Internal to the HTTP server: libmicrohttpd is loaded with dlopen when `serve` starts, like
// libcurl, because Debian builds it with GnuTLS, whose dependency chain would otherwise load at
// every hwimg start although only `serve` needs a server.

#include <microhttpd.h>

#include "hwimg/util/error.hpp"

namespace hwimg::serve {

struct MicrohttpdLibrary {
  decltype(&::MHD_start_daemon) start_daemon;
  decltype(&::MHD_stop_daemon) stop_daemon;
  decltype(&::MHD_quiesce_daemon) quiesce_daemon;
  decltype(&::MHD_get_daemon_info) get_daemon_info;
  decltype(&::MHD_get_connection_values) get_connection_values;
  decltype(&::MHD_get_connection_info) get_connection_info;
  decltype(&::MHD_suspend_connection) suspend_connection;
  decltype(&::MHD_resume_connection) resume_connection;
  decltype(&::MHD_create_response_from_buffer) create_response_from_buffer;
  decltype(&::MHD_create_response_from_callback) create_response_from_callback;
  decltype(&::MHD_add_response_header) add_response_header;
  decltype(&::MHD_queue_response) queue_response;
  decltype(&::MHD_destroy_response) destroy_response;
};

// Loads libmicrohttpd.so.12 (once, thread-safe).
[[nodiscard]] Result<const MicrohttpdLibrary*> load_microhttpd();

}  // namespace hwimg::serve
