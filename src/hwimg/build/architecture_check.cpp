#include "hwimg/build/architecture_check.hpp"

#include <array>
#include <filesystem>

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include "hwimg/hw/elf.hpp"
#include "hwimg/hw/elf_machine.hpp"
#include "hwimg/util/fd.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::build {
namespace fs = std::filesystem;

namespace {

// Each file under the layer's source that the CPU would run and that is not for `machine`, as
// "PATH-IN-IMAGE is a ... (LAYER)".
void check_layer(const LayerPlan& layer, std::uint16_t machine, std::string_view which,
                 std::vector<std::string>& wrong) {
  for_each_layer_file(layer, [&](const fs::path& file, const std::string& in_image) {
    const auto identity = elf_identity_of(file);
    if (!identity || !identity->is_loadable() || identity->machine == hw::elf_machine_cuda) return;
    if (identity->machine == machine && identity->elf_class == hw::ElfClass::elf64) return;
    wrong.push_back(fmt::format("{} is a {} ({}, from {})", in_image, hw::elf_file_description(*identity), which, file.string()));
  });
}

}  // namespace

std::optional<hw::ElfIdentity> elf_identity_of(const fs::path& path) {
  util::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!fd.valid()) return std::nullopt;
  std::array<std::byte, hw::elf_identity_size> head{};
  const auto got = ::pread(fd.get(), head.data(), head.size(), 0);
  if (got != static_cast<ssize_t>(head.size())) return std::nullopt;
  return hw::read_elf_identity(head);
}

void for_each_layer_file(const LayerPlan& layer,
                         const std::function<void(const fs::path&, const std::string&)>& visit) {
  std::error_code ec;
  const auto status = fs::symlink_status(layer.from, ec);
  if (fs::is_regular_file(status)) {
    visit(layer.from, layer.to);
    return;
  }
  if (!fs::is_directory(status)) return;
  for (fs::recursive_directory_iterator it(layer.from, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_symlink(ec) && it->is_regular_file(ec)) {
      const auto relative = it->path().lexically_relative(layer.from).string();
      visit(it->path(), layer.to.ends_with('/') ? layer.to + relative : layer.to + "/" + relative);
    }
  }
}

Result<void> check_architecture(const VariantPlan& plan) {
  const auto& platform = plan.variant->platform;
  const auto machine = hw::elf_machine_of(platform.architecture);
  if (!machine) return {};
  std::vector<std::string> wrong;
  for (const auto& layer : plan.layers) {
    check_layer(layer, *machine, layer.variant_specific ? "its own layer" : "a layer every variant shares", wrong);
  }
  if (wrong.empty()) return {};
  constexpr std::size_t listed = 4;
  std::vector<std::string> shown(wrong.begin(), wrong.begin() + static_cast<std::ptrdiff_t>(std::min(wrong.size(), listed)));
  return fail("failed to check the CPU code of variant {} ({}): its programs and libraries must be 64-bit {} ELF, "
              "but {}{}",
              plan.variant->id, platform.str(), hw::elf_machine_name(*machine), util::join(shown, "; "),
              wrong.size() > listed ? fmt::format("; and {} more", wrong.size() - listed) : "");
}

}  // namespace hwimg::build
