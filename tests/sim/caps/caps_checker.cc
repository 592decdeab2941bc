#include "tests/sim/caps/caps_checker.h"

#include <map>

namespace dfs::caps::sim {
namespace {

std::string who(const SimClient& c) {
  return "client " + std::to_string(c.index()) + " (session " + std::to_string(c.session()) + ")";
}

bool live_unfenced(const CheckScope& sc, const SimClient& c) {
  return c.running() && !sc.storage->fenced(c.session());
}

void check_pairs(const CheckScope& sc, Ino ino, std::vector<std::string>& out) {
  const std::vector<SimClient>& cs = *sc.clients;
  for (size_t a = 0; a < cs.size(); ++a) {
    if (!live_unfenced(sc, cs[a])) continue;
    Rights ua = cs[a].caps()->usable(ino, sc.now);
    for (size_t b = a + 1; b < cs.size(); ++b) {
      if (!live_unfenced(sc, cs[b])) continue;
      Rights ub = cs[b].caps()->usable(ino, sc.now);
      if (conflicts(ua, ub)) {
        out.push_back("[1] ino " + std::to_string(ino) + ": " + who(cs[a]) + " may use " +
                      ua.to_string() + " while " + who(cs[b]) + " may use " + ub.to_string());
      }
    }
  }
}

void check_client(const CheckScope& sc, const SimClient& c, Ino ino,
                  std::vector<std::string>& out) {
  Rights used = c.caps()->usable(ino, sc.now);
  if (sc.storage->fenced(c.session())) {
    if (!used.empty()) {
      out.push_back("[5] ino " + std::to_string(ino) + ": fenced " + who(c) + " may still use " +
                    used.to_string() + " (lease until " + std::to_string(c.caps()->lease_until()) +
                    ")");
    }
    return;
  }
  // A new instance learns what a session holds only when it reconnects.
  if (sc.table->awaiting_reconnect(c.session())) return;
  Rights mds = sc.table->held(c.session(), ino);
  if (!mds.contains(used)) {
    out.push_back("[2] ino " + std::to_string(ino) + ": " + who(c) + " may use " +
                  used.to_string() + " but the MDS counts only " + mds.to_string());
  }
}

}  // namespace

void check_safety(const CheckScope& sc, std::vector<std::string>& out) {
  for (const InodeInfo& inode : *sc.inodes) {
    check_pairs(sc, inode.ino, out);
    for (const SimClient& c : *sc.clients) {
      if (c.running()) check_client(sc, c, inode.ino, out);
    }
  }
  const CapTableOptions& o = sc.table->options();
  sc.table->for_each_cap([&](const CapView& v) {
    if (!v.cap->revoking.empty() &&
        sc.now - v.cap->recall_first_sent > o.session_timeout_ms + sc.tick_ms) {
      out.push_back("[3] session " + std::to_string(v.session) + " has not acked a recall of " +
                    v.cap->revoking.to_string() + " on ino " + std::to_string(v.ino) + " since " +
                    std::to_string(v.cap->recall_first_sent) + " and is not evicted");
    }
  });
  for (SessionId s : sc.table->sessions()) {
    if (sc.table->caps_issued(s) > o.max_caps_per_session) {
      out.push_back("[4] session " + std::to_string(s) + " has rights on " +
                    std::to_string(sc.table->caps_issued(s)) + " inodes");
    }
  }
}

void check_settled(const CheckScope& sc, std::vector<std::string>& out) {
  if (sc.table->reconnecting()) out.push_back("[live] the MDS is still reconnecting");
  for (const SimClient& c : *sc.clients) {
    if (!c.running() || c.needs_new_session()) {
      out.push_back("[live] client " + std::to_string(c.index()) + " has no session");
    } else if (!c.settled()) {
      out.push_back("[live] " + who(c) + " still waits (a want, mutation, recall or reconnect)");
    }
  }
  std::map<Ino, std::vector<const CapView*>> wanting;
  std::vector<CapView> views;
  sc.table->for_each_cap([&](const CapView& v) { views.push_back(v); });
  for (const CapView& v : views) {
    if (!v.cap->revoking.empty() || v.cap->pending_want != 0) {
      out.push_back("[live] ino " + std::to_string(v.ino) + ": session " +
                    std::to_string(v.session) + " has a recall or want unsettled");
    }
    if (!v.cap->wanted.empty()) wanting[v.ino].push_back(&v);
  }
  for (const auto& [ino, list] : wanting) {
    const CapRecord& cap = *list[0]->cap;
    if (list.size() == 1 && !cap.issued.contains(cap.wanted)) {
      out.push_back("[live] ino " + std::to_string(ino) + ": session " +
                    std::to_string(list[0]->session) + " is alone but holds " +
                    cap.issued.to_string() + " of " + cap.wanted.to_string());
    }
  }
}

}  // namespace dfs::caps::sim
