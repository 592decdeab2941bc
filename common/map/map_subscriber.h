// MapSubscriber: keeps a daemon's or client's copy of the cluster map current. It
// subscribes to one monitor (failing over among all known monitors, also when the one
// it is on stops answering while its connection stays open), applies the incrementals
// the monitor pushes, and wakes waiters and listeners on every new epoch.
// Runs on the owner's single-threaded executor, through the owner's Messenger.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/map/cluster_map.h"
#include "common/proto/mon.pb.h"
#include "common/rpc/messenger.h"

namespace dfs {

class MapSubscriber {
 public:
  // `mon_addrs`: every monitor's host:port.
  MapSubscriber(asio::any_io_executor executor, rpc::Messenger& messenger,
                std::vector<std::string> mon_addrs);

  // Starts subscribing in the background; returns at once.
  void start();

  // Feeds a kMonMapUpdate push (the owner's Messenger routes pushes here).
  void on_push(const rpc::Frame& frame);

  const ClusterMap& map() const { return map_; }
  uint64_t epoch() const { return map_.epoch(); }

  // Waits until the map's epoch is at least `epoch`. Errors: kTimeout.
  awaitable<Status> wait_for_epoch(uint64_t epoch, Duration timeout);
  // Waits until the first answer from a monitor (the map may still be empty).
  // Errors: kTimeout; kWrongCluster when a monitor refused us as a member of another
  // cluster (or names another itself) before any answered: waiting longer cannot help.
  awaitable<Status> wait_ready(Duration timeout);
  bool ready() const { return ready_; }
  // Waits for any epoch newer than the current one. Errors: kTimeout.
  awaitable<Status> wait_for_change(Duration timeout);

  // Called on the executor after every applied change, with the previous map.
  void add_listener(std::function<void(const ClusterMap& previous)> listener);

  // Sends a request to a monitor, trying each in turn until one answers.
  // Errors: kUnavailable when none answers, or the monitor's own error.
  awaitable<Result<rpc::Frame>> call_mon(uint32_t method, std::string body, Duration timeout);

  const std::vector<std::string>& mon_addrs() const { return mon_addrs_; }

 private:
  awaitable<void> subscribe_loop();
  // Subscribes again on the current subscription's connection; if the monitor does not
  // answer in time, closes that connection so that the loop subscribes to the next one.
  // Requires: subscribed_on_ is set.
  awaitable<void> probe_subscription();
  void apply(const proto::MapUpdate& update);
  void notify(const ClusterMap& previous);
  // Keeps a monitor's refusal of our cluster (the first) for wait_ready and wakes it.
  void note_wrong_cluster(const Error& error);

  asio::any_io_executor executor_;
  rpc::Messenger& messenger_;
  std::vector<std::string> mon_addrs_;
  size_t current_mon_ = 0;
  ClusterMap map_;
  std::vector<std::function<void(const ClusterMap&)>> listeners_;
  std::vector<std::shared_ptr<asio::steady_timer>> waiters_;
  rpc::ConnectionPtr subscribed_on_;
  bool ready_ = false;
  std::optional<Error> wrong_cluster_;  // a monitor's refusal, before any answered
};

}  // namespace dfs
