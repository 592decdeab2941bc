// RaftSimulation, client side: each client runs one operation at a time, sends it to
// the node it believes leads, and on a timeout or a not-leader answer retries the same
// request (same seq) elsewhere until it gets an answer or the run ends.
#include "tests/sim/raft/sim_parts.h"

namespace dfs::raft::sim {

using dfs::sim::KvOpKind;

void RaftSimulation::step_clients() {
  // The last stretch of the run is quiet so that every voter can catch up before the
  // convergence check; operations still open then end up with unknown outcomes.
  if (now_ + kQuietMs >= options_.fault_ms + options_.heal_ms) return;
  for (auto& cp : clients_) {
    SimClient& c = *cp;
    if (c.scripted) continue;
    if (!c.busy) {
      if (now_ >= c.next_start) start_op(c);
      continue;
    }
    if (c.resend_at != 0 && now_ >= c.resend_at) {
      c.resend_at = 0;
      send_request(c);
    } else if (now_ >= c.deadline) {
      // No answer: the node may be down or cut off; try another one.
      NodeId other = random_.uniform(1, options_.nodes);
      c.target = other >= c.target ? other + 1 : other;
      send_request(c);
    }
  }
}

void RaftSimulation::start_op(SimClient& c) {
  static const char* const kKeys[] = {"a", "b", "c"};
  ClientRequest& r = c.request;
  r = ClientRequest{};
  r.client = c.id;
  r.seq = ++c.seq;
  r.key = kKeys[random_.uniform(0, 3)];
  std::string tag = std::to_string(c.id) + "." + std::to_string(c.seq);
  uint64_t pick = random_.uniform(0, 100);
  if (pick < 35) {
    r.kind = KvOpKind::kGet;
    c.op = history_.begin_get(c.id, r.key, now_);
  } else if (pick < 60) {
    r.kind = KvOpKind::kPut;
    r.value = "p" + tag;
    c.op = history_.begin_put(c.id, r.key, r.value, now_);
  } else if (pick < 85) {
    r.kind = KvOpKind::kAppend;
    r.value = tag + ",";
    c.op = history_.begin_append(c.id, r.key, r.value, now_);
  } else {
    r.kind = KvOpKind::kCas;
    r.expected = c.last_seen[r.key];
    r.value = "c" + tag;
    c.op = history_.begin_cas(c.id, r.key, r.expected, r.value, now_);
  }
  c.busy = true;
  result_.client_ops += 1;
  send_request(c);
}

void RaftSimulation::send_request(SimClient& c) {
  c.deadline = now_ + kClientTimeoutMs;
  Event ev;
  ev.kind = Event::kRequest;
  ev.node = c.target;
  ev.request = c.request;
  trace(8, c.id, c.request.seq, c.target);
  send_event(std::move(ev), kNoNode, c.target);
}

void RaftSimulation::handle_reply(const ClientReply& r) {
  SimClient& c = *clients_[r.client - 1];
  if (!c.busy || r.seq != c.request.seq) return;  // a duplicate or a late answer
  trace(9, r.client, r.seq, static_cast<uint64_t>(r.status));
  if (r.status == ReplyStatus::kNotLeader) {
    if (c.scripted) {
      c.busy = false;  // the operation stays an unknown outcome
      return;
    }
    if (r.leader_hint != kNoNode) c.target = r.leader_hint;
    else c.target = random_.uniform(1, options_.nodes + 1);
    c.resend_at = now_ + 5;
    return;
  }
  switch (c.request.kind) {
    case KvOpKind::kGet:
      history_.finish_get(c.op, r.value, now_);
      c.last_seen[c.request.key] = r.value;
      break;
    case KvOpKind::kCas:
      history_.finish_cas(c.op, r.cas_ok, now_);
      if (r.cas_ok) c.last_seen[c.request.key] = c.request.value;
      break;
    default:
      history_.finish(c.op, now_);
      break;
  }
  c.busy = false;
  c.resend_at = 0;
  result_.completed_ops += 1;
  c.next_start = now_ + random_.uniform(0, 30);
}

}  // namespace dfs::raft::sim
