#pragma once
// One request between the server's event loop, which owns the connection and must never block,
// and the fetch worker that answers it, which may (docs/serve.md#limits). The connection is
// suspended while it waits for the worker, for the answer or for more of a streamed body; whoever
// ends a suspension resumes it, exactly once. A streamed body passes through a bounded buffer: the
// worker reads the upstream only as fast as the client takes it.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "hwimg/serve/http_message.hpp"

namespace hwimg::serve {

enum class Body { whole, streamed };

class Exchange {
public:
  using Signal = std::function<void()>;
  // `suspend` is called on the event loop, `resume` from any thread, both with the exchange locked.
  Exchange(Signal suspend, Signal resume, std::size_t max_buffered);
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  // Event loop: suspends the connection until the answer comes (or abandon()).
  void wait_for_answer();
  // Event loop, once resumed: the answer (without its stream) and how its body comes; nullopt
  // when abandoned first.
  [[nodiscard]] std::optional<std::pair<HttpResponse, Body>> take_answer();

  struct Piece {
    enum class Kind { data, waiting, end, broken } kind = Kind::data;
    std::size_t size = 0;
  };
  // Event loop: up to `size` bytes of the streamed body into `buffer`; `waiting` after suspending
  // until more comes; `broken` when the body failed (the connection must be cut, never completed).
  Piece read(char* buffer, std::size_t size);
  // Event loop: the connection is done with this request; a worker still streaming stops.
  void close();

  // Worker: the answer. Ignored once closed or abandoned.
  void deliver(HttpResponse response, Body body);
  // Worker, after deliver(..., streamed): reads `source` into the buffer until its end, an error,
  // or close(); an exception from `source` breaks the body off.
  void pump(const BodySource& source);

  // The server stops: the body breaks off, the worker stops, and a suspended connection resumes.
  void abandon();

private:
  // With m_mutex held: resumes the connection if it is suspended. Under the lock, so that once
  // abandon() returned no thread is about to resume a connection of a stopped server.
  // (libmicrohttpd takes its own lock inside ours to suspend or resume, and never calls back into
  // an exchange while it holds that lock.)
  void wake() {
    if (std::exchange(m_suspended, false)) m_resume();
  }

  Signal m_suspend;
  Signal m_resume;
  const std::size_t m_max_buffered;
  std::mutex m_mutex;
  std::condition_variable m_room;  // the worker waits here while the buffer is full
  bool m_suspended = false;
  bool m_closed = false;
  bool m_abandoned = false;
  std::optional<HttpResponse> m_answer;
  Body m_body = Body::whole;
  std::deque<std::string> m_chunks;
  std::size_t m_offset = 0;  // into m_chunks.front()
  std::size_t m_buffered = 0;
  enum class End { open, complete, broken } m_end = End::open;
};

}  // namespace hwimg::serve
