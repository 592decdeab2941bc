#include "tests/support/background_writers.h"

#include <cmath>
#include <random>

#include "tests/support/test_data.h"

namespace dfs::test {

BackgroundWriters::BackgroundWriters(client::ObjectClient& client, WriterOptions options)
    : client_(client), options_(std::move(options)) {}

BackgroundWriters::~BackgroundWriters() { stop(); }

void BackgroundWriters::start() {
  for (int t = 0; t < options_.threads; ++t) threads_.emplace_back([this, t] { run(t); });
}

void BackgroundWriters::stop() {
  stop_ = true;
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void BackgroundWriters::run(int thread) {
  std::mt19937_64 rng(options_.seed * 1000 + static_cast<uint64_t>(thread));
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (uint64_t n = 0; !stop_; ++n) {
    ObjectSpec spec;
    spec.name = options_.prefix + std::to_string(thread) + "-" + std::to_string(n);
    spec.seed = rng();
    double u = unit(rng);
    spec.size =
        n % 16 == 0 ? 0 : static_cast<size_t>(std::exp(u * std::log(double(options_.max_size))));
    int phase = phase_.load();
    std::string data = object_bytes(spec.seed, spec.size);
    auto began = std::chrono::steady_clock::now();
    auto reply = client_.run(client_.write_full(options_.pool, spec.name, std::move(data)));
    std::lock_guard lock(mu_);
    if (!reply) {
      failures_.push_back(spec.name + " (phase " + std::to_string(phase) +
                          "): " + reply.error().to_string());
      continue;
    }
    auto latency = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - began);
    acked_.push_back(AckedWrite{std::move(spec), phase, phase_.load(), reply->copies(), latency});
    ++acked_count_;
  }
}

size_t BackgroundWriters::acked_since(int phase) const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& a : acked_) n += a.phase_at_start >= phase;
  return n;
}

bool BackgroundWriters::wait_acked_since(int phase, size_t n,
                                         std::chrono::milliseconds timeout) const {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (acked_since(phase) < n) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

std::vector<AckedWrite> BackgroundWriters::acked() const {
  std::lock_guard lock(mu_);
  return acked_;
}

std::vector<std::string> BackgroundWriters::failures() const {
  std::lock_guard lock(mu_);
  return failures_;
}

std::chrono::milliseconds BackgroundWriters::slowest_latency() const {
  std::lock_guard lock(mu_);
  std::chrono::milliseconds worst{0};
  for (const auto& a : acked_) worst = std::max(worst, a.latency);
  return worst;
}

std::string BackgroundWriters::slowest() const {
  std::lock_guard lock(mu_);
  const AckedWrite* worst = nullptr;
  for (const auto& a : acked_) {
    if (!worst || a.latency > worst->latency) worst = &a;
  }
  if (!worst) return "no write acknowledged";
  return worst->spec.name + " took " + std::to_string(worst->latency.count()) +
         " ms (started in phase " + std::to_string(worst->phase_at_start) + ")";
}

}  // namespace dfs::test
