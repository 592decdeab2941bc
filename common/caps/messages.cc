#include "common/caps/messages.h"

namespace dfs::caps {
namespace {

std::string seq_text(CapSeq seq) {
  // incarnation.counter reads better than one 64-bit number.
  return std::to_string(seq >> 32) + "." + std::to_string(seq & 0xffffffffu);
}

struct Describer {
  std::string operator()(const Grant& m) const {
    return "Grant ino=" + std::to_string(m.ino) + " issued=" + m.issued.to_string() +
           " seq=" + seq_text(m.seq) + " want=" + std::to_string(m.want_id);
  }
  std::string operator()(const Revoke& m) const {
    return "Revoke ino=" + std::to_string(m.ino) + " after=" + m.issued_after.to_string() +
           " seq=" + seq_text(m.seq);
  }
  std::string operator()(const Evicted& m) const {
    return "Evicted session=" + std::to_string(m.session);
  }
  std::string operator()(const Want& m) const {
    return "Want ino=" + std::to_string(m.ino) + " " + kind_name(m.kind) +
           " wanted=" + m.wanted.to_string() + " id=" + std::to_string(m.want_id);
  }
  std::string operator()(const Ack& m) const {
    return "Ack ino=" + std::to_string(m.ino) + " seq=" + seq_text(m.seq) +
           " holds=" + m.now_holds.to_string();
  }
  std::string operator()(const Release& m) const {
    return "Release ino=" + std::to_string(m.ino) + " seq=" + seq_text(m.seq) +
           " bits=" + m.bits.to_string();
  }
  std::string operator()(const Renew& m) const {
    return "Renew sent_at=" + std::to_string(m.sent_at);
  }
  std::string operator()(const Reconnect& m) const {
    std::string out = "Reconnect to=" + std::to_string(m.incarnation);
    for (const HeldCap& c : m.caps) {
      out += " [" + std::to_string(c.ino) + " " + c.held.to_string() + " / " +
             c.wanted.to_string() + "]";
    }
    return out;
  }
};

}  // namespace

std::string describe(const MdsMessage& message) { return std::visit(Describer{}, message); }
std::string describe(const ClientMessage& message) { return std::visit(Describer{}, message); }

}  // namespace dfs::caps
