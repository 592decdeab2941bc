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

  // With RaftConfig::images_on_demand, before each compaction at `applied` (the applied
  // index then, maybe one of Raft's own entries): asked, without blocking, to make the
  // state at `applied` durable; asked again at later advances until it answers true,
  // then snapshot(applied) follows, the state being past `applied` by then. Asked with a
  // later index instead when a snapshot installed meanwhile passed it. An application
  // whose writes are unsynced starts its sync in the background here. The default: the
  // state is durable already.
  virtual bool make_durable(Index applied) { return true; }

  // An image of the state as of `applied`, for log compaction (with images_on_demand,
  // once make_durable(applied) answered true). `applied` may be one of Raft's own
  // entries (a new leader's no-op), which never reach apply(). With RaftConfig::images_on_demand the image only points at
  // the state, which the application keeps durably itself (made durable by
  // make_durable(), as the state at `applied`: a restart restores the pointer at an
  // index up to it), and may be empty: compacting then costs no copy of the state, whose
  // size does not matter.
  virtual std::string snapshot(Index applied) = 0;

  // With images_on_demand: a whole image of the state as of the last applied index, for
  // a follower that needs compacted entries. Rare, and may cost a scan of the state.
  virtual std::string full_image(Index applied) { return snapshot(applied); }

  // Replaces the whole state by `image`, taken at `index`: at start-up from the log's
  // snapshot (with images_on_demand possibly a pointer: the state is already at or past
  // `index`, and entries up to where it is come again), and when a snapshot is
  // installed from the leader (always a whole image).
  virtual void restore(Index index, std::string_view image) = 0;
};

}  // namespace dfs::raft
