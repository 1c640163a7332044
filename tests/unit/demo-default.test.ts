/** `npm run demo` runs the local model by default; the scripted model where CI is set, and when asked. */
import { Command } from 'commander';
import { defaultDemoModel, registerDemoCommand } from '../../cli/demo';
import { temporalTarget } from '../../workers/connect';

test('the demo runs the local model unless CI is set', () => {
  expect(defaultDemoModel({})).toBe('local');
  expect(defaultDemoModel({ CI: '' })).toBe('local');
  expect(defaultDemoModel({ CI: 'false' })).toBe('local');
  expect(defaultDemoModel({ CI: '0' })).toBe('local');
  expect(defaultDemoModel({ CI: 'true' })).toBe('scripted:demo');
  expect(defaultDemoModel({ CI: '1' })).toBe('scripted:demo');
});

test('the demo command says its default and keeps the scripted model one flag away', () => {
  const program = new Command();
  registerDemoCommand(program, () => temporalTarget());
  const demo = program.commands.find((c) => c.name() === 'demo');
  const help = (demo?.helpInformation() ?? '').replace(/\s+/g, ' ');
  expect(help).toContain('local (a small model run here) | scripted:demo');
  expect(help).toContain('local; scripted:demo when CI is set');
});
