// The metrics a daemon exports to Prometheus: counters, gauges and latency histograms,
// rendered in Prometheus' text exposition format (version 0.0.4) by the HTTP exporter
// (http_exporter.h). Values are atomics, so any thread may update them; series are
// created once (the registry hands out stable references) and looked up again by the
// caller, never per update. Values that are cheaper to read than to keep up to date
// (a Raft term, PG counts, RocksDB properties) come from collectors run at scrape time.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace dfs::metrics {

// label name -> value, e.g. {{"method", "osd_write"}}.
using Labels = std::vector<std::pair<std::string, std::string>>;

class Counter {
 public:
  void add(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

class Gauge {
 public:
  void set(double v) { value_.store(v, std::memory_order_relaxed); }
  void add(double delta) {
    double old = value_.load(std::memory_order_relaxed);
    while (!value_.compare_exchange_weak(old, old + delta, std::memory_order_relaxed)) {
    }
  }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// Latencies in seconds, in fixed buckets from 50 us to 10 s (what a request to a
// storage daemon takes, from a cached read to a recovery-blocked write).
class Histogram {
 public:
  static constexpr std::array<double, 16> kBounds = {
      0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
      0.025,   0.05,   0.1,     0.25,   0.5,   1,     2.5,   10};
  void observe(double seconds);
  void observe(std::chrono::steady_clock::duration d) {
    observe(std::chrono::duration<double>(d).count());
  }
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  // Cumulative count of observations <= kBounds[i].
  uint64_t bucket(size_t i) const;
  double sum() const { return sum_.load(std::memory_order_relaxed); }

 private:
  std::array<std::atomic<uint64_t>, kBounds.size()> buckets_{};  // not cumulative
  std::atomic<uint64_t> count_{0};
  std::atomic<double> sum_{0};
};

// What a collector writes at scrape time.
class SampleWriter {
 public:
  void gauge(const std::string& name, const std::string& help, const Labels& labels, double value);
  void counter(const std::string& name, const std::string& help, const Labels& labels,
               double value);
  std::string take();

 private:
  void sample(const std::string& name, const std::string& help, const char* type,
              const Labels& labels, double value);
  std::map<std::string, std::pair<std::string, std::vector<std::string>>> families_;
};

class Registry {
 public:
  // The process's registry: what its exporter serves.
  static Registry& process();

  // The series `name`{labels}, created on first use. `help` is the family's, from its
  // first registration. Names: [a-z_][a-z0-9_]*, by convention dfs_<what>_<unit>.
  Counter& counter(const std::string& name, const std::string& help, const Labels& labels = {});
  Gauge& gauge(const std::string& name, const std::string& help, const Labels& labels = {});
  Histogram& histogram(const std::string& name, const std::string& help, const Labels& labels = {});

  // `collect` runs at every scrape, on the exporter's executor (the daemon's I/O thread:
  // it may read state that thread owns). Returns an id for remove_collector.
  int add_collector(std::function<void(SampleWriter&)> collect);
  void remove_collector(int id);

  // Every series in the text exposition format.
  std::string render();

 private:
  struct Family {
    std::string help;
    const char* type;
    std::map<std::string, std::unique_ptr<Counter>> counters;  // by rendered label set
    std::map<std::string, std::unique_ptr<Gauge>> gauges;
    std::map<std::string, std::unique_ptr<Histogram>> histograms;
  };
  Family& family(const std::string& name, const std::string& help, const char* type);

  std::mutex mutex_;
  std::map<std::string, Family> families_;
  std::map<int, std::function<void(SampleWriter&)>> collectors_;
  int next_collector_ = 1;
};

// {a="x",b="y"} with values escaped as the format requires; "" for no labels.
std::string render_labels(const Labels& labels);

}  // namespace dfs::metrics
