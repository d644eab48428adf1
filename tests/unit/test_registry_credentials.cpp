#include <doctest/doctest.h>

#include <sys/stat.h>

#include <cstdlib>

#include "hwimg/registry/credentials.hpp"
#include "hwimg/util/files.hpp"
#include "test_support.hpp"

using namespace hwimg;
using namespace hwimg::registry;
namespace fs = std::filesystem;

using test::scratch_directory;
using test::write_file;

TEST_CASE("base64 round trip") {
  CHECK(base64_encode("alice:s3cret") == "YWxpY2U6czNjcmV0");
  CHECK(base64_decode("YWxpY2U6czNjcmV0") == "alice:s3cret");
  CHECK(base64_decode("YQ==") == "a");
  CHECK(base64_decode("YWI=") == "ab");
  CHECK_FALSE(base64_decode("abc"));
}

TEST_CASE("config keys: Docker Hub's legacy URL, else host:port") {
  CHECK(credential_key("docker.io") == "https://index.docker.io/v1/");
  CHECK(credential_key("127.0.0.1:5443") == "127.0.0.1:5443");
}

TEST_CASE("auths entries: exact key, then host:port of URL keys, never a key without the port") {
  auto dir = scratch_directory("hwimg-cred");
  write_file(dir.path() / "config.json",
        R"({"auths": {"https://127.0.0.1:5443/v2/": {"auth": "YWxpY2U6czNjcmV0OndpdGg6Y29sb25z"},
                      "reg.example.com": {"auth": "Ym9iOnB3"},
                      "tok.example.com": {"identitytoken": "refresh-me"},
                      "https://index.docker.io/v1/": {"username": "hub", "password": "pw"}}})");
  auto c = lookup_credentials(dir.path(), "127.0.0.1:5443");
  REQUIRE(c);
  REQUIRE(*c);
  CHECK((*c)->username == "alice");
  CHECK((*c)->password == "s3cret:with:colons");
  CHECK((*c)->identity_token.empty());
  CHECK(lookup_credentials(dir.path(), "reg.example.com")->value().username == "bob");
  CHECK_FALSE(lookup_credentials(dir.path(), "reg.example.com:5000")->has_value());
  CHECK(lookup_credentials(dir.path(), "tok.example.com")->value().identity_token == "refresh-me");
  CHECK(lookup_credentials(dir.path(), "docker.io")->value().username == "hub");
  CHECK_FALSE(lookup_credentials(dir.path(), "other.example.com")->has_value());
  CHECK_FALSE(lookup_credentials(dir.path() / "absent", "reg.example.com")->has_value());
}

TEST_CASE("a broken auth entry is an error that does not quote it") {
  auto dir = scratch_directory("hwimg-cred");
  write_file(dir.path() / "config.json", R"({"auths": {"reg.example.com": {"auth": "bm9jb2xvbg=="}}})");
  auto c = lookup_credentials(dir.path(), "reg.example.com");
  REQUIRE(!c);
  CHECK(c.error().message == fmt::format("failed to read {}: auths.\"reg.example.com\".auth is not base64 of "
                                         "user:password", (dir.path() / "config.json").string()));
  CHECK(c.error().message.find("bm9jb2xvbg") == std::string::npos);
}

TEST_CASE("credential helpers: credHelpers wins over credsStore, identity tokens, not found, warnings on stderr") {
  auto dir = scratch_directory("hwimg-cred");
  const auto bin = dir.path() / "bin";
  REQUIRE(util::make_directories(bin));
  write_file(bin / "docker-credential-fake",
        "#!/bin/sh\nread -r key || true\n"
        "case \"$key\" in\n"
        "  reg.example.com) echo 'WARNING: token expires soon {' >&2\n"
        "    echo '{\"ServerURL\":\"reg.example.com\",\"Username\":\"carol\",\"Secret\":\"pw1\"}';;\n"
        "  tok.example.com) echo '{\"ServerURL\":\"tok.example.com\",\"Username\":\"<token>\",\"Secret\":\"idt\"}';;\n"
        "  *) echo 'credentials not found in native keychain'; exit 1;;\n"
        "esac\n");
  write_file(bin / "docker-credential-broken", "#!/bin/sh\necho 'keychain locked'; exit 3\n");
  ::chmod((bin / "docker-credential-fake").c_str(), 0755);
  ::chmod((bin / "docker-credential-broken").c_str(), 0755);
  const std::string path = bin.string() + ":" + std::getenv("PATH");
  ::setenv("PATH", path.c_str(), 1);
  write_file(dir.path() / "config.json",
        R"({"credsStore": "fake", "credHelpers": {"locked.example.com": "broken"},
            "auths": {"reg.example.com": {"auth": "aWdub3JlZDppZ25vcmVk"}}})");
  CHECK(lookup_credentials(dir.path(), "reg.example.com")->value().username == "carol");
  CHECK(lookup_credentials(dir.path(), "reg.example.com")->value().password == "pw1");
  CHECK(lookup_credentials(dir.path(), "tok.example.com")->value().identity_token == "idt");
  CHECK_FALSE(lookup_credentials(dir.path(), "none.example.com")->has_value());
  auto locked = lookup_credentials(dir.path(), "locked.example.com");
  REQUIRE(!locked);
  CHECK(locked.error().message ==
        "failed to get credentials for locked.example.com from docker-credential-broken: exit status 3");
}

TEST_CASE("a failing helper's output is never quoted: it may echo what it was given") {
  auto dir = scratch_directory("hwimg-cred");
  const auto bin = dir.path() / "bin";
  REQUIRE(util::make_directories(bin));
  write_file(bin / "docker-credential-leaky", "#!/bin/sh\nread -r key\necho \"token=s3cret-for-$key\"; exit 1\n");
  ::chmod((bin / "docker-credential-leaky").c_str(), 0755);
  const std::string path = bin.string() + ":" + std::getenv("PATH");
  ::setenv("PATH", path.c_str(), 1);
  write_file(dir.path() / "config.json", R"({"credsStore": "leaky"})");
  const auto got = lookup_credentials(dir.path(), "reg.example.com");
  REQUIRE_FALSE(got.has_value());
  CHECK(got.error().message == "failed to get credentials for reg.example.com from docker-credential-leaky: exit status 1");
  const auto stored = store_credentials(dir.path(), "reg.example.com", Credentials{"alice", "pw", {}, {}});
  REQUIRE_FALSE(stored.has_value());
  CHECK(stored.error().message == "failed to store credentials for reg.example.com with docker-credential-leaky: exit status 1");
  // An answer whose Username is not a string is not the expected JSON, not an exception.
  write_file(bin / "docker-credential-odd", "#!/bin/sh\necho '{\"Username\": 7, \"Secret\": \"pw\"}'\n");
  ::chmod((bin / "docker-credential-odd").c_str(), 0755);
  write_file(dir.path() / "config.json", R"({"credsStore": "odd"})");
  CHECK(lookup_credentials(dir.path(), "reg.example.com").error().message ==
        "failed to get credentials for reg.example.com from docker-credential-odd: its answer is not the expected JSON");
}

TEST_CASE("a helper name with '/' or a leading '.' is refused, never run as a path") {
  auto dir = scratch_directory("hwimg-cred");
  const auto config = (dir.path() / "config.json").string();
  // A program the name would reach as a relative path from the working directory.
  const auto planted = fs::current_path() / "docker-credential-..";
  REQUIRE_FALSE(fs::exists(planted));
  struct Removed {
    fs::path path;
    ~Removed() { fs::remove_all(path); }
  } removed{planted};
  REQUIRE(util::make_directories(planted / "bin"));
  write_file(planted / "bin" / "evil", "#!/bin/sh\necho '{\"Username\":\"mallory\",\"Secret\":\"x\"}'\n");
  ::chmod((planted / "bin" / "evil").c_str(), 0755);
  for (const std::string name : {"../bin/evil", "x/y", ".hidden", "..", "a b", "a;b"}) {
    CAPTURE(name);
    write_file(dir.path() / "config.json", fmt::format(R"({{"credsStore": "{}"}})", name));
    const auto expected = fmt::format("failed to read {}: \"{}\" is not a credential helper name (letters, digits, "
                                      "'.', '_' and '-', not starting with '.')",
                                      config, name);
    const auto got = lookup_credentials(dir.path(), "reg.example.com");
    REQUIRE_FALSE(got.has_value());
    CHECK(got.error().message == expected);
    write_file(dir.path() / "config.json", fmt::format(R"({{"credHelpers": {{"reg.example.com": "{}"}}}})", name));
    CHECK(lookup_credentials(dir.path(), "reg.example.com").error().message == expected);
    CHECK(store_credentials(dir.path(), "reg.example.com", Credentials{"alice", "pw", {}, {}}).error().message ==
          expected);
  }
}

TEST_CASE("storing credentials keeps other keys and writes mode 0600 in a 0700 directory") {
  auto dir = scratch_directory("hwimg-cred");
  const auto config_dir = dir.path() / "docker";
  REQUIRE(store_credentials(config_dir, "127.0.0.1:5443", Credentials{"alice", "pw", {}, {}}));
  struct stat info {};
  REQUIRE(::stat((config_dir / "config.json").c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) == 0600);
  REQUIRE(::stat(config_dir.c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) == 0700);
  write_file(config_dir / "config.json", R"({"auths": {"a.example.com": {"auth": "eDp5"}}, "psFormat": "table"})");
  REQUIRE(store_credentials(config_dir, "127.0.0.1:5443", Credentials{"alice", "pw2", {}, {}}));
  auto text = util::read_file(config_dir / "config.json");
  REQUIRE(text);
  CHECK(text->find("\"psFormat\": \"table\"") != std::string::npos);
  CHECK(text->find("a.example.com") != std::string::npos);
  CHECK(lookup_credentials(config_dir, "127.0.0.1:5443")->value().password == "pw2");
}

TEST_CASE("a config.json others can read is warned about once per process, never quoting it") {
  auto dir = scratch_directory("hwimg-cred");
  const auto config = dir.path() / "config.json";
  write_file(config, R"({"auths": {"reg.example.com": {"auth": "Ym9iOnMzY3JldA=="}}})");
  hwimg::test::WarningLog output;
  REQUIRE(::chmod(config.c_str(), 0600) == 0);
  warn_if_readable_by_others(dir.path(), output);
  CHECK(output.lines.empty());
  REQUIRE(::chmod(config.c_str(), 0644) == 0);
  warn_if_readable_by_others(dir.path(), output);
  warn_if_readable_by_others(dir.path(), output);
  REQUIRE(output.lines.size() == 1);
  CHECK(output.lines[0] == config.string() + " holds registry credentials and can be read by its group (mode 0644); "
                                             "run chmod 600 " + config.string());
  CHECK(output.lines[0].find("Ym9i") == std::string::npos);
  // Another file is another warning; a missing one none.
  auto other = scratch_directory("hwimg-cred");
  write_file(other.path() / "config.json", "{}");
  REQUIRE(::chmod((other.path() / "config.json").c_str(), 0604) == 0);
  warn_if_readable_by_others(other.path(), output);
  warn_if_readable_by_others(other.path() / "absent", output);
  REQUIRE(output.lines.size() == 2);
  CHECK(output.lines[1].find("can be read by every user (mode 0604)") != std::string::npos);
}

TEST_CASE("storing credentials replaces a group-readable config.json with a 0600 one, leaving no temporary") {
  auto dir = scratch_directory("hwimg-cred");
  write_file(dir.path() / "config.json", R"({"auths": {}})");
  REQUIRE(::chmod((dir.path() / "config.json").c_str(), 0644) == 0);
  const auto old_umask = ::umask(0);
  REQUIRE(store_credentials(dir.path(), "127.0.0.1:5443", Credentials{"alice", "pw", {}, {}}));
  ::umask(old_umask);
  struct stat info {};
  REQUIRE(::stat((dir.path() / "config.json").c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) == 0600);
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) names.push_back(entry.path().filename());
  CHECK(names == std::vector<std::string>{"config.json"});
}

TEST_CASE("DOCKER_AUTH_CONFIG: its credentials come first, the config file for registries it does not name") {
  auto dir = scratch_directory("hwimg-cred");
  write_file(dir.path() / "config.json",
             R"({"auths": {"reg.example.com": {"auth": "ZmlsZTpmcm9tLWZpbGU="},
                           "other.example.com": {"auth": "b3RoZXI6cHc="}}})");
  const std::string environment =
      R"({"auths": {"https://reg.example.com/v2/": {"auth": "ZW52OmZyb20tZW52"}, "tok.example.com": {"registrytoken": "t"}}})";
  CHECK(lookup_credentials(dir.path(), "reg.example.com", environment)->value().username == "env");
  CHECK(lookup_credentials(dir.path(), "reg.example.com", environment)->value().password == "from-env");
  CHECK(lookup_credentials(dir.path(), "other.example.com", environment)->value().username == "other");
  CHECK(lookup_credentials(dir.path(), "tok.example.com", environment)->value().registry_token == "t");
  CHECK(lookup_credentials(dir.path(), "reg.example.com", "")->value().username == "file");
  CHECK(lookup_credentials(dir.path() / "absent", "reg.example.com", environment)->value().username == "env");
  CHECK_FALSE(lookup_credentials(dir.path() / "absent", "nowhere.example.com", environment)->has_value());
}

TEST_CASE("DOCKER_AUTH_CONFIG: broken values are errors that never quote them") {
  auto dir = scratch_directory("hwimg-cred");
  const auto invalid = lookup_credentials(dir.path(), "reg.example.com", R"({"auths": {"reg.example.com": "s3cret)");
  REQUIRE(!invalid);
  CHECK(invalid.error().message == "failed to read $DOCKER_AUTH_CONFIG: not a valid JSON object");
  const auto entry = lookup_credentials(dir.path(), "reg.example.com", R"({"auths": {"reg.example.com": {"auth": "bm9jb2xvbg=="}}})");
  REQUIRE(!entry);
  CHECK(entry.error().message ==
        "failed to read $DOCKER_AUTH_CONFIG: auths.\"reg.example.com\".auth is not base64 of user:password");
}
