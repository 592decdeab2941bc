#include "tools/bench/objbench/stats.h"

#include <doctest/doctest.h>

#include "tools/bench/objbench/report.h"

namespace dfs::bench {

TEST_CASE("bench/objbench: percentile by nearest rank") {
  CHECK(percentile({}, 50) == 0);
  CHECK(percentile({7}, 50) == 7);
  CHECK(percentile({7}, 99) == 7);
  CHECK(percentile({4, 1, 3, 2}, 50) == 2);
  CHECK(percentile({4, 1, 3, 2}, 100) == 4);
  std::vector<double> hundred;
  for (int i = 100; i >= 1; --i) hundred.push_back(i);
  CHECK(percentile(hundred, 50) == 50);
  CHECK(percentile(hundred, 99) == 99);
  CHECK(percentile(hundred, 1) == 1);
  auto s = summarize(hundred);
  CHECK(s.count == 100);
  CHECK(s.p50_us == 50);
  CHECK(s.p99_us == 99);
}

TEST_CASE("bench/objbench: throughput and ratios") {
  Throughput t;
  CHECK(t.mb_per_s() == 0);
  t.add(Throughput{4'000'000, std::chrono::milliseconds(500)});
  t.add(Throughput{4'000'000, std::chrono::milliseconds(500)});
  CHECK(t.mb_per_s() == doctest::Approx(8.0));
  CHECK(ratio(50, 100) == doctest::Approx(0.5));
  CHECK(ratio(1, 0) == 0);
}

TEST_CASE("bench/objbench: targets") {
  auto write = Target::at_least(1.0 / 6.0);
  CHECK(write.met_by(0.17));
  CHECK_FALSE(write.met_by(0.16));
  CHECK(write.to_string() == ">= 0.167");
  auto latency = Target::at_most(4);
  CHECK(latency.met_by(4));
  CHECK_FALSE(latency.met_by(4.01));
  CHECK(latency.to_string() == "<= 4");
  CHECK(Target{}.met_by(1e9));
  CHECK(Target{}.to_string() == "-");
}

TEST_CASE("bench/objbench: rows compare dfs with local") {
  SideResults dfs{{100'000'000, std::chrono::seconds(1)},
                  {300'000'000, std::chrono::seconds(1)},
                  {1000, 2000, 3000}};
  SideResults local{{400'000'000, std::chrono::seconds(1)},
                    {500'000'000, std::chrono::seconds(1)},
                    {400, 500, 600}};
  auto rows = make_rows(dfs, local);
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].ratio == doctest::Approx(0.25));
  CHECK(rows[0].pass());
  CHECK(rows[1].ratio == doctest::Approx(0.6));
  CHECK(rows[1].pass());
  CHECK(rows[2].dfs == 2000);
  CHECK(rows[2].ratio == doctest::Approx(4.0));
  CHECK(rows[2].pass());
  auto v = verdict(rows);
  CHECK(v == std::vector<std::string>{"all targets met"});
  dfs.small_us = {5000, 5000, 5000};
  rows = make_rows(dfs, local);
  CHECK_FALSE(rows[2].pass());
  CHECK(verdict(rows).size() == 1);
}

}  // namespace dfs::bench
