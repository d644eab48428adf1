#include "hwimg/probe/shared_library.hpp"

#include <dlfcn.h>

namespace hwimg::probe {

Result<SharedLibrary> SharedLibrary::open(const std::string& name) {
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return fail("failed to load {}: {}", name, why != nullptr ? why : "unknown error");
  }
  return SharedLibrary(handle);
}

SharedLibrary::~SharedLibrary() {
  if (m_handle != nullptr) {
    dlclose(m_handle);
  }
}

void* SharedLibrary::lookup(const char* name) const {
  return dlsym(m_handle, name);
}

}  // namespace hwimg::probe
