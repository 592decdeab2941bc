#include "mds/service/mds_state_machine.h"

#include <spdlog/spdlog.h>

#include <cstdlib>

#include "mds/ops/meta_view.h"
#include "mds/service/speculation.h"
#include "mds/store/keys.h"

namespace dfs::mds {
namespace {

constexpr char kRaftApplied[] = "raft_applied";

// Every key of the store (each starts with a one-byte record kind below 0xff).
Result<std::vector<KeyValue>> scan_all(const MetaStore& store) {
  return store.scan(std::string(), std::string(1, '\xff'), SIZE_MAX);
}

}  // namespace

Status MdsStateMachine::load() {
  // Groups this replica wrote early as a leader before it stopped may never have
  // committed: back to the committed state, and the log replays what did.
  DFS_TRY_STATUS(ledger_.load(store_));
  size_t groups = DFS_TRY(roll_back_store(store_, ledger_, /*sync=*/true));
  if (groups > 0) {
    spdlog::info("metadata replica undid {} uncommitted group(s) it had written as leader",
                 groups);
  }
  applied_ = DFS_TRY(read_counter(store_, kRaftApplied));
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
  if (auto oldest = ledger_.oldest()) {
    auto [first, term] = *oldest;
    if (group.speculated_term() == term && group.entries_size() > 0 &&
        group.entries(0).index() == first) {
      // Our own groups (one command carries every group written during the proposal
      // before it), written to the store when we decided them: now they are committed.
      uint64_t last = group.entries(group.entries_size() - 1).index();
      WriteBatch batch;
      for (uint64_t committed : ledger_.take_through(last)) batch.del(undo_key(committed));
      GroupTxn counter(store_);
      counter.begin_entry();
      MetaWriter(counter).set_counter(kRaftApplied, index);
      counter.commit_entry();
      WriteBatch applied_index = counter.batch();  // (a temporary's ops() would dangle)
      for (const auto& op : applied_index.ops()) batch.put(op.key, op.value);
      Status written = store_.write(batch, /*sync=*/false);
      if (!written) fail_stop(index, "store write failed: " + written.error().to_string());
      applied_ = index;
      return {};
    }
    // Another leader's entry: ours (every one not yet committed) never will be.
    auto groups = roll_back_store(store_, ledger_, /*sync=*/false);
    if (!groups) fail_stop(index, "undoing speculative groups failed: " + groups.error().to_string());
    spdlog::warn("metadata replica undid {} group(s) it wrote as leader that did not commit",
                 *groups);
  }
  GroupTxn txn(store_);
  for (const auto& entry : group.entries()) {
    txn.begin_entry();
    ApplyEffects effects;  // the leader acts on its own (Committer listeners)
    auto applied = apply_entry(entry, fs_, txn, effects);
    if (!applied) {
      fail_stop(index, "entry " + std::to_string(entry.index()) +
                           " applied on the leader but fails here: " + applied.error().to_string());
    }
    txn.commit_entry();
  }
  txn.begin_entry();
  MetaWriter(txn).set_counter(kRaftApplied, index);
  txn.commit_entry();
  Status written = store_.write(txn.batch(), /*sync=*/false);
  if (!written) fail_stop(index, "store write failed: " + written.error().to_string());
  applied_ = index;
  return {};
}

std::string MdsStateMachine::snapshot() {
  Status synced = store_.sync();
  if (!synced) fail_stop(applied_, "store sync for a snapshot failed: " + synced.error().to_string());
  auto all = scan_all(store_);
  if (!all) fail_stop(applied_, "store scan for a snapshot failed: " + all.error().to_string());
  // The committed state only: a leader's store also holds its uncommitted groups.
  std::map<std::string, std::string> committed;
  for (auto& kv : *all) committed.emplace(std::move(kv.key), std::move(kv.value));
  Status undone = roll_back_image(committed);
  if (!undone) fail_stop(applied_, "undo records for a snapshot: " + undone.error().to_string());
  proto::MdsStoreImage image;
  for (auto& [key, value] : committed) {
    image.add_keys(key);
    image.add_values(std::move(value));
  }
  return image.SerializeAsString();
}

void MdsStateMachine::restore(raft::Index index, std::string_view bytes) {
  if (index <= applied_) return;
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
  GroupTxn txn(store_);
  txn.begin_entry();
  MetaWriter(txn).set_counter(kRaftApplied, index);
  txn.commit_entry();
  WriteBatch applied_index = txn.batch();
  for (const auto& op : applied_index.ops()) batch.put(op.key, op.value);
  Status written = store_.write(batch, /*sync=*/true);
  if (!written) fail_stop(index, "store write of a snapshot failed: " + written.error().to_string());
  applied_ = index;
  spdlog::info("metadata replica restored a snapshot at raft index {} ({} keys)", index,
               image.keys_size());
}

}  // namespace dfs::mds
