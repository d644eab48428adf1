#include "hwimg/registry/detail/relay.hpp"

#include <csignal>

#include <fcntl.h>
#include <unistd.h>

#include "hwimg/registry/client.hpp"
#include "hwimg/util/files.hpp"

namespace hwimg::registry {

RelayClients::RelayClients(ClientOptions options) : m_options(std::move(options)) {}

RelayClients::~RelayClients() = default;

Result<std::unique_ptr<Client>> RelayClients::take() {
  {
    std::lock_guard lock(m_mutex);
    if (!m_idle.empty()) {
      auto client = std::move(m_idle.back());
      m_idle.pop_back();
      return client;
    }
  }
  HWIMG_TRY_ASSIGN(auto client, Client::create(m_options));
  return std::make_unique<Client>(std::move(client));
}

void RelayClients::give_back(std::unique_ptr<Client> client) {
  std::lock_guard lock(m_mutex);
  m_idle.push_back(std::move(client));
}

Result<std::unique_ptr<Relay>> Relay::start(std::shared_ptr<RelayClients> clients, Reference source,
                                            oci::Descriptor blob) {
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) return fail("failed to make a pipe: {}", util::errno_text(errno));
  auto relay = std::unique_ptr<Relay>(new Relay(util::UniqueFd(ends[0])));
  ::fcntl(ends[1], F_SETPIPE_SZ, 1 << 20);  // fewer wake-ups; the default 64 KiB works too
  relay->m_thread = std::thread([relay = relay.get(), write_end = util::UniqueFd(ends[1]), clients = std::move(clients),
                                 source = std::move(source), blob = std::move(blob)]() mutable {
    // Nothing escapes the thread: an exception is this relay's error like any other.
    try {
      relay->copy(*clients, source, blob, std::move(write_end));
    } catch (const std::exception& e) {
      relay->m_error = e.what();
    } catch (...) {
      relay->m_error = "an unknown exception";
    }
  });
  return relay;
}

Relay::~Relay() { static_cast<void>(finish()); }

std::string Relay::finish() {
  m_read.reset();  // a writer blocked on a full pipe gets EPIPE and stops
  if (m_thread.joinable()) m_thread.join();
  return m_error;
}

void Relay::copy(RelayClients& clients, const Reference& source, const oci::Descriptor& blob, util::UniqueFd out) {
  // A closed read end must answer EPIPE here, not kill the process.
  sigset_t pipe_signal;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
  auto copied = [&]() -> Result<void> {
    HWIMG_TRY_ASSIGN(auto client, clients.take());
    // Verified as it passes: a source that serves other bytes stops the upload before its end.
    HWIMG_TRY(client->read_blob(source, blob.digest, static_cast<std::uint64_t>(blob.size),
                                [&out](std::string_view data) -> Result<void> {
                                  while (!data.empty()) {
                                    const auto n = ::write(out.get(), data.data(), data.size());
                                    if (n < 0 && errno == EINTR) continue;
                                    if (n < 0) return fail("the upload stopped reading: {}", util::errno_text(errno));
                                    data.remove_prefix(static_cast<std::size_t>(n));
                                  }
                                  return {};
                                }));
    // Only a client whose stream was read to its end is used again.
    clients.give_back(std::move(client));
    return {};
  }();
  if (!copied) m_error = copied.error().message;
}

}  // namespace hwimg::registry
