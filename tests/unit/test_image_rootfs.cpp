// The root filesystem of a builder image: layers unpacked in order with whiteouts and opaque
// directories applied, every way out of the root refused (.., whiteouts of no name, symlinks, hard
// links), device nodes refused, setuid bits dropped, and the cached rootfs made once per manifest
// however many builds ask at once. The device-code check's layer reader names entries the same way.

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hwimg/image/layer_files.hpp"
#include "hwimg/image/memory_reader.hpp"
#include "hwimg/image/rootfs.hpp"
#include "hwimg/oci/media_types.hpp"
#include "test_support.hpp"

using namespace hwimg;
namespace fs = std::filesystem;

namespace {

struct Item {
  std::string name;
  char type = 'f';      // f file, d directory, l symlink, h hard link, c character device
  std::string content;  // a file's bytes, or a link's target
  unsigned mode = 0644;
};

Item dir(std::string name, unsigned mode = 0755) { return {std::move(name), 'd', {}, mode}; }
Item file(std::string name, std::string content = "x") { return {std::move(name), 'f', std::move(content)}; }
Item symlink_to(std::string name, std::string target) { return {std::move(name), 'l', std::move(target), 0777}; }

// Writes a gzip tar of `items`, in the given order, as a layer file.
image::LayerFile layer(const fs::path& path, const std::vector<Item>& items) {
  archive* a = archive_write_new();
  REQUIRE(archive_write_set_format_pax_restricted(a) == ARCHIVE_OK);
  REQUIRE(archive_write_add_filter_gzip(a) == ARCHIVE_OK);
  REQUIRE(archive_write_open_filename(a, path.c_str()) == ARCHIVE_OK);
  for (const auto& item : items) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, item.name.c_str());
    archive_entry_set_mtime(e, 1700000000, 0);
    const auto perm = static_cast<mode_t>(item.mode);
    switch (item.type) {
      case 'd': archive_entry_set_mode(e, AE_IFDIR | perm); break;
      case 'l':
        archive_entry_set_mode(e, AE_IFLNK | perm);
        archive_entry_set_symlink(e, item.content.c_str());
        break;
      case 'h':
        archive_entry_set_mode(e, AE_IFREG | perm);
        archive_entry_set_hardlink(e, item.content.c_str());
        break;
      case 'c':
        archive_entry_set_mode(e, AE_IFCHR | 0666);
        archive_entry_set_rdev(e, makedev(1, 3));
        break;
      default:
        archive_entry_set_mode(e, AE_IFREG | perm);
        archive_entry_set_size(e, static_cast<la_int64_t>(item.content.size()));
    }
    REQUIRE(archive_write_header(a, e) == ARCHIVE_OK);
    if (item.type == 'f') {
      REQUIRE(archive_write_data(a, item.content.data(), item.content.size()) ==
              static_cast<la_ssize_t>(item.content.size()));
    }
    archive_entry_free(e);
  }
  REQUIRE(archive_write_close(a) == ARCHIVE_OK);
  archive_write_free(a);
  return {path, path.filename().string()};
}

std::string read(const fs::path& path) {
  auto text = util::read_file(path);
  REQUIRE_MESSAGE(text.has_value(), text.error().message);
  return *text;
}

std::vector<std::string> listing(const fs::path& root) {
  std::vector<std::string> names;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    names.push_back(entry.path().lexically_relative(root).string());
  }
  std::ranges::sort(names);
  return names;
}

std::string unpack_error(const std::vector<image::LayerFile>& layers, const fs::path& root) {
  const auto unpacked = image::unpack_layers(layers, root, image::Ownership::unpacking_user);
  REQUIRE_FALSE(unpacked.has_value());
  return unpacked.error().message;
}

}  // namespace

TEST_CASE("layers unpack lowest first: whiteouts remove, opaque directories hide what lower layers put there") {
  const auto tmp = test::scratch_directory();
  const auto root = tmp.path() / "root";
  fs::create_directories(root);
  const auto lower = layer(tmp.path() / "lower.tar.gz",
                           {dir("etc"), file("etc/a", "a"), dir("etc/sub"), file("etc/sub/x"), dir("opt"),
                            file("opt/old"), dir("var"), dir("var/lib"), file("var/lib/state"), file("keep", "old"),
                            file("gone"), dir("tree"), file("tree/leaf"), symlink_to("bin", "usr/bin"), dir("usr"),
                            dir("usr/bin"), file("usr/bin/sh", "shell")});
  const auto upper = layer(tmp.path() / "upper.tar.gz",
                           {file("./keep", "new"), file(".wh.gone"), dir("etc"), file("etc/.wh..wh..opq"),
                            file("etc/new", "n"), file("opt/mine", "m"), file("opt/.wh..wh..opq"), dir("var/lib"),
                            file("var/lib/.wh.state"), file("tree", "now a file")});
  const auto unpacked = image::unpack_layers({lower, upper}, root, image::Ownership::unpacking_user);
  REQUIRE_MESSAGE(unpacked.has_value(), unpacked.error().message);
  CHECK(listing(root) == std::vector<std::string>{"bin", "etc", "etc/new", "keep", "opt", "opt/mine", "tree", "usr",
                                                  "usr/bin", "usr/bin/sh", "var", "var/lib"});
  CHECK(read(root / "keep") == "new");
  CHECK(read(root / "tree") == "now a file");
  CHECK(fs::is_symlink(root / "bin"));
  CHECK(image::exists_in_rootfs(root, "/bin/sh"));
  CHECK_FALSE(image::exists_in_rootfs(root, "/bin/bash"));
}

TEST_CASE("a path that leaves the root is refused, naming the entry, and nothing is written outside") {
  const auto tmp = test::scratch_directory();
  const auto root = tmp.path() / "a" / "root";
  fs::create_directories(root);
  const auto escape = layer(tmp.path() / "escape.tar.gz", {file("ok"), file("../escape")});
  CHECK(unpack_error({escape}, root) == "failed to unpack layer escape.tar.gz: entry \"../escape\" leaves the image root");
  CHECK_FALSE(fs::exists(root.parent_path() / "escape"));

  const auto nested = layer(tmp.path() / "nested.tar.gz", {dir("x"), file("x/../../escape2")});
  CHECK(unpack_error({nested}, root) ==
        "failed to unpack layer nested.tar.gz: entry \"x/../../escape2\" leaves the image root");
  const auto whiteout = layer(tmp.path() / "whiteout.tar.gz", {file("../.wh.a")});
  CHECK(unpack_error({whiteout}, root) == "failed to unpack layer whiteout.tar.gz: entry \"../.wh.a\" leaves the image root");
  const auto hard = layer(tmp.path() / "hard.tar.gz", {Item{"h", 'h', "../../outside", 0644}});
  CHECK(unpack_error({hard}, root) ==
        "failed to unpack layer hard.tar.gz: entry \"h\" is a hard link to \"../../outside\", outside the image root");
}

TEST_CASE("a whiteout of no name is refused: .wh... never removes the directory above the root") {
  const auto tmp = test::scratch_directory();
  const auto rootfs = tmp.path() / "rootfs";
  const auto root = rootfs / "image";
  fs::create_directories(root / "sub");
  test::write_file(rootfs / "neighbour" / "kept", "another image");
  test::write_file(root / "sub" / "kept", "lower layer");
  for (const std::string name : {".wh...", ".wh..", ".wh.", "sub/.wh.", "sub/.wh.."}) {
    CAPTURE(name);
    const auto whiteout = layer(tmp.path() / "whiteout.tar.gz", {file(name, "")});
    const auto target = name.substr(name.rfind(".wh.") + 4);
    CHECK(unpack_error({whiteout}, root) ==
          fmt::format("failed to unpack layer whiteout.tar.gz: entry \"{}\" is a whiteout of \"{}\", which names no "
                      "file of its directory",
                      name, target));
    CHECK(read(rootfs / "neighbour" / "kept") == "another image");
    CHECK(read(root / "sub" / "kept") == "lower layer");
  }
}

TEST_CASE("setuid, setgid and sticky bits are dropped, whoever unpacks") {
  std::vector<image::Ownership> ownerships{image::Ownership::unpacking_user};
  if (::geteuid() == 0) ownerships.push_back(image::Ownership::from_layers);
  for (const auto ownership : ownerships) {
    const auto tmp = test::scratch_directory();
    const auto root = tmp.path() / "root";
    fs::create_directories(root);
    const auto special = layer(tmp.path() / "special.tar.gz",
                               {dir("tmp", 01777), dir("shared", 02775), Item{"su", 'f', "x", 04755},
                                Item{"sg", 'f', "x", 02755}, Item{"shared/both", 'f', "x", 06711}});
    const auto unpacked = image::unpack_layers({special}, root, ownership);
    REQUIRE_MESSAGE(unpacked.has_value(), unpacked.error().message);
    const auto mode = [&](const char* name) {
      struct stat info {};
      REQUIRE(::lstat((root / name).c_str(), &info) == 0);
      return info.st_mode & 07777;
    };
    CHECK(mode("tmp") == 0777);
    CHECK(mode("shared") == 0775);
    CHECK(mode("su") == 0755);
    CHECK(mode("sg") == 0755);
    CHECK(mode("shared/both") == 0711);
  }
}

TEST_CASE("the device-code check's layer reader names entries as the unpacker does and refuses ..") {
  const auto tmp = test::scratch_directory();
  std::vector<std::string> seen;
  const image::LayerFileFilter all = [](std::string_view, std::span<const std::byte>) { return true; };
  const image::LayerFileVisitor remember = [&](std::string_view path, std::string_view) -> Result<void> {
    seen.emplace_back(path);
    return {};
  };
  const auto fine = layer(tmp.path() / "fine.tar.gz", {file("./usr//lib/a"), file("/opt/b")});
  REQUIRE(image::read_layer_files(fine.path, "fine", all, remember));
  CHECK(seen == std::vector<std::string>{"usr/lib/a", "opt/b"});

  seen.clear();
  const auto escape = layer(tmp.path() / "escape.tar.gz", {file("usr/../../etc/x")});
  const auto read_escape = image::read_layer_files(escape.path, "escape", all, remember);
  REQUIRE_FALSE(read_escape.has_value());
  CHECK(read_escape.error().message == "failed to read layer escape: entry \"usr/../../etc/x\" leaves the image root");
  CHECK(seen.empty());
}

TEST_CASE("symlinks out of the root are never followed: not to write, not to remove, not to replace") {
  const auto tmp = test::scratch_directory();
  const auto outside = tmp.path() / "outside";
  test::write_file(outside / "victim", "precious");
  const auto root = tmp.path() / "root";
  fs::create_directories(root);
  const auto links = layer(tmp.path() / "links.tar.gz",
                           {symlink_to("evil", outside.string()), symlink_to("evil-file", (outside / "victim").string()),
                            symlink_to("relative", "../../outside")});
  REQUIRE(image::unpack_layers({links}, root, image::Ownership::unpacking_user));

  const auto through = layer(tmp.path() / "through.tar.gz", {file("evil/pwned")});
  const auto written = unpack_error({through}, root);
  CHECK(written.starts_with("failed to unpack layer through.tar.gz: entry \"evil/pwned\": "));
  CHECK_FALSE(fs::exists(outside / "pwned"));

  const auto relative = layer(tmp.path() / "relative.tar.gz", {file("relative/pwned")});
  CHECK(unpack_error({relative}, root).starts_with("failed to unpack layer relative.tar.gz: entry \"relative/pwned\": "));
  CHECK_FALSE(fs::exists(outside / "pwned"));

  const auto removal = layer(tmp.path() / "removal.tar.gz", {file("evil/.wh.victim")});
  CHECK(unpack_error({removal}, root) ==
        "failed to unpack layer removal.tar.gz: entry \"evil/.wh.victim\" goes through the symlink \"evil\"");
  const auto opaque = layer(tmp.path() / "opaque.tar.gz", {file("evil/.wh..wh..opq")});
  CHECK(unpack_error({opaque}, root) ==
        "failed to unpack layer opaque.tar.gz: entry \"evil/.wh..wh..opq\" goes through the symlink \"evil\"");
  CHECK(read(outside / "victim") == "precious");

  // A file over a symlink replaces the symlink; the file it pointed at is untouched.
  const auto replace = layer(tmp.path() / "replace.tar.gz", {file("evil-file", "mine")});
  REQUIRE(image::unpack_layers({replace}, root, image::Ownership::unpacking_user));
  CHECK_FALSE(fs::is_symlink(root / "evil-file"));
  CHECK(read(root / "evil-file") == "mine");
  CHECK(read(outside / "victim") == "precious");

  // Inside the image an absolute symlink resolves against the image's root, not the host's.
  CHECK_FALSE(image::exists_in_rootfs(root, "/evil/victim"));
  fs::create_directories(root / "usr" / "bin");
  test::write_file(root / "usr" / "bin" / "dash", "");
  fs::create_symlink("/usr/bin/dash", root / "usr" / "bin" / "sh");
  fs::create_symlink("../../../../../usr/bin", root / "bin");
  CHECK(image::exists_in_rootfs(root, "/bin/sh"));
}

TEST_CASE("device nodes are refused, naming the entry") {
  const auto tmp = test::scratch_directory();
  const auto root = tmp.path() / "root";
  fs::create_directories(root);
  const auto devices = layer(tmp.path() / "dev.tar.gz", {dir("dev"), Item{"dev/null", 'c', {}, 0666}});
  CHECK(unpack_error({devices}, root) ==
        "failed to unpack layer dev.tar.gz: entry \"dev/null\" is a device node, which a builder image may not carry");
  CHECK_FALSE(fs::exists(root / "dev" / "null"));
}

TEST_CASE("the cached rootfs is made once per manifest, and a failed unpack leaves nothing behind") {
  const auto tmp = test::scratch_directory();
  auto cache = image::BlobCache::open(tmp.path() / "cache");
  REQUIRE(cache);
  const auto manifest = oci::Digest::sha256_of("manifest");
  const auto good = layer(tmp.path() / "good.tar.gz", {dir("bin"), file("bin/sh", "shell")});
  const auto good_digest = oci::Digest::sha256_of("good layer");
  std::atomic<int> asked{0};
  const image::LayerFiles layers = [&]() -> Result<std::vector<image::LayerFile>> {
    ++asked;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the others wait on the lock meanwhile
    return std::vector<image::LayerFile>{good};
  };

  // A staging directory of a process that no longer exists, as a killed unpack leaves it.
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  REQUIRE(child > 0);
  REQUIRE(::waitpid(child, nullptr, 0) == child);
  const auto stale = (*cache)->root() / "rootfs" / fmt::format(".{}.tmp-{}-abc", manifest.hex(), child);
  test::write_file(stale / "half", "made");

  std::vector<Result<fs::path>> results(6, fail("not run"));
  {
    std::vector<std::jthread> threads;
    for (std::size_t i = 0; i < results.size(); ++i) {
      threads.emplace_back([&, i] {
        results[i] = image::unpacked_rootfs(**cache, manifest, {good_digest}, layers, image::Ownership::unpacking_user);
      });
    }
  }
  CHECK(asked.load() == 1);
  const auto expected = (*cache)->root() / "rootfs" / manifest.hex();
  for (const auto& result : results) {
    REQUIRE_MESSAGE(result.has_value(), result.error().message);
    CHECK(*result == expected);
  }
  CHECK(read(expected / "bin" / "sh") == "shell");
  CHECK(listing((*cache)->root() / "rootfs") == std::vector<std::string>{manifest.hex(), manifest.hex() + ".layers",
                                                                         manifest.hex() + "/bin",
                                                                         manifest.hex() + "/bin/sh"});
  CHECK(read((*cache)->root() / "rootfs" / (manifest.hex() + ".layers")) == good_digest.str() + "\n");

  const auto other = oci::Digest::sha256_of("other manifest");
  const auto bad = layer(tmp.path() / "bad.tar.gz", {file("a"), file("../escape")});
  const auto failed = image::unpacked_rootfs(
      **cache, other, {good_digest}, [&]() -> Result<std::vector<image::LayerFile>> { return std::vector<image::LayerFile>{bad}; },
      image::Ownership::unpacking_user);
  REQUIRE_FALSE(failed.has_value());
  CHECK(failed.error().message == "failed to unpack layer bad.tar.gz: entry \"../escape\" leaves the image root");
  CHECK(listing((*cache)->root() / "rootfs").size() == 4);  // neither the rootfs nor its staging directory
}

TEST_CASE("a cached rootfs without its marker, or made from other layers, is unpacked again") {
  const auto tmp = test::scratch_directory();
  auto cache = image::BlobCache::open(tmp.path() / "cache");
  REQUIRE(cache);
  const auto manifest = oci::Digest::sha256_of("manifest");
  const auto lower = oci::Digest::sha256_of("lower");
  const auto upper = oci::Digest::sha256_of("upper");
  const auto good = layer(tmp.path() / "good.tar.gz", {dir("bin"), file("bin/sh", "shell")});
  int asked = 0;
  const image::LayerFiles layers = [&]() -> Result<std::vector<image::LayerFile>> {
    ++asked;
    return std::vector<image::LayerFile>{good};
  };
  const auto rootfs = (*cache)->root() / "rootfs";
  const auto target = rootfs / manifest.hex();
  const auto unpack = [&](const std::vector<oci::Digest>& digests) {
    auto root = image::unpacked_rootfs(**cache, manifest, digests, layers, image::Ownership::unpacking_user);
    REQUIRE_MESSAGE(root.has_value(), root.error().message);
    CHECK(*root == target);
  };

  // Half made, as a crash between the rename and the marker (or another tool) leaves it.
  test::write_file(target / "bin" / "half", "partial");
  unpack({lower, upper});
  CHECK(asked == 1);
  CHECK(listing(target) == std::vector<std::string>{"bin", "bin/sh"});
  CHECK(read(rootfs / (manifest.hex() + ".layers")) == lower.str() + "\n" + upper.str() + "\n");

  unpack({lower, upper});
  CHECK(asked == 1);  // complete: reused

  test::write_file(target / "bin" / "planted", "x");
  unpack({upper, lower});  // the marker names other layers
  CHECK(asked == 2);
  CHECK(listing(target) == std::vector<std::string>{"bin", "bin/sh"});

  test::write_file(rootfs / (manifest.hex() + ".layers"), upper.str() + "\n");
  unpack({upper, lower});
  CHECK(asked == 3);
  CHECK(listing(rootfs) == std::vector<std::string>{manifest.hex(), manifest.hex() + ".layers", manifest.hex() + "/bin",
                                                    manifest.hex() + "/bin/sh"});
}

TEST_CASE("the cache is its user's alone: directories 0700, blobs, documents and markers 0600") {
  const auto tmp = test::scratch_directory();
  const auto mode = [](const fs::path& path) {
    struct stat info {};
    REQUIRE(::stat(path.c_str(), &info) == 0);
    return info.st_mode & 07777;
  };
  // One made before (0755, as earlier versions made it) is closed when opened.
  fs::create_directories(tmp.path() / "cache" / "blobs" / "sha256");
  fs::permissions(tmp.path() / "cache", fs::perms(0755));
  fs::permissions(tmp.path() / "cache" / "blobs", fs::perms(0755));
  auto cache = image::BlobCache::open(tmp.path() / "cache");
  REQUIRE(cache);
  const auto root = (*cache)->root();
  for (const auto& directory : {root, root / "blobs", root / "blobs" / "sha256", root / "locks"}) {
    CAPTURE(directory);
    CHECK(mode(directory) == 0700);
  }

  image::MemoryReader source("registry.example.org/builder");
  const auto config = source.add(R"({"architecture":"amd64","os":"linux"})", oci::media_type::config);
  const auto layer_bytes = std::string("not really a layer");
  const auto blob = source.add(layer_bytes, oci::media_type::layer_gzip);
  REQUIRE((*cache)->read_document(source, config));
  CHECK(mode((*cache)->blob_path(config.digest)) == 0600);
  const auto fetched = (*cache)->get(source, blob);
  REQUIRE_MESSAGE(fetched.has_value(), fetched.error().message);
  CHECK(mode(*fetched) == 0600);

  const auto good = layer(tmp.path() / "good.tar.gz", {dir("bin"), file("bin/sh", "shell")});
  const auto manifest = oci::Digest::sha256_of("manifest");
  REQUIRE(image::unpacked_rootfs(**cache, manifest, {blob.digest},
                                 [&]() -> Result<std::vector<image::LayerFile>> {
                                   return std::vector<image::LayerFile>{good};
                                 },
                                 image::Ownership::unpacking_user));
  CHECK(mode(root / "rootfs") == 0700);
  CHECK(mode(root / "rootfs" / (manifest.hex() + ".layers")) == 0600);
}
