#include "app/exit_status.hpp"

#include "core/errors.hpp"

namespace bipo {

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
