// Deferred attribute changes: rsync and tar set the mode, owner and times of every file
// they write, one system call each. Waiting for the MDS on each costs a round trip per
// call; in exclusive mode none of them can fail for root (the kernel checked the
// permissions), and their outcome is a pure function of the inode, which this client
// knows exactly. So the client computes it with the MDS's own op, answers at once, and
// sends the merged change later, in the same batch as the next MDS call, so the MDS
// never sees a later request before it.
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include "client-fuse/libdfs/attr_predict.h"
#include "client-fuse/libdfs/file_client.h"
#include "client-fuse/libdfs/file_state.h"
#include "common/rpc/methods.h"

namespace dfs::client {
namespace {

constexpr uint32_t kDeferrable = kSetMode | kSetUid | kSetGid | kSetAtime | kSetMtime |
                                 kSetAtimeNow | kSetMtimeNow | kSetCtime;
// How long a change may wait for a request to ride along with before it goes alone.
constexpr Duration kDeferredDelay{20};

// `args` as a request the MDS applies exactly as predicted: "now" becomes this client's
// clock `now`, stated in the request, ctime included. `valid`: the fields it sets, as
// absolute values, with kSetCtime only where `args` set the ctime itself.
proto::SetAttrRequest stated_setattr(Ino ino, const SetAttrArgs& args, const proto::Timespec& now,
                                     uint32_t& valid) {
  proto::SetAttrRequest req = setattr_request(ino, args);
  valid = args.valid & ~(kSetAtimeNow | kSetMtimeNow);
  if (args.valid & kSetAtimeNow) valid |= kSetAtime;
  if (args.valid & kSetMtimeNow) valid |= kSetMtime;
  req.set_valid(valid | kSetCtime);
  *req.mutable_atime() = (args.valid & kSetAtimeNow) ? now : args.atime;
  *req.mutable_mtime() = (args.valid & kSetMtimeNow) ? now : args.mtime;
  *req.mutable_ctime() = (args.valid & kSetCtime) ? args.ctime : now;
  return req;
}

}  // namespace

std::optional<proto::Inode> FileClient::defer_setattr(const Creds& creds, Ino ino,
                                                      const SetAttrArgs& args) {
  if (!alone(ino) || !creds.is_root() || (args.valid & ~kDeferrable) != 0) {
    return std::nullopt;
  }
  const Known* k = known(ino);
  if (!k || !attrs_fresh(*k)) return std::nullopt;
  // Buffered writes go first (their push sets the mtime): the synchronous path.
  if (auto st = held(ino); st && st->dirty()) return std::nullopt;

  proto::Timespec now = now_timespec();
  uint32_t valid = 0;
  proto::SetAttrRequest req = stated_setattr(ino, args, now, valid);
  creds.to_proto(req.mutable_header()->mutable_creds());
  auto predicted = predict_setattr(k->inode, req, now);
  if (!predicted) return std::nullopt;  // let the MDS give its own error
  // The version stays the MDS's: its reply (one version later) then replaces this.
  predicted->set_version(k->inode.version());

  known_.predict_attrs(ino, *predicted, valid, creds);
  // From here on a listing fetched ahead refuses to show `ino` (untouched() is false);
  // one that came before goes now.
  walk_.touched({}, {ino});
  schedule_deferred_flush();
  proto::Inode reply = std::move(*predicted);
  overlay(reply);
  return reply;
}

std::optional<proto::Inode> FileClient::defer_growth(const Creds& creds, Ino ino,
                                                     const SetAttrArgs& args,
                                                     const std::shared_ptr<FileState>& st) {
  constexpr uint32_t kTimes = kSetAtime | kSetMtime | kSetAtimeNow | kSetMtimeNow | kSetCtime;
  if (!defers_in(ino) || (args.valid & ~(kSetSize | kTimes)) != 0) return std::nullopt;
  const Known* k = known(ino);
  if (!k || !attrs_fresh(*k) || !S_ISREG(k->inode.mode()) || args.size < k->inode.size()) {
    return std::nullopt;
  }
  const bool is_inline = k->inode.inline_();
  // Past the threshold the MDS would move an inline file's bytes to object 0 first.
  if (is_inline && args.size > inline_threshold() && k->inode.size() > 0) return std::nullopt;
  // The held state must say what the MDS holds: nothing buffered or on its way to the
  // OSDs, and an inline file's whole data (its bytes are what the change extends).
  if (st && (st->has_unrecorded_writes() || st->is_inline != is_inline ||
             (is_inline && st->inline_data.size() != k->inode.size()))) {
    return std::nullopt;
  }

  proto::Timespec now = now_timespec();
  uint32_t valid = 0;
  proto::SetAttrRequest req = stated_setattr(ino, args, now, valid);
  req.set_grow_only(true);
  req.set_inline_threshold(inline_threshold());
  auto* header = req.mutable_header();
  creds.to_proto(header->mutable_creds());
  *header->mutable_client_time() = now;  // the op's "now" (the mtime without kSetMtime)
  proto::Inode seed = k->inode;
  if (is_inline) seed.set_inline_data(st ? st->inline_data.data() : std::string(seed.size(), '\0'));
  auto predicted = predict_setattr(seed, req, now, inline_threshold());
  if (!predicted) return std::nullopt;  // let the MDS give its own error

  const uint64_t from = k->inode.size(), to = args.size;
  // The held state stays until the answer (as for a push): a refusal is repaired in it.
  if (st) ++st->deferred_pushes;
  queue_deferred<proto::InodeReply>(
      rpc::kMdsSetAttr, std::move(req), creds, {}, {ino},
      [this, st](const proto::InodeReply& r) {
        if (st) push_settled(*st, 0);
        learn(r.inode());
      },
      [this, ino, st, from, to](const Error& error) {
        if (st) push_settled(*st, 0);
        if (is_gone(error)) return;  // removed since: its size does not matter
        if (!st || held(ino) != st) return deferred_op_failed(error, {}, {ino});
        // The held state says the file has grown: its next push makes it so (an inline
        // file's zeros go as bytes, an object file's end as its size); a failure of that
        // push is reported as any.
        spdlog::warn("deferred growth of inode {:#x} to {} bytes refused ({}); the file's "
                     "next push sends it", ino, to, error.to_string());
        known_.mark_inexact(ino);
        if (st->is_inline) {
          st->inline_data.mark_dirty(std::min(from, st->inline_data.size()),
                                     st->inline_data.size());
        } else {
          st->recommit({std::min(to, st->size)});
        }
      });
  proto::Inode known_after = *predicted;
  known_after.clear_inline_data();
  adopt_prediction(known_after);
  return std::move(*predicted);
}

void FileClient::schedule_deferred_flush() {
  if (!deferred_flush_scheduled_ && !stopping_) {
    deferred_flush_scheduled_ = true;
    spawn_checked(executor(), flush_deferred_soon());
  }
}

void FileClient::seal_attr_changes() {
  for (auto& item : take_attr_changes()) mds_.deferred_queue().predict(std::move(item));
}

std::vector<DeferredOp> FileClient::take_attr_changes() {
  std::vector<DeferredOp> items;
  for (auto& change : known_.take_attr_changes()) {
    items.push_back(mds_.deferred(rpc::kMdsSetAttr, std::move(change.request), change.creds,
                                  [this, ino = change.ino](Result<rpc::Frame> reply) {
                                    if (!reply) walk_.touched({}, {ino});
                                    on_deferred_reply(ino, std::move(reply));
                                  }));
  }
  return items;
}

void FileClient::on_deferred_reply(Ino ino, Result<rpc::Frame> reply) {
  if (!reply) {
    known_.attrs_answered(ino, nullptr);
    if (is_gone(reply.error())) return;  // removed since: its attributes do not matter
    spdlog::warn("deferred attribute change of inode {:#x} failed: {}", ino,
                 reply.error().to_string());
    deferred_errors_.note(reply.error(), std::span<const uint64_t>(&ino, 1));
    known_.mark_inexact(ino);
    return;
  }
  auto parsed = rpc::parse_body<proto::InodeReply>(reply->body);
  known_.attrs_answered(ino, parsed ? &parsed->inode() : nullptr);
}

awaitable<void> FileClient::flush_deferred_soon() {
  if (!deferred_timer_) deferred_timer_ = std::make_shared<asio::steady_timer>(executor());
  auto timer = deferred_timer_;
  timer->expires_after(kDeferredDelay);
  co_await timer->async_wait(use_awaitable_tuple);
  if (stopping_) co_return;
  deferred_flush_scheduled_ = false;
  co_await mds_.flush_deferred();
}

void FileClient::prefer_newer(proto::Inode& inode) const {
  if (alone(inode.ino())) known_.prefer_newer(inode);
}

}  // namespace dfs::client
