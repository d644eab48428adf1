// OverlayXattrFilter: overlayfs's own xattrs (user.overlay.*, trusted.overlay.*) taken out of a
// layer's tar as rootless buildah leaves them in, everything else passed through byte for byte;
// and the scan of a layer made by others (blob_needs) naming the entries that carry them.

#include <archive.h>
#include <archive_entry.h>
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "hwimg/image/overlay_xattr_filter.hpp"
#include "hwimg/verify/judge.hpp"
#include "hwimg/verify/layer_needs.hpp"
#include "hwimg/verify/needs_cache.hpp"
#include "test_support.hpp"

using namespace hwimg;

namespace {

struct Entry {
  std::string name;
  char kind = 'f';  // f file, d directory, l symlink
  std::string content;
  std::map<std::string, std::string> xattrs;
};

la_ssize_t append_to(archive*, void* client, const void* buffer, std::size_t size) {
  static_cast<std::string*>(client)->append(static_cast<const char*>(buffer), size);
  return static_cast<la_ssize_t>(size);
}

// A pax tar as libarchive writes one (SCHILY.xattr. and LIBARCHIVE.xattr. records for each xattr).
std::string make_tar(const std::vector<Entry>& entries) {
  std::string bytes;
  archive* a = archive_write_new();
  REQUIRE(archive_write_set_format_pax_restricted(a) == ARCHIVE_OK);
  REQUIRE(archive_write_set_bytes_in_last_block(a, 1) == ARCHIVE_OK);
  REQUIRE(archive_write_open(a, &bytes, nullptr, append_to, nullptr) == ARCHIVE_OK);
  for (const auto& item : entries) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, item.name.c_str());
    archive_entry_set_mtime(e, 1700000000, 0);
    if (item.kind == 'd') {
      archive_entry_set_mode(e, AE_IFDIR | 0755);
    } else if (item.kind == 'l') {
      archive_entry_set_mode(e, AE_IFLNK | 0777);
      archive_entry_set_symlink(e, item.content.c_str());
    } else {
      archive_entry_set_mode(e, AE_IFREG | 0644);
      archive_entry_set_size(e, static_cast<la_int64_t>(item.content.size()));
    }
    for (const auto& [name, value] : item.xattrs) archive_entry_xattr_add_entry(e, name.c_str(), value.data(), value.size());
    REQUIRE(archive_write_header(a, e) == ARCHIVE_OK);
    if (item.kind == 'f' && !item.content.empty()) {
      REQUIRE(archive_write_data(a, item.content.data(), item.content.size()) == static_cast<la_ssize_t>(item.content.size()));
    }
    archive_entry_free(e);
  }
  REQUIRE(archive_write_close(a) == ARCHIVE_OK);
  archive_write_free(a);
  return bytes;
}

std::vector<Entry> read_tar(const std::string& bytes) {
  std::vector<Entry> entries;
  archive* a = archive_read_new();
  REQUIRE(archive_read_support_format_tar(a) == ARCHIVE_OK);
  REQUIRE(archive_read_open_memory(a, bytes.data(), bytes.size()) == ARCHIVE_OK);
  archive_entry* e = nullptr;
  int status = ARCHIVE_OK;
  while ((status = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
    Entry item;
    item.name = archive_entry_pathname(e);
    item.kind = archive_entry_filetype(e) == AE_IFDIR ? 'd' : archive_entry_filetype(e) == AE_IFLNK ? 'l' : 'f';
    if (item.kind == 'l') item.content = archive_entry_symlink(e);
    archive_entry_xattr_reset(e);
    const char* name = nullptr;
    const void* value = nullptr;
    std::size_t size = 0;
    while (archive_entry_xattr_next(e, &name, &value, &size) == ARCHIVE_OK) {
      item.xattrs[name] = std::string(static_cast<const char*>(value), size);
    }
    char buffer[4096];
    la_ssize_t got = 0;
    while ((got = archive_read_data(a, buffer, sizeof buffer)) > 0) item.content.append(buffer, static_cast<std::size_t>(got));
    REQUIRE(got == 0);
    entries.push_back(std::move(item));
  }
  CHECK(status == ARCHIVE_EOF);
  archive_read_free(a);
  return entries;
}

// The filter's output, fed `piece` bytes at a time.
struct Filtered {
  Result<void> status;
  std::string bytes;
  std::vector<std::string> dropped;
};

Filtered filter(std::string_view tar, std::size_t piece) {
  Filtered out;
  image::OverlayXattrFilter filter([&](std::string_view bytes) -> Result<void> {
    out.bytes.append(bytes);
    return {};
  });
  for (std::size_t at = 0; at < tar.size(); at += piece) {
    out.status = filter.write(tar.substr(at, piece));
    if (!out.status) return out;
  }
  out.status = filter.finish();
  out.dropped = filter.dropped();
  return out;
}

// A ustar header block of a hand-made tar (for what libarchive will not write).
std::string header(std::string_view name, std::size_t size, char typeflag) {
  std::string block(512, '\0');
  const auto put = [&](std::size_t offset, std::string_view text) { block.replace(offset, text.size(), text); };
  put(0, name);
  put(100, "0000644");
  put(124, fmt::format("{:011o}", size));
  put(136, fmt::format("{:011o}", 1700000000));
  block[156] = typeflag;
  put(257, std::string_view("ustar\0" "00", 8));
  put(148, "        ");
  unsigned sum = 0;
  for (const char c : block) sum += static_cast<unsigned char>(c);
  put(148, fmt::format("{:06o}", sum) + std::string("\0 ", 2));
  return block;
}

std::string pad(std::string data) {
  data.resize((data.size() + 511) / 512 * 512, '\0');
  return data;
}

std::string record(std::string_view key, std::string_view value) {
  // "LEN key=value\n", LEN counting itself.
  const auto rest = fmt::format(" {}={}\n", key, value);
  auto length = rest.size() + 1;
  while (std::to_string(length).size() + rest.size() != length) ++length;
  return std::to_string(length) + rest;
}

}  // namespace

TEST_CASE("overlayfs's xattrs are taken out of a layer's tar; every other xattr, name and byte stays") {
  const std::string big(600 * 1024 + 3, 'b');
  const auto tar = make_tar({
      {"opt/", 'd', "", {{"user.overlay.origin", ""}, {"user.keep", "v"}}},
      {"opt/f", 'f', std::string(3000, 'x'), {{"trusted.overlay.impure", "y"}}},
      {"opt/big", 'f', big, {}},
      {"opt/link", 'l', "big", {{"user.overlay.redirect", "x"}, {"security.capability", std::string("\x01\x00\x00\x02", 4)}}},
  });
  for (const std::size_t piece : {std::size_t{7}, std::size_t{512}, std::size_t{1} << 20}) {
    CAPTURE(piece);
    const auto out = filter(tar, piece);
    REQUIRE_MESSAGE(out.status.has_value(), out.status.error().message);
    const auto entries = read_tar(out.bytes);
    REQUIRE(entries.size() == 4);
    CHECK(entries[0].name == "opt/");
    CHECK(entries[0].xattrs == std::map<std::string, std::string>{{"user.keep", "v"}});
    CHECK(entries[1].xattrs.empty());
    CHECK(entries[1].content == std::string(3000, 'x'));
    CHECK(entries[2].content == big);
    CHECK(entries[3].content == "big");
    CHECK(entries[3].xattrs == std::map<std::string, std::string>{{"security.capability", std::string("\x01\x00\x00\x02", 4)}});
    CHECK(out.dropped == std::vector<std::string>{"opt/ (user.overlay.origin)", "opt/f (trusted.overlay.impure)",
                                                  "opt/link (user.overlay.redirect)"});
  }
}

TEST_CASE("a tar without overlayfs xattrs comes out byte for byte; one whose pax header held only them, as if never there") {
  const std::vector<Entry> plain{{"opt/", 'd', "", {}}, {"opt/f", 'f', "data", {{"user.keep", "v"}}}};
  const auto tar = make_tar(plain);
  const auto same = filter(tar, 100);
  REQUIRE(same.status.has_value());
  CHECK(same.bytes == tar);
  CHECK(same.dropped.empty());

  auto leaked = plain;
  leaked[0].xattrs = {{"user.overlay.origin", ""}, {"user.overlay.impure", "y"}};
  const auto out = filter(make_tar(leaked), 100);
  REQUIRE(out.status.has_value());
  CHECK(out.bytes == tar);
  CHECK(out.dropped == std::vector<std::string>{"opt/ (user.overlay.impure, user.overlay.origin)"});
}

TEST_CASE("a pax size record says how much data follows, whatever the ustar header says") {
  // Data that looks like a tar header must pass through as data, not be read as the next entry.
  const auto inner = header("fake", 0, '0');
  const auto pax = record("size", "512") + record("SCHILY.xattr.user.overlay.origin", "");
  const auto tar = header("PaxHeaders/f", pax.size(), 'x') + pad(pax) + header("f", 0, '0') + inner +
                   header("g", 0, '0') + std::string(1024, '\0');
  const auto out = filter(tar, 64);
  REQUIRE_MESSAGE(out.status.has_value(), out.status.error().message);
  const auto entries = read_tar(out.bytes);
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].name == "f");
  CHECK(entries[0].content == inner);
  CHECK(entries[1].name == "g");
  CHECK(out.dropped == std::vector<std::string>{"f (user.overlay.origin)"});
}

TEST_CASE("a tar that is not one is refused, saying where") {
  const auto tar = make_tar({{"opt/f", 'f', std::string(2000, 'x'), {{"user.overlay.origin", ""}}}});

  const auto cut = filter(std::string_view(tar).substr(0, 2048), 512);
  REQUIRE_FALSE(cut.status.has_value());
  CHECK(cut.status.error().message.starts_with("the tar ends inside an entry"));

  auto corrupt = tar;
  corrupt[0] = 'Z';  // the first header's checksum no longer adds up
  const auto bad = filter(corrupt, 512);
  REQUIRE_FALSE(bad.status.has_value());
  CHECK(bad.status.error().message == "no tar header at byte 0 (its checksum or size field is wrong)");

  const std::string broken_pax = "12 path\n";
  const auto malformed = filter(header("PaxHeaders/f", broken_pax.size(), 'x') + pad(broken_pax), 512);
  REQUIRE_FALSE(malformed.status.has_value());
  CHECK(malformed.status.error().message.starts_with("a malformed pax record"));
  CHECK(malformed.status.error().message.ends_with("in the pax header at byte 0"));

  // A pax header must describe an entry: one that only the end of the archive follows is refused,
  // whether it ends there or the end-of-archive blocks come.
  const auto leaked_only = record("SCHILY.xattr.user.overlay.origin", "");
  const auto pax_only = header("PaxHeaders/f", leaked_only.size(), 'x') + pad(leaked_only);
  const auto dangling = filter(pax_only + std::string(1024, '\0'), 512);
  REQUIRE_FALSE(dangling.status.has_value());
  CHECK(dangling.status.error().message == "a pax header that no entry follows, before the end of the archive at byte 1024");
  const auto ended = filter(pax_only, 512);
  REQUIRE_FALSE(ended.status.has_value());
  CHECK(ended.status.error().message.starts_with("the tar ends inside an entry"));

  // A size no file has (here one that would wrap around when rounded up to whole blocks).
  const auto too_big = record("size", "18446744073709551615");
  const auto wrapped = filter(header("PaxHeaders/f", too_big.size(), 'x') + pad(too_big) + header("f", 0, '0'), 512);
  REQUIRE_FALSE(wrapped.status.has_value());
  CHECK(wrapped.status.error().message ==
        "an entry of 18446744073709551615 bytes at byte 1024 (at most 4611686018427387904)");

  const auto huge = filter(header("PaxHeaders/f", 8u << 20, 'x'), 512);
  REQUIRE_FALSE(huge.status.has_value());
  CHECK(huge.status.error().message == "a pax header of 8388608 bytes at byte 0 (at most 1048576)");
}

TEST_CASE("what the sink refuses stops the filter with the sink's error") {
  const auto tar = make_tar({{"opt/f", 'f', "data", {}}});
  image::OverlayXattrFilter filter([](std::string_view) -> Result<void> { return fail("disk full"); });
  const auto status = filter.write(tar);
  REQUIRE_FALSE(status.has_value());
  CHECK(status.error().message == "disk full");
}

TEST_CASE("a layer's scan names the entries that carry overlayfs xattrs, keeps them with its needs, and says so once") {
  const auto dir = test::scratch_directory();
  std::vector<Entry> entries{
      {"opt/", 'd', "", {{"user.overlay.origin", ""}, {"user.overlay.impure", "y"}, {"user.keep", "v"}}},
      {"opt/f", 'f', "data", {{"user.keep", "v"}}},
      {"opt/link", 'l', "f", {{"trusted.overlay.redirect", "x"}}},
  };
  for (int i = 0; i < 10; ++i) entries.push_back({fmt::format("d{}/", i), 'd', "", {{"user.overlay.origin", ""}}});
  const auto tar = make_tar(entries);
  const auto blob = dir.path() / "layer.tar";
  test::write_file(blob, tar);
  const auto digest = oci::Digest::sha256_of(tar);
  const verify::NeedsCache cache(dir.path() / "cache");
  util::ThreadPool pool(1);

  const auto needs = verify::blob_needs(blob, digest, &cache, pool);
  REQUIRE_MESSAGE(needs.has_value(), needs.error().message);
  CHECK(needs->overlay_xattr_entries == 12);
  REQUIRE(needs->overlay_xattrs.size() == 8);  // the first few; all are counted
  CHECK(needs->overlay_xattrs[0] == "/opt (user.overlay.impure, user.overlay.origin)");
  CHECK(needs->overlay_xattrs[1] == "/opt/link (trusted.overlay.redirect)");
  CHECK(needs->overlay_xattrs[7] == "/d5 (user.overlay.origin)");
  const auto kept = cache.load(digest);
  REQUIRE(kept.has_value());
  CHECK(kept->overlay_xattrs == needs->overlay_xattrs);
  CHECK(kept->overlay_xattr_entries == 12);

  const auto line = verify::overlay_xattr_line(*needs, "layer " + digest.str());
  REQUIRE(line.has_value());
  CHECK(*line == "layer " + digest.str() +
                     ": 12 entries carry overlayfs's own xattrs, which rootless Docker 25 and later cannot set and so "
                     "refuses to unpack (docs/recipe.md#overlayfs-xattrs): /opt (user.overlay.impure, user.overlay.origin), "
                     "/opt/link (trusted.overlay.redirect), /d0 (user.overlay.origin), /d1 (user.overlay.origin), /d2 "
                     "(user.overlay.origin), /d3 (user.overlay.origin), /d4 (user.overlay.origin), /d5 "
                     "(user.overlay.origin), and more (12 entries in all)");
  verify::Findings findings;
  verify::judge_layer(*needs, verify::CpuLabel{"amd64", "x86-64-v1", {}, hw::X86Level::v1}, "layer x", findings);
  REQUIRE(findings.overlay_xattrs.size() == 1);
  CHECK(findings.overlay_xattrs[0].starts_with("layer x: 12 entries carry"));

  // What the filter leaves has none, and the scan says nothing.
  const auto filtered = filter(tar, 512);
  REQUIRE(filtered.status.has_value());
  const auto clean_blob = dir.path() / "clean.tar";
  test::write_file(clean_blob, filtered.bytes);
  const auto clean = verify::blob_needs(clean_blob, oci::Digest::sha256_of(filtered.bytes), nullptr, pool);
  REQUIRE(clean.has_value());
  CHECK(clean->overlay_xattr_entries == 0);
  CHECK(clean->overlay_xattrs.empty());
  CHECK_FALSE(verify::overlay_xattr_line(*clean, "layer y").has_value());

  // A hostile layer's path and xattr name reach the terminal with their control characters escaped.
  const auto hostile = make_tar({{"opt\x1b[2J/", 'd', "", {{"user.overlay.o\nrigin", ""}}}});
  const auto hostile_blob = dir.path() / "hostile.tar";
  test::write_file(hostile_blob, hostile);
  const auto escaped = verify::blob_needs(hostile_blob, oci::Digest::sha256_of(hostile), nullptr, pool);
  REQUIRE(escaped.has_value());
  REQUIRE(escaped->overlay_xattrs.size() == 1);
  // libarchive reads the LIBARCHIVE.xattr. record's name as written there, URL-encoded, beside the SCHILY. one.
  CHECK(escaped->overlay_xattrs[0] == "/opt\\x1b[2J (user.overlay.o\\nrigin, user.overlay.o%0Arigin)");

  verify::LayerNeeds one;
  one.overlay_xattrs = {"/opt (user.overlay.origin)"};
  one.overlay_xattr_entries = 1;
  CHECK(verify::overlay_xattr_line(one, "layer z")->starts_with("layer z: 1 entry carries overlayfs's own xattrs"));
  CHECK(verify::overlay_xattr_line(one, "layer z")->ends_with(": /opt (user.overlay.origin)"));
}
