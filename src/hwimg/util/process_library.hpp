#pragma once
// A shared library loaded with dlopen on first use and kept for the rest of the process, its
// functions bound into a table (libcurl for registries, libmicrohttpd for `serve`): commands that
// never need it never pay for loading its dependency chain.

#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "hwimg/util/shared_library.hpp"

namespace hwimg::util {

template <typename Table>
class ProcessLibrary {
public:
  // `bind` fills the table from the loaded library; `install_hint` ends the error when it is
  // missing ("install libcurl4").
  ProcessLibrary(std::string soname, std::string install_hint,
                 std::function<Result<void>(const SharedLibrary&, Table&)> bind)
      : m_soname(std::move(soname)), m_install_hint(std::move(install_hint)), m_bind(std::move(bind)) {}

  // Loads and binds once, thread-safe; every later call returns the first outcome.
  [[nodiscard]] Result<const Table*> get() {
    std::call_once(m_once, [this] {
      auto opened = SharedLibrary::open(m_soname);
      if (!opened) {
        m_loaded = std::unexpected(opened.error().context(m_install_hint));
        return;
      }
      m_library.emplace(std::move(*opened));
      m_loaded = m_bind(*m_library, m_table);
    });
    if (!m_loaded) return std::unexpected(m_loaded.error());
    return &m_table;
  }

  // The table; valid only after get() succeeded.
  [[nodiscard]] const Table& table() const { return m_table; }

private:
  std::string m_soname;
  std::string m_install_hint;
  std::function<Result<void>(const SharedLibrary&, Table&)> m_bind;
  std::once_flag m_once;
  std::optional<SharedLibrary> m_library;
  Result<void> m_loaded;
  Table m_table{};
};

}  // namespace hwimg::util
