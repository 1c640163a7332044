// Longest test files first, so the two jest workers finish together instead of one running a long
// file alone at the end. A file's time is what it took in this checkout's last run (jest's cache);
// on a fresh clone, where there is none, a rough figure for its folder (a durability file starts
// servers and kills workers; a unit file is pure logic), then its size.
const Sequencer = require('@jest/test-sequencer').default;

/** Typical seconds of a test file, by folder under tests/ (from the suite's timings). */
const FOLDER_SECONDS = {
  durability: 60,
  e2e: 60,
  notifications: 50,
  integration: 25,
  replay: 25,
  workflows: 15,
  activities: 5,
  unit: 2,
};

class LongestFirstSequencer extends Sequencer {
  sort(tests) {
    const estimate = (test) => {
      const cached = this.time(test);
      if (cached != null) return cached;
      const folder = /[\\/]tests[\\/]([^\\/]+)[\\/]/.exec(test.path)?.[1] ?? '';
      const size = test.context.hasteFS.getSize(test.path) ?? 0;
      // Ten bytes of test code as a millisecond: orders the files of a folder by size.
      return (FOLDER_SECONDS[folder] ?? 10) * 1000 + size / 10;
    };
    const ms = new Map(tests.map((t) => [t.path, estimate(t)]));
    return [...tests].sort((a, b) => ms.get(b.path) - ms.get(a.path));
  }
}

module.exports = LongestFirstSequencer;
