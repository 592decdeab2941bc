#include "client-fuse/libdfs/open_files.h"

#include <string>

namespace dfs::client {

std::shared_ptr<FileState> OpenFiles::held(Ino ino) const {
  auto it = states_.find(ino);
  return it == states_.end() ? nullptr : it->second;
}

std::shared_ptr<FileState> OpenFiles::hold(Ino ino) {
  auto& slot = states_[ino];
  slot = std::make_shared<FileState>(ino);
  return slot;
}

bool OpenFiles::drop(const std::shared_ptr<FileState>& st) {
  auto it = states_.find(st->ino);
  if (it == states_.end() || it->second != st) return false;
  states_.erase(it);
  return true;
}

Fh OpenFiles::add(std::shared_ptr<Handle> h) {
  const Fh fh = next_fh_++;
  handles_.emplace(fh, std::move(h));
  return fh;
}

Result<std::shared_ptr<Handle>> OpenFiles::handle(Fh fh) const {
  auto it = handles_.find(fh);
  if (it == handles_.end()) {
    return make_error(ErrorCode::kInvalidArgument, "no open file handle " + std::to_string(fh));
  }
  if (it->second->state && it->second->state->fenced) {
    return make_error(ErrorCode::kFenced,
                      "the file had unwritten data when this mount's session was evicted");
  }
  return it->second;
}

std::shared_ptr<Handle> OpenFiles::find(Fh fh) const {
  auto it = handles_.find(fh);
  return it == handles_.end() ? nullptr : it->second;
}

std::shared_ptr<Handle> OpenFiles::remove(Fh fh) {
  auto it = handles_.find(fh);
  if (it == handles_.end()) return nullptr;
  auto h = std::move(it->second);
  handles_.erase(it);
  return h;
}

}  // namespace dfs::client
