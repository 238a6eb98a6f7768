/**
 * `esign trust import|status|show` on the real EU lists of test/fixtures/trusted-lists (the LOTL and
 * four national lists), and on tampered copies of them.
 */
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/tmp.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'trusted-lists');
const REAL = ['eu-lotl.xml', 'EE.xml', 'AT.xml', 'CY.xml', 'IE.xml'];

async function setup() {
  const dir = await tempDir('esign-trust-');
  const env = { ESIGN_CONFIG_DIR: join(dir, 'config'), ESIGN_CACHE_DIR: join(dir, 'cache'), ESIGN_PROFILE: 'env' };
  return { dir, env };
}

describe('esign trust import of the real lists', () => {
  it('verifies the LOTL against the shipped certificates and each national list against the LOTL', async () => {
    const { env } = await setup();
    // National lists first on the command line: the LOTL is recognised by content and checked first.
    const imported = await runCli(['--json', 'trust', 'import', ...[...REAL].reverse().map((f) => join(FIXTURES, f))], {
      env,
    });
    expect(imported.code, imported.stderr).toBe(0);
    const { lists } = imported.json<{ lists: Array<{ territory: string; state: string; sequenceNumber: number }> }>();
    expect(lists.map((l) => [l.territory, l.state, l.sequenceNumber])).toEqual([
      ['EU', 'updated', 388],
      ['IE', 'updated', 17],
      ['CY', 'updated', 31],
      ['AT', 'updated', 42],
      ['EE', 'updated', 68],
    ]);

    const status = await runCli(['--json', 'trust', 'status'], { env });
    expect(status.code, status.stderr).toBe(0);
    const rows = status.json<{ lists: Array<Record<string, unknown>> }>().lists;
    expect(rows.map((row) => row['territory'])).toEqual(['EU', 'AT', 'CY', 'EE', 'IE']);
    // Every snapshot is past its next update on today's clock.
    expect(rows.every((row) => row['state'] === 'expired')).toBe(true);
    expect(rows.find((row) => row['territory'] === 'CY')!['services']).toEqual({
      total: 2,
      byType: { 'http://uri.etsi.org/TrstSvc/Svctype/CA/QC': 2 },
      byStatus: { 'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/granted': 2 },
    });

    const show = await runCli(['trust', 'show', 'cy'], { env });
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain('JCC PAYMENT SYSTEMS LTD: JCC CA for EU Qualified e-Signatures');
    expect(show.stdout).toContain('status:     http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/granted since');
    const lotl = await runCli(['--json', 'trust', 'show', 'EU'], { env });
    expect(lotl.json<{ pointers: unknown[] }>().pointers.length).toBeGreaterThan(25);
  });

  it('refuses a byte changed in a signed part and keeps the copy verified before', async () => {
    const { dir, env } = await setup();
    expect(
      (await runCli(['trust', 'import', join(FIXTURES, 'eu-lotl.xml'), join(FIXTURES, 'CY.xml')], { env })).code,
    ).toBe(0);
    const original = await readFile(join(FIXTURES, 'CY.xml'), 'utf8');
    const tampered = join(dir, 'CY-tampered.xml');
    await writeFile(tampered, original.replace('JCC PAYMENT SYSTEMS LTD', 'JCC PAYMENT SYSTEMS LTE'));
    const result = await runCli(['trust', 'import', tampered], { env });
    expect(result.code).toBe(9);
    expect(result.stderr.trim()).toBe('error: CY: a signed part was changed (digest mismatch)');
    const status = await runCli(['--json', 'trust', 'status'], { env });
    const lists = status.json<{
      lists: Array<{ territory: string; sequenceNumber: number; lastFailure: { reason: string } }>;
    }>().lists;
    const cy = lists.find((l) => l.territory === 'CY')!;
    expect(cy.sequenceNumber).toBe(31);
    expect(cy.lastFailure.reason).toBe('CY: a signed part was changed (digest mismatch)');
  });

  it('refuses DTDs and a list the LOTL does not vouch for, in one line each', async () => {
    const { dir, env } = await setup();
    const xxe = join(dir, 'xxe.xml');
    await writeFile(
      xxe,
      '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><TrustServiceStatusList><SchemeTerritory>BE</SchemeTerritory>&e;</TrustServiceStatusList>',
    );
    const refused = await runCli(['trust', 'import', xxe], { env });
    expect(refused.code).toBe(7);
    expect(refused.stderr.trim()).toBe('error: BE: a DOCTYPE (DTDs and entities are refused)');
    await copyFile(join(FIXTURES, 'CY.xml'), join(dir, 'CY.xml'));
    const noLotl = await runCli(['trust', 'import', join(dir, 'CY.xml')], { env });
    expect(noLotl.code).toBe(9);
    expect(noLotl.stderr).toContain("no verified LOTL gives the signers of CY's list");
    const notCached = await runCli(['trust', 'show', 'BE'], { env });
    expect(notCached.code).toBe(3);
    expect(notCached.stderr.split('\n').filter(Boolean)).toHaveLength(1);
  });
});
