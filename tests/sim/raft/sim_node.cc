// RaftSimulation, node side: the Ready loop with a slow disk, applying the KV state
// machine, and answering client requests (writes when applied, reads by read index).
#include <algorithm>

#include "tests/sim/raft/sim_parts.h"

namespace dfs::raft::sim {

using dfs::sim::KvOpKind;

void RaftSimulation::start_node(SimNode& n) {
  RaftConfig cfg;
  cfg.id = n.id;
  cfg.election_ticks = 10;
  cfg.heartbeat_ticks = 2;
  cfg.max_append_bytes = append_bytes_;
  cfg.max_inflight = max_inflight_;
  cfg.snapshot_chunk_bytes = 48;  // images are a few hundred bytes: many chunks
  cfg.snapshot_resend_ticks = 3;
  n.raft = std::make_unique<RaftNode>(cfg, *n.storage, *n.random);
  n.tick_fed_ms.clear();
  std::optional<KvStateMachine> kv = KvStateMachine::restore(n.storage->snapshot().data);
  if (!kv) checker_.report("node " + std::to_string(n.id) + ": undecodable snapshot image");
  n.kv = kv.value_or(KvStateMachine{});
  n.applied = n.storage->snapshot().meta.index;
  n.up = true;
  trace(1, n.id);
  pump(n);
}

void RaftSimulation::crash_node(SimNode& n) {
  Index applied = n.applied;
  size_t lost = n.storage->crash(*n.random);
  if (n.syncing && n.syncing_early_sent > 0 && lost > 0) result_.crashes_after_early_send += 1;
  // The commit index is written without a sync of its own, so the restart may know
  // less than was applied; the log must still hold every entry that was.
  const SimStorage& kept = *n.storage;
  if (std::max(kept.hard_state().commit, kept.snapshot().meta.index) < applied) {
    result_.crashes_below_applied += 1;
  }
  checker_.on_crash(n.id, kept, applied);
  n.raft.reset();
  n.kv = KvStateMachine{};
  n.up = false;
  n.stalled = false;
  n.syncing.reset();
  n.syncing_early_sent = 0;
  n.crash_before_sync_done = false;
  n.inbox.clear();
  n.deferred_ticks = 0;
  n.waiting_writes.clear();
  n.reads_unconfirmed.clear();
  n.reads_confirmed.clear();
  result_.crashes += 1;
  trace(2, n.id, lost);
}

void RaftSimulation::pump(SimNode& n) {
  while (n.up && !n.syncing && n.raft->has_ready()) {
    checker_.observe(*n.raft);
    Ready rd = n.raft->ready();
    // A leader's appends leave before its own write is durable (Ready contract step 1).
    size_t early = rd.early_messages.size();
    send_messages(n, rd.early_messages);
    if (rd.must_sync) {
      // The disk takes a while; a crash before it completes loses the tail, possibly
      // entries that the early messages are carrying to the followers.
      n.syncing = std::move(rd);
      n.sync_done_at = now_ + random_.uniform(1, max_sync_ms_ + 1);
      n.syncing_early_sent = early;
      return;
    }
    finish_ready(n, std::move(rd));
  }
  if (n.up) checker_.observe(*n.raft);
}

void RaftSimulation::send_messages(SimNode& n, std::vector<Message>& messages) {
  for (Message& m : messages) {
    trace(3, m.from * 16 + m.to, static_cast<uint64_t>(m.type), m.term * 1000003 + m.index);
    if (m.type == MessageType::kSnapshot) result_.snapshots_sent += 1;
    Event ev;
    ev.kind = Event::kRaft;
    ev.node = m.to;
    NodeId to = m.to;
    if (to < 1 || to > nodes_.size()) continue;
    ev.msg = std::move(m);
    send_event(std::move(ev), n.id, to);
  }
  messages.clear();
}

// The rest of a Ready once its sync is done (early messages have left already).
void RaftSimulation::finish_ready(SimNode& n, Ready rd) {
  if (rd.must_sync) ignore_error(n.storage->sync(), "SimStorage::sync cannot fail");
  n.syncing_early_sent = 0;
  send_messages(n, rd.messages);
  if (rd.snapshot) {
    checker_.on_image(n.id, rd.snapshot->meta.index, rd.snapshot->data);
    std::optional<KvStateMachine> kv = KvStateMachine::restore(rd.snapshot->data);
    if (!kv) checker_.report("node " + std::to_string(n.id) + ": undecodable snapshot image");
    n.kv = kv.value_or(KvStateMachine{});
    trace(4, n.id, rd.snapshot->meta.index);
  }
  for (const Entry& e : rd.committed_entries) apply_entry(n, e);
  for (const ReadState& rs : rd.read_states) {
    auto it = n.reads_unconfirmed.find(rs.context);
    if (it == n.reads_unconfirmed.end()) continue;
    n.reads_confirmed.emplace_back(rs.index, std::move(it->second));
    n.reads_unconfirmed.erase(it);
  }
  n.raft->advance(rd);
  n.applied = n.raft->applied_index();
  serve_reads(n);
  Index applied = n.applied;
  if (applied >= n.storage->snapshot().meta.index + compact_every_) {
    std::string image = n.kv.serialize();
    checker_.on_image(n.id, applied, image);
    ignore_error(n.raft->compact(applied, std::move(image)), "applied is always compactable");
  }
}

void RaftSimulation::apply_entry(SimNode& n, const Entry& e) {
  checker_.on_apply(n.id, e);
  trace(5, n.id, e.index, e.term);
  if (e.type != EntryType::kNormal) return;
  std::optional<KvCommand> cmd = decode_command(e.data);
  if (!cmd) {
    checker_.report("node " + std::to_string(n.id) + ": undecodable command");
    return;
  }
  std::optional<KvResult> result = n.kv.apply(*cmd);
  if (result && n.waiting_writes.erase({cmd->client, cmd->seq})) {
    reply(n.id, ClientReply{cmd->client, cmd->seq, ReplyStatus::kOk, n.id, {}, result->cas_ok});
  }
}

void RaftSimulation::serve_reads(SimNode& n) {
  Index applied = n.raft->applied_index();
  std::erase_if(n.reads_confirmed, [&](const std::pair<Index, ClientRequest>& r) {
    if (r.first > applied) return false;
    reply(n.id, ClientReply{r.second.client, r.second.seq, ReplyStatus::kOk, n.id,
                            n.kv.get(r.second.key), false});
    return true;
  });
}

void RaftSimulation::reply(NodeId from, ClientReply r) {
  Event ev;
  ev.kind = Event::kReply;
  ev.reply = std::move(r);
  send_event(std::move(ev), from, kNoNode);
}

void RaftSimulation::handle_at_node(SimNode& n, Event ev) {
  if (ev.kind == Event::kRaft) {
    if (script_ && script_drops(n, ev.msg)) {
      trace(16, ev.msg.from * 16 + ev.msg.to, static_cast<uint64_t>(ev.msg.type), ev.msg.term);
      return;
    }
    trace(6, ev.msg.from * 16 + ev.msg.to, static_cast<uint64_t>(ev.msg.type), ev.msg.term);
    n.raft->step(ev.msg);
  } else {
    handle_request(n, ev.request);
  }
  pump(n);
}

void RaftSimulation::handle_request(SimNode& n, const ClientRequest& req) {
  trace(7, n.id, req.client, req.seq);
  ClientReply not_leader{req.client, req.seq, ReplyStatus::kNotLeader, n.raft->leader(), {}, false};
  if (req.kind == KvOpKind::kGet) {
    uint64_t context = n.next_read_context++;
    if (!n.raft->read_index(context).has_value()) {
      reply(n.id, not_leader);
      return;
    }
    n.reads_unconfirmed.emplace(context, req);
    return;
  }
  // A retry of a write that is already applied: answer from the session table.
  if (std::optional<KvResult> done = n.kv.applied_result(req.client, req.seq)) {
    reply(n.id, ClientReply{req.client, req.seq, ReplyStatus::kOk, n.id, {}, done->cas_ok});
    return;
  }
  KvCommand cmd{req.client, req.seq, KvCommandKind::kPut, req.key, req.value, req.expected};
  if (req.kind == KvOpKind::kAppend) cmd.kind = KvCommandKind::kAppend;
  if (req.kind == KvOpKind::kCas) cmd.kind = KvCommandKind::kCas;
  if (!n.raft->propose(encode_command(cmd)).has_value()) {
    reply(n.id, not_leader);
    return;
  }
  n.waiting_writes.insert({req.client, req.seq});
}

void RaftSimulation::tick_node(SimNode& n) {
  n.raft->tick();
  n.tick_fed_ms.emplace_back(n.raft->ticks(), now_);
  if (n.tick_fed_ms.size() > 64) n.tick_fed_ms.pop_front();
}

void RaftSimulation::drain(SimNode& n) {
  while (n.up && !n.syncing && !n.stalled && (n.deferred_ticks > 0 || !n.inbox.empty())) {
    if (n.deferred_ticks > 0) {
      n.deferred_ticks -= 1;
      tick_node(n);
      pump(n);
      continue;
    }
    Event ev = std::move(n.inbox.front());
    n.inbox.pop_front();
    handle_at_node(n, std::move(ev));
  }
}

}  // namespace dfs::raft::sim
