#include "common/metrics/registry.h"

#include <fmt/format.h>

#include <cmath>

namespace dfs::metrics {
namespace {

std::string escape(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{}", v);
}

// `labels` (rendered, "{...}" or "") with one more label appended.
std::string with_label(const std::string& labels, const std::string& name, const std::string& value) {
  std::string extra = name + "=\"" + escape(value) + "\"";
  if (labels.empty()) return "{" + extra + "}";
  return labels.substr(0, labels.size() - 1) + "," + extra + "}";
}

// The two comment lines that open a family in the text format.
std::string family_header(const std::string& name, const std::string& help, const std::string& type) {
  return "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

}  // namespace

std::string render_labels(const Labels& labels) {
  if (labels.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    out += (i ? "," : "") + labels[i].first + "=\"" + escape(labels[i].second) + "\"";
  }
  return out + "}";
}

void Histogram::observe(double seconds) {
  size_t i = 0;
  while (i < kBounds.size() && seconds > kBounds[i]) ++i;
  if (i < kBounds.size()) buckets_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  // fetch_add on atomic<double> is C++20; a CAS loop keeps older libstdc++ happy too.
  double old = sum_.load(std::memory_order_relaxed);
  while (!sum_.compare_exchange_weak(old, old + seconds, std::memory_order_relaxed)) {
  }
}

uint64_t Histogram::bucket(size_t i) const {
  uint64_t total = 0;
  for (size_t j = 0; j <= i && j < buckets_.size(); ++j) total += buckets_[j].load(std::memory_order_relaxed);
  return total;
}

void SampleWriter::sample(const std::string& name, const std::string& help, const char* type,
                          const Labels& labels, double value) {
  auto& [family_help, lines] = families_[name];
  if (lines.empty()) {
    family_help = family_header(name, help, type);
  }
  lines.push_back(name + render_labels(labels) + " " + number(value) + "\n");
}

void SampleWriter::gauge(const std::string& name, const std::string& help, const Labels& labels,
                         double value) {
  sample(name, help, "gauge", labels, value);
}

void SampleWriter::counter(const std::string& name, const std::string& help,
                           const Labels& labels, double value) {
  sample(name, help, "counter", labels, value);
}

std::string SampleWriter::take() {
  std::string out;
  for (auto& [name, family] : families_) {
    out += family.first;
    for (const auto& line : family.second) out += line;
  }
  families_.clear();
  return out;
}

Registry& Registry::process() {
  static Registry registry;
  return registry;
}

Registry::Family& Registry::family(const std::string& name, const std::string& help,
                                   const char* type) {
  auto [it, created] = families_.try_emplace(name);
  if (created) {
    it->second.help = help;
    it->second.type = type;
  }
  return it->second;
}

Counter& Registry::counter(const std::string& name, const std::string& help, const Labels& labels) {
  std::lock_guard lock(mutex_);
  auto& slot = family(name, help, "counter").counters[render_labels(labels)];
  if (!slot) slot = std::make_unique<Counter>();
  return *slot;
}

Gauge& Registry::gauge(const std::string& name, const std::string& help, const Labels& labels) {
  std::lock_guard lock(mutex_);
  auto& slot = family(name, help, "gauge").gauges[render_labels(labels)];
  if (!slot) slot = std::make_unique<Gauge>();
  return *slot;
}

Histogram& Registry::histogram(const std::string& name, const std::string& help,
                               const Labels& labels) {
  std::lock_guard lock(mutex_);
  auto& slot = family(name, help, "histogram").histograms[render_labels(labels)];
  if (!slot) slot = std::make_unique<Histogram>();
  return *slot;
}

int Registry::add_collector(std::function<void(SampleWriter&)> collect) {
  std::lock_guard lock(mutex_);
  collectors_[next_collector_] = std::move(collect);
  return next_collector_++;
}

void Registry::remove_collector(int id) {
  std::lock_guard lock(mutex_);
  collectors_.erase(id);
}

std::string Registry::render() {
  std::string out;
  std::vector<std::function<void(SampleWriter&)>> collectors;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [name, f] : families_) {
      out += family_header(name, f.help, f.type);
      for (const auto& [labels, c] : f.counters) out += name + labels + " " + number(c->value()) + "\n";
      for (const auto& [labels, g] : f.gauges) out += name + labels + " " + number(g->value()) + "\n";
      for (const auto& [labels, h] : f.histograms) {
        for (size_t i = 0; i < Histogram::kBounds.size(); ++i) {
          out += name + "_bucket" + with_label(labels, "le", number(Histogram::kBounds[i])) + " " +
                 number(h->bucket(i)) + "\n";
        }
        out += name + "_bucket" + with_label(labels, "le", "+Inf") + " " + number(h->count()) + "\n";
        out += name + "_sum" + labels + " " + number(h->sum()) + "\n";
        out += name + "_count" + labels + " " + number(h->count()) + "\n";
      }
    }
    for (const auto& [id, c] : collectors_) collectors.push_back(c);
  }
  // Outside the lock: a collector may look up series of its own.
  SampleWriter writer;
  for (const auto& c : collectors) c(writer);
  return out + writer.take();
}

}  // namespace dfs::metrics
