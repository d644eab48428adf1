#pragma once
// The one way hwimg reads JSON that others wrote (registries, facts files, credential helpers):
// parsing without exceptions and typed member lookup that says what was expected.
// Included only from .cpp files, so nlohmann/json stays out of the other public headers.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "hwimg/util/error.hpp"

namespace hwimg::util::json {

using Json = nlohmann::json;

// The document, or "invalid JSON: <the parser's reason and position>".
[[nodiscard]] Result<Json> parse(std::string_view text);
// The document when it is an object; nullopt for anything else, invalid JSON included.
[[nodiscard]] std::optional<Json> parse_object(std::string_view text);

enum class Kind { string, integer, non_negative_integer, object, array, array_of_strings };
// "a string", "an integer", ...
[[nodiscard]] std::string_view kind_name(Kind kind);

// A member of `object` that must be of `kind`: nullptr when absent or null, an error
// "expected <kind>" (without a path; callers add theirs) when it is of another kind.
[[nodiscard]] Result<const Json*> member(const Json& object, std::string_view key, Kind kind);

// Typed values of members, nullopt when absent or null.
[[nodiscard]] Result<std::optional<std::string>> string_member(const Json& object, std::string_view key);
[[nodiscard]] Result<std::optional<std::int64_t>> integer_member(const Json& object, std::string_view key);
[[nodiscard]] Result<std::optional<std::vector<std::string>>> strings_member(const Json& object,
                                                                             std::string_view key);
// A value's string, integer or boolean; nullopt when it is of any other type (an array's items, an
// object's values, a member already looked up). Outside json_reader.cpp, nothing else takes values
// out of JSON others wrote (tests/unit/test_json_reads.cpp checks the sources for it).
[[nodiscard]] std::optional<std::string> as_string(const Json& value);
[[nodiscard]] std::optional<std::int64_t> as_integer(const Json& value);
[[nodiscard]] std::optional<bool> as_boolean(const Json& value);

}  // namespace hwimg::util::json
