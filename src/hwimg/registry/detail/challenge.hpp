#pragma once
// WWW-Authenticate challenges (RFC 7235) and token scopes (distribution's token spec).

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace hwimg::registry {

struct Challenge {
  std::string scheme;                         // lower-cased: "bearer", "basic"
  std::map<std::string, std::string> params;  // keys lower-cased, values unquoted
  [[nodiscard]] std::string param(const std::string& key) const;
};

// Every challenge in one header value; quoted values may hold commas, spaces and \-escapes.
[[nodiscard]] std::vector<Challenge> parse_challenges(std::string_view header);

// Splits a scope parameter into resource scopes. The spec joins them with spaces; some registries
// join them with commas ("repository:a:pull,push,repository:b:pull"), which is told apart from the
// comma between actions because an action has no ':'.
[[nodiscard]] std::vector<std::string> split_scopes(std::string_view scope);

// The union of two scope lists, merging actions on the same resource, in first-seen order.
[[nodiscard]] std::vector<std::string> merge_scopes(const std::vector<std::string>& a,
                                                    const std::vector<std::string>& b);

}  // namespace hwimg::registry
