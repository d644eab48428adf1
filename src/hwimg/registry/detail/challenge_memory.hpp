#pragma once
// Bearer challenges remembered from one command to the next, in a small JSON file of the user's
// cache ($XDG_CACHE_HOME/hwimg/registries.json). A registry that wants a token says where to get it
// only in its first 401; a command that already knows the realm asks the token service while it
// connects to the registry, instead of after a refused request (docs/compatibility.md#registry-authentication).
// Only what a registry announces to anyone is kept: realm and service, never a credential or token.

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "hwimg/registry/detail/challenge.hpp"

namespace hwimg::registry {

class ChallengeMemory {
public:
  // Reads `file` (an empty path remembers nothing); an unreadable or malformed file is taken as
  // empty and rewritten on the next change.
  [[nodiscard]] static ChallengeMemory load(std::filesystem::path file);

  // The bearer challenge `base_url` ("https://host:port") sent last time, if any.
  [[nodiscard]] std::optional<Challenge> find(const std::string& base_url) const;
  // Keeps a bearer challenge (and forgets any other kind); writes the file when that changes it.
  void remember(const std::string& base_url, const Challenge& challenge);
  void forget(const std::string& base_url);

  // Registries kept at most: the oldest entries go first.
  static constexpr std::size_t capacity = 256;

private:
  struct Entry {
    std::string realm;
    std::string service;
    long long learned = 0;  // seconds since the epoch, to drop the oldest beyond `capacity`
  };
  void save() const;

  std::filesystem::path m_file;
  std::map<std::string, Entry> m_entries;
};

}  // namespace hwimg::registry
