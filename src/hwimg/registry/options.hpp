#pragma once
// Settings shared by every registry operation (flags of push, tag, login, inspect).

#include <cstdint>
#include <filesystem>

namespace hwimg::registry {

enum class ProgressDisplay { automatic, never };

struct ClientOptions {
  std::filesystem::path ca_file;            // extra trust anchors; empty: the system store
  bool insecure = false;                    // skip TLS verification; allow plain HTTP to any host
  bool plain_http = false;                  // speak http:// (loopback registries, or with insecure)
  bool verbose = false;                     // log every exchange to stderr, secrets redacted
  unsigned jobs = 4;                        // parallel blob uploads
  std::filesystem::path docker_config_dir;  // empty: $DOCKER_CONFIG or ~/.docker
  std::uint64_t chunk_size = 64ull << 20;   // blobs above this go up in PATCH chunks of this size
  unsigned max_attempts = 8;                // per request (or per blob upload) on transient failures
  ProgressDisplay progress = ProgressDisplay::automatic;  // on a terminal only
};

}  // namespace hwimg::registry
