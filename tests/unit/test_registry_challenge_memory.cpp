#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>

#include "hwimg/registry/detail/challenge_memory.hpp"
#include "hwimg/registry/detail/session.hpp"
#include "hwimg/util/files.hpp"
#include "test_support.hpp"

using namespace hwimg;
using registry::Challenge;
using registry::ChallengeMemory;

namespace {

Challenge bearer(std::string realm, std::string service = "registry.example") {
  return Challenge{"bearer", {{"realm", std::move(realm)}, {"service", std::move(service)}}};
}

}  // namespace

TEST_CASE("challenge memory: a bearer realm is kept for the next command, in a file only its owner reads") {
  const auto dir = test::scratch_directory();
  const auto file = dir.path() / "cache" / "hwimg" / "registries.json";
  {
    auto memory = ChallengeMemory::load(file);
    CHECK_FALSE(memory.find("https://r.example").has_value());
    memory.remember("https://r.example", bearer("https://auth.example/token"));
  }
  struct stat info {};
  REQUIRE(::stat(file.c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) == 0600);
  const auto again = ChallengeMemory::load(file);
  const auto found = again.find("https://r.example");
  REQUIRE(found.has_value());
  CHECK(found->scheme == "bearer");
  CHECK(found->param("realm") == "https://auth.example/token");
  CHECK(found->param("service") == "registry.example");
  // Another scheme or port is another registry.
  CHECK_FALSE(again.find("http://r.example").has_value());
  CHECK_FALSE(again.find("https://r.example:5000").has_value());
}

TEST_CASE("challenge memory: a Basic challenge, or forget, removes what was kept") {
  const auto dir = test::scratch_directory();
  const auto file = dir.path() / "registries.json";
  auto memory = ChallengeMemory::load(file);
  memory.remember("https://a.example", bearer("https://a.example/token"));
  memory.remember("https://b.example", bearer("https://b.example/token"));
  memory.remember("https://a.example", Challenge{"basic", {{"realm", "Registry"}}});
  memory.forget("https://b.example");
  const auto again = ChallengeMemory::load(file);
  CHECK_FALSE(again.find("https://a.example").has_value());
  CHECK_FALSE(again.find("https://b.example").has_value());
}

TEST_CASE("challenge memory: a malformed, hostile or foreign file is read as empty and replaced") {
  const auto dir = test::scratch_directory();
  const auto file = dir.path() / "registries.json";
  for (const std::string text :
       {"not json", "[]", R"({"registries": []})", R"({"registries": {"https://r": {"realm": 5}}})",
        R"({"registries": {"https://r": {"realm": "", "service": "s", "learned": 1}}})",
        R"({"registries": {"https://r": {"realm": "https://t", "service": {}, "learned": 1}}})"}) {
    CAPTURE(text);
    test::write_file(file, text);
    auto memory = ChallengeMemory::load(file);
    CHECK_FALSE(memory.find("https://r").has_value());
    memory.remember("https://s", bearer("https://s/token"));
    CHECK(ChallengeMemory::load(file).find("https://s").has_value());
  }
  // A directory, or a device where the file should be, is not read.
  std::filesystem::remove(file);
  std::filesystem::create_directory(file);
  CHECK_FALSE(ChallengeMemory::load(file).find("https://s").has_value());
  CHECK_FALSE(ChallengeMemory::load("/dev/zero").find("https://s").has_value());
}

TEST_CASE("challenge memory: at most `capacity` registries, the oldest dropped first") {
  const auto dir = test::scratch_directory();
  const auto file = dir.path() / "registries.json";
  auto memory = ChallengeMemory::load(file);
  for (std::size_t i = 0; i <= ChallengeMemory::capacity; ++i) {
    memory.remember("https://r" + std::to_string(i), bearer("https://t/token"));
  }
  const auto again = ChallengeMemory::load(file);
  std::size_t kept = 0;
  for (std::size_t i = 0; i <= ChallengeMemory::capacity; ++i) if (again.find("https://r" + std::to_string(i))) ++kept;
  CHECK(kept == ChallengeMemory::capacity);
  CHECK(again.find("https://r" + std::to_string(ChallengeMemory::capacity)).has_value());
}

TEST_CASE("challenge memory: an empty path remembers nothing and writes nothing") {
  auto memory = ChallengeMemory::load({});
  memory.remember("https://r.example", bearer("https://auth.example/token"));
  CHECK_FALSE(ChallengeMemory::load({}).find("https://r.example").has_value());
}

TEST_CASE("token realms: credentials go only over TLS, or in clear to this machine") {
  CHECK(registry::realm_allowed("https://auth.example/token"));
  CHECK(registry::realm_allowed("http://127.0.0.1:5001/token"));
  CHECK(registry::realm_allowed("http://localhost/token"));
  CHECK(registry::realm_allowed("http://[::1]:80/token"));
  CHECK_FALSE(registry::realm_allowed("http://auth.example/token"));
  CHECK_FALSE(registry::realm_allowed("http://127.0.0.1.evil.example/token"));
  CHECK_FALSE(registry::realm_allowed("ftp://auth.example/token"));
  CHECK_FALSE(registry::realm_allowed(""));
}
