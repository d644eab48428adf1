#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "hwimg/hw/ar_archive.hpp"
#include "hwimg/hw/device_code.hpp"
#include "hwimg/hw/fatbin_check.hpp"
#include "hwimg/util/files.hpp"
#include "test_support.hpp"

using namespace hwimg::hw;

namespace {

std::string fixture_text(const std::string& name) {
  return hwimg::util::read_file(std::string(HWIMG_TEST_DATA_DIR "/fatbin/") + name).value();
}

std::span<const std::byte> bytes_of(const std::string& text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}

hwimg::Result<FileDeviceCode> read_fixture(const std::string& name) {
  const auto text = fixture_text(name);
  return read_device_code(bytes_of(text), device_file_kind(bytes_of(text), name), name);
}

std::vector<std::string> names(std::span<const GpuTarget> targets) {
  std::vector<std::string> result;
  for (const auto& target : targets) {
    result.push_back(target.name());
  }
  return result;
}

std::vector<GpuTarget> declared(std::initializer_list<std::string_view> list) {
  std::vector<GpuTarget> result;
  for (const auto name : list) {
    result.push_back(parse_gpu_target(name).value());
  }
  return result;
}

using Strings = std::vector<std::string>;

// A GNU archive member header: name, zeroed date/uid/gid, mode, size, "`\n".
std::string ar_member(std::string name, const std::string& data) {
  name.resize(16, ' ');
  std::string size = std::to_string(data.size());
  size.resize(10, ' ');
  std::string header = name + std::string(12, '0') + std::string(6, '0') + std::string(6, '0') + "100644  " + size +
                       "`\n" + data;
  if (data.size() % 2 == 1) {
    header += '\n';
  }
  return header;
}

}  // namespace

TEST_CASE("the kind of a file comes from its magic, and .ptx from its name") {
  CHECK(read_fixture("two-modules.so").has_value());
  const auto kind = [](const std::string& name) {
    const auto text = fixture_text(name);
    return device_file_kind(bytes_of(text), name);
  };
  CHECK(kind("two-modules.so") == DeviceFileKind::host_elf);
  CHECK(kind("libkernels.a") == DeviceFileKind::archive);
  CHECK(kind("k-sm90a.cubin") == DeviceFileKind::cubin);
  CHECK(kind("k-sm80-compute80.fatbin") == DeviceFileKind::fatbin);
  CHECK(kind("k-compute86.ptx") == DeviceFileKind::ptx);
  CHECK(kind("README.md") == DeviceFileKind::none);
  CHECK(device_file_kind(bytes_of(std::string("!<thin>\n")), "thin.a") == DeviceFileKind::none);
}

TEST_CASE("each fatbin container of a host binary is a module; a GPU runs only what they all have") {
  const auto code = read_fixture("two-modules.so").value();
  REQUIRE(code.modules.size() == 2);
  CHECK(names(code.modules[0].targets) == Strings{"sm_80"});
  CHECK(names(code.modules[1].targets) == Strings{"sm_80", "sm_90"});
  CHECK(code.modules[0].where.starts_with("fatbin container at offset "));
  CHECK(names(common_targets(code.modules)) == Strings{"sm_80"});
}

TEST_CASE("a variant whose modules disagree with its targets is refused, naming the file and the module") {
  const auto dir = hwimg::test::scratch_directory("hwimg-device-code");
  hwimg::test::write_file(dir.path() / "lib" / "libtwo.so", fixture_text("two-modules.so"));
  const auto scan = scan_device_code(dir.path()).value();
  CHECK(names(scan.common_targets()) == Strings{"sm_80"});
  const auto refused = check_device_code("cuda13.0-sm90-x86-64-v1", declared({"sm_80", "sm_90"}), scan);
  REQUIRE_FALSE(refused);
  const auto file = (dir.path() / "lib" / "libtwo.so").string();
  const auto first = read_fixture("two-modules.so")->modules[0].where;
  CHECK(refused.error().message ==
        "failed to check the device code of variant cuda13.0-sm90-x86-64-v1: it declares sm_80, sm_90, but not every "
        "module of device code has them, and a GPU runs only what each module has: " +
            file + " (" + first + ") has sm_80, missing sm_90");
  // What every module has may be declared; a target only some modules have may not.
  CHECK(check_device_code("cuda13.0-sm80-x86-64-v1", declared({"sm_80"}), scan));
}

TEST_CASE("a static library's members are read, long names resolved") {
  const auto code = read_fixture("libkernels.a").value();
  REQUIRE(code.modules.size() == 2);
  CHECK(code.modules[0].where.starts_with("member a-long-member-name-kernels.o, fatbin container at offset "));
  CHECK(code.modules[1].where.starts_with("member b.o, fatbin container at offset "));
  for (const auto& module : code.modules) {
    CHECK(names(module.targets) == Strings{"sm_80", "sm_90"});
  }
}

TEST_CASE("standalone cubin, fatbin and PTX files loaded at run time are modules") {
  CHECK(names(read_fixture("k-sm90a.cubin")->modules.at(0).targets) == Strings{"sm_90a"});
  const auto fatbin = read_fixture("k-sm80-compute80.fatbin").value();
  REQUIRE(fatbin.modules.size() == 1);
  CHECK(names(fatbin.modules[0].targets) == Strings{"sm_80", "compute_80"});
  CHECK(names(read_fixture("k-compute86.ptx")->modules.at(0).targets) == Strings{"compute_86"});

  const auto dir = hwimg::test::scratch_directory("hwimg-device-code");
  for (const auto* name : {"libkernels.a", "k-sm80-compute80.fatbin"}) {
    hwimg::test::write_file(dir.path() / "share" / name, fixture_text(name));
  }
  const auto scan = scan_device_code(dir.path()).value();
  CHECK(scan.modules.size() == 3);
  CHECK(check_device_code("v", declared({"sm_80"}), scan));
}

TEST_CASE("a PTX file without a target is an error that names it") {
  const std::string text = ".version 9.0\n.address_size 64\n";
  CHECK(read_device_code(bytes_of(text), DeviceFileKind::ptx, "bad.ptx").error().message ==
        "failed to read PTX bad.ptx: no `.target sm_XY` directive");
}

TEST_CASE("a target that exists only as -rdc code is named as such when it is missing") {
  DeviceCodeScan scan;
  scan.modules.push_back({"bin/app", {"fatbin container at offset 64", declared({"sm_120"})}});
  scan.relocatable_only.emplace_back("bin/app", parse_gpu_target("compute_120").value());
  CHECK(check_device_code("v", declared({"sm_120", "compute_120"}), scan).error().message ==
        "failed to check the device code of variant v: its files embed sm_120 but it declares sm_120, compute_120 "
        "(missing compute_120; compute_120 is in bin/app only as relocatable (-rdc) code in __nv_relfatbin, which "
        "the CUDA runtime never loads); the code: bin/app (fatbin container at offset 64)");
}

TEST_CASE("archives: symbol tables skipped, BSD names, odd sizes padded, truncation named") {
  const std::string archive = "!<arch>\n" + ar_member("/", "symbols") + ar_member("#1/8", std::string("bsd.o\0\0\0odd", 11)) +
                              ar_member("plain.o/", "xy");
  const auto members = read_ar_members(bytes_of(archive), "lib.a").value();
  REQUIRE(members.size() == 2);
  CHECK(members[0].name == "bsd.o");
  CHECK(members[0].data.size() == 3);
  CHECK(members[1].name == "plain.o");
  CHECK(members[1].data.size() == 2);

  const std::string truncated = "!<arch>\n" + ar_member("big.o/", "0123456789").substr(0, 65);
  CHECK(read_ar_members(bytes_of(truncated), "lib.a").error().message ==
        "failed to read archive lib.a: member at offset 8 has size '10', beyond the end of the file");
  const std::string bad_name = "!<arch>\n" + ar_member("/99", "xy");
  CHECK(read_ar_members(bytes_of(bad_name), "lib.a").error().message ==
        "failed to read archive lib.a: member at offset 8 names long name '/99' outside the name table");
}
