#include "hwimg/build/driver_bundle.hpp"

#include <algorithm>
#include <array>
#include <span>

#include <unistd.h>

#include <fmt/format.h>

#include "hwimg/build/build_cache.hpp"
#include "hwimg/hw/elf.hpp"
#include "hwimg/util/files.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::build {
namespace fs = std::filesystem;

namespace {

// libnvidia-container's utility_libs and compute_libs (src/nvc_info.c), the libraries NVIDIA's
// toolkit mounts for NVIDIA_DRIVER_CAPABILITIES=compute,utility, its default
// (docs/compatibility.md#user-mode-driver-libraries).
constexpr std::array<std::string_view, 15> driver_library_names{
    "libnvidia-ml",         "libnvidia-cfg",           "libnvidia-nscq",      "libcuda",
    "libcudadebugger",      "libnvidia-opencl",        "libnvidia-gpucomp",   "libnvidia-ptxjitcompiler",
    "libnvidia-fatbinaryloader", "libnvidia-allocator", "libnvidia-compiler", "libnvidia-pkcs11",
    "libnvidia-pkcs11-openssl3", "libnvidia-nvvm",      "libnvidia-tileiras"};
constexpr std::array<std::string_view, 2> required_libraries{"libcuda", "libnvidia-ml"};

constexpr std::string_view ld_conf_path = "/etc/ld.so.conf.d/000-hwimg-nvidia-driver.conf";

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The library name of `file` ("libcuda" for "libcuda.so.535.247.01") and what follows ".so.".
std::optional<std::pair<std::string_view, std::string>> split_library_name(const std::string& file) {
  for (const auto name : driver_library_names) {
    const auto prefix = std::string(name) + ".so.";
    if (file.starts_with(prefix)) return std::pair{name, file.substr(prefix.size())};
  }
  return std::nullopt;
}

// The version string the library carries (the kernel module refuses a client whose string differs:
// "API mismatch: the client has the version ..."), standing alone, not inside a longer version.
bool carries_version(std::string_view bytes, std::string_view version) {
  for (auto at = bytes.find(version); at != std::string_view::npos; at = bytes.find(version, at + 1)) {
    const auto end = at + version.size();
    const bool alone_before = at == 0 || (!is_digit(bytes[at - 1]) && bytes[at - 1] != '.');
    const bool alone_after = end == bytes.size() || (!is_digit(bytes[end]) && bytes[end] != '.');
    if (alone_before && alone_after) return true;
  }
  return false;
}

Result<DriverLibrary> read_library(const DriverPlan& plan, const fs::path& path, std::string_view name) {
  HWIMG_TRY_ASSIGN(const auto bytes, util::read_file(path));
  const auto data = std::as_bytes(std::span(bytes.data(), bytes.size()));
  HWIMG_TRY_ASSIGN(const auto sections, hw::read_elf_sections(data, path.string()));
  HWIMG_TRY_ASSIGN(const auto soname, hw::read_elf_soname(data, sections, path.string()));
  if (name == "libcuda" && !carries_version(bytes, plan.version.str())) {
    return fail("{} does not carry the version string {}: it is not the CUDA driver library of driver {}",
                path.string(), plan.version.str(), plan.version.str());
  }
  return DriverLibrary{path.filename(), soname.value_or("")};
}

}  // namespace

Result<void> check_driver_recipe(const recipe::Recipe& recipe, std::span<const matrix::Variant> variants) {
  const auto bundling = std::ranges::find_if(variants, [](const matrix::Variant& v) { return v.bundled_driver.has_value(); });
  if (bundling == variants.end()) return {};
  if (!recipe.driver) {
    return fail("{}: variant {} bundles driver {} (the matrix's driver axis), but the recipe does not say where its "
                "libraries are: add driver: {{from: /opt/nvidia-drivers/${{driver.version}}}}",
                recipe.file.string(), bundling->id, bundling->bundled_driver->str());
  }
  std::vector<std::string> drivers;
  for (const auto& variant : variants) {
    if (variant.bundled_driver && std::ranges::find(drivers, variant.bundled_driver->str()) == drivers.end()) {
      drivers.push_back(variant.bundled_driver->str());
    }
  }
  if (drivers.size() > 1 && !recipe::names_variables(recipe.driver->from)) {
    return fail("{}: driver.from names no variable, but the matrix names {} drivers ({}), which one directory cannot "
                "hold: use ${{driver.version}} in it, e.g. /opt/nvidia-drivers/${{driver.version}}",
                recipe.driver->from.location.str(), drivers.size(), util::join(drivers, ", "));
  }
  return {};
}

Result<std::optional<DriverPlan>> plan_driver(const recipe::Recipe& recipe, const matrix::Variant& variant,
                                              const recipe::Variables& variables) {
  if (!variant.bundled_driver) return std::optional<DriverPlan>();
  HWIMG_TRY(check_driver_recipe(recipe, std::span(&variant, 1)));
  const auto& spec = *recipe.driver;
  HWIMG_TRY_ASSIGN(const auto from, recipe::substitute(spec.from, variables));
  HWIMG_TRY_ASSIGN(const auto to, recipe::substitute(spec.to, variables));
  return std::optional<DriverPlan>(DriverPlan{*variant.bundled_driver, recipe.resolve(from), to, spec.from.location});
}

Result<std::vector<DriverLibrary>> read_driver_libraries(const DriverPlan& plan) {
  const auto context = fmt::format("{}: failed to bundle driver {} from {}", plan.from_location.str(),
                                   plan.version.str(), plan.from.string());
  std::error_code ec;
  if (!fs::is_directory(plan.from, ec)) return fail("{}: it is not a directory", context);
  std::vector<fs::path> files;
  for (fs::directory_iterator it(plan.from, ec), end; !ec && it != end; it.increment(ec)) {
    // Links are the package's own soname links; the layer gets its own.
    if (it->is_regular_file(ec) && !it->is_symlink(ec)) files.push_back(it->path());
  }
  if (ec) return fail("{}: {}", context, ec.message());
  std::ranges::sort(files);

  std::vector<DriverLibrary> libraries;
  std::vector<std::string_view> found;
  for (const auto& path : files) {
    const auto split = split_library_name(path.filename().string());
    if (!split || !hw::looks_like_driver_version(split->second)) continue;
    const auto& [name, version] = *split;
    const auto parsed = hw::DriverVersion::parse(version);
    if (!parsed || !(*parsed == plan.version)) {
      return fail("{}: {} is of driver {}, not {} (a library of another driver cannot run with this kernel driver)",
                  context, path.filename().string(), version, plan.version.str());
    }
    HWIMG_TRY_ASSIGN(auto library, with_context(read_library(plan, path, name), context));
    libraries.push_back(std::move(library));
    found.push_back(name);
  }
  for (const auto required : required_libraries) {
    if (std::ranges::find(found, required) == found.end()) {
      return fail("{}: there is no {}.so.{} (the directory must hold the driver's libraries as NVIDIA's runfile "
                  "--extract-only or the distribution's packages install them)",
                  context, required, plan.version.str());
    }
  }
  return libraries;
}

std::string explain_driver(const DriverPlan& plan) {
  return fmt::format("  driver {} from {} -> {} (packed once per driver, shared)", plan.version.str(), plan.from.string(),
                     plan.to);
}

std::string driver_layer_created_by(const DriverPlan& plan) {
  return fmt::format("hwimg build: NVIDIA user-mode driver {} -> {}", plan.version.str(), plan.to);
}

Result<oci::WrittenLayer> write_driver_layer(const DriverPlan& plan, const std::vector<DriverLibrary>& libraries,
                                             const oci::Layout& layout, const oci::LayerOptions& options) {
  // Only the links and the ld.so.conf.d entry are made here; the libraries are packed from `from`.
  HWIMG_TRY_ASSIGN(auto staging, util::TempDir::create(fs::temp_directory_path(),
                                                       fmt::format("{}{}-driver-", scratch_prefix, ::getpid())));
  const auto links = staging.path() / "lib";
  HWIMG_TRY(util::make_directories(links));
  // The directory first: it gives `to` its entry, which the libraries' own parents then leave alone.
  std::vector<oci::LayerSource> sources{{links, plan.to}};
  std::error_code ec;
  for (const auto& library : libraries) {
    const auto name = library.file.filename();
    sources.push_back({plan.from / name, plan.to + "/" + name.string()});
    std::vector<std::string> names;
    if (!library.soname.empty() && library.soname != name.string()) names.push_back(library.soname);
    // libnvidia-container adds the development name for libcuda too (src/nvc_mount.c).
    if (name.string().starts_with("libcuda.so.") && !library.soname.empty()) names.emplace_back("libcuda.so");
    for (const auto& link : names) {
      if (fs::exists(fs::symlink_status(links / link, ec))) continue;
      const auto target = link == "libcuda.so" ? fs::path(library.soname) : name;
      fs::create_symlink(target, links / link, ec);
      if (ec) return fail("failed to link {} to {}: {}", link, target.string(), ec.message());
    }
  }
  const auto conf = staging.path() / "ld.so.conf";
  HWIMG_TRY(util::write_file_atomic(conf, plan.to + "\n"));
  sources.push_back({conf, std::string(ld_conf_path)});
  return oci::write_layer(layout, sources, options);
}

std::vector<std::pair<std::string, std::string>> driver_environment(const DriverPlan& plan,
                                                                    const std::optional<std::string>& ld_library_path) {
  // First even where the base names it already: a libcuda.so.1 in a directory before it (a CUDA
  // forward-compatibility package's, say) would be loaded instead of the bundled driver.
  std::vector<std::string> entries{plan.to};
  if (ld_library_path && !ld_library_path->empty()) {
    for (auto& entry : util::split(*ld_library_path, ':')) {
      if (entry != plan.to) entries.push_back(std::move(entry));
    }
  }
  return {{"LD_LIBRARY_PATH", util::join(entries, ":")}, {"NVIDIA_VISIBLE_DEVICES", "void"}};
}

void apply_driver_config(const DriverPlan& plan, oci::ImageConfig& config) {
  for (const auto& [name, value] : driver_environment(plan, config.env_value("LD_LIBRARY_PATH"))) {
    config.set_env(name, value);
  }
}

}  // namespace hwimg::build
