const Sequencer = require('/work/main/node_modules/@jest/test-sequencer').default;
module.exports = class extends Sequencer { sort(tests) { return [...tests].sort((a,b)=> a.path.localeCompare(b.path)); } };
