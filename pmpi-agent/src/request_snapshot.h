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
// usual few: polling loops call MPI_Test* a great many times.
class RequestSnapshot {
 public:
  RequestSnapshot(const MPI_Request* requests, int count) {
    size_t n = count > 0 && requests ? static_cast<size_t>(count) : 0;
    if (n > small_.size()) {
      large_.assign(requests, requests + n);
      data_ = large_.data();
    } else {
      for (size_t i = 0; i < n; ++i) small_[i] = requests[i];
      data_ = small_.data();
    }
    size_ = n;
  }
  RequestSnapshot(const RequestSnapshot&) = delete;
  RequestSnapshot& operator=(const RequestSnapshot&) = delete;

  const MPI_Request* data() const { return data_; }
  std::span<const MPI_Request> span() const { return {data_, size_}; }

 private:
  std::array<MPI_Request, 16> small_{};
  std::vector<MPI_Request> large_;
  const MPI_Request* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace nk::pmpi
