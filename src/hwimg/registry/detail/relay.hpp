#pragma once
// Internal to hwimg::registry: a blob copied from another registry while an upload sends it. A
// thread reads it from there into a pipe that the upload's body reads, so it is never stored on
// this machine.

#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "hwimg/oci/descriptor.hpp"
#include "hwimg/registry/options.hpp"
#include "hwimg/registry/reference.hpp"
#include "hwimg/util/error.hpp"
#include "hwimg/util/fd.hpp"

namespace hwimg::registry {

class Client;

// The registry clients the relays of one push share: a relay takes one (made when none is idle)
// and gives it back once its blob was read to the end, so the next relay reuses its connections,
// TLS sessions and tokens instead of opening its own. Used from the relays' threads.
class RelayClients {
public:
  explicit RelayClients(ClientOptions options);
  // Out of line: Client is complete only in relay.cpp.
  ~RelayClients();
  RelayClients(const RelayClients&) = delete;
  RelayClients& operator=(const RelayClients&) = delete;
  [[nodiscard]] Result<std::unique_ptr<Client>> take();
  void give_back(std::unique_ptr<Client> client);

private:
  ClientOptions m_options;
  std::mutex m_mutex;
  std::vector<std::unique_ptr<Client>> m_idle;
};

class Relay {
public:
  // Starts reading `blob` from `source` with a client of `clients`.
  [[nodiscard]] static Result<std::unique_ptr<Relay>> start(std::shared_ptr<RelayClients> clients, Reference source,
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
  void copy(RelayClients& clients, const Reference& source, const oci::Descriptor& blob, util::UniqueFd out);

  util::UniqueFd m_read;
  std::thread m_thread;
  std::string m_error;  // written by the thread, read after it was joined
};

}  // namespace hwimg::registry
