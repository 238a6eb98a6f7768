/**
 * Answers classified by what they mean (issue 32): a permanent OAuth refusal is exit 4 whatever
 * its status and is never retried; a call refused again right after a fresh sign-in is the
 * service refusing that method to this client (exit 6), and nobody is asked to sign in once more.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/tmp.js';

const TOKEN = 'signing POST /oauth2/token';
const LIST = 'signing POST /csc/v1/credentials/list';
let t: TestSandbox;

beforeAll(async () => {
  t = await startTestSandbox();
});
afterAll(async () => t?.close());
afterEach(() => t.sandbox.faults.clear());

const calls = (route: string) => t.sandbox.requestLog.filter((id) => id === route).length;

describe('OAuth refusals and refused methods', () => {
  for (const [error, status] of [
    ['unsupported_grant_type', 501],
    ['unauthorized_client', 400],
    ['invalid_client', 401],
    ['invalid_scope', 400],
  ] as const) {
    it(`${error} with HTTP ${status} from the token endpoint: exit 4 with the service's description, sent once`, async () => {
      const body = JSON.stringify({ error, error_description: `the service says no (${error})` });
      t.sandbox.faults.inject({ route: TOKEN, fault: { kind: 'status', status, body }, times: 3 });
      const before = calls(TOKEN);
      const result = await runCli(['--auto-approve', 'credentials', 'list'], {
        env: { ...t.env, ESIGN_CONFIG_DIR: await tempDir() },
      });
      expect(result.code, result.stderr).toBe(4);
      expect(result.stderr).toContain(`${error} (the service says no (${error})), HTTP ${status}`);
      expect(result.stderr).not.toMatch(/again in a moment/i);
      expect(calls(TOKEN) - before).toBe(1);
    });
  }

  it('a call refused again right after a fresh sign-in is exit 6 naming the method, without "sign in again"', async () => {
    t.sandbox.faults.inject({
      route: LIST,
      fault: {
        kind: 'status',
        status: 401,
        body: JSON.stringify({ error: 'invalid_token', error_description: 'method not allowed for this client' }),
      },
      times: 2,
    });
    const before = calls(LIST);
    const result = await runCli(['--auto-approve', 'credentials', 'list'], { env: t.env });
    expect(result.code, result.stderr).toBe(6);
    expect(result.stderr).toMatch(
      /refused credentials\/list to this client even with the service token it had just issued \(invalid_token: method not allowed for this client\)/,
    );
    expect(result.stderr).toContain('--verbose');
    expect(result.stderr).not.toMatch(/sign in/i);
    expect(calls(LIST) - before).toBe(2);
  });
});
