#pragma once

#define OMPI_SKIP_MPICXX 1
#include <mpi.h>

#include <array>
#include <span>
#include <vector>

namespace nk::pmpi {

// Fortran status arrays are MPI_STATUS_SIZE integers (6 in Open MPI):
// room to spare.
constexpr int kFortranStatusInts = 16;

// The request handles a wait or test was given, kept from before the call
// (which sets completed ones to MPI_REQUEST_NULL), on the stack for the
// usual few: polling loops call MPI_Test* a great many times. A Fortran
// call's handles (integers) are kept as the C handles they stand for, which
// is what the request registry knows them by.
class RequestSnapshot {
 public:
  struct FromFortran {};

  RequestSnapshot(const MPI_Request* requests, int count) {
    keep(requests ? count : 0, [&](size_t i) { return requests[i]; });
  }
  RequestSnapshot(FromFortran, const MPI_Fint* requests, int count) {
    keep(requests ? count : 0, [&](size_t i) { return MPI_Request_f2c(requests[i]); });
  }
  RequestSnapshot(const RequestSnapshot&) = delete;
  RequestSnapshot& operator=(const RequestSnapshot&) = delete;

  const MPI_Request* data() const { return data_; }
  int count() const { return static_cast<int>(size_); }
  std::span<const MPI_Request> span() const { return {data_, size_}; }

 private:
  template <typename Handle>
  void keep(int count, Handle handle) {
    size_t n = count > 0 ? static_cast<size_t>(count) : 0;
    MPI_Request* out = small_.data();
    if (n > small_.size()) {
      large_.resize(n);
      out = large_.data();
    }
    for (size_t i = 0; i < n; ++i) out[i] = handle(i);
    data_ = out;
    size_ = n;
  }

  std::array<MPI_Request, 16> small_{};
  std::vector<MPI_Request> large_;
  const MPI_Request* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace nk::pmpi
