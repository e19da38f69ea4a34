#include "cli/recording_loader.h"

#include <vector>

#include "api/task_event_translator.h"
#include "nodekeeper/v1/tasks.pb.h"
#include "tasks/recording_reader.h"

namespace nk::cli {

Result<RecordedGraph> RecordingLoader::load(const std::filesystem::path& path) {
  auto reader = RecordingReader::open(path);
  if (!reader) return reader.error();
  RecordedGraph recorded;
  recorded.label = path.string();
  nodekeeper::v1::TaskEventBatch batch;
  std::vector<GraphEvent> events;
  TaskEventTranslator translator;
  uint64_t frames = 0;
  while (auto payload = reader->next()) {
    std::string fault;
    if (!batch.ParseFromArray(payload->data(), static_cast<int>(payload->size())))
      fault = "does not parse as task events";
    else
      fault = translator.toGraphEvents(batch, events);
    if (!fault.empty()) {
      recorded.damage = path.string() + ": frame " + std::to_string(frames + 1) + " " + fault;
      return recorded;
    }
    for (const GraphEvent& e : events) recorded.graph.apply(e);
    ++frames;
  }
  recorded.damage = reader->stopReason();
  return recorded;
}

}  // namespace nk::cli
