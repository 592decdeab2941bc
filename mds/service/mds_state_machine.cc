#include "mds/service/mds_state_machine.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "mds/ops/meta_view.h"

namespace dfs::mds {
namespace {

constexpr char kRaftApplied[] = "raft_applied";
// The Raft index of the last command applied: unlike raft_applied, which a snapshot
// sets to its own index (maybe a leader's no-op), the same on every replica.
constexpr char kRaftLastCommand[] = "raft_last_command";

// Every key of the store (each starts with a one-byte record kind below 0xff).
Result<std::vector<KeyValue>> scan_all(const MetaStore& store) {
  return store.scan(std::string(), std::string(1, '\xff'), SIZE_MAX);
}

}  // namespace

Status MdsStateMachine::load() {
  applied_ = DFS_TRY(read_counter(store_, kRaftApplied));
  last_command_ = DFS_TRY(read_counter(store_, kRaftLastCommand));
  durable_ = applied_;  // what a store holds when it opens is on disk
  return ok_status();
}

void MdsStateMachine::fail_stop(raft::Index index, const std::string& why) {
  spdlog::critical("metadata replica stops at raft index {}: {}", index, why);
  spdlog::default_logger()->flush();
  std::abort();
}

std::string MdsStateMachine::apply(raft::Index index, std::string_view command) {
  if (index <= applied_) return {};  // replayed after a restart: already in the store
  proto::MdsLogGroup group;
  if (!group.ParseFromArray(command.data(), static_cast<int>(command.size()))) {
    fail_stop(index, "undecodable log group");
  }
  std::string result;
  WriteBatch batch;
  if (group.has_decided_on() && group.decided_on() != last_command_) {
    result = kStaleGroup;  // decided on another state: every replica drops it
  } else if (group.writes_size() > 0) {
    for (auto& w : *group.mutable_writes()) {
      if (w.removed()) {
        batch.del(std::move(*w.mutable_key()));
      } else {
        batch.put(std::move(*w.mutable_key()), std::move(*w.mutable_value()));
      }
    }
  } else {
    GroupTxn txn(store_);
    for (const auto& entry : group.entries()) {
      txn.begin_entry();
      ApplyEffects effects;  // the leader acts on its own (Committer listeners)
      auto applied = apply_entry(entry, fs_, txn, effects);
      if (!applied) {
        fail_stop(index, "entry " + std::to_string(entry.index()) + " applied on the leader " +
                             "but fails here: " + applied.error().to_string());
      }
      txn.commit_entry();
    }
    batch = txn.batch();
  }
  GroupTxn counters(store_);
  counters.begin_entry();
  MetaWriter(counters).set_counter(kRaftApplied, index);
  MetaWriter(counters).set_counter(kRaftLastCommand, index);
  counters.commit_entry();
  for (auto& op : counters.batch().take_ops()) batch.put(std::move(op.key), std::move(op.value));
  Status written = store_.write(batch, /*sync=*/false);
  if (!written) fail_stop(index, "store write failed: " + written.error().to_string());
  applied_ = index;
  last_command_ = index;
  return result;
}

void MdsStateMachine::sync_store(std::string_view purpose) {
  Status synced = store_.sync();
  if (!synced) {
    fail_stop(applied_,
              fmt::format("store sync for {} failed: {}", purpose, synced.error().to_string()));
  }
}

void MdsStateMachine::record_applied(raft::Index index, bool sync) {
  GroupTxn txn(store_);
  txn.begin_entry();
  MetaWriter(txn).set_counter(kRaftApplied, index);
  txn.commit_entry();
  Status written = store_.write(txn.batch(), sync);
  if (!written) {
    fail_stop(index, "store write of the raft index failed: " + written.error().to_string());
  }
}

bool MdsStateMachine::make_durable(raft::Index applied) {
  if (sync_.valid()) {
    if (sync_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return false;
    TimedSync synced = sync_.get();
    if (!synced.status) {
      fail_stop(syncing_for_, "store sync for a compaction of the log failed: " +
                                  synced.status.error().to_string());
    }
    durable_ = std::max(durable_, syncing_for_);
    spdlog::info("metadata replica synced its store for a compaction of the log at raft index "
                 "{} in {} ms, in the background", syncing_for_, synced.took.count());
  }
  if (durable_ >= applied) return true;
  // A restart restores the pointer at an index up to `applied`, and the store must hold
  // the state there: also when the entries after the last command were Raft's own.
  if (applied > applied_) {
    record_applied(applied, /*sync=*/false);
    applied_ = applied;
  }
  // The sync covers every write made before it starts; apply() goes on meanwhile.
  syncing_for_ = applied;
  sync_ = std::async(std::launch::async, [&store = store_] {
    const auto started = std::chrono::steady_clock::now();
    Status status = store.sync();
    return TimedSync{std::move(status), std::chrono::duration_cast<std::chrono::milliseconds>(
                                            std::chrono::steady_clock::now() - started)};
  });
  return false;
}

std::string MdsStateMachine::snapshot(raft::Index applied) {
  // The pointer stands for the store, which must hold the state at `applied` already.
  if (durable_ < applied) {
    fail_stop(applied, fmt::format("a compaction of the log at raft index {}, but the store "
                                   "is durable only up to {}", applied, durable_));
  }
  return {};
}

std::string MdsStateMachine::full_image(raft::Index /*applied*/) {
  sync_store("an image");
  durable_ = std::max(durable_, applied_);
  auto all = scan_all(store_);
  if (!all) fail_stop(applied_, "store scan for a snapshot failed: " + all.error().to_string());
  proto::MdsStoreImage image;
  for (auto& kv : *all) {
    image.add_keys(std::move(kv.key));
    image.add_values(std::move(kv.value));
  }
  return image.SerializeAsString();
}

void MdsStateMachine::restore(raft::Index index, std::string_view bytes) {
  if (index <= applied_) return;
  if (bytes.empty()) {
    fail_stop(index, fmt::format("the log was compacted at raft index {} with the store as its "
                                 "image, but the store has applied only up to {}: it lost "
                                 "synced writes", index, applied_));
  }
  proto::MdsStoreImage image;
  if (!image.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) ||
      image.keys_size() != image.values_size()) {
    fail_stop(index, "undecodable snapshot image");
  }
  auto old = scan_all(store_);
  if (!old) fail_stop(index, "store scan before a restore failed: " + old.error().to_string());
  WriteBatch batch;
  for (auto& kv : *old) batch.del(std::move(kv.key));
  for (int i = 0; i < image.keys_size(); ++i) {
    batch.put(std::move(*image.mutable_keys(i)), std::move(*image.mutable_values(i)));
  }
  Status written = store_.write(batch, /*sync=*/true);
  if (!written) fail_stop(index, "store write of a snapshot failed: " + written.error().to_string());
  // The image's own counters, written by the last command in it. Its Raft index may be
  // past `index` (the leader's store was ahead of its log, replaying after a restart:
  // the entries up to it are skipped when they come) or below it (taken at Raft's own
  // entries, which never reach apply()).
  auto image_applied = read_counter(store_, kRaftApplied);
  auto last_command = read_counter(store_, kRaftLastCommand);
  if (!image_applied || !last_command) {
    fail_stop(index, "reading a restored snapshot: " +
                         (image_applied ? last_command : image_applied).error().to_string());
  }
  if (*image_applied < index) record_applied(index, /*sync=*/true);
  applied_ = std::max<raft::Index>(index, *image_applied);
  last_command_ = *last_command;
  durable_ = std::max(durable_, applied_);  // written with a sync
  spdlog::info("metadata replica restored a snapshot at raft index {} ({} keys)", index,
               image.keys_size());
}

}  // namespace dfs::mds
