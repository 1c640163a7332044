/**
 * The tests' dev servers start on a port found free; another process can take it before the server
 * binds it (two jest workers start dev servers at once). Such a start is retried on another port.
 */
import net from 'node:net';
import { startDevServerOnFreePort } from '../../testkit/dev-server';
import { freePort } from '../../testkit/processes';
import { devServerStatus, listensOn, stopDevServer } from '../../workers/dev-server';

test('a port taken between its pick and the start is retried on another one', async () => {
  // A port that is taken by the time the server starts, as in the race, then a free one.
  const taken = net.createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const takenPort = (taken.address() as net.AddressInfo).port;
  const picks = [takenPort];
  try {
    const started = await startDevServerOnFreePort(async () => picks.shift() ?? (await freePort()));
    expect(started.attempts).toBe(2);
    expect(started.port).not.toBe(takenPort);
    // A start counts only its own process's answer: the server holds its port, not the taken one
    // (whose answer, were it a Temporal server that won the race, would otherwise be taken for ours).
    const { pid } = await devServerStatus({ dataDir: started.dataDir, port: started.port });
    expect(pid).not.toBeNull();
    expect(listensOn(pid as number, started.port)).toBe(true);
    expect(listensOn(pid as number, takenPort)).toBe(false);
    expect(listensOn(process.pid, takenPort)).toBe(true);
    await stopDevServer({ dataDir: started.dataDir, port: started.port });
  } finally {
    taken.close();
  }
}, 120_000);

test('after three taken ports the start fails, naming the port', async () => {
  const taken = net.createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const takenPort = (taken.address() as net.AddressInfo).port;
  try {
    await expect(startDevServerOnFreePort(() => Promise.resolve(takenPort))).rejects.toThrow(
      `Port 127.0.0.1:${takenPort} is already in use`,
    );
  } finally {
    taken.close();
  }
});
