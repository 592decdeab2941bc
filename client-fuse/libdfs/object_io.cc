#include "client-fuse/libdfs/object_io.h"

#include <spdlog/spdlog.h>

#include <cstring>

#include "client-fuse/libdfs/file_state.h"

namespace dfs::client {
namespace {

// A piece that holds `offset` is prefetched or in flight already (a whole file's data
// fetched ahead is one piece bigger than the prefetch pieces).
bool covered_by_readahead(const FileState& st, uint64_t offset) {
  auto it = st.readahead.upper_bound(offset);
  if (it == st.readahead.begin()) return false;
  --it;
  return it->first + it->second->length > offset;
}

}  // namespace

awaitable<Result<std::string>> ObjectIo::read(std::shared_ptr<FileState> st, uint64_t offset,
                                              uint64_t length, bool holes_known) {
  auto all = map_range(st->layout, offset, length);
  uint64_t gen = st->write_gen;
  std::vector<ObjectExtent> extents;
  std::vector<awaitable<Result<std::string>>> tasks;
  for (const auto& e : all) {
    if (holes_known && st->missing_objects.count(e.object_index)) continue;  // a hole
    extents.push_back(e);
    tasks.push_back(objects_.read(st->layout.pool, object_name(st->ino, e.object_index),
                                  e.object_offset, e.length));
  }
  auto results = co_await in_parallel(std::move(tasks));
  if (all.size() == 1 && results.size() == 1 && results[0] && results[0]->size() == length) {
    co_return std::move(*results[0]);
  }
  std::string out(length, '\0');  // holes and short objects read as zeros
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i]) {
      if (results[i].error().code() == ErrorCode::kNotFound) {
        if (holes_known && st->write_gen == gen) {
          st->missing_objects.insert(extents[i].object_index);
        }
        continue;
      }
      co_return unexpected(
          std::move(results[i])
              .error()
              .with_context("reading object " + object_name(st->ino, extents[i].object_index)));
    }
    std::memcpy(out.data() + extents[i].buffer_offset, results[i]->data(),
                std::min<uint64_t>(results[i]->size(), extents[i].length));
  }
  co_return out;
}

void ObjectIo::prefetch(std::shared_ptr<FileState> st, uint64_t from, uint64_t window,
                        bool holes_known) {
  uint64_t piece = std::min<uint64_t>(st->layout.object_size, kMaxPrefetchPiece);
  uint64_t end = std::min(st->size, from + window);
  for (uint64_t off = from / piece * piece; off < end; off += piece) {
    if (covered_by_readahead(*st, off)) continue;
    auto p = std::make_shared<Prefetch>();
    p->offset = off;
    p->length = std::min(piece, st->size - off);
    st->readahead[off] = p;
    spawn_checked(objects_.executor(),
                  [](ObjectIo* self, std::shared_ptr<FileState> state,
                     std::shared_ptr<Prefetch> pf, bool holes) -> awaitable<void> {
                    pf->data = co_await self->read(state, pf->offset, pf->length, holes);
                    pf->done.set();
                  }(this, st, p, holes_known));
  }
  // Keep the window bounded: what lies behind the reader goes first.
  size_t max_pieces = options_.readahead_bytes / piece + 2;
  while (st->readahead.size() > max_pieces) st->readahead.erase(st->readahead.begin());
}

awaitable<Result<std::string>> ObjectIo::read_through(std::shared_ptr<FileState> st,
                                                      uint64_t offset, uint64_t length,
                                                      bool sequential, bool holes_known) {
  // Pieces wholly behind a sequential reader are done with (not pinned data).
  while (!st->data_pinned && !st->readahead.empty()) {
    auto first = st->readahead.begin();
    if (first->first + first->second->length > offset) break;
    st->readahead.erase(first);
  }
  if (options_.readahead_bytes > 0 && sequential) {
    prefetch(st, offset + length, options_.readahead_bytes, holes_known);
  } else if (options_.readahead_bytes > 0 && offset == 0 && length < st->size) {
    // A read from the start is most often the first of a whole-file read (cp, rsync,
    // tar): the kernel would ask for the rest in a few more sequential reads, one OSD
    // round trip each; fetch the next piece alongside this one instead.
    prefetch(st, length, std::min<uint64_t>(options_.readahead_bytes, kMaxPrefetchPiece),
             holes_known);
  }

  // Serve from prefetched pieces when they cover the whole range.
  std::vector<std::shared_ptr<Prefetch>> pieces;
  uint64_t pos = offset;
  while (pos < offset + length) {
    auto it = st->readahead.upper_bound(pos);
    if (it == st->readahead.begin()) break;
    --it;
    if (it->first + it->second->length <= pos) break;
    pieces.push_back(it->second);
    pos = it->first + it->second->length;
  }
  if (pos < offset + length) co_return co_await read(st, offset, length, holes_known);
  std::string out(length, '\0');
  for (const auto& p : pieces) {
    co_await p->done.wait();
    if (!p->data) co_return co_await read(st, offset, length, holes_known);
    uint64_t from = std::max(offset, p->offset);
    uint64_t to = std::min(offset + length, p->offset + p->length);
    if (from - p->offset < p->data->size()) {
      uint64_t n = std::min<uint64_t>(to - from, p->data->size() - (from - p->offset));
      std::memcpy(out.data() + (from - offset), p->data->data() + (from - p->offset), n);
    }
  }
  co_return out;
}

awaitable<Status> ObjectIo::write(std::shared_ptr<FileState> st, uint64_t offset,
                                  std::string data) {
  auto extents = map_range(st->layout, offset, data.size());
  std::vector<awaitable<Result<proto::WriteReply>>> tasks;
  for (const auto& e : extents) {
    st->missing_objects.erase(e.object_index);  // before the write: a read must not skip it
    ++st->write_gen;
    std::string piece =
        extents.size() == 1 ? std::move(data) : data.substr(e.buffer_offset, e.length);
    tasks.push_back(objects_.write(st->layout.pool, object_name(st->ino, e.object_index),
                                   e.object_offset, std::move(piece)));
  }
  auto results = co_await in_parallel(std::move(tasks));
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i]) {
      co_return unexpected(
          std::move(results[i])
              .error()
              .with_context("writing object " + object_name(st->ino, extents[i].object_index)));
    }
  }
  co_return ok_status();
}

void ObjectIo::write_started(FileState& st) {
  if (st.object_writes_running++ == 0) st.writes_drained = std::make_shared<AsyncEvent>();
}

void ObjectIo::write_ended(FileState& st, uint64_t end, bool written) {
  if (written) {
    st.finished_end = std::max(st.finished_end, end);
    st.finished_any = true;
  }
  if (--st.object_writes_running > 0) return;
  if (st.finished_any) {
    st.recommit({st.finished_end});
    st.finished_any = false;
  }
  st.writes_drained->set();
}

void ObjectIo::send_gathering(FileState& st) {
  if (auto gathering = std::exchange(st.gather, nullptr)) gathering->timer.cancel();
}

awaitable<void> ObjectIo::lock_exclusive(std::shared_ptr<FileState> st) {
  send_gathering(*st);
  co_await st->io.lock();
}

awaitable<void> ObjectIo::drain(std::shared_ptr<FileState> st) {
  send_gathering(*st);
  while (st->object_writes_running > 0) {
    auto drained = st->writes_drained;
    co_await drained->wait();
  }
}

bool ObjectIo::overlaps_behind(const FileState& st, uint64_t offset, uint64_t length) const {
  for (const auto& [from, to] : st.behind) {
    if (from < offset + length && offset < to) return true;
  }
  return false;
}

bool ObjectIo::join_behind(FileState& st, uint64_t offset, std::string& data) {
  BehindGather* gathering = st.gather.get();
  if (!gathering) return false;
  const uint64_t end = gathering->offset + gathering->data.size();
  if (offset < end || end < st.high_water) return false;
  const uint64_t hole = offset - end;
  const uint64_t added = hole + data.size();
  if (hole > kMaxGatherHole || gathering->data.size() + added > kMaxGatherBytes ||
      !behind_fits(added)) {
    return false;
  }
  auto [it, last] = st.behind.equal_range(gathering->offset);
  while (it != last && it->second != end) ++it;
  if (it == last) return false;  // not running behind (cannot happen: it registered)
  const uint64_t new_end = offset + data.size();
  it->second = new_end;
  // The objects it reaches are holes no more, and a read running now learns nothing.
  for (uint64_t index : objects_in_range(st.layout, end, new_end)) st.missing_objects.erase(index);
  ++st.write_gen;
  gathering->data.append(hole, '\0');
  gathering->data.append(data);
  data.clear();
  behind_bytes_ += added;
  ++joined_writes_;
  return true;
}

void ObjectIo::behind_started(FileState& st, uint64_t offset, uint64_t length) {
  st.behind.emplace(offset, offset + length);
  behind_bytes_ += length;
  ++behind_writes_;
}

awaitable<void> ObjectIo::write_behind(std::shared_ptr<FileState> st, uint64_t offset,
                                       std::string data) {
  if (options_.behind_gather_window.count() > 0) {
    auto gathering =
        std::make_shared<BehindGather>(co_await asio::this_coro::executor, offset, std::move(data));
    st->gather = gathering;
    gathering->timer.expires_after(options_.behind_gather_window);
    co_await gathering->timer.async_wait(use_awaitable_tuple);
    if (st->gather == gathering) st->gather.reset();
    data = std::move(gathering->data);
  }
  uint64_t length = data.size();
  Status written = co_await write(st, offset, std::move(data));
  behind_bytes_ -= length;
  for (auto [it, end] = st->behind.equal_range(offset); it != end; ++it) {
    if (it->second == offset + length) {
      st->behind.erase(it);
      break;
    }
  }
  if (!written) {
    ++behind_failures_;
    spdlog::warn("an acknowledged write of {} bytes at {} to inode {:#x} failed: {}; the "
                 "file's next flush or fsync reports it",
                 length, offset, st->ino, written.error().to_string());
    if (!st->write_error) st->write_error = written.error();
  }
  write_ended(*st, offset + length, written.has_value());
}

}  // namespace dfs::client
