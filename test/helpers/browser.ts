/**
 * Browser helpers for tests: Debian's Chromium through playwright-core (never a browser
 * download), a CLI run whose stderr can be awaited line by line (to catch the URL printed with
 * --no-browser), and a tiny scripted "browser" for the identity pages usable as `--browser`.
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { esignCommand } from './run-cli.js';

export const CHROMIUM_PATH = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

export interface StreamingCli {
  /** Resolves with the first stderr line matching `pattern` (rejects after `timeoutMs`). */
  waitForStderr(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  done: Promise<{ code: number | null; stdout: string; stderr: string }>;
  kill(): void;
}

/** Runs the built CLI and lets the test react to its stderr while it runs (e.g. a browser step). */
export function spawnCliStreaming(args: string[], env: Record<string, string>): StreamingCli {
  const child = spawn(...esignCommand(args), {
    env: { ...process.env, NO_COLOR: '1', CI: 'true', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const waiters: Array<{ pattern: RegExp; resolve: (match: RegExpMatchArray) => void }> = [];
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    for (const waiter of [...waiters]) {
      const match = stderr.match(waiter.pattern);
      if (match) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(match);
      }
    }
  });
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
  return {
    waitForStderr(pattern, timeoutMs = 30_000) {
      const match = stderr.match(pattern);
      if (match) return Promise.resolve(match);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(new Error(`no stderr line matching ${pattern} within ${timeoutMs} ms; stderr so far:\n${stderr}`)),
          timeoutMs,
        );
        waiters.push({
          pattern,
          resolve: (found) => {
            clearTimeout(timer);
            resolve(found);
          },
        });
      });
    },
    done,
    kill: () => void child.kill('SIGTERM'),
  };
}

/**
 * Writes `identity-driver.mjs`: a scripted browser for `esign … --browser "node PATH USER DECISION"`.
 * It opens the authorization URL, plays the phone scan as USER, enters PIN 12345 and approves (or
 * refuses), then follows the redirect to esign's loopback receiver as a browser would.
 */
export async function writeIdentityPageDriver(dir: string): Promise<string> {
  const path = join(dir, 'identity-driver.mjs');
  await writeFile(
    path,
    `const [user, decision, start] = process.argv.slice(2);
const form = (html) => {
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1]?.replace(/&amp;/g, '&');
  const proc = /name="process" value="([^"]+)"/.exec(html)?.[1];
  if (!action || !proc) throw new Error('no form on the page');
  return { action, proc };
};
const post = (url, fields) => fetch(url, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) });
const finish = async (response) => {
  if (response.status !== 302) return false;
  await fetch(response.headers.get('location')).then((r) => r.text()).catch(() => undefined);
  return true;
};
let response = await fetch(start, { redirect: 'manual' });
if (!(await finish(response))) {
  const qr = form(await response.text());
  response = await post(qr.action, { process: qr.proc, user, action: 'scan' });
  if (!(await finish(response))) {
    const pin = form(await response.text());
    await finish(await post(pin.action, { process: pin.proc, pin: '12345', decision }));
  }
}
`,
  );
  return path;
}
