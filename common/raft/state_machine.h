// The application side of a RaftGroup: the deterministic state machine that committed
// commands are applied to. Called only on the group's executor, in log order.
#pragma once

#include <string>
#include <string_view>

#include "common/raft/types.h"

namespace dfs::raft {

class StateMachine {
 public:
  virtual ~StateMachine() = default;

  // Applies committed command `index` and returns its result, which goes back to the
  // local proposer if there is one. Deterministic: every replica must reach the same
  // state. Runs on the executor, so it must not block (an application that writes a
  // disk store batches unsynced writes; the raft log is what makes them durable).
  virtual std::string apply(Index index, std::string_view command) = 0;

  // An image of the state as of the last applied index, for log compaction. A large
  // state is better handed over as a small pointer (a checkpoint name) than as bytes.
  virtual std::string snapshot() = 0;

  // Replaces the whole state by `image`, taken at `index`: at start-up from the log's
  // snapshot, and when a snapshot is installed from the leader.
  virtual void restore(Index index, std::string_view image) = 0;
};

}  // namespace dfs::raft
