#pragma once
// The node's facts as `hwimg serve` judges variants against them: loaded at start and again on
// --refresh or SIGHUP, so a driver upgrade changes the answer without a restart.

#include <functional>
#include <memory>
#include <mutex>

#include "hwimg/probe/host_facts.hpp"

namespace hwimg::serve {

class HostState {
public:
  using Load = std::function<Result<probe::HostFacts>()>;
  explicit HostState(Load load) : m_load(std::move(load)) {}

  // Loads the facts again; true when they changed (answers kept for the old ones are then stale).
  // On failure the facts stay as they were.
  [[nodiscard]] Result<bool> refresh();
  [[nodiscard]] std::shared_ptr<const probe::HostFacts> facts() const;

private:
  Load m_load;
  mutable std::mutex m_mutex;
  std::shared_ptr<const probe::HostFacts> m_facts;
  std::string m_json;  // what the facts were, to tell a change
};

}  // namespace hwimg::serve
