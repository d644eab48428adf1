// `hwimg serve configure-node`: the hosts.toml and drop-in of docs/serve.md#runtimes, the backup of
// a file it replaces and its restoration byte for byte, a second run that changes nothing, removal
// that touches only its own files, and refusals that leave the node as it was.

#include <doctest/doctest.h>

#include <filesystem>

#include "hwimg/serve/node_config.hpp"
#include "hwimg/util/files.hpp"

using namespace hwimg;
namespace fs = std::filesystem;
using serve::FileAction;

namespace {

serve::Upstream upstream(std::string_view text) {
  auto parsed = serve::parse_upstream(text);
  REQUIRE(parsed);
  return *parsed;
}

struct Node {
  util::TempDir root;
  fs::path certs;
  fs::path crio;

  Node() : root(*util::TempDir::create(fs::temp_directory_path(), "hwimg-test-node-config-")) {
    certs = root.path() / "certs.d";
    crio = root.path() / "registries.conf.d";
    fs::create_directories(certs);
    fs::create_directories(crio);
  }

  [[nodiscard]] serve::NodeConfigOptions options() const {
    return {{upstream("registry.example.org"), upstream("internal=127.0.0.1:5000")}, "127.0.0.1:5050", certs, crio, {}};
  }
};

std::string read(const fs::path& path) {
  auto content = util::read_file(path);
  REQUIRE(content);
  return *content;
}

std::vector<FileAction> actions(const std::vector<serve::FileChange>& changes) {
  std::vector<FileAction> result;
  for (const auto& change : changes) result.push_back(change.action);
  return result;
}

}  // namespace

TEST_CASE("the hosts.toml of docs/serve.md#containerd: the mirror alone resolves tags") {
  CHECK(serve::containerd_hosts_toml(upstream("registry.example.org"), "127.0.0.1:5050") ==
        std::string(serve::node_config_marker) +
            "\nserver = \"https://registry.example.org\"\n"
            "capabilities = [\"pull\"]\n\n"
            "[host.\"http://127.0.0.1:5050\"]\n"
            "  capabilities = [\"pull\", \"resolve\"]\n");
}

TEST_CASE("the CRI-O drop-in rewrites each registry to the mirror's path form, by name where it has a port") {
  const auto text = serve::crio_drop_in({upstream("registry.example.org"), upstream("internal=127.0.0.1:5000")},
                                        "127.0.0.1:5050");
  REQUIRE(text);
  CHECK(*text == std::string(serve::node_config_marker) +
                     "\n\n[[registry]]\nprefix = \"registry.example.org\"\n"
                     "location = \"127.0.0.1:5050/registry.example.org\"\ninsecure = true\n"
                     "\n[[registry]]\nprefix = \"127.0.0.1:5000\"\nlocation = \"127.0.0.1:5050/internal\"\n"
                     "insecure = true\n");
  const auto unnamed = serve::crio_drop_in({upstream("127.0.0.1:5000")}, "127.0.0.1:5050");
  REQUIRE_FALSE(unnamed);
  CHECK(unnamed.error().message.find("needs a name") != std::string::npos);
}

TEST_CASE("configure-node writes one hosts.toml per upstream and the drop-in; a second run changes nothing") {
  Node node;
  const auto first = serve::configure_node(node.options());
  REQUIRE(first);
  CHECK(actions(*first) == std::vector{FileAction::written, FileAction::written, FileAction::written});
  // containerd's hostPaths finds ROOT/HOST:PORT/hosts.toml (after ROOT/HOST_PORT_/).
  CHECK(read(node.certs / "127.0.0.1:5000" / "hosts.toml") ==
        serve::containerd_hosts_toml(upstream("internal=127.0.0.1:5000"), "127.0.0.1:5050"));
  CHECK(read(node.certs / "registry.example.org" / "hosts.toml").find("server = \"https://registry.example.org\"") !=
        std::string::npos);
  CHECK(read(node.crio / "50-hwimg-serve.conf").starts_with(serve::node_config_marker));

  const auto modified = fs::last_write_time(node.crio / "50-hwimg-serve.conf");
  const auto second = serve::configure_node(node.options());
  REQUIRE(second);
  CHECK(actions(*second) == std::vector{FileAction::unchanged, FileAction::unchanged, FileAction::unchanged});
  CHECK(fs::last_write_time(node.crio / "50-hwimg-serve.conf") == modified);

  auto other_listen = node.options();
  other_listen.listen = "127.0.0.1:6000";
  const auto third = serve::configure_node(other_listen);
  REQUIRE(third);
  CHECK(actions(*third) == std::vector{FileAction::updated, FileAction::updated, FileAction::updated});
  CHECK_FALSE(fs::exists(node.crio / "50-hwimg-serve.conf.hwimg-backup"));
}

TEST_CASE("a file that was there is backed up, and --remove restores it byte for byte and deletes the rest") {
  Node node;
  const std::string theirs = "server = \"https://registry.example.org\"\n\n[host.\"https://cache.local\"]\n";
  const std::string their_drop_in = "[[registry]]\nprefix = \"quay.io\"\n";
  const auto hosts = node.certs / "registry.example.org" / "hosts.toml";
  fs::create_directories(hosts.parent_path());
  REQUIRE(util::write_file_atomic(hosts, theirs));
  REQUIRE(util::write_file_atomic(node.crio / "50-hwimg-serve.conf", their_drop_in));
  // Files of others in the same directories are never touched.
  const auto unrelated = node.certs / "docker.io" / "hosts.toml";
  fs::create_directories(unrelated.parent_path());
  REQUIRE(util::write_file_atomic(unrelated, "server = \"https://registry-1.docker.io\"\n"));

  const auto written = serve::configure_node(node.options());
  REQUIRE(written);
  CHECK((*written)[0].backed_up);
  CHECK(read(fs::path(hosts.string() + ".hwimg-backup")) == theirs);
  CHECK(read(hosts).starts_with(serve::node_config_marker));
  CHECK(serve::describe((*written)[0]).find("kept in " + hosts.string() + ".hwimg-backup") != std::string::npos);

  // A second run keeps the one backup: it holds the node's own file, not ours.
  REQUIRE(serve::configure_node(node.options()));
  CHECK(read(fs::path(hosts.string() + ".hwimg-backup")) == theirs);

  const auto removed = serve::remove_node_config({{}, "", node.certs, node.crio, {}});
  REQUIRE(removed);
  CHECK(actions(*removed) == std::vector{FileAction::removed, FileAction::restored, FileAction::restored});
  CHECK(read(hosts) == theirs);
  CHECK(read(node.crio / "50-hwimg-serve.conf") == their_drop_in);
  CHECK_FALSE(fs::exists(node.certs / "127.0.0.1:5000"));
  CHECK_FALSE(fs::exists(hosts.string() + ".hwimg-backup"));
  CHECK(read(unrelated) == "server = \"https://registry-1.docker.io\"\n");

  const auto again = serve::remove_node_config({{}, "", node.certs, node.crio, {}});
  REQUIRE(again);
  CHECK(again->empty());
}

TEST_CASE("an upstream no longer listed loses its hosts.toml on the next run") {
  Node node;
  REQUIRE(serve::configure_node(node.options()));
  auto fewer = node.options();
  fewer.upstreams.pop_back();
  const auto changes = serve::configure_node(fewer);
  REQUIRE(changes);
  CHECK(actions(*changes) == std::vector{FileAction::unchanged, FileAction::removed, FileAction::updated});
  CHECK_FALSE(fs::exists(node.certs / "127.0.0.1:5000"));
}

TEST_CASE("refusals leave the node as it was") {
  Node node;
  auto missing = node.options();
  missing.containerd_dir = node.root.path() / "no-such-dir";
  const auto no_directory = serve::configure_node(missing);
  REQUIRE_FALSE(no_directory);
  CHECK(no_directory.error().message == "failed to write the node's configuration into " +
                                            missing.containerd_dir->string() + ": no such directory");
  CHECK(fs::is_empty(node.crio));

  // A registry with a port but no name cannot be rewritten for CRI-O: nothing is written for containerd either.
  auto unnamed = node.options();
  unnamed.upstreams = {upstream("127.0.0.1:5000")};
  REQUIRE_FALSE(serve::configure_node(unnamed));
  CHECK(fs::is_empty(node.certs));

  // A backup that is not ours to overwrite: the node's file that configure-node first replaced.
  const auto hosts = node.certs / "registry.example.org" / "hosts.toml";
  fs::create_directories(hosts.parent_path());
  REQUIRE(util::write_file_atomic(hosts, "server = \"https://a\"\n"));
  REQUIRE(util::write_file_atomic(hosts.string() + ".hwimg-backup", "server = \"https://b\"\n"));
  const auto both = serve::configure_node(node.options());
  REQUIRE_FALSE(both);
  CHECK(both.error().message.find("already holds an earlier file") != std::string::npos);
  CHECK(read(hosts) == "server = \"https://a\"\n");
}

TEST_CASE("a file in the way: the error names the file and the cause") {
  // (Root, as the suites run, may write into any directory; a file where a directory must be
  // fails for anyone.)
  Node node;
  REQUIRE(util::write_file_atomic(node.certs / "registry.example.org", "not a directory\n"));
  auto containerd_only = node.options();
  containerd_only.crio_dir.reset();
  const auto blocked = serve::configure_node(containerd_only);
  REQUIRE_FALSE(blocked);
  INFO(blocked.error().message);
  CHECK(blocked.error().message.starts_with("failed to "));
  CHECK(blocked.error().message.find((node.certs / "registry.example.org").string()) != std::string::npos);
  CHECK(blocked.error().message.find("Not a directory") != std::string::npos);
}

TEST_CASE("--direct leaves a repository, the mirror's own image, to its registry in the CRI-O drop-in") {
  const auto text = serve::crio_drop_in({upstream("registry.example.org")}, "127.0.0.1:5050",
                                        {"registry.example.org/hwimg"});
  REQUIRE(text);
  CHECK(text->ends_with("location = \"127.0.0.1:5050/registry.example.org\"\ninsecure = true\n"
                        "\n[[registry]]\nprefix = \"registry.example.org/hwimg\"\n"
                        "location = \"registry.example.org/hwimg\"\n"));
  for (const auto* wrong : {"quay.io/hwimg", "registry.example.org/hwimg:0.1", "hwimg"}) {
    INFO(wrong);
    const auto refused = serve::crio_drop_in({upstream("registry.example.org")}, "127.0.0.1:5050", {wrong});
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message.starts_with("invalid --direct"));
  }
}

TEST_CASE("the runtime needs the mirror's address with its port") {
  Node node;
  for (const auto* listen : {"127.0.0.1", "127.0.0.1:0", "nonsense"}) {
    INFO(listen);
    auto options = node.options();
    options.listen = listen;
    const auto refused = serve::configure_node(options);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message.starts_with("invalid --listen"));
    CHECK(refused.error().exit_code == ExitCode::usage);
  }
  CHECK(fs::is_empty(node.certs));
}
