#pragma once
// A dlopen handle that is closed when it goes away, and typed symbol lookup.

#include <string>
#include <utility>

#include "hwimg/util/error.hpp"

namespace hwimg::util {

class SharedLibrary {
public:
  // `name` is a SONAME searched like the dynamic linker does, or a path.
  [[nodiscard]] static Result<SharedLibrary> open(const std::string& name);

  SharedLibrary(SharedLibrary&& other) noexcept : m_handle(std::exchange(other.m_handle, nullptr)) {}
  SharedLibrary& operator=(SharedLibrary&&) = delete;
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;
  ~SharedLibrary();

  // The function named `name`, nullptr when the library does not export it (an older driver).
  template <typename Function>
  [[nodiscard]] Function* find(const char* name) const {
    return reinterpret_cast<Function*>(lookup(name));
  }

  // Sets a function pointer to the function named `name`; false when the library lacks it.
  template <typename Pointer>
  bool bind(Pointer& slot, const char* name) const {
    slot = reinterpret_cast<Pointer>(lookup(name));
    return slot != nullptr;
  }

private:
  explicit SharedLibrary(void* handle) : m_handle(handle) {}
  [[nodiscard]] void* lookup(const char* name) const;
  void* m_handle = nullptr;
};

}  // namespace hwimg::util
