#include "wire/message_log.h"

#include <cstring>
#include <new>

namespace nk::wire {

struct MessageLog::Header {
  uint32_t magic;
  uint32_t version;
  uint32_t capacity;
  uint32_t entry_size;
  std::atomic<uint64_t> written;
  std::atomic<int32_t> ending_signal;
  uint32_t reserved;
};

struct MessageLog::Slot {
  std::atomic<uint64_t> sequence;
  char operation[24];
  int32_t peer;
  int32_t tag;
  uint64_t bytes;
  int64_t start_ns;
  int64_t end_ns;
  int32_t outcome;
  int32_t reserved;
};

static_assert(sizeof(std::atomic<uint64_t>) == 8 && std::atomic<uint64_t>::is_always_lock_free);
static_assert(sizeof(std::atomic<int32_t>) == 4 && std::atomic<int32_t>::is_always_lock_free);

size_t MessageLog::regionSize(uint32_t capacity) { return sizeof(Header) + size_t{capacity} * sizeof(Slot); }

MessageLog::MessageLog(std::span<std::byte> region, uint32_t capacity)
    : header_(new (region.data()) Header{kMagic, kVersion, capacity, sizeof(Slot), {0}, {0}, 0}),
      slots_(reinterpret_cast<Slot*>(region.data() + sizeof(Header))),
      capacity_(capacity) {
  for (uint32_t i = 0; i < capacity; ++i) new (&slots_[i]) Slot{};
}

void MessageLog::append(const char* operation, int32_t peer, int32_t tag, uint64_t bytes, int64_t start_ns,
                        int64_t end_ns, int32_t outcome) {
  uint64_t n = header_->written.fetch_add(1, std::memory_order_relaxed);
  Slot& s = slots_[n % capacity_];
  uint64_t seq = s.sequence.load(std::memory_order_relaxed);
  s.sequence.store(seq | 1, std::memory_order_relaxed);  // odd: being written
  std::atomic_thread_fence(std::memory_order_release);
  std::strncpy(s.operation, operation, sizeof s.operation - 1);
  s.operation[sizeof s.operation - 1] = '\0';
  s.peer = peer;
  s.tag = tag;
  s.bytes = bytes;
  s.start_ns = start_ns;
  s.end_ns = end_ns;
  s.outcome = outcome;
  s.sequence.store((seq | 1) + 1, std::memory_order_release);
}

std::atomic<int32_t>* MessageLog::endingSignalMark() { return &header_->ending_signal; }

int32_t MessageLog::endingSignal(std::span<const std::byte> region) {
  if (region.size() < sizeof(Header)) return 0;
  const auto* header = reinterpret_cast<const Header*>(region.data());
  if (header->magic != kMagic || header->version != kVersion) return 0;
  return header->ending_signal.load(std::memory_order_acquire);
}

namespace {

// The checks and the copy-out common to both readers; `unchanged(n, slot,
// before)` says whether slot n still had sequence `before` after its
// fields were copied.
template <typename Header, typename Slot, typename Unchanged>
std::vector<MessageLog::Entry> readSlots(std::span<const std::byte> region, std::string* error, Unchanged unchanged) {
  std::vector<MessageLog::Entry> out;
  auto fail = [&](const char* why) {
    if (error) *error = why;
    return std::vector<MessageLog::Entry>{};
  };
  if (region.size() < sizeof(Header)) return fail("too short for a message log header");
  const auto* header = reinterpret_cast<const Header*>(region.data());
  if (header->magic != MessageLog::kMagic) return fail("not a message log (bad magic)");
  if (header->version != MessageLog::kVersion) return fail("unsupported message log version");
  if (header->entry_size != sizeof(Slot) || region.size() < MessageLog::regionSize(header->capacity))
    return fail("message log shorter than its header says");
  const auto* slots = reinterpret_cast<const Slot*>(region.data() + sizeof(Header));
  uint64_t written = header->written.load(std::memory_order_acquire);
  uint64_t first = written > header->capacity ? written - header->capacity : 0;
  for (uint64_t n = first; n < written; ++n) {
    const size_t index = n % header->capacity;
    const Slot& s = slots[index];
    uint64_t before = s.sequence.load(std::memory_order_acquire);
    if (before & 1) continue;  // being written
    MessageLog::Entry e;
    char op[sizeof s.operation];
    std::memcpy(op, s.operation, sizeof op);
    op[sizeof op - 1] = '\0';
    e.peer = s.peer;
    e.tag = s.tag;
    e.bytes = s.bytes;
    e.start_ns = s.start_ns;
    e.end_ns = s.end_ns;
    e.outcome = s.outcome;
    std::atomic_thread_fence(std::memory_order_acquire);
    if (!unchanged(index, s, before)) continue;  // overwritten meanwhile
    e.operation = op;
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

std::vector<MessageLog::Entry> MessageLog::read(std::span<const std::byte> region, std::string* error) {
  return readSlots<Header, Slot>(region, error, [](size_t, const Slot& s, uint64_t before) {
    return s.sequence.load(std::memory_order_relaxed) == before;
  });
}

std::vector<MessageLog::Entry> MessageLog::read(std::span<const std::byte> region, std::span<const std::byte> later,
                                                std::string* error) {
  const size_t slots_at = sizeof(Header);
  return readSlots<Header, Slot>(region, error, [&](size_t index, const Slot&, uint64_t before) {
    const size_t at = slots_at + index * sizeof(Slot);
    if (later.size() < at + sizeof(Slot)) return false;
    return reinterpret_cast<const Slot*>(later.data() + at)->sequence.load(std::memory_order_relaxed) == before;
  });
}

}  // namespace nk::wire
