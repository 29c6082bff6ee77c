#pragma once
// Result<T>: a value or an Error, plus an optional message that says what
// went wrong in words a user can act on (file, node, reason).

#include <string>
#include <utility>
#include <variant>

#include "runtime/core/error.h"

namespace etc {

// A failure: the code plus a message for the user. Cheap when message is empty.
struct Failure {
  Error code = Error::Internal;
  std::string message;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}            // NOLINT(google-explicit-constructor)
  Result(Failure failure) : state_(std::move(failure)) {}  // NOLINT
  Result(Error code) : state_(Failure{code, {}}) {}        // NOLINT

  bool ok() const { return state_.index() == 0; }
  Error error() const { return ok() ? Error::Ok : std::get<1>(state_).code; }
  const std::string& message() const { return std::get<1>(state_).message; }
  const Failure& failure() const { return std::get<1>(state_); }

  T& get() & { return std::get<0>(state_); }
  const T& get() const& { return std::get<0>(state_); }
  T&& get() && { return std::get<0>(std::move(state_)); }
  T* operator->() { return &get(); }
  T& operator*() & { return get(); }

 private:
  std::variant<T, Failure> state_;
};

// Status: Result without a value.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Failure failure) : failure_(std::move(failure)), ok_(false) {}  // NOLINT
  Status(Error code) : failure_{code, {}}, ok_(code == Error::Ok) {}     // NOLINT
  static Status Ok() { return Status(); }

  bool ok() const { return ok_; }
  Error error() const { return ok_ ? Error::Ok : failure_.code; }
  const std::string& message() const { return failure_.message; }
  const Failure& failure() const { return failure_; }

 private:
  Failure failure_{Error::Ok, {}};
  bool ok_ = true;
};

// Builds a Failure from a code and message pieces.
template <typename... Parts>
Failure fail(Error code, const Parts&... parts) {
  std::string message;
  ((message += parts), ...);
  return Failure{code, std::move(message)};
}

}  // namespace etc

#define ETC_CONCAT_INNER(a, b) a##b
#define ETC_CONCAT(a, b) ETC_CONCAT_INNER(a, b)

// Returns the failure of a Status/Result expression from the current function.
#define ETC_TRY(expr)                                            \
  do {                                                           \
    auto&& etc_try_status_ = (expr);                             \
    if (!etc_try_status_.ok()) return etc_try_status_.failure(); \
  } while (0)

// Assigns the value of a Result expression to `lhs`, or returns its failure.
// (__COUNTER__, not __LINE__: an invocation may span several lines.)
#define ETC_ASSIGN_OR_RETURN(lhs, expr) ETC_ASSIGN_OR_RETURN_N(__COUNTER__, lhs, expr)
#define ETC_ASSIGN_OR_RETURN_N(n, lhs, expr) ETC_ASSIGN_OR_RETURN_IMPL(ETC_CONCAT(etc_result_, n), lhs, expr)
#define ETC_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.failure();            \
  lhs = std::move(tmp).get()

// Returns a Failure when `cond` does not hold.
#define ETC_CHECK_OR_FAIL(cond, code, ...)              \
  do {                                                  \
    if (!(cond)) return ::etc::fail(code, __VA_ARGS__); \
  } while (0)
