#include <doctest/doctest.h>

#include <filesystem>
#include <map>

#include <archive.h>
#include <archive_entry.h>
#include <unistd.h>

#include "hwimg/oci/layer_writer.hpp"
#include "hwimg/util/files.hpp"
#include "test_support.hpp"

using namespace hwimg;
namespace fs = std::filesystem;

namespace {

struct TarEntry {
  std::string name;
  unsigned mode;
  long uid, gid;
  long long mtime;
  std::string symlink, hardlink, uname;
};

// Reads a stored layer back with libarchive (gzip, zstd or plain), listing its entries in order.
std::vector<TarEntry> read_layer(const oci::Layout& layout, const oci::Descriptor& d) {
  std::vector<TarEntry> entries;
  archive* a = archive_read_new();
  archive_read_support_filter_all(a);
  archive_read_support_format_tar(a);
  REQUIRE(archive_read_open_filename(a, layout.blob_path(d.digest).c_str(), 65536) == ARCHIVE_OK);
  archive_entry* e = nullptr;
  while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
    entries.push_back({archive_entry_pathname(e), archive_entry_mode(e), archive_entry_uid(e), archive_entry_gid(e),
                       archive_entry_mtime(e), archive_entry_symlink(e) ? archive_entry_symlink(e) : "",
                       archive_entry_hardlink(e) ? archive_entry_hardlink(e) : "",
                       archive_entry_uname(e) ? archive_entry_uname(e) : ""});
  }
  archive_read_free(a);
  return entries;
}

}  // namespace

TEST_CASE("normalize_image_path keeps paths inside the image root") {
  CHECK(oci::normalize_image_path("/opt/x/../y/./z").value() == "opt/y/z");
  CHECK(oci::normalize_image_path("/").value() == "");
  CHECK(oci::normalize_image_path("/opt/../../etc").error().message == "\"/opt/../../etc\" escapes the image root");
}

TEST_CASE("layers are reproducible tars: sorted, parents first, root-owned, one mtime, links kept") {
  const auto tmp = test::scratch_directory();
  const auto src = tmp.path() / "src";
  test::write_file(src / "b.txt", "bee");
  test::write_file(src / "a-b", "dash");
  test::write_file(src / "a" / "z", "zed");
  fs::permissions(src / "b.txt", fs::perms(0750));
  fs::create_symlink("b.txt", src / "link");
  fs::create_hard_link(src / "b.txt", src / "c-hard");
  auto layout = oci::Layout::open(tmp.path() / "layout", oci::OpenMode::create);
  REQUIRE(layout);

  oci::LayerOptions options;
  options.mtime = 1700000000;
  const auto first = oci::write_layer(*layout, {{src, "/opt/app"}}, options);
  REQUIRE(first);
  const auto entries = read_layer(*layout, first->descriptor);
  std::vector<std::string> names;
  for (const auto& e : entries) names.push_back(e.name);
  CHECK(names == std::vector<std::string>{"opt/", "opt/app/", "opt/app/a/", "opt/app/a-b", "opt/app/a/z",
                                          "opt/app/b.txt", "opt/app/c-hard", "opt/app/link"});
  for (const auto& e : entries) {
    CHECK(e.uid == 0);
    CHECK(e.gid == 0);
    CHECK(e.uname.empty());
    CHECK(e.mtime == 1700000000);
  }
  CHECK((entries[5].mode & 07777) == 0750);
  CHECK(entries[6].hardlink == "opt/app/b.txt");
  CHECK(entries[7].symlink == "b.txt");

  // Same content with other mtimes and another compression thread count: the same bytes.
  ::sleep(1);
  test::write_file(src / "a" / "z", "zed");
  options.compression.threads = 1;
  const auto second = oci::write_layer(*layout, {{src, "/opt/app"}}, options);
  REQUIRE(second);
  CHECK(second->descriptor.digest == first->descriptor.digest);
  CHECK(second->diff_id == first->diff_id);
  CHECK(first->descriptor.media_type == "application/vnd.oci.image.layer.v1.tar+gzip");
}

TEST_CASE("a directory packed at the image root gives relative names, as tar readers expect") {
  const auto tmp = test::scratch_directory();
  const auto src = tmp.path() / "src";
  test::write_file(src / "bin" / "tool", "#!/bin/sh\n", 0755);
  test::write_file(src / "etc" / "marker", "x");
  auto layout = oci::Layout::open(tmp.path() / "layout", oci::OpenMode::create);
  REQUIRE(layout);
  const auto written = oci::write_layer(*layout, {{src, "/"}}, {});
  REQUIRE(written);
  std::vector<std::string> names;
  for (const auto& e : read_layer(*layout, written->descriptor)) names.push_back(e.name);
  CHECK(names == std::vector<std::string>{"bin/", "bin/tool", "etc/", "etc/marker"});
}

TEST_CASE("the diff id is the digest of the uncompressed tar for every compression") {
  const auto tmp = test::scratch_directory();
  test::write_file(tmp.path() / "src" / "f", std::string(3 << 20, 'x'));  // several gzip blocks
  auto layout = oci::Layout::open(tmp.path() / "layout", oci::OpenMode::create);
  REQUIRE(layout);
  oci::LayerOptions options;
  options.compression.compression = oci::Compression::none;
  const auto plain = oci::write_layer(*layout, {{tmp.path() / "src", "/d"}}, options);
  REQUIRE(plain);
  CHECK(plain->diff_id == plain->descriptor.digest);
  for (const auto compression : {oci::Compression::gzip, oci::Compression::zstd}) {
    options.compression.compression = compression;
    const auto packed = oci::write_layer(*layout, {{tmp.path() / "src", "/d"}}, options);
    REQUIRE(packed);
    CHECK(packed->diff_id == plain->diff_id);
    CHECK(packed->descriptor.size < plain->descriptor.size / 10);
    // Blocks are compressed independently: the thread count does not change a byte.
    auto single = options;
    single.compression.threads = 1;
    const auto one_thread = oci::write_layer(*layout, {{tmp.path() / "src", "/d"}}, single);
    REQUIRE(one_thread);
    CHECK(one_thread->descriptor.digest == packed->descriptor.digest);
    CHECK(read_layer(*layout, packed->descriptor).size() == 2);
  }
}

TEST_CASE("a path written twice in one layer is refused") {
  const auto tmp = test::scratch_directory();
  test::write_file(tmp.path() / "a" / "x", "1");
  test::write_file(tmp.path() / "b" / "x", "2");
  auto layout = oci::Layout::open(tmp.path() / "layout", oci::OpenMode::create);
  REQUIRE(layout);
  const auto r = oci::write_layer(*layout, {{tmp.path() / "a", "/d"}, {tmp.path() / "b", "/d"}}, {});
  REQUIRE_FALSE(r);
  CHECK(r.error().message.ends_with("\"/d\" is written twice in one layer"));
}

TEST_CASE("symlinks out of the source tree are stored as links, never followed out") {
  const auto tmp = test::scratch_directory();
  const auto outside = tmp.path() / "outside";
  test::write_file(outside / "secret", "must not be packed");
  const auto src = tmp.path() / "src";
  test::write_file(src / "kept", "in");
  fs::create_symlink(outside, src / "dir-out");                      // absolute, to a directory
  fs::create_symlink(outside / "secret", src / "file-out");          // absolute, to a file
  fs::create_symlink("../outside/secret", src / "relative-out");     // relative, climbing out
  fs::create_symlink("/etc/passwd", src / "etc-passwd");             // absolute, into the host
  fs::create_symlink(outside, tmp.path() / "source-link");           // the layer source itself
  auto layout = oci::Layout::open(tmp.path() / "layout", oci::OpenMode::create);
  REQUIRE(layout);

  const auto written = oci::write_layer(*layout, {{src, "/app"}, {tmp.path() / "source-link", "/linked"}}, {});
  REQUIRE(written);
  std::map<std::string, std::string> links;
  for (const auto& e : read_layer(*layout, written->descriptor)) {
    CHECK(e.name.find("secret") == std::string::npos);
    if (!e.symlink.empty()) links[e.name] = e.symlink;
  }
  CHECK(links == std::map<std::string, std::string>{{"app/dir-out", outside.string()},
                                                    {"app/etc-passwd", "/etc/passwd"},
                                                    {"app/file-out", (outside / "secret").string()},
                                                    {"app/relative-out", "../outside/secret"},
                                                    {"linked", outside.string()}});
  CHECK(written->uncompressed_size < 8 * 1024);  // headers and "in": no file's content came from outside
}
