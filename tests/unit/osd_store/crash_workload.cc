#include "tests/unit/osd_store/crash_workload.h"

#include <charconv>
#include <cstring>
#include <random>

namespace dfs::osd::crashtest {

namespace {

// Generation-stamped bytes: fast xorshift keyed by (generation, object, step).
std::string stamp(uint64_t gen, int index, int step, size_t n) {
  std::string out(n, '\0');
  uint64_t x = (gen * 0x9e3779b97f4a7c15ull) ^ (uint64_t(index) << 40) ^ (uint64_t(step) << 56);
  x |= 1;
  for (size_t i = 0; i < n; i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    std::memcpy(out.data() + i, &x, std::min<size_t>(8, n - i));
  }
  return out;
}

struct Builder {
  Transaction& txn;
  ObjectState& obj;
  ObjectKey key;
  uint64_t gen;
  int index;
  int step = 0;

  void write(uint64_t offset, size_t n) {
    std::string data = stamp(gen, index, step++, n);
    if (obj.data.size() < offset + n) obj.data.resize(offset + n, '\0');
    obj.data.replace(offset, n, data);
    txn.write(key, offset, std::move(data));
  }
  void truncate(uint64_t size) {
    obj.data.resize(size, '\0');
    txn.truncate(key, size);
  }
};

uint64_t below(std::mt19937_64& rng, uint64_t n) { return n == 0 ? 0 : rng() % n; }

// One of the mixes; sizes straddle the journal threshold (64 KiB) on purpose.
void mutate(Builder& b, std::mt19937_64& rng) {
  uint64_t size = b.obj.data.size();
  int kind = size > 600000 ? 3 : static_cast<int>(rng() % 8);
  switch (kind) {
    case 0:
      b.write(below(rng, size), 1 + below(rng, 6000));
      break;  // small overwrite
    case 1:
      b.write(size, 1 + below(rng, 6000));
      break;  // small append
    case 2:
      b.write(size + below(rng, 3000), 65537 + below(rng, 150000));
      break;  // big append
    case 3:   // cut, then write
      b.truncate(below(rng, size));
      b.write(b.obj.data.size() + below(rng, 9000), 1 + below(rng, 3000));
      break;
    case 4:
      b.truncate(size + below(rng, 20000));
      break;  // grow
    case 5:
      b.write(0, std::max<uint64_t>(size, 70000) + below(rng, 50000));
      break;  // rewrite
    case 6:   // big overwrite
      b.write(below(rng, size), 70000);
      break;
    default:  // mixed
      b.write(below(rng, size), 1 + below(rng, 2000));
      b.write(b.obj.data.size(), 66000 + below(rng, 60000));
      break;
  }
}

}  // namespace

ObjectKey object_key(int index) { return ObjectKey{kPool, kPg, "obj-" + std::to_string(index)}; }

Transaction next_generation(Model& model) {
  uint64_t gen = ++model.gen;
  std::mt19937_64 rng(gen * 7919);
  Transaction txn;
  for (int i = 0; i < kObjects; ++i) {
    if (rng() % 4 == 0) continue;  // untouched this generation
    std::optional<ObjectState>& slot = model.objects[i];
    if (slot && rng() % 12 == 0) {
      slot.reset();
      txn.remove(object_key(i));
      continue;
    }
    if (!slot) slot.emplace();
    Builder b{txn, *slot, object_key(i), gen, i};
    mutate(b, rng);
    slot->version = ObjectVersion{gen, uint64_t(i)};
    txn.set_version(object_key(i), slot->version);
  }
  txn.put_meta("gen", std::to_string(gen));
  return txn;
}

Result<Model> load_model(ObjectStore& store) {
  Model model;
  std::optional<std::string> gen = DFS_TRY(store.get_meta("gen"));
  if (gen) std::from_chars(gen->data(), gen->data() + gen->size(), model.gen);
  for (int i = 0; i < kObjects; ++i) {
    Result<ObjectInfo> info = store.stat(object_key(i));
    if (!info && info.error().code() == ErrorCode::kNotFound) continue;
    if (!info) return std::move(info).error();
    ObjectState state;
    state.version = info->version;
    state.data = DFS_TRY(store.read(object_key(i), 0, info->size));
    model.objects[i] = std::move(state);
  }
  return model;
}

std::string diff_store(ObjectStore& store, const Model& model) {
  Result<Model> got = load_model(store);
  if (!got) return "cannot read the store: " + got.error().to_string();
  if (got->gen != model.gen) return "meta gen " + std::to_string(got->gen);
  std::string out;
  for (int i = 0; i < kObjects; ++i) {
    const auto& want = model.objects[i];
    const auto& have = got->objects[i];
    std::string name = "object " + std::to_string(i) + ": ";
    if (want.has_value() != have.has_value()) {
      out += name + (want ? "missing; " : "should not exist; ");
    } else if (want && want->data != have->data) {
      out += name + "content differs (size " + std::to_string(have->data.size()) + " vs " +
             std::to_string(want->data.size()) + "); ";
    } else if (want && want->version != have->version) {
      out += name + "version differs; ";
    }
  }
  auto listed = store.list(kPool, kPg);
  size_t expected = 0;
  for (const auto& o : model.objects) expected += o.has_value();
  if (!listed || listed->size() != expected) out += "list disagrees; ";
  return out;
}

DirStoreOptions crash_store_options(const std::string& path) {
  DirStoreOptions o;
  o.path = path;
  o.journal_trim_records = 16;  // trim often, so kills land inside trims too
  o.wal_prefill_bytes = 1 << 20;  // small, so kills land both inside and past it
  return o;
}

}  // namespace dfs::osd::crashtest
