/**
 * What the browser test files share: Debian's chromium launched headless (installed by
 * scripts/chromium.sh when missing, as the mail tests get Postfix), and an API server that closes
 * only once its event streams have ended.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { chromium } from 'playwright-core';
import { PROJECT_ROOT } from '../../shared/project-root';
import type { RunningApiServer } from '../../server/api/server';

/** Debian's chromium, driven by playwright-core (whose own browser download cannot work here). */
export async function launchChromium(): Promise<Browser> {
  const r = spawnSync('bash', [path.join(PROJECT_ROOT, 'scripts', 'chromium.sh')], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`scripts/chromium.sh failed: ${r.stderr.trim()}`);
  return chromium.launch({
    executablePath: r.stdout.trim(),
    headless: true,
    args: ['--no-sandbox', '--headless=new'],
  });
}

/**
 * Closes the API once its streams are gone. Streams end at their next poll once their browser is
 * gone; waiting for that (while the worker still answers) keeps a query from being retried on a
 * connection that is closing.
 */
export async function closeApiAfterStreams(api: RunningApiServer): Promise<void> {
  for (let i = 0; i < 50; i++) {
    const health = (await (await fetch(`${api.url}/healthz`)).json()) as { openStreams: number };
    if (health.openStreams === 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await api.close();
}
