#pragma once
// Internal to hwimg::registry: a blob copied from another registry while an upload sends it. A
// thread reads it from there into a pipe that the upload's body reads, so it is never stored on
// this machine.

#include <memory>
#include <string>
#include <thread>

#include "hwimg/oci/descriptor.hpp"
#include "hwimg/registry/options.hpp"
#include "hwimg/registry/reference.hpp"
#include "hwimg/util/error.hpp"
#include "hwimg/util/fd.hpp"

namespace hwimg::registry {

class Relay {
public:
  // Starts reading `blob` from `source` (a client of its own, made with `options`).
  [[nodiscard]] static Result<std::unique_ptr<Relay>> start(const ClientOptions& options, Reference source,
                                                            oci::Descriptor blob);
  Relay(const Relay&) = delete;
  Relay& operator=(const Relay&) = delete;
  ~Relay();

  [[nodiscard]] int read_end() const { return m_read.get(); }
  // Waits for the copy to end (closing the read end, so a copy the upload stopped reading ends
  // too) and says why it stopped early, if it did: empty when the whole blob was copied.
  [[nodiscard]] std::string finish();

private:
  explicit Relay(util::UniqueFd read) : m_read(std::move(read)) {}
  void copy(const ClientOptions& options, const Reference& source, const oci::Descriptor& blob, util::UniqueFd out);

  util::UniqueFd m_read;
  std::thread m_thread;
  std::string m_error;  // written by the thread, read after it was joined
};

}  // namespace hwimg::registry
