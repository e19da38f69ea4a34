#include "faults/self_answering_prober.h"

namespace nk {

bool SelfAnsweringProber::isSelf(std::string_view job_id, std::string_view node) const {
  return self_.is_self && self_.is_self(job_id, node);
}

ResponseFindings SelfAnsweringProber::responseProbe(std::string_view node, size_t attempts) {
  if (!isSelf("", node)) return remote_.responseProbe(node, attempts);
  ResponseFindings alive;
  alive.attempts = attempts;
  alive.answered = attempts;
  return alive;
}

StatusFindings SelfAnsweringProber::statusProbe(std::string_view job_id, std::string_view node) {
  if (!isSelf(job_id, node)) return remote_.statusProbe(job_id, node);
  return self_.status ? self_.status(job_id) : StatusFindings{};
}

LogFindings SelfAnsweringProber::logProbe(std::string_view job_id, std::string_view node, int64_t from_ns,
                                          int64_t to_ns) {
  if (!isSelf(job_id, node)) return remote_.logProbe(job_id, node, from_ns, to_ns);
  return self_.log ? self_.log(job_id, from_ns, to_ns) : LogFindings{};
}

}  // namespace nk
