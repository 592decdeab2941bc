#include "common/daemon/metrics_setup.h"

#include <spdlog/spdlog.h>

#include "common/metrics/process_metrics.h"

namespace dfs {

std::unique_ptr<metrics::HttpExporter> start_metrics(boost::asio::any_io_executor executor,
                                                     const Config& config,
                                                     const std::string& section,
                                                     const std::string& listen_addr) {
  auto address = metrics::metrics_address(config.get_or(section, "metrics_addr", ""), listen_addr);
  if (!address) {
    spdlog::warn("no metrics: {}", address.error().to_string());
    return nullptr;
  }
  if (address->empty()) {
    spdlog::info("metrics off (metrics_addr = off)");
    return nullptr;
  }
  auto& registry = metrics::Registry::process();
  metrics::add_process_collector(registry, section);
  auto exporter = std::make_unique<metrics::HttpExporter>(std::move(executor), registry);
  auto bound = exporter->listen(*address);
  if (!bound) {
    spdlog::warn("no metrics: {} (set metrics_addr in [{}])", bound.error().to_string(), section);
    return nullptr;
  }
  spdlog::info("metrics for Prometheus at http://{}/metrics", *bound);
  return exporter;
}

}  // namespace dfs
