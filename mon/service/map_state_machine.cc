#include "mon/service/map_state_machine.h"

#include <spdlog/spdlog.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>

namespace dfs::mon {

MapStateMachine::MapStateMachine(proto::ClusterMap genesis, size_t history)
    : map_(std::move(genesis)), history_limit_(history) {}

void MapStateMachine::set_listener(std::function<void(const proto::MapUpdate&)> listener) {
  listener_ = std::move(listener);
}

std::string MapStateMachine::apply(raft::Index index, std::string_view command) {
  applied_ = index;
  proto::MapCommand parsed;
  if (!parsed.ParseFromArray(command.data(), static_cast<int>(command.size()))) {
    // The leader proposes only commands it decoded, so this is a foreign entry; every
    // monitor rejects it alike and no epoch is consumed.
    return encode_result(make_error(ErrorCode::kInvalidArgument, "undecodable map command"));
  }
  Status applied = map_.apply(parsed);
  if (!applied) return encode_result(unexpected(applied.error()));
  proto::MapIncremental incremental;
  incremental.set_epoch(map_.epoch());
  *incremental.mutable_command() = std::move(parsed);
  history_.push_back(incremental);
  while (history_.size() > history_limit_) history_.pop_front();
  spdlog::info("epoch {} (raft index {}): {}", map_.epoch(), index,
               incremental.command().ShortDebugString());
  if (listener_) {
    proto::MapUpdate update;
    *update.add_incrementals() = std::move(incremental);
    listener_(update);
  }
  return encode_result(map_.epoch());
}

std::string MapStateMachine::snapshot(raft::Index /*applied*/) {
  return map_.proto().SerializeAsString();
}

void MapStateMachine::restore(raft::Index index, std::string_view image) {
  proto::ClusterMap parsed;
  if (!parsed.ParseFromArray(image.data(), static_cast<int>(image.size()))) {
    // The image was written by a monitor from its own map; one that does not decode
    // means a corrupt store or a foreign group: serving a wrong map is worse than stopping.
    std::fprintf(stderr, "dfs-mon: map snapshot at raft index %llu does not decode\n",
                 static_cast<unsigned long long>(index));
    std::abort();
  }
  spdlog::info("restored map epoch {} from the raft snapshot at index {}", parsed.epoch(), index);
  map_ = ClusterMap(std::move(parsed));
  applied_ = index;
  history_.clear();  // incrementals before the image are gone: late subscribers get it whole
  if (listener_) {
    proto::MapUpdate update;
    *update.mutable_full() = map_.proto();
    listener_(update);
  }
}

proto::MapUpdate MapStateMachine::catch_up(uint64_t have_epoch) const {
  proto::MapUpdate update;
  if (have_epoch >= map_.epoch()) return update;
  bool kept = have_epoch > 0 && !history_.empty() && history_.front().epoch() <= have_epoch + 1;
  if (!kept) {
    *update.mutable_full() = map_.proto();
    return update;
  }
  for (const auto& inc : history_) {
    if (inc.epoch() > have_epoch) *update.add_incrementals() = inc;
  }
  return update;
}

std::string MapStateMachine::encode_result(const Result<uint64_t>& outcome) {
  if (outcome) return "ok " + std::to_string(*outcome);
  return "err " + std::to_string(static_cast<int32_t>(outcome.error().code())) + " " +
         outcome.error().context();
}

Result<uint64_t> MapStateMachine::decode_result(std::string_view result) {
  auto number = [](std::string_view text, auto& out) {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() ? static_cast<size_t>(end - text.data()) : std::string_view::npos;
  };
  if (result.rfind("ok ", 0) == 0) {
    uint64_t epoch = 0;
    if (number(result.substr(3), epoch) == result.size() - 3) return epoch;
  } else if (result.rfind("err ", 0) == 0) {
    int32_t code = 0;
    size_t used = number(result.substr(4), code);
    if (used != std::string_view::npos) {
      std::string_view context = result.substr(4 + used);
      if (!context.empty() && context[0] == ' ') context.remove_prefix(1);
      return make_error(static_cast<ErrorCode>(code), std::string(context));
    }
  }
  return make_error(ErrorCode::kInternal, "undecodable map command result '" +
                                              std::string(result.substr(0, 64)) + "'");
}

}  // namespace dfs::mon
