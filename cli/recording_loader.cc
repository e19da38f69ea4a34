#include "cli/recording_loader.h"

#include <vector>

#include "taskgraph/task_event_translator.h"
#include "nodekeeper/v1/tasks.pb.h"
#include "taskgraph/recording_reader.h"

namespace nk::cli {

Result<std::string> RecordingLoader::forEachFrame(const std::filesystem::path& path,
                                                  const std::function<void(std::span<const GraphEvent>)>& on_events) {
  auto reader = RecordingReader::open(path);
  if (!reader) return reader.error();
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
    if (!fault.empty()) return path.string() + ": frame " + std::to_string(frames + 1) + " " + fault;
    on_events(events);
    ++frames;
  }
  return reader->stopReason();
}

Result<RecordedGraph> RecordingLoader::load(const std::filesystem::path& path) {
  RecordedGraph recorded;
  recorded.label = path.string();
  auto damage = forEachFrame(path, [&](std::span<const GraphEvent> events) {
    for (const GraphEvent& e : events) recorded.graph.apply(e);
  });
  if (!damage) return damage.error();
  recorded.damage = *damage;
  return recorded;
}

}  // namespace nk::cli
