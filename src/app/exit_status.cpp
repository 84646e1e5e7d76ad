#include "app/exit_status.hpp"

#include <new>

#include "core/errors.hpp"

namespace bipo {

std::string out_of_memory_message() {
  // std::bad_alloc says neither what nor how much: the hint is what helps.
  return std::string(
             "an allocation was refused (std::bad_alloc): the machine cannot give the run "
             "the memory it needs; ") +
         out_of_memory_hint;
}

ErrorReport report_error(const std::exception_ptr& error, const std::string& prefix) {
  const auto report = [&](int code, const char* kind, const char* what) {
    return ErrorReport{code, std::string("bipo: ") + kind + ": " + prefix + what};
  };
  try {
    std::rethrow_exception(error);
  } catch (const InputError& e) {
    return report(2, "input error", e.what());
  } catch (const NumericalError& e) {
    return report(3, "numerical failure", e.what());
  } catch (const OutOfMemoryError& e) {
    return report(1, "out of memory", e.what());
  } catch (const std::bad_alloc&) {
    return report(1, "out of memory", out_of_memory_message().c_str());
  } catch (const SystemError& e) {
    return report(1, "system error", e.what());
  } catch (const SharedError& e) {
    if (e.error()) return report_error(e.error(), prefix);
    return report(e.exit_code(), "error", e.what());
  } catch (const std::exception& e) {
    return report(1, "error", e.what());
  } catch (...) {
    return report(1, "error", "unknown error");
  }
}

}  // namespace bipo
