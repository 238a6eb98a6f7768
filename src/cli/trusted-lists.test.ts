import { describe, expect, it } from 'vitest';
import type { Qualification } from '../core/qualification/determine.js';
import { assertRequirement } from './trusted-lists.js';

const base: Qualification = {
  name: 'QESig',
  services: [],
  qualifiedAtIssuance: true,
  qualifiedAtSigning: true,
  type: 'esig',
  qscd: 'yes',
  test: false,
};

describe('--require', () => {
  it('accepts the plain qualified names only', async () => {
    await expect(assertRequirement('qes', 'alice', base)).resolves.toBeUndefined();
    await expect(assertRequirement('qualified', 'seal', { ...base, name: 'QESeal' })).resolves.toBeUndefined();
    for (const name of ['Indeterminate QESig', 'Unknown-QC-QSCD', 'Not AdES but QC with QSCD', 'N/A'] as const)
      await expect(assertRequirement('qualified', 'alice', { ...base, name })).rejects.toMatchObject({
        code: 'QUALIFICATION_NOT_MET',
        exitCode: 13,
      });
  });

  it('refuses a chain that does not verify with its reason, in one line (exit 13)', async () => {
    const broken: Qualification = {
      ...base,
      name: 'N/A',
      reason:
        'the chain the signing service sent does not verify: CN=Alice is not signed by the next certificate of the chain, CN=Listed CA',
      qualifiedAtIssuance: false,
      qualifiedAtSigning: false,
    };
    const refusal = assertRequirement('qes', 'alice', broken);
    await expect(refusal).rejects.toMatchObject({ code: 'QUALIFICATION_NOT_MET', exitCode: 13 });
    await expect(refusal).rejects.toThrow(
      /^--require qes: alice would make N\/A \(the chain the signing service sent does not verify: CN=Alice is not signed by .*\), not a qualified electronic signature \(QESig\); nothing was signed\.$/,
    );
  });

  it('refuses a verdict that rests on a list outside the LOTL, naming it', async () => {
    const outside: Qualification = {
      ...base,
      euQualified: false,
      services: [{ provider: 'P', name: 'S', territory: 'CH', sequenceNumber: 1, test: false, list: 'swiss-tsl' }],
    };
    await expect(assertRequirement('qes', 'alice', outside)).rejects.toThrow(
      /would make QESig only under the list swiss-tsl, which is not an EU trusted list/,
    );
  });
});
