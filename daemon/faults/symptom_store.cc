#include "faults/symptom_store.h"

#include <algorithm>

namespace nk {

SymptomStore::SymptomStore(Options options) : options_(options) {
  options_.max_symptoms = std::max<size_t>(options_.max_symptoms, 1);
}

void SymptomStore::dropOldest() {
  bytes_ -= symptoms_.front().approximateBytes();
  symptoms_.pop_front();
  ++dropped_;
}

uint64_t SymptomStore::append(SymptomRecord symptom) {
  uint64_t id = 0;
  {
    std::lock_guard lock(mutex_);
    id = ++last_id_;
    symptom.symptom_id = id;
    const auto kind = static_cast<size_t>(symptom.kind);
    ++appended_by_kind_[kind < kKinds ? kind : 0];
    size_t bytes = symptom.approximateBytes();
    // The newest is always kept, even one larger than the whole budget.
    while (!symptoms_.empty() &&
           (symptoms_.size() >= options_.max_symptoms || bytes_ + bytes > options_.max_bytes))
      dropOldest();
    bytes_ += bytes;
    symptoms_.push_back(std::move(symptom));
  }
  arrived_.notify_all();
  return id;
}

std::array<uint64_t, SymptomStore::kKinds> SymptomStore::appendedByKind() const {
  std::lock_guard lock(mutex_);
  return appended_by_kind_;
}

SymptomStore::Batch SymptomStore::since(uint64_t after_id, const Filter& filter, size_t limit) const {
  Batch batch;
  batch.last_id = after_id;
  if (limit == 0) return batch;
  std::lock_guard lock(mutex_);
  batch.last_id = std::max(after_id, last_id_);
  if (symptoms_.empty()) return batch;
  uint64_t first_id = symptoms_.front().symptom_id;
  size_t start = after_id < first_id ? 0 : static_cast<size_t>(after_id - first_id + 1);
  for (size_t i = start; i < symptoms_.size(); ++i) {
    const SymptomRecord& s = symptoms_[i];
    if (filter.job_id && s.job_id != *filter.job_id) continue;
    if (filter.uid && s.uid != *filter.uid) continue;
    batch.symptoms.push_back(s);
    if (batch.symptoms.size() == limit) {
      batch.last_id = s.symptom_id;
      break;
    }
  }
  return batch;
}

bool SymptomStore::waitForNewer(uint64_t after_id, std::chrono::steady_clock::time_point deadline) const {
  std::unique_lock lock(mutex_);
  return arrived_.wait_until(lock, deadline, [&] { return last_id_ > after_id; });
}

uint64_t SymptomStore::lastId() const {
  std::lock_guard lock(mutex_);
  return last_id_;
}

uint64_t SymptomStore::dropped() const {
  std::lock_guard lock(mutex_);
  return dropped_;
}

size_t SymptomStore::size() const {
  std::lock_guard lock(mutex_);
  return symptoms_.size();
}

}  // namespace nk
