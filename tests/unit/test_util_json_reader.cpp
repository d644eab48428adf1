#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "hwimg/oci/documents.hpp"
#include "hwimg/probe/host_facts.hpp"
#include "hwimg/util/json_reader.hpp"

using namespace hwimg;

namespace {

std::string read_fuzz_regression(const std::string& name) {
  std::ifstream in(std::string(HWIMG_TEST_DATA_DIR) + "/fuzz-regressions/" + name, std::ios::binary);
  REQUIRE(in);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("a number too large for a double is invalid JSON, not an exception") {
  const auto parsed = util::json::parse(R"({"a": 1e99999})");
  REQUIRE_FALSE(parsed);
  CHECK(parsed.error().message.starts_with("invalid JSON: number overflow parsing '1e99999'"));
  CHECK_FALSE(util::json::parse_object(R"({"a": -1e99999})"));
  CHECK_FALSE(oci::parse_index(R"({"schemaVersion": 2, "manifests": [], "x": 1e400})"));
}

TEST_CASE("fuzz regression: a facts file with an overflowing number is refused with an error") {
  // Found by fuzz/fuzz_host_facts: the exception escaped parse_host_facts and ended the process.
  const auto facts = probe::parse_host_facts(read_fuzz_regression("host-facts-number-overflow.json"), "facts.json");
  REQUIRE_FALSE(facts);
  CHECK(facts.error().message.find("number overflow") != std::string::npos);
}
