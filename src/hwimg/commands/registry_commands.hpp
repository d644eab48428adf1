#pragma once
// The registry commands: `hwimg push`, `hwimg tag`, `hwimg login` and `hwimg index create`.

#include <iosfwd>
#include <string>
#include <vector>

#include "hwimg/commands/data_format.hpp"
#include "hwimg/compat/artifact.hpp"
#include "hwimg/commands/registry_flags.hpp"
#include "hwimg/registry/client.hpp"

namespace hwimg::commands {

// "pushed REF@DIGEST: N blobs uploaded (X MiB), N mounted, ...": what a push did, in one line.
[[nodiscard]] std::string push_summary_line(const registry::PushSummary& summary);

// The push summary as JSON: {"reference", "digest", "blobs", "manifests", "tags", ...}.
[[nodiscard]] std::string push_summary_json(const registry::PushSummary& summary);

struct PushArguments {
  std::string source;       // oci:DIR[:TAG]
  std::string destination;  // REGISTRY/REPO[:TAG]
  compat::CompatArtifacts compat = compat::CompatArtifacts::attach;  // one NFD artifact per variant
  DataFormat format = DataFormat::text;
  RegistryFlags registry;
};

// hwimg push oci:DIR[:TAG] REF: prints one summary line (or JSON) on stdout; progress on a
// terminal. The NFD compatibility artifacts follow the push (docs/nfd.md).
[[nodiscard]] Result<int> run_push(const PushArguments& arguments);

// hwimg tag REF NEWTAG...: prints each new reference with the digest that got it (or
// {"digest", "references"}).
[[nodiscard]] Result<int> run_tag(const std::string& reference, const std::vector<std::string>& new_tags,
                                  DataFormat format, const RegistryFlags& flags);

// hwimg login REGISTRY --username U --password-stdin: checks the credentials with the registry,
// then stores them (config.json mode 0600, or the configured credential helper).
[[nodiscard]] Result<int> run_login(const std::string& registry, const std::string& username,
                                    std::istream& password_input, const RegistryFlags& flags);

// hwimg index create REGISTRY/REPO:TAG --from REF...: prints "REGISTRY/REPO:TAG@sha256:..." (or
// {"reference", "digest", "variants"}).
[[nodiscard]] Result<int> run_index_create(const std::string& destination, const std::vector<std::string>& sources,
                                           DataFormat format, const RegistryFlags& flags);

}  // namespace hwimg::commands
