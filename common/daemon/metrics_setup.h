// Starting a daemon's Prometheus exporter from its config: `metrics_addr` in its section
// (or its type's, or [global]), else its RPC address's host with the port + 1000, or
// "off". A port that cannot be bound costs the metrics, not the daemon: it logs why and
// runs on.
#pragma once

#include <memory>
#include <string>

#include "common/config/config.h"
#include "common/metrics/http_exporter.h"

namespace dfs {

// Returns the running exporter, or nullptr when off or unable to bind (logged).
std::unique_ptr<metrics::HttpExporter> start_metrics(boost::asio::any_io_executor executor,
                                                     const Config& config,
                                                     const std::string& section,
                                                     const std::string& listen_addr);

}  // namespace dfs
