// What the shipper pays per event to compact a thread's task events
// (wire::CompactEvents, tasks.proto's PackedEvents.compact), and what the
// daemon pays to read them back, side by side in one run, ns per event
// (median of 7 runs over 16384-event chunks, the shipper's size):
//   encode, as first shipped   the encoder before it wrote into a block on
//                              the stack (std::string appends per field),
//                              kept here as the reference
//   encode, interleaved        wire::CompactEvents::encode (the split form's
//                              encoder, then interleaved)
//   decode, interleaved        wire::CompactEvents::decode
//   check, interleaved         wire::CompactEvents::check: what
//                              the daemon's stream paid for every batch
//   encode, split              the split form, as the shipper writes it
//   decode, split              (compact_headers and compact_values)
//   check, split               what the daemon's stream pays now
// The events are a UTS-shaped tree run on one thread (each task: start, four
// creations and a taskwait for some, finish), 1 to 500 ns apart. The bench
// checks that the encoders write the same bytes.
//
//   compact_events_bench [--events N]
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "wire/compact_events.h"

using Clock = std::chrono::steady_clock;
using nk::wire::CompactEvents;
using nk::wire::kTaskEventTypeCount;
using nk::wire::TaskEventRecord;
using nk::wire::TaskEventType;

namespace {

constexpr size_t kChunk = 16384;
constexpr int kRuns = 7;

// The encoder as first shipped: the reference for speed and for bytes.
namespace reference {

uint64_t zigzag(uint64_t difference) {
  const auto d = static_cast<int64_t>(difference);
  return (static_cast<uint64_t>(d) << 1) ^ static_cast<uint64_t>(d >> 63);
}

void putVarint(std::string& out, uint64_t v) {
  char bytes[10];
  size_t n = 0;
  while (v >= 0x80) {
    bytes[n++] = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  bytes[n++] = static_cast<char>(v);
  out.append(bytes, n);
}

void encode(std::span<const TaskEventRecord> records, std::string& out) {
  out.reserve(out.size() + records.size() * 6);
  std::array<std::array<uint64_t, 4>, kTaskEventTypeCount> previous{};
  uint64_t timestamp = 0;
  for (const TaskEventRecord& r : records) {
    const auto type = static_cast<size_t>(r.type);
    std::array<uint64_t, 4> residual{};
    uint8_t header = static_cast<uint8_t>(type & 0x0f);
    const std::array<uint64_t, 4> fields = {r.task_id, r.a, r.b, r.c};
    for (int f = 0; f < 4; ++f) {
      residual[f] = zigzag(fields[f] - (type < kTaskEventTypeCount ? previous[type][f] : 0));
      if (residual[f] != 0) header |= static_cast<uint8_t>(1u << (4 + f));
    }
    out.push_back(static_cast<char>(header));
    putVarint(out, zigzag(r.timestamp_ns - timestamp));
    for (int f = 0; f < 4; ++f)
      if (residual[f] != 0) putVarint(out, residual[f]);
    timestamp = r.timestamp_ns;
    if (type < kTaskEventTypeCount) previous[type] = fields;
  }
}

}  // namespace reference

struct Tree {
  std::mt19937_64 rng{42};
  std::vector<TaskEventRecord> events;
  uint64_t ts = 5'000'000'000, serial = 0;
  const uint64_t slot = uint64_t{1} << 40;
  size_t limit = 0;

  void push(TaskEventType type, uint64_t task, uint64_t a = 0, uint64_t b = 0, uint64_t c = 0) {
    ts += 1 + rng() % 500;
    TaskEventRecord r{};
    r.type = type, r.timestamp_ns = ts, r.task_id = task, r.a = a, r.b = b, r.c = c;
    events.push_back(r);
  }
  void visit(uint64_t id, int depth) {
    push(TaskEventType::kStarted, id, 1);
    if (depth < 30 && rng() % 10 < 3) {
      uint64_t children[4];
      for (uint64_t& child : children) {
        child = slot | ++serial;
        push(TaskEventType::kCreated, child, id, 0x55d0c0de1234);
      }
      push(TaskEventType::kSync, id, 1, 0);
      for (uint64_t child : children)
        if (events.size() < limit) visit(child, depth + 1);
      push(TaskEventType::kSync, id, 1, 1);
    }
    push(TaskEventType::kFinished, id);
  }
};

std::vector<TaskEventRecord> utsShaped(size_t n) {
  Tree tree;
  tree.limit = n;
  while (tree.events.size() < n) {
    uint64_t root = tree.slot | ++tree.serial;
    tree.push(TaskEventType::kCreated, root, 0, 0x55d0c0de1000);
    tree.visit(root, 0);
  }
  tree.events.resize(n);
  return std::move(tree.events);
}

template <typename Pass>
double nsPerEvent(size_t events, Pass pass) {
  std::vector<double> runs;
  for (int run = 0; run < kRuns; ++run) {
    const auto begin = Clock::now();
    pass();
    runs.push_back(std::chrono::duration<double, std::nano>(Clock::now() - begin).count() / static_cast<double>(events));
  }
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  size_t total = 4 * 1024 * 1024;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--events") == 0 && i + 1 < argc) {
      total = std::max<size_t>(kChunk, std::strtoull(argv[++i], nullptr, 10));
    } else {
      std::fprintf(stderr, "usage: compact_events_bench [--events N]\n");
      return 2;
    }
  }
  total -= total % kChunk;
  const std::vector<TaskEventRecord> records = utsShaped(total);
  const size_t chunks = total / kChunk;
  auto chunk = [&](size_t i) { return std::span(records).subspan(i * kChunk, kChunk); };

  std::vector<std::string> encoded(chunks), reference_encoded(chunks);
  size_t bytes = 0;
  for (size_t i = 0; i < chunks; ++i) {
    CompactEvents::encode(chunk(i), encoded[i]);
    reference::encode(chunk(i), reference_encoded[i]);
    if (encoded[i] != reference_encoded[i]) {
      std::fprintf(stderr, "compact_events_bench: chunk %zu: the encoder writes other bytes than the reference\n", i);
      return 1;
    }
    bytes += encoded[i].size();
  }

  // As the shipper: one string, cleared (capacity kept) for every chunk.
  std::string out;
  const double before = nsPerEvent(total, [&] {
    for (size_t i = 0; i < chunks; ++i) {
      out.clear();
      reference::encode(chunk(i), out);
    }
  });
  const double now = nsPerEvent(total, [&] {
    for (size_t i = 0; i < chunks; ++i) {
      out.clear();
      CompactEvents::encode(chunk(i), out);
    }
  });
  std::vector<TaskEventRecord> back;
  back.reserve(kChunk);
  const double decode = nsPerEvent(total, [&] {
    for (size_t i = 0; i < chunks; ++i) {
      back.clear();
      const std::string& part = encoded[i];
      if (!CompactEvents::decode(std::as_bytes(std::span(part.data(), part.size())), back, kChunk).empty()) std::abort();
    }
  });

  const double check = nsPerEvent(total, [&] {
    for (size_t i = 0; i < chunks; ++i) {
      const std::string& part = encoded[i];
      if (!CompactEvents::check(std::as_bytes(std::span(part.data(), part.size())), kChunk).empty()) std::abort();
    }
  });
  std::vector<std::string> headers(chunks), values(chunks);
  for (size_t i = 0; i < chunks; ++i) {
    CompactEvents::encode(chunk(i), {}, headers[i], values[i]);
    if (headers[i].size() + values[i].size() != encoded[i].size()) {
      std::fprintf(stderr, "compact_events_bench: chunk %zu: the split form is not the same bytes apart\n", i);
      return 1;
    }
  }
  std::string split_headers, split_values;
  const double split_encode = nsPerEvent(total, [&] {
    for (size_t i = 0; i < chunks; ++i) {
      split_headers.clear();
      split_values.clear();
      CompactEvents::encode(chunk(i), {}, split_headers, split_values);
    }
  });
  auto split = [&](size_t i) { return CompactEvents::Split::of(headers[i], values[i]); };
  const double split_decode = nsPerEvent(total, [&] {
    for (size_t i = 0; i < chunks; ++i) {
      back.clear();
      if (!CompactEvents::decode(split(i), back, kChunk).empty()) std::abort();
    }
  });
  const double split_check = nsPerEvent(total, [&] {
    for (size_t i = 0; i < chunks; ++i)
      if (!CompactEvents::check(split(i), kChunk).empty()) std::abort();
  });

  std::printf("Compact task events: %zu UTS-shaped events in %zu-event chunks, %.2f bytes/event, median of %d runs\n",
              total, kChunk, static_cast<double>(bytes) / static_cast<double>(total), kRuns);
  std::printf("%-28s %10s %8s\n", "pass", "ns/event", "ratio");
  std::printf("%-28s %10.2f %8.2f\n", "encode, as first shipped", before, 1.0);
  std::printf("%-28s %10.2f %8.2f\n", "encode, interleaved", now, now / before);
  std::printf("%-28s %10.2f %8.2f\n", "decode, interleaved", decode, decode / before);
  std::printf("%-28s %10.2f %8.2f\n", "check, interleaved", check, check / before);
  std::printf("%-28s %10.2f %8.2f\n", "encode, split", split_encode, split_encode / before);
  std::printf("%-28s %10.2f %8.2f\n", "decode, split", split_decode, split_decode / before);
  std::printf("%-28s %10.2f %8.2f\n", "check, split", split_check, split_check / before);
  std::printf("(ratio: to the encoder as first shipped; check, split over check: %.2f)\n", split_check / check);
  return 0;
}
