#include "mon/service/flap_damper.h"

#include <algorithm>

namespace dfs::mon {

void FlapDamper::on_down(int32_t osd, TimePoint now) {
  auto& downs = downs_[osd];
  downs.push_back(now);
  while (!downs.empty() && now - downs.front() > options_.period) downs.pop_front();
}

int FlapDamper::downs_within_period(int32_t osd, TimePoint now) const {
  auto it = downs_.find(osd);
  if (it == downs_.end()) return 0;
  return static_cast<int>(std::count_if(it->second.begin(), it->second.end(),
                                        [&](TimePoint t) { return now - t <= options_.period; }));
}

std::optional<std::chrono::milliseconds> FlapDamper::held_for(int32_t osd, TimePoint now) const {
  if (options_.max_downs <= 0) return std::nullopt;
  int downs = downs_within_period(osd, now);
  if (downs < options_.max_downs) return std::nullopt;
  // The hold doubles with each down past the limit, counted from the latest down.
  auto hold = options_.hold;
  for (int extra = downs - options_.max_downs; extra > 0 && hold < options_.max_hold; --extra) hold *= 2;
  hold = std::min(hold, options_.max_hold);
  auto until = downs_.at(osd).back() + hold;
  if (now >= until) return std::nullopt;
  return std::chrono::duration_cast<std::chrono::milliseconds>(until - now);
}

}  // namespace dfs::mon
