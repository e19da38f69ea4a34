#include "taskgraph/recording_compactor.h"

#include <system_error>

#include "taskgraph/recording_reader.h"
#include "taskgraph/recording_writer.h"

namespace nk {

Result<RecordingCompactor::Compacted> RecordingCompactor::compact(const std::filesystem::path& from,
                                                                  const std::filesystem::path& to,
                                                                  uint64_t max_bytes) {
  auto reader = RecordingReader::open(from);
  if (!reader) return reader.error();
  auto writer = RecordingWriter::create(to);
  if (!writer) return writer.error();
  auto failed = [&](const Error& error) -> Result<Compacted> {
    std::error_code ec;
    std::filesystem::remove(to, ec);
    return error;
  };
  Compacted done;
  while (auto payload = reader->next()) {
    if (Status appended = writer->append(*payload); !appended) return failed(appended.error());
    if (writer->size() > max_bytes)
      return failed(resourceExhausted("the rewrite of " + from.string() + " would pass " + std::to_string(max_bytes) +
                                      " bytes"));
    ++done.frames;
  }
  if (reader->stopCause() == RecordingReader::StopCause::kReadError)
    return failed(unavailable(reader->stopReason()));
  if (Status flushed = writer->flush(); !flushed) return failed(flushed.error());
  done.bytes = writer->size();
  return done;
}

}  // namespace nk
