// FileClient: what a mount does when the MDS evicted its session (docs/architecture.md,
// "Client sessions and eviction"). The MDS did so because the session stopped renewing
// (the process was paused, the host cut off) or an operator asked; the map fences the
// old entity, so nothing sent under it lands any more. The mount reports what was lost,
// and goes on under a new entity with a new session for everything else.
#include <fcntl.h>
#include <spdlog/spdlog.h>

#include <unordered_set>

#include "client-fuse/libdfs/file_client.h"
#include "client-fuse/libdfs/file_state.h"
#include "common/rpc/methods.h"

namespace dfs::client {

void FileClient::on_evicted_notice(const rpc::Frame& frame) {
  auto notice = rpc::parse_body<proto::EvictedNotice>(frame.body);
  if (!notice || notice->client() != objects_->entity()) return;  // an older session's
  on_evicted(Error(ErrorCode::kFenced, notice->reason()));
}

void FileClient::on_evicted(const Error& why) {
  const std::string old_entity = objects_->entity();
  Error lost(ErrorCode::kFenced, "session " + old_entity + " was evicted: " + why.context());

  // Files with writes that had not reached the OSDs and the MDS: lost, and their open
  // handles fail from now on. A file open for writing counts too: the kernel may hold
  // dirty pages of it (the writeback cache) that it sends only later. Their states leave
  // the table, so that a new open starts from what the MDS has. Other files stay held
  // and are opened again below.
  std::unordered_set<Ino> open_for_writing;
  for (const auto& [fh, h] : files_.handles()) {
    if (h->state && (h->flags & O_ACCMODE) != O_RDONLY) open_for_writing.insert(h->ino);
  }
  for (const auto& [ino, st] : files_.states()) st->others_may_write();
  auto lost_states = files_.drop_if([&open_for_writing](const FileState& st) {
    return st.has_unrecorded_writes() || st.deferred_pushes > 0 || st.write_error ||
           open_for_writing.count(st.ino);
  });
  const size_t lost_files = lost_states.size();
  for (auto& st : lost_states) {
    st->fenced = true;
    st->write_error = lost;  // for the handles open now
    // For an fsync through a handle opened later: the loss is the file's, reported once.
    deferred_errors_.note(lost, std::span<const uint64_t>(&st->ino, 1));
    st->commit_dirty = false;
    st->mds_open = false;  // the eviction dropped its MDS open
  }

  // Deferred changes were answered to the kernel but made under the fenced session.
  size_t lost_changes = mds_.deferred_queue().fail_all(lost);
  // Each dropped change noted its error for the inodes it concerned (its `done`), which
  // their next fsync reports, as a failed writeback is; the unmount's sync reports it too.
  if (lost_changes > 0) deferred_errors_.note(lost, {});

  // Exclusive caching and owned directories went with the session (others changed
  // things since): the new session's reply says whether exclusive caching comes back,
  // and the kernel forgets what it cached.
  if (auto scope = rights_.evicted(); scope && kernel_invalidator_ && !stopping_) {
    spawn_checked(executor(), kernel_invalidator_(std::move(*scope)));
  }
  // What this client knew exactly may have changed since its session was fenced.
  forget_exact_knowledge();
  delegated_.forget();  // the range was the old session's
  locks_.evicted();  // the MDS dropped them with the session

  objects_->take_new_entity();
  spdlog::error(
      "this mount's session {} was evicted by the MDS ({}): {} file(s) with unwritten data "
      "and {} deferred change(s) are lost and report EIO; continuing as {}",
      old_entity, why.context(), lost_files, lost_changes, objects_->entity());
  spawn_checked(executor(), reopen_all("new session after an eviction"));
}

}  // namespace dfs::client
