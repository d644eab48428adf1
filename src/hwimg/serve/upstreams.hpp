#pragma once
// The registries `hwimg serve` mirrors, each with a pool of registry clients: a client serves one
// request at a time (and keeps its connections and tokens for the next), so concurrent requests
// lease their own.

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hwimg/registry/client.hpp"

namespace hwimg::serve {

struct UpstreamSettings {
  std::vector<std::string> names;     // --upstream, in order; the first takes requests naming none
  std::vector<std::string> insecure;  // --insecure-upstream: no TLS verification, plain HTTP allowed
  registry::ClientOptions client;     // --ca-file, the node's Docker config, the output
};

class Upstreams {
public:
  explicit Upstreams(UpstreamSettings settings);

  // Every upstream, --insecure-upstream ones included, in the order given.
  [[nodiscard]] const std::vector<std::string>& names() const { return m_names; }

  // A client of `upstream` for one request; back to the pool when the lease ends.
  class Lease {
  public:
    Lease(Upstreams& owner, std::string upstream, std::unique_ptr<registry::Client> client);
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease();

    [[nodiscard]] registry::Client& client() { return *m_client; }
    // The client is left mid-transfer: close it instead of pooling it.
    void discard() { m_discard = true; }

  private:
    Upstreams& m_owner;
    std::string m_upstream;
    std::unique_ptr<registry::Client> m_client;
    bool m_discard = false;
  };

  [[nodiscard]] Result<std::shared_ptr<Lease>> lease(const std::string& upstream);

private:
  void give_back(const std::string& upstream, std::unique_ptr<registry::Client> client);

  UpstreamSettings m_settings;
  std::vector<std::string> m_names;
  std::mutex m_mutex;
  std::map<std::string, std::vector<std::unique_ptr<registry::Client>>> m_idle;
};

}  // namespace hwimg::serve
