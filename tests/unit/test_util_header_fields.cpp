#include <doctest/doctest.h>

#include "hwimg/util/header_fields.hpp"

using namespace hwimg::util;

TEST_CASE("header fields are found whatever the case of their names, repeated ones in order") {
  const HeaderFields fields{{"Content-Type", "application/json"},
                            {"www-authenticate", "Bearer realm=\"a\""},
                            {"WWW-Authenticate", "Basic realm=\"b\""}};
  CHECK(field_value(fields, "content-type") == "application/json");
  CHECK(field_value(fields, "CONTENT-TYPE") == "application/json");
  CHECK(field_value(fields, "Www-Authenticate") == "Bearer realm=\"a\"");
  CHECK(field_values(fields, "www-authenticate") == std::vector<std::string>{"Bearer realm=\"a\"", "Basic realm=\"b\""});
  CHECK_FALSE(field_value(fields, "content-length").has_value());
  CHECK(field_values(fields, "link").empty());
  // A name that only starts like another is another.
  CHECK_FALSE(field_value(fields, "content-typ").has_value());
}
