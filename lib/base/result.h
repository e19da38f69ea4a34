#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace nk {

// Error categories, chosen to map one-to-one onto gRPC status codes.
enum class ErrorCode {
  kInvalidArgument,
  kNotFound,
  kPermissionDenied,
  kFailedPrecondition,
  kUnavailable,
  kOutOfRange,
  kInternal,
  kUnimplemented,
  kDataLoss,  // stored data is damaged (a recording past its last good frame)
  kResourceExhausted,  // a caller is over one of its limits (streams, message rate)
};

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
};

inline Error invalidArgument(std::string message) { return {ErrorCode::kInvalidArgument, std::move(message)}; }
inline Error notFound(std::string message) { return {ErrorCode::kNotFound, std::move(message)}; }
inline Error permissionDenied(std::string message) { return {ErrorCode::kPermissionDenied, std::move(message)}; }
inline Error failedPrecondition(std::string message) { return {ErrorCode::kFailedPrecondition, std::move(message)}; }
inline Error unavailable(std::string message) { return {ErrorCode::kUnavailable, std::move(message)}; }
inline Error internalError(std::string message) { return {ErrorCode::kInternal, std::move(message)}; }
inline Error dataLoss(std::string message) { return {ErrorCode::kDataLoss, std::move(message)}; }
inline Error resourceExhausted(std::string message) {
  return {ErrorCode::kResourceExhausted, std::move(message)};
}

// Value or error; domain calls return this instead of throwing so that the
// gRPC layer and the C ABI can translate failures without try/catch.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}
  Result(Error error) : state_(std::move(error)) {}

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { return std::get<Error>(state_); }

  T valueOr(T fallback) const { return ok() ? value() : std::move(fallback); }

 private:
  std::variant<T, Error> state_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)) {}

  bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return *error_; }

 private:
  std::optional<Error> error_;
};

using Status = Result<void>;

}  // namespace nk
