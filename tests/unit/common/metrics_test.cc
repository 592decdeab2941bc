// The Prometheus exporter: the text format of counters, gauges, histograms and
// collectors, and the HTTP server on a real socket (GET /metrics, 404, 405, junk).
#include <doctest/doctest.h>

#include <boost/asio.hpp>
#include <thread>

#include "common/metrics/http_exporter.h"
#include "common/metrics/registry.h"

namespace dfs::metrics {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("metrics: series render in the exposition format") {
  Registry r;
  r.counter("dfs_test_requests_total", "requests", {{"method", "osd_write"}}).add(3);
  r.counter("dfs_test_requests_total", "ignored", {{"method", "osd_read"}}).add();
  r.gauge("dfs_test_depth", "queue depth").set(2.5);
  auto& h = r.histogram("dfs_test_seconds", "latency", {{"method", "x"}});
  h.observe(0.0002);
  h.observe(0.003);
  h.observe(60.0);  // past the last bound: only +Inf and the count see it
  r.add_collector([](SampleWriter& w) { w.gauge("dfs_test_term", "raft term", {{"group", "a\"b"}}, 7); });
  const std::string text = r.render();
  CHECK(contains(text, "# HELP dfs_test_requests_total requests\n# TYPE dfs_test_requests_total counter\n"));
  CHECK(contains(text, "dfs_test_requests_total{method=\"osd_write\"} 3\n"));
  CHECK(contains(text, "dfs_test_requests_total{method=\"osd_read\"} 1\n"));
  CHECK(contains(text, "# TYPE dfs_test_depth gauge\ndfs_test_depth 2.5\n"));
  CHECK(contains(text, "dfs_test_seconds_bucket{method=\"x\",le=\"0.0001\"} 0\n"));
  CHECK(contains(text, "dfs_test_seconds_bucket{method=\"x\",le=\"0.00025\"} 1\n"));
  CHECK(contains(text, "dfs_test_seconds_bucket{method=\"x\",le=\"0.005\"} 2\n"));
  CHECK(contains(text, "dfs_test_seconds_bucket{method=\"x\",le=\"10\"} 2\n"));
  CHECK(contains(text, "dfs_test_seconds_bucket{method=\"x\",le=\"+Inf\"} 3\n"));
  CHECK(contains(text, "dfs_test_seconds_count{method=\"x\"} 3\n"));
  CHECK(contains(text, "# TYPE dfs_test_term gauge\ndfs_test_term{group=\"a\\\"b\"} 7\n"));
  // The same series twice is one series.
  CHECK(&r.counter("dfs_test_requests_total", "", {{"method", "osd_write"}}) ==
        &r.counter("dfs_test_requests_total", "", {{"method", "osd_write"}}));
}

TEST_CASE("metrics: the address follows the daemon's unless set") {
  CHECK(*metrics_address("", "10.0.0.1:6800") == "10.0.0.1:7800");
  CHECK(*metrics_address("", "127.0.0.1:0") == "127.0.0.1:0");
  CHECK(*metrics_address("0.0.0.0:9100", "10.0.0.1:6800") == "0.0.0.0:9100");
  CHECK(metrics_address("off", "10.0.0.1:6800")->empty());
  CHECK_FALSE(metrics_address("", "10.0.0.1:65000"));
  CHECK_FALSE(metrics_address("", "nonsense"));
}

// Sends `request` to `address` and returns everything the server sent until it closed.
std::string http_exchange(const std::string& address, const std::string& request) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket s(io);
  auto colon = address.rfind(':');
  s.connect({boost::asio::ip::make_address(address.substr(0, colon)),
             static_cast<unsigned short>(std::stoi(address.substr(colon + 1)))});
  boost::asio::write(s, boost::asio::buffer(request));
  std::string out;
  boost::system::error_code ec;
  char buf[4096];
  for (;;) {
    size_t n = s.read_some(boost::asio::buffer(buf), ec);
    if (ec) break;
    out.append(buf, n);
  }
  return out;
}

TEST_CASE("metrics: the HTTP exporter serves /metrics and nothing else") {
  Registry r;
  r.counter("dfs_test_served_total", "served").add(42);
  boost::asio::io_context io;
  HttpExporter exporter(io.get_executor(), r);
  auto address = exporter.listen("127.0.0.1:0");
  REQUIRE(address);
  std::thread runner([&] { io.run(); });

  std::string ok = http_exchange(*address, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  CHECK(contains(ok, "HTTP/1.1 200 OK"));
  CHECK(contains(ok, "Content-Type: text/plain; version=0.0.4"));
  CHECK(contains(ok, "dfs_test_served_total 42\n"));
  CHECK(contains(http_exchange(*address, "GET / HTTP/1.1\r\nConnection: close\r\n\r\n"), "404 Not Found"));
  CHECK(contains(http_exchange(*address, "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
                 "405 Method Not Allowed"));
  // Junk closes that connection only; the next scrape is served.
  CHECK_FALSE(contains(http_exchange(*address, "\x01\x02 not http at all\r\n\r\n"), "200 OK"));
  CHECK(contains(http_exchange(*address, "GET /metrics HTTP/1.0\r\n\r\n"), "dfs_test_served_total 42"));

  boost::asio::post(io, [&] { exporter.stop(); });
  io.stop();
  runner.join();
}

}  // namespace
}  // namespace dfs::metrics
