#pragma once
// Result<T>: a value or an error with a readable reason (and the VkResult when
// Vulkan produced it). std::expected is not available in C++20 / GCC 12.
#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace ks {

struct Error {
  std::string message;
  int32_t vk_result = 0;  // VkResult when the failure came from Vulkan, else 0
};

template <typename T>
class Result {
 public:
  Result(T value) : data_(std::move(value)) {}
  Result(Error error) : data_(std::move(error)) {}

  bool ok() const { return std::holds_alternative<T>(data_); }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() { return value(); }
  const Error& error() const { return std::get<Error>(data_); }

 private:
  std::variant<T, Error> data_;
};

// For operations that return nothing on success.
struct Ok {};
using Status = Result<Ok>;

inline Error makeError(std::string message, int32_t vk_result = 0) { return Error{std::move(message), vk_result}; }

}  // namespace ks
