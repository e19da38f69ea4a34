// Colours: one hue per function (in order of first sight, spread by the
// golden angle so neighbours differ), one border per state.
export function functionColour(index) {
  const hue = (45 + index * 137.508) % 360; // starts at yellow: the state borders are blue, orange, green
  return `hsl(${hue.toFixed(1)}, 62%, 72%)`;
}

export const STATE_BORDER = {
  not_queued: { colour: '#9a9a9a', width: 1, dash: [3, 2] },
  queued: { colour: '#1f6fd1', width: 2, dash: [] },
  running: { colour: '#e8590c', width: 3, dash: [] },
  finished: { colour: '#2b8a3e', width: 2, dash: [] },
};

export const RUN_COLOUR = { taskwait: '#adb5bd', barrier: '#495057' };
