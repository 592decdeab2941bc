// Asio aliases and the small coroutine helpers every tier uses: spawn_checked (a
// detached coroutine whose escaping exception is a bug), and the awaitable tokens.
#pragma once

#include <boost/asio.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <algorithm>
#include <chrono>
#include <exception>
#include <memory>
#include <vector>

#include "common/status/status.h"

namespace dfs {

namespace asio = boost::asio;
using asio::awaitable;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using Duration = std::chrono::milliseconds;

inline constexpr auto use_awaitable_tuple = asio::as_tuple(asio::use_awaitable);

// What is left of a deadline's budget; negative once it has passed.
inline Duration left_until(Clock::time_point deadline) {
  return std::chrono::duration_cast<Duration>(deadline - Clock::now());
}

// Called when an exception escapes a detached coroutine: logs and aborts.
[[noreturn]] void on_escaped_exception(std::exception_ptr e);

// Runs `task` detached on `executor`. Expected failures are values; an exception
// reaching the top of the coroutine is a bug and aborts the process.
template <class Executor, class Awaitable>
void spawn_checked(Executor executor, Awaitable task) {
  asio::co_spawn(executor, std::move(task), [](std::exception_ptr e, auto&&...) {
    if (e) on_escaped_exception(e);
  });
}

namespace detail {

// run_blocking's operation: one hand-off to a pool thread, which runs `fn` and posts
// the result straight to the awaiting coroutine's executor. (co_spawn onto the pool
// would post once more, to the pool itself, before handing back: a third thread
// wake-up per call.)
template <class F>
struct BlockingInitiation {
  asio::thread_pool* pool;

  template <class Handler>
  void operator()(Handler handler, F fn) const {
    using R = std::invoke_result_t<F>;
    // Keeps the caller's io_context running until the result is posted back.
    auto resume_on = asio::prefer(asio::get_associated_executor(handler),
                                  asio::execution::outstanding_work.tracked);
    asio::post(*pool, [handler = std::move(handler), fn = std::move(fn),
                       resume_on = std::move(resume_on)]() mutable {
      std::exception_ptr error;
      R result{};
      try {
        result = fn();
      } catch (...) {
        error = std::current_exception();  // rethrown in the caller, as a bug
      }
      asio::post(resume_on, [handler = std::move(handler), error,
                             result = std::move(result)]() mutable {
        std::move(handler)(error, std::move(result));
      });
    });
  }
};

}  // namespace detail

// Runs the blocking `fn` (disk I/O, RocksDB, fsync) on `pool` and resumes the caller
// on its own executor with fn's result. Result types must be default-constructible.
template <class F>
awaitable<std::invoke_result_t<F>> run_blocking(asio::thread_pool& pool, F fn) {
  using R = std::invoke_result_t<F>;
  return asio::async_initiate<const asio::use_awaitable_t<>, void(std::exception_ptr, R)>(
      detail::BlockingInitiation<F>{&pool}, asio::use_awaitable, std::move(fn));
}

// Runs every task concurrently on the caller's executor and returns their results in
// order once all have finished.
template <class T>
awaitable<std::vector<T>> gather(std::vector<awaitable<T>> tasks) {
  struct State {
    explicit State(asio::any_io_executor ex, size_t n) : done(ex), results(n), remaining(n) {}
    asio::steady_timer done;
    std::vector<T> results;
    size_t remaining;
  };
  auto executor = co_await asio::this_coro::executor;
  auto state = std::make_shared<State>(executor, tasks.size());
  state->done.expires_at(asio::steady_timer::time_point::max());
  for (size_t i = 0; i < tasks.size(); ++i) {
    spawn_checked(executor, [](std::shared_ptr<State> s, size_t index,
                               awaitable<T> task) -> awaitable<void> {
      s->results[index] = co_await std::move(task);
      // An expired timer also releases a wait that starts after this point.
      if (--s->remaining == 0) s->done.expires_at(asio::steady_timer::time_point::min());
    }(state, i, std::move(tasks[i])));
  }
  while (state->remaining > 0) co_await state->done.async_wait(use_awaitable_tuple);
  co_return std::move(state->results);
}

// gather(), with at most `limit` (at least 1) tasks running at a time.
template <class T>
awaitable<std::vector<T>> gather_bounded(std::vector<awaitable<T>> tasks, size_t limit) {
  limit = std::max<size_t>(1, limit);
  if (tasks.size() <= limit) co_return co_await gather(std::move(tasks));
  std::vector<T> out;
  out.reserve(tasks.size());
  for (size_t i = 0; i < tasks.size(); i += limit) {
    std::vector<awaitable<T>> batch;
    for (size_t j = i; j < std::min(tasks.size(), i + limit); ++j) {
      batch.push_back(std::move(tasks[j]));
    }
    auto results = co_await gather(std::move(batch));
    for (auto& r : results) out.push_back(std::move(r));
  }
  co_return out;
}

// Suspends the calling coroutine for `d`.
awaitable<void> sleep_for(Duration d);

}  // namespace dfs
