#pragma once
// Settings shared by every registry operation (flags of push, tag, login, inspect).

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "hwimg/registry/cancellation.hpp"

#include "hwimg/util/output.hpp"

namespace hwimg::registry {

struct ClientOptions {
  std::filesystem::path ca_file;            // extra trust anchors; empty: the system store
  bool insecure = false;                    // skip TLS verification; allow plain HTTP to any host
  bool plain_http = false;                  // speak http:// (loopback registries, or with insecure)
  unsigned jobs = 4;                        // parallel blob uploads
  std::filesystem::path docker_config_dir;  // credentials; empty: none (anonymous)
  std::string docker_auth_config;           // $DOCKER_AUTH_CONFIG, consulted before docker_config_dir
  // Where token realms are remembered between commands (registry/detail/challenge_memory.hpp);
  // empty: nowhere.
  std::filesystem::path challenge_file;
  std::uint64_t chunk_size = 64ull << 20;   // blobs above this go up in PATCH chunks of this size
  unsigned max_attempts = 8;                // per request (or per blob upload) on transient failures
  // Push progress (status), retries and every exchange (log, secrets redacted).
  util::Output* output = &util::null_output();
  // Shared by every client of a program that stops them from another thread (serve); null: none.
  std::shared_ptr<const Cancellation> cancellation;
};

}  // namespace hwimg::registry
