#pragma once
// The registry tools people reach for in crane, regctl and skopeo: `hwimg ls` (every tag of a
// repository), `hwimg digest` (the digest a reference, or the variant chosen for a host, names) and
// `hwimg delete` (a manifest off its registry).

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

#include "hwimg/commands/data_format.hpp"
#include "hwimg/commands/registry_flags.hpp"

namespace hwimg::commands {

enum class DigestTags { include, exclude };  // the referrers tags, sha256-<hex> (--exclude-digest-tags)

struct ListTagsArguments {
  std::string repository;                // REGISTRY/REPO, no tag
  std::optional<std::size_t> page_size;  // ?n= per page; none: the registry's own paging
  DigestTags digest_tags = DigestTags::include;
  DataFormat format = DataFormat::text;
  RegistryFlags registry;
};

// Prints every tag, one per line and sorted, or {"repository", "tags"}.
[[nodiscard]] Result<int> run_list_tags(const ListTagsArguments& arguments);

struct DigestArguments {
  std::string reference;                            // a registry reference or oci:DIR[:TAG]
  std::optional<std::filesystem::path> facts_file;  // --for: the variant `select --host` picks
  DataFormat format = DataFormat::text;
  RegistryFlags registry;
};

// Prints the digest (or {"reference", "digest", "mediaType", "size"[, "variant"]}); 3 when --for
// finds no variant for that host, with every variant's reasons on stderr.
[[nodiscard]] Result<int> run_digest(const DigestArguments& arguments);

// Deletes the manifest REF names (a tag resolved to its digest first); prints "deleted REF@DIGEST"
// (or {"reference", "digest"}).
[[nodiscard]] Result<int> run_delete(const std::string& reference, DataFormat format, const RegistryFlags& flags);

}  // namespace hwimg::commands
