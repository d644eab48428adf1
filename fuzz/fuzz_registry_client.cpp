// Whole exchanges with a hostile registry, through the real session and client (libcurl, the
// session's scheme, challenge and token handling, the client's checks): a server on this machine
// answers each request with the next of the answers the fuzzer made (raw HTTP: status line,
// headers, body), and the client reads manifests, tags, blobs and referrers from it (issue 23).
// What the client accepts must be what it asked for: a manifest or blob that hashes to its digest.
//
// Input: answers separated by a line "===" (the seeds in fuzz/corpus/registry_client show the
// shape: a 401 with a Bearer challenge whose realm is "http://REALM/token", a token, a manifest,
// a tag list, ...). REALM is replaced by the server's address, so a token request reaches it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "hostile_server.hpp"
#include "hwimg/oci/digest.hpp"
#include "hwimg/registry/client.hpp"
#include "hwimg/registry/referrers.hpp"

namespace {

void require(bool condition) {
  if (!condition) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hwimg;
  static fuzz::HostileServer server;
  if (size > (1 << 16)) return 0;
  server.load(fuzz::sections_of(std::string_view(reinterpret_cast<const char*>(data), size), server.address()));

  registry::ClientOptions options;
  options.plain_http = true;
  options.max_attempts = 1;  // no backoff: a Retry-After would stall the run for a minute
  auto client = registry::Client::create(options);
  if (!client) return 0;
  const auto repository = registry::parse_reference(server.address() + "/team/app").value();
  const auto wanted = oci::Digest::sha256_of("the blob");

  if (const auto manifest = client->get_manifest(repository.with_tag("v1"))) {
    require(oci::Digest::sha256_of(manifest->bytes) == manifest->digest);
  }
  auto at_digest = repository;
  at_digest.digest = wanted;
  if (const auto by_digest = client->get_manifest(at_digest)) {
    require(by_digest->digest == wanted);
  }
  static_cast<void>(client->list_tags(repository, 2));
  static_cast<void>(client->head_blob(repository, wanted));
  if (const auto blob = client->get_blob(repository, wanted, 1 << 16)) require(oci::Digest::sha256_of(*blob) == wanted);
  std::string streamed;
  if (client->read_blob(repository, wanted, std::nullopt, [&](std::string_view piece) -> Result<void> {
        streamed += piece;
        return {};
      })) {
    require(oci::Digest::sha256_of(streamed) == wanted);
  }
  static_cast<void>(registry::list_referrers_of(*client, repository, {wanted}, ""));
  return 0;
}
